//! The headless engine of cmux-tray. It knows no window and no tray.
//!
//! The data has one path, and the modules follow it:
//!
//! - [`cloud`]: the HTTP client of the cmux cloud, its types, checked ids and typed errors.
//! - [`follow`]: one task per followed Run or hand-off, long-polling, with pacing and stop rules.
//! - [`notice`]: pure rules — is this snapshot news, and what does its banner say.
//! - [`store`]: the SQLite store that makes "told exactly once" survive a crash; concurrent
//!   writes share one commit.
//! - [`policy`]: whether and how a notice becomes a banner (switches, pause, quiet hours, focus,
//!   bursts, sound), as pure decisions.
//! - [`desktop`]: post, replace and withdraw banners; hear clicks (freedesktop D-Bus on Linux,
//!   banners the app names on Windows and macOS).
//! - [`local`]: the local socket, cmux's protocol, for agents and this machine's commands (a
//!   Unix socket, or a named pipe on Windows: `local::endpoint`).
//! - [`reveal`]: what a banner click opens (checked `cmux://` links), and opening it with the
//!   platform's opener.
//! - [`place`]: where a notice came from (a tmux pane, a kitty window …), checked: a leaf the
//!   store and the notices carry.
//! - [`terminal`]: where a notice came from (tmux, kitty, WezTerm, X11), bringing it forward, and
//!   whether the person is looking at it.
//! - [`service`]: the running engine: wires the above, owns the tasks and the shutdown, and is what a shell holds.
//! - [`view`]: what the tray menu and the windows show (icon state, history rows, settings in
//!   words, relative times), derived purely; the pages render it.
//! - [`lang`]: the words of every view and banner from one Fluent catalogue per language, and
//!   dates in the person's locale (ICU4X).
//! - [`status`]: what `status` shows, filled by the engine, read by the views and the CLI.
//! - [`secrets`]: the refresh token in the OS keyring, or a visible file fallback.
//! - [`setting_keys`]: every setting declared once (key, kind, bounds, label, reader), read by
//!   the config file's readers, `config get|set`, the settings window and the docs' table.
//! - [`config`], [`clock`]: settings and directories; the one seam for wall-clock time.
//! - [`lock`]: the one way a mutex is taken.
//! - [`private`]: folders 0700 and files 0600 from the moment they exist; no secret in a child.
//! - [`text`]: hostile text from the cloud or an agent cleaned, one line, cut (every banner's words).
//! - [`words`]: states, kinds and reasons declared once with their stored words (`text_enum!`).
//!
//! What differs per platform sits behind one seam per concern, one file per platform, chosen by
//! the seam's `mod.rs` (`desktop::system`, `local::endpoint`, `private`, `reveal::opener`); the
//! logic around them carries no `cfg` (docs/architecture.md "macOS and Windows").

pub mod clock;
pub mod cloud;
pub mod config;
pub mod desktop;
pub mod follow;
pub mod lang;
pub mod local;
pub mod lock;
pub mod notice;
pub mod place;
pub mod policy;
pub mod private;
pub mod reveal;
pub mod secrets;
pub mod service;
pub mod setting_keys;
pub mod status;
pub mod store;
pub mod terminal;
pub mod text;
pub mod view;
pub mod words;

pub use service::{Asked, Engine, EngineError, EngineEvent, EngineOptions, Status};
