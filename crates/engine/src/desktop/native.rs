//! Banners on Windows and macOS, through notify-rust (docs/architecture.md "Banners on each
//! platform"): a Windows toast (WinRT `ToastNotificationManager`) under the app's own
//! AppUserModelID, so the toast carries its name and icon; on macOS `NSUserNotificationCenter`
//! (notify-rust's backend, `mac-notification-sys`).
//!
//! What the platforms allow through notify-rust, and what that means here:
//! - A click on the body is heard (`NotificationResponse::Default`) while the banner is on
//!   screen: one blocking wait per banner, on tokio's blocking pool, ends when it is clicked or
//!   closed. On macOS the wait needs the main run loop (the Tauri app has it; the `cmux-tray`
//!   daemon does not, so there a click is not heard and the tray's last-notice line is the way
//!   back).
//! - Replace and withdraw are not offered: a newer banner for the same item is a new toast, and
//!   a notice marked read leaves its toast in the Action Center / Notification Center.
//! - There is no server to come and go: a toast that cannot be shown is refused, not held.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use notify_rust::{Notification, NotificationResponse};
use tokio::sync::mpsc;

use super::{Banner, BoxFuture, Click, Desktop, DesktopError, DesktopEvent};

pub struct Native {
    app_name: String,
    next_id: AtomicU32,
    events_tx: mpsc::UnboundedSender<DesktopEvent>,
    events_rx: Mutex<Option<mpsc::UnboundedReceiver<DesktopEvent>>>,
}

impl Native {
    /// `app_name` names the app on macOS; on Windows the toast's AppUserModelID is
    /// [`APP_ID`](crate::config::APP_ID), the one the installer's shortcut sets.
    pub fn new(app_name: &str) -> Self {
        platform_start();
        let (tx, rx) = mpsc::unbounded_channel();
        Native { app_name: app_name.into(), next_id: AtomicU32::new(1), events_tx: tx, events_rx: Mutex::new(Some(rx)) }
    }

    fn notification(&self, banner: &Banner) -> Notification {
        let mut n = Notification::new();
        n.appname(&self.app_name).summary(&banner.title).body(&banner.body);
        if banner.sound {
            n.sound_name(SOUND);
        }
        platform(&mut n, banner.urgent);
        n
    }
}

/// The system's default sound, by the name each backend knows it by.
#[cfg(target_os = "windows")]
const SOUND: &str = "Default";
#[cfg(target_os = "macos")]
const SOUND: &str = "NSUserNotificationDefaultSoundName";

/// Windows: the toast's AppUserModelID, and "needs you" as a reminder that stays until seen.
#[cfg(target_os = "windows")]
fn platform(n: &mut Notification, urgent: bool) {
    n.app_id(crate::config::APP_ID);
    if urgent {
        n.urgency(notify_rust::Urgency::Critical);
    }
}

/// Windows: the toasts are the AppUserModelID's; nothing to set up front.
#[cfg(target_os = "windows")]
fn platform_start() {}

/// macOS: banners are posted as the app's bundle (else as another app's).
#[cfg(target_os = "macos")]
fn platform_start() {
    if let Err(e) = notify_rust::set_application(crate::config::APP_ID) {
        tracing::warn!("banners will show under another app's name: {e}");
    }
}

/// macOS has no urgency: a "needs you" banner is an ordinary one.
#[cfg(target_os = "macos")]
fn platform(_n: &mut Notification, _urgent: bool) {}

impl Desktop for Native {
    fn post<'a>(&'a self, banner: &'a Banner) -> BoxFuture<'a, Result<u32, DesktopError>> {
        Box::pin(async move {
            let notification = self.notification(banner);
            let banner_id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let events = self.events_tx.clone();
            let shown = tokio::task::spawn_blocking(move || notification.show())
                .await
                .map_err(|e| DesktopError::Refused(e.to_string()))?
                .map_err(|e| DesktopError::Refused(e.to_string()))?;
            tokio::task::spawn_blocking(move || {
                let _ = shown.wait_for_response(|response: &NotificationResponse| {
                    if response.is_default_action() {
                        let _ = events.send(DesktopEvent::Clicked(Click { banner_id, activation_token: None }));
                    }
                });
            });
            Ok(banner_id)
        })
    }

    /// Not offered by notify-rust on these platforms: the toast stays where the system keeps it.
    fn withdraw(&self, _banner_id: u32) -> BoxFuture<'_, Result<(), DesktopError>> {
        Box::pin(async { Ok(()) })
    }

    fn events(&self) -> Option<mpsc::UnboundedReceiver<DesktopEvent>> {
        self.events_rx.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}
