//! Desktop delivery: post, replace and withdraw a banner, and hear about clicks.
//!
//! The trait is what the engine needs of a notification server; [`system`] gives the platform's.
//! On Linux and the BSDs the freedesktop implementation holds one D-Bus connection for every
//! post and every click (see its module for why it talks zbus directly); on Windows and macOS
//! [`named`] gives each banner a name of the app's own (a toast's tag, a request's identifier).
//! The recording one keeps banners in memory for unit tests. Never decides whether a banner
//! should show: that is the delivery policy's job.

#[cfg(all(unix, not(target_os = "macos")))]
pub mod freedesktop;
pub mod named;
mod recording;
mod seam;

pub use recording::Recording;
pub use seam::{Banner, Click, Desktop, DesktopError, DesktopEvent, Hearing};

/// The platform's notification server, for an app called `app_name` whose data is in `data_dir`.
#[cfg(all(unix, not(target_os = "macos")))]
pub fn system(app_name: &str, _hearing: Hearing, _data_dir: &std::path::Path) -> std::sync::Arc<dyn Desktop> {
    std::sync::Arc::new(freedesktop::Freedesktop::new(app_name))
}

/// The platform's toasts, under the AppUserModelID [`APP_ID`](crate::config::APP_ID).
#[cfg(target_os = "windows")]
pub fn system(_app_name: &str, hearing: Hearing, data_dir: &std::path::Path) -> std::sync::Arc<dyn Desktop> {
    std::sync::Arc::new(named::Named::new(named::toasts::Toasts::new(named::windows::WinRt::new(hearing)), name_key(data_dir)))
}

/// The platform's notification centre, for the app bundle this process runs from.
#[cfg(target_os = "macos")]
pub fn system(_app_name: &str, hearing: Hearing, data_dir: &std::path::Path) -> std::sync::Arc<dyn Desktop> {
    let centre = named::macos::Centre::new(hearing);
    std::sync::Arc::new(named::Named::new(named::user_notifications::UserNotifications::new(centre), name_key(data_dir)))
}

/// The key the named banners are made with; one for this run alone when it cannot be kept
/// (then a banner reposted after a crash may show beside the first).
#[cfg(any(target_os = "windows", target_os = "macos"))]
fn name_key(data_dir: &std::path::Path) -> named::NameKey {
    named::NameKey::kept_in(data_dir).unwrap_or_else(|e| {
        tracing::warn!("the banners' names: {e}; named for this run alone");
        named::NameKey::from_bytes(rand::random())
    })
}
