//! Banners the app names itself (macOS and Windows; docs/architecture.md "Banners on each
//! platform"). Where the freedesktop server gives each banner its id, these platforms let the app
//! give the name: a banner's name comes from its item, so an item's next banner replaces its live
//! one, and a banner reposted after a crash replaces the one the crashed process left on screen
//! instead of showing twice.
//!
//! [`Named`] is the seam's logic, the same on both platforms: names and ids, the one live banner
//! per item, withdrawal, clicks, asking leave once. A [`Backend`] speaks to one platform's centre:
//! [`toasts`] (Windows) and [`user_notifications`] (macOS), each over a small trait of the platform's own calls
//! that the real bindings implement and [`scripted`] stands in for in tests.

#[cfg(target_os = "macos")]
pub mod macos;
pub mod scripted;
pub mod toasts;
pub mod user_notifications;
#[cfg(target_os = "windows")]
pub mod windows;

use std::sync::Arc;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use tokio::sync::mpsc;

use super::seam::{Banner, Click, Desktop, DesktopError, DesktopEvent};
use crate::lock::Locked;

/// What every name starts with; what follows is the banner id in hex.
const PREFIX: &str = "cmux-tray-";

/// A banner's name on the platform (a toast's tag, a notification request's identifier): made
/// from the banner's item, so each item has one, stable across restarts. It is 18 ASCII
/// characters, within a toast tag's 64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BannerName(u32);

impl BannerName {
    /// The name of `item`'s banner: FNV-1a over the item key. Two items whose keys hash alike
    /// would share a banner; among the few hundred items a person follows, the odds are below
    /// one in ten thousand.
    pub fn of_item(item: &str) -> BannerName {
        let hash = item.bytes().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
        // 0 is no banner on the freedesktop side, and the store keeps ids alike: never use it.
        BannerName(hash.max(1))
    }

    /// The name the engine's banner id stands for.
    pub fn of_id(id: u32) -> BannerName {
        BannerName(id)
    }

    /// The id the engine saves for this banner.
    pub fn id(self) -> u32 {
        self.0
    }

    /// A name the platform told back (a click), if it is one of ours.
    pub fn parse(text: &str) -> Option<BannerName> {
        let hex = text.strip_prefix(PREFIX)?;
        (hex.len() == 8).then_some(())?;
        u32::from_str_radix(hex, 16).ok().filter(|id| *id != 0).map(BannerName)
    }
}

impl std::fmt::Display for BannerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{PREFIX}{:08x}", self.0)
    }
}

/// Why a platform call failed.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// Banners cannot be shown from this process or now (no bundle, no centre): they wait.
    #[error("{0}")]
    Unavailable(String),
    /// The person has turned the app's banners off: they wait until turned on again.
    #[error("{0}")]
    Denied(String),
    /// This banner was refused.
    #[error("{0}")]
    Refused(String),
}

impl From<BackendError> for DesktopError {
    fn from(e: BackendError) -> DesktopError {
        match e {
            BackendError::Unavailable(why) => DesktopError::Unavailable(why),
            BackendError::Denied(why) => DesktopError::Denied(why),
            BackendError::Refused(why) => DesktopError::Refused(why),
        }
    }
}

/// Where a backend tells the name of a banner the person clicked.
#[derive(Clone)]
pub struct Clicks(mpsc::UnboundedSender<DesktopEvent>);

impl Clicks {
    /// A click on the banner the platform names `name`; names not ours are ignored.
    pub fn clicked(&self, name: &str) {
        match BannerName::parse(name) {
            Some(name) => {
                let _ = self.0.send(DesktopEvent::Clicked(Click { banner_id: name.id(), activation_token: None }));
            }
            None => tracing::debug!(name, "a click on a banner that is not ours"),
        }
    }
}

/// One platform's notification centre. Calls are blocking and short (the platform queues the
/// banner); [`Named`] makes them off the runtime's threads.
pub trait Backend: Send + Sync + 'static {
    /// Whether banners may show now: `Ok`, or why they wait. Called before every banner, so
    /// banners turned off or on in the system's settings are seen at the next one; the person
    /// is asked at most once (the first banner), where the platform asks at all.
    fn authorize(&self) -> Result<(), BackendError>;
    /// Shows `banner` under `name`, in place of any banner of that name.
    fn show(&self, name: BannerName, banner: &Banner) -> Result<(), BackendError>;
    /// Takes the banner of that name away, from the screen and from the platform's list.
    fn remove(&self, name: BannerName) -> Result<(), BackendError>;
    /// Where clicks are told from now on (called once, at the start).
    fn listen(&self, clicks: Clicks);
}

/// The engine's [`Desktop`] over a backend whose banners the app names.
pub struct Named<B: Backend> {
    backend: Arc<B>,
    events: Mutex<Option<mpsc::UnboundedReceiver<DesktopEvent>>>,
}

impl<B: Backend> Named<B> {
    pub fn new(backend: B) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        backend.listen(Clicks(tx));
        Named { backend: Arc::new(backend), events: Mutex::new(Some(rx)) }
    }

    /// Runs a platform call on a blocking thread.
    async fn call<T: Send + 'static>(&self, f: impl FnOnce(&B) -> Result<T, BackendError> + Send + 'static) -> Result<T, DesktopError> {
        let backend = self.backend.clone();
        tokio::task::spawn_blocking(move || f(&backend))
            .await
            .map_err(|e| DesktopError::Refused(format!("the banner call stopped: {e}")))?
            .map_err(DesktopError::from)
    }
}

impl<B: Backend> Desktop for Named<B> {
    fn post<'a>(&'a self, banner: &'a Banner) -> BoxFuture<'a, Result<u32, DesktopError>> {
        Box::pin(async move {
            let name = BannerName::of_item(&banner.item);
            let shown = banner.clone();
            self.call(move |b| b.authorize().and_then(|()| b.show(name, &shown))).await?;
            // A burst's banner takes the place of its leader's, which has another item's name.
            if let Some(other) = banner.replaces.map(BannerName::of_id).filter(|other| *other != name)
                && let Err(e) = self.call(move |b| b.remove(other)).await
            {
                tracing::warn!(banner = %other, "the banner replaced by a burst's could not be taken away: {e}");
            }
            Ok(name.id())
        })
    }

    fn withdraw(&self, banner_id: u32) -> BoxFuture<'_, Result<(), DesktopError>> {
        Box::pin(async move { self.call(move |b| b.remove(BannerName::of_id(banner_id))).await })
    }

    fn events(&self) -> Option<mpsc::UnboundedReceiver<DesktopEvent>> {
        self.events.locked().take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_its_items_and_reads_back() {
        let name = BannerName::of_item("run:0f7c");
        assert_eq!(name, BannerName::of_item("run:0f7c"), "stable: the same item, the same name");
        assert_ne!(name, BannerName::of_item("run:0f7d"));
        let text = name.to_string();
        assert!(text.starts_with("cmux-tray-") && text.len() == 18, "{text}");
        assert_eq!(BannerName::parse(&text), Some(name));
        assert_eq!(BannerName::of_id(name.id()), name);
        for other in ["", "cmux-tray-", "cmux-tray-0000000g", "cmux-tray-00000000", "cmux-tray-000000001", "other-00000001"] {
            assert_eq!(BannerName::parse(other), None, "{other:?}");
        }
    }
}
