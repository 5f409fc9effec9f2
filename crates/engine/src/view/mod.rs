//! What the tray and the windows show, derived purely from what the engine knows; never draws.
//! The shells (the Tauri tray, the Linux StatusNotifierItem, the pages of the windows) render
//! these and nothing else, so every platform shows the same thing, in the same words.
//!
//! - [`tray`]: the tray menu (icon state, account line, follows, last notices).
//! - [`history`]: the history window's rows (kind, relative time, why no banner, where a click
//!   goes), grouped by day, filtered by kind and a search.
//! - [`settings`]: the settings window's model (switches with labels, the quiet-hours editor's
//!   windows and whether quiet hours are on now, the pause, the sign-in in a sentence).
//! - [`signin`]: the sign-in window's states (waiting, expired, refused, done) in words.
//! - [`words`]: times and durations as a person says them.

pub mod history;
pub mod settings_page;
pub mod signin;
pub mod times;
pub mod tray;

pub use history::{HistoryFilter, HistoryView, NoticeKind};
pub use settings_page::SettingsView;
pub use tray::{Icon, MENU_FOLLOWS, MENU_LABEL, MENU_NOTICES, MenuFollow, MenuNotice, MenuTeam, TrayView, tray_view};
