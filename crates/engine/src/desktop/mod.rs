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

/// Whether the process hears banners' clicks: the app does; the headless daemon, which has no
/// window to bring forward, does not (on macOS it has no app bundle to hear them with).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hearing {
    Clicks,
    Nothing,
}

/// The platform's notification server, for an app called `app_name`.
#[cfg(all(unix, not(target_os = "macos")))]
pub fn system(app_name: &str, _hearing: Hearing) -> std::sync::Arc<dyn Desktop> {
    std::sync::Arc::new(freedesktop::Freedesktop::new(app_name))
}

/// The platform's toasts, under the AppUserModelID [`APP_ID`](crate::config::APP_ID).
#[cfg(target_os = "windows")]
pub fn system(_app_name: &str, hearing: Hearing) -> std::sync::Arc<dyn Desktop> {
    std::sync::Arc::new(named::Named::new(named::toasts::Toasts::new(named::windows::WinRt::new(hearing))))
}

/// The platform's notification centre, for the app bundle this process runs from.
#[cfg(target_os = "macos")]
pub fn system(_app_name: &str, hearing: Hearing) -> std::sync::Arc<dyn Desktop> {
    let centre = named::macos::Centre::new(hearing);
    std::sync::Arc::new(named::Named::new(named::user_notifications::UserNotifications::new(centre)))
}

use std::sync::Mutex;

use crate::lock::Locked;
use futures_util::future::BoxFuture;
use serde::Serialize;
use tokio::sync::mpsc;

/// One banner to show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Banner {
    /// The item it is about (`run:<id>`, `handoff:<id>` …): one live banner per item.
    pub item: String,
    /// The notice it tells.
    pub notice_key: String,
    pub title: String,
    pub body: String,
    pub urgent: bool,
    /// Whether it asks for a sound (the policy's cooldown already applied).
    pub sound: bool,
    /// The banner this one replaces (the item's previous banner, when known).
    pub replaces: Option<u32>,
}

/// A click on a banner's body (its `default` action).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Click {
    pub banner_id: u32,
    /// The activation token the server sent just before the click (notification spec 1.2,
    /// `ActivationToken`): on Wayland, what lets the window it brings forward take the focus.
    pub activation_token: Option<String>,
}

/// What the notification server tells the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DesktopEvent {
    Clicked(Click),
    /// A notification server has just appeared: what waited for one can go out now.
    ServerAppeared,
}

#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    /// No server to show banners (none on the bus, no bus, no answer in time): every banner
    /// waits, and goes out when one answers.
    #[error("no notification server answered: {0}")]
    Unavailable(String),
    /// The server (or the bus) refused this banner: its problem alone, the others go on.
    #[error("the notification server refused the banner: {0}")]
    Refused(String),
    /// The person has turned the app's banners off (macOS, Windows): every banner waits, said in
    /// the tray and in settings, and goes out when they are turned on.
    #[error("{0}")]
    Denied(String),
}

/// A notification server.
pub trait Desktop: Send + Sync + 'static {
    /// Shows `banner` (replacing `banner.replaces` when set) and returns its id.
    fn post<'a>(&'a self, banner: &'a Banner) -> BoxFuture<'a, Result<u32, DesktopError>>;
    /// Takes a banner away.
    fn withdraw(&self, banner_id: u32) -> BoxFuture<'_, Result<(), DesktopError>>;
    /// Where clicks and a server's arrival are told. Called once by the engine; later calls may
    /// return `None`.
    fn events(&self) -> Option<mpsc::UnboundedReceiver<DesktopEvent>>;
}

/// Keeps every call in memory; for tests of what would have been shown.
#[derive(Default)]
pub struct Recording {
    state: Mutex<RecordingState>,
    events: Mutex<Option<mpsc::UnboundedSender<DesktopEvent>>>,
}

#[derive(Default)]
struct RecordingState {
    next_id: u32,
    posted: Vec<(u32, Banner)>,
    withdrawn: Vec<u32>,
    fail: bool,
    /// Banners whose title holds this are refused (one bad banner among good ones).
    refuse: Option<String>,
    /// Every banner refused so far (each try).
    refused: Vec<Banner>,
}

impl Recording {
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, RecordingState> {
        self.state.locked()
    }

    /// Every banner posted, with the id it got, in order.
    pub fn posted(&self) -> Vec<(u32, Banner)> {
        self.state().posted.clone()
    }

    /// Every try the server refused, in order.
    pub fn refused(&self) -> Vec<Banner> {
        self.state().refused.clone()
    }

    pub fn withdrawn(&self) -> Vec<u32> {
        self.state().withdrawn.clone()
    }

    /// Clicks a banner, as a person would.
    pub fn click(&self, banner_id: u32) {
        self.tell(DesktopEvent::Clicked(Click { banner_id, activation_token: None }));
    }

    fn tell(&self, event: DesktopEvent) {
        if let Some(tx) = self.events.locked().as_ref() {
            let _ = tx.send(event);
        }
    }

    /// While set, every call fails as if no server were there. Cleared, a server "appears".
    pub fn set_failing(&self, fail: bool) {
        self.state().fail = fail;
        if !fail {
            self.tell(DesktopEvent::ServerAppeared);
        }
    }

    /// Refuses every banner whose title holds `part` (`None`: refuses none).
    pub fn refuse_titles_with(&self, part: Option<&str>) {
        self.state().refuse = part.map(String::from);
    }
}

impl Desktop for Recording {
    fn post<'a>(&'a self, banner: &'a Banner) -> BoxFuture<'a, Result<u32, DesktopError>> {
        Box::pin(async move { self.post_now(banner) })
    }

    fn withdraw(&self, banner_id: u32) -> BoxFuture<'_, Result<(), DesktopError>> {
        Box::pin(async move { self.withdraw_now(banner_id) })
    }

    fn events(&self) -> Option<mpsc::UnboundedReceiver<DesktopEvent>> {
        let (tx, rx) = mpsc::unbounded_channel();
        *self.events.locked() = Some(tx);
        Some(rx)
    }
}

impl Recording {
    fn post_now(&self, banner: &Banner) -> Result<u32, DesktopError> {
        let mut st = self.state();
        if st.fail {
            return Err(DesktopError::Unavailable("recording desktop set to fail".into()));
        }
        if st.refuse.as_deref().is_some_and(|part| banner.title.contains(part)) {
            st.refused.push(banner.clone());
            return Err(DesktopError::Refused("recording desktop set to refuse this title".into()));
        }
        let id = match banner.replaces {
            Some(id) => id,
            None => {
                st.next_id += 1;
                st.next_id
            }
        };
        st.posted.push((id, banner.clone()));
        Ok(id)
    }

    fn withdraw_now(&self, banner_id: u32) -> Result<(), DesktopError> {
        let mut st = self.state();
        if st.fail {
            return Err(DesktopError::Unavailable("recording desktop set to fail".into()));
        }
        st.withdrawn.push(banner_id);
        Ok(())
    }
}
