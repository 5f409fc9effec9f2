//! The app's private channel (docs/architecture.md "Two processes"): the tray process holds the
//! engine and serves it; the windows process and a second launch of the app speak to it. One
//! JSON object a line each way, on a socket beside the local socket (`app.sock`; a named pipe
//! on Windows) whose peers are checked as the local socket's are: this user's alone. Any of the
//! user's processes may hand over a launch; only a windows process holding the launch's
//! [`ChannelKey`] may attach and call.
//!
//! Both programs depend on this crate; the windows program on nothing else of the app's, so it
//! links what it draws with and this (no SQLite, HTTP/2, D-Bus, keyring or ICU):
//!
//! - [`key`]: the per-launch secret, handed over on standard input.
//! - [`handover`]: the person's secrets, handed to a tray this app starts on its standard input.
//! - [`page`]: the app's windows, a page each ([`Page`]).
//! - [`message`]: what each side sends ([`ToTray`], [`FromTray`]).
//! - [`call`]: a page's call as a typed request ([`Call`]), answered by a `Result`.
//! - [`line`]: one message a line, with the limits each side reads.
//! - [`endpoint`]: the client's end, its server checked before a byte is sent; where it is.
//! - [`place`]: where the app's folders and its other program are.
//! - [`start`]: what each program does first (private files, no secret in a child) and its log.
//! - [`webview_env`]: the windows process's environment for its web engine.

pub mod call;
pub mod endpoint;
pub mod handover;
pub mod key;
pub mod line;
pub mod message;
pub mod page;
pub mod place;
pub mod start;
pub mod webview_env;

pub use call::Call;
pub use key::ChannelKey;
pub use line::{ChannelError, MAX_LINE, MAX_LINE_TO_TRAY, read, read_within, write};
pub use message::{FromTray, ProxyLine, ToTray};
pub use page::Page;
pub use place::{APP, Program, program};

#[cfg(test)]
mod tests;
