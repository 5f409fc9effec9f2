//! Desktop delivery: post, replace and withdraw a banner, and hear about clicks.
//!
//! The trait is what the engine needs of a notification server. The freedesktop implementation
//! holds one D-Bus connection for every post and every click (see its module for why it talks
//! zbus directly); the recording one keeps banners in memory for unit tests.
//! Never decides whether a banner should show: that is the delivery policy's job.

pub mod freedesktop;

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use serde::Serialize;
use tokio::sync::mpsc;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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
}

#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    #[error("no notification server answered: {0}")]
    Unavailable(String),
}

/// A notification server.
pub trait Desktop: Send + Sync + 'static {
    /// Shows `banner` (replacing `banner.replaces` when set) and returns its id.
    fn post<'a>(&'a self, banner: &'a Banner) -> BoxFuture<'a, Result<u32, DesktopError>>;
    /// Takes a banner away.
    fn withdraw(&self, banner_id: u32) -> BoxFuture<'_, Result<(), DesktopError>>;
    /// Where clicks arrive. Called once by the engine; later calls may return `None`.
    fn clicks(&self) -> Option<mpsc::UnboundedReceiver<Click>>;
}

/// Keeps every call in memory; for tests of what would have been shown.
#[derive(Default)]
pub struct Recording {
    state: Mutex<RecordingState>,
    clicks: Mutex<Option<mpsc::UnboundedSender<Click>>>,
}

#[derive(Default)]
struct RecordingState {
    next_id: u32,
    posted: Vec<(u32, Banner)>,
    withdrawn: Vec<u32>,
    fail: bool,
}

impl Recording {
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, RecordingState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every banner posted, with the id it got, in order.
    pub fn posted(&self) -> Vec<(u32, Banner)> {
        self.state().posted.clone()
    }

    pub fn withdrawn(&self) -> Vec<u32> {
        self.state().withdrawn.clone()
    }

    /// Clicks a banner, as a person would.
    pub fn click(&self, banner_id: u32) {
        if let Some(tx) = self.clicks.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            let _ = tx.send(Click { banner_id });
        }
    }

    /// While set, every call fails as if no server were there.
    pub fn set_failing(&self, fail: bool) {
        self.state().fail = fail;
    }
}

impl Desktop for Recording {
    fn post<'a>(&'a self, banner: &'a Banner) -> BoxFuture<'a, Result<u32, DesktopError>> {
        Box::pin(async move { self.post_now(banner) })
    }

    fn withdraw(&self, banner_id: u32) -> BoxFuture<'_, Result<(), DesktopError>> {
        Box::pin(async move { self.withdraw_now(banner_id) })
    }

    fn clicks(&self) -> Option<mpsc::UnboundedReceiver<Click>> {
        let (tx, rx) = mpsc::unbounded_channel();
        *self.clicks.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
        Some(rx)
    }
}

impl Recording {
    fn post_now(&self, banner: &Banner) -> Result<u32, DesktopError> {
        let mut st = self.state();
        if st.fail {
            return Err(DesktopError::Unavailable("recording desktop set to fail".into()));
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
