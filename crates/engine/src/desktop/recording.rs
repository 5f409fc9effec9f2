//! A desktop that keeps every call in memory, for tests of what would have been shown.

use std::sync::Mutex;

use futures_util::future::BoxFuture;
use tokio::sync::mpsc;

use super::seam::{Banner, Click, Desktop, DesktopError, DesktopEvent};
use crate::lock::Locked;

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
