//! What the engine needs of a notification server, and what one tells it: the seam every
//! platform's banners implement.

use futures_util::future::BoxFuture;
use serde::Serialize;
use tokio::sync::mpsc;

/// Whether the process hears banners' clicks: the app does; the headless daemon, which has no
/// window to bring forward, does not (on macOS it has no app bundle to hear them with).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hearing {
    Clicks,
    Nothing,
}

/// One banner to show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Banner {
    /// The item it is about (`run:<id>`, `handoff:<id>` …): one live banner per item.
    pub item: crate::notice::Item,
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
