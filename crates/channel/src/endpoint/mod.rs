//! The channel's client end, one file per platform: [`connect`] (its server checked as this
//! user's before a byte is sent) and [`ClientStream`], and the channel's place ([`channel_path`]).
//! The engine's local socket uses the same client (`local::endpoint`).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{ClientStream, channel_path, connect};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{ClientStream, channel_path, connect, current_user_sid, sid_text, user_pipe};

/// The channel of this user's tray, where no `--channel` names another; none without a home.
pub fn default_channel() -> Option<std::path::PathBuf> {
    Some(channel_path(&crate::place::runtime_dir()?))
}
