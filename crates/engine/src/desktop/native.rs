//! Banners on Windows and macOS (docs/architecture.md "Banners on each platform"): a Windows
//! toast (WinRT `ToastNotificationManager`, through tauri-winrt-notification) under the app's
//! own AppUserModelID, so the toast carries its name and icon; on macOS `NSUserNotificationCenter`
//! (notify-rust's backend, `mac-notification-sys`).
//!
//! What the platforms allow here, and what that means:
//! - A click on the body is heard while the banner is on screen. On Windows the toast calls back
//!   (no thread waits for it). On macOS hearing it means a thread blocked until the banner is
//!   clicked or closed, so those waits run on threads of their own, never tokio's blocking pool
//!   (which DNS, the keyring and the store's commits need), and at most
//!   [`LISTENING`](super::listeners::LISTENING) at once: a banner past that is shown without its
//!   click heard. The wait needs the main run loop, which
//!   the Tauri app has and the `cmux-tray` daemon has not: there no wait is started (it would
//!   never end), and the tray's last-notice line is the way back.
//! - Replace and withdraw are not offered: a newer banner for the same item is a new toast, and
//!   a notice marked read leaves its toast in the Action Center / Notification Center.
//! - There is no server to come and go: a toast that cannot be shown is refused, not held.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use tokio::sync::mpsc;

use futures_util::future::BoxFuture;

use super::{Banner, Click, Desktop, DesktopError, DesktopEvent, Hearing};
use crate::lock::Locked;

pub struct Native {
    poster: std::sync::Arc<platform::Poster>,
    next_id: AtomicU32,
    events_tx: mpsc::UnboundedSender<DesktopEvent>,
    events_rx: Mutex<Option<mpsc::UnboundedReceiver<DesktopEvent>>>,
}

impl Native {
    /// `app_name` names the app on macOS; on Windows the toast's AppUserModelID is
    /// [`APP_ID`](crate::config::APP_ID), the one the installer's shortcut sets.
    pub fn new(app_name: &str, hearing: Hearing) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Native {
            poster: std::sync::Arc::new(platform::Poster::new(app_name, hearing)),
            next_id: AtomicU32::new(1),
            events_tx: tx,
            events_rx: Mutex::new(Some(rx)),
        }
    }
}

impl Desktop for Native {
    fn post<'a>(&'a self, banner: &'a Banner) -> BoxFuture<'a, Result<u32, DesktopError>> {
        Box::pin(async move {
            let banner_id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let events = self.events_tx.clone();
            let clicked = move || {
                let _ = events.send(DesktopEvent::Clicked(Click { banner_id, activation_token: None }));
            };
            // Off the runtime thread: posting is a few system calls (and a 10 ms pause in the
            // Windows toast crate), bounded, never a wait for the person.
            let (poster, banner) = (self.poster.clone(), banner.clone());
            tokio::task::spawn_blocking(move || poster.show(&banner, clicked))
                .await
                .map_err(|e| DesktopError::Refused(e.to_string()))??;
            Ok(banner_id)
        })
    }

    /// Not offered on these platforms here: the toast stays where the system keeps it.
    fn withdraw(&self, _banner_id: u32) -> BoxFuture<'_, Result<(), DesktopError>> {
        Box::pin(async { Ok(()) })
    }

    fn events(&self) -> Option<mpsc::UnboundedReceiver<DesktopEvent>> {
        self.events_rx.locked().take()
    }
}

#[cfg(target_os = "windows")]
mod platform {
    use tauri_winrt_notification::{Duration, Scenario, Sound, Toast};

    use super::{Banner, DesktopError, Hearing};

    /// Toasts under the app's AppUserModelID; nothing to hold, nothing to set up front.
    pub struct Poster;

    impl Poster {
        pub fn new(_app_name: &str, _hearing: Hearing) -> Poster {
            Poster
        }

        /// Shows the toast (quick: WinRT queues it); a click calls back on WinRT's thread.
        pub fn show(&self, banner: &Banner, clicked: impl Fn() + Send + 'static) -> Result<(), DesktopError> {
            toast(banner, clicked).show().map_err(|e| DesktopError::Refused(e.to_string()))
        }
    }

    fn toast(banner: &Banner, clicked: impl Fn() + Send + 'static) -> Toast {
        let toast = Toast::new(crate::config::APP_ID)
            .title(&banner.title)
            .text1(&banner.body)
            .sound(banner.sound.then_some(Sound::Default))
            .duration(Duration::Short)
            .on_activated(move |_action| {
                clicked();
                Ok(())
            });
        match banner.urgent {
            // "Needs you": a reminder stays on screen until the person acts on it.
            true => toast.scenario(Scenario::Reminder),
            false => toast,
        }
    }
}

#[cfg(target_os = "macos")]
mod platform {
    use notify_rust::{Notification, NotificationResponse};

    use super::super::listeners::{LISTENING, Listeners};
    use super::{Banner, DesktopError, Hearing};

    pub struct Poster {
        app_name: String,
        hearing: Hearing,
        listeners: Listeners,
    }

    impl Poster {
        /// Banners are posted as the app's bundle (else as another app's).
        pub fn new(app_name: &str, hearing: Hearing) -> Poster {
            if let Err(e) = notify_rust::set_application(crate::config::APP_ID) {
                tracing::warn!("banners will show under another app's name: {e}");
            }
            Poster { app_name: app_name.into(), hearing, listeners: Listeners::new(LISTENING) }
        }

        /// Posts the banner; in the app, a thread of its own hears its click while one is free.
        /// macOS has no urgency: a "needs you" banner is an ordinary one.
        pub fn show(&self, banner: &Banner, clicked: impl Fn() + Send + 'static) -> Result<(), DesktopError> {
            let mut n = Notification::new();
            n.appname(&self.app_name).summary(&banner.title).body(&banner.body);
            if banner.sound {
                n.sound_name("NSUserNotificationDefaultSoundName");
            }
            let shown = n.show().map_err(|e| DesktopError::Refused(e.to_string()))?;
            let listening = match self.hearing {
                Hearing::Clicks => self.listeners.take(),
                Hearing::Nothing => None,
            };
            let Some(listening) = listening else {
                // Unheard: posted without a wait, as the backend does when its handle is dropped.
                drop(shown);
                return Ok(());
            };
            std::thread::Builder::new()
                .name("banner-answer".into())
                .spawn(move || {
                    let _listening = listening;
                    let _ = shown.wait_for_response(|response: &NotificationResponse| {
                        if response.is_default_action() {
                            clicked();
                        }
                    });
                })
                .map(|_| ())
                .map_err(|e| DesktopError::Refused(format!("no thread to hear the banner's click: {e}")))
        }
    }
}
