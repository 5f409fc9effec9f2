//! The deliverer: every untold notice, oldest first, through the delivery policy to the desktop.
//!
//! A notice that comes alone is decided at once; the ones that follow it settle for a moment
//! (`settle`), so that ten Runs ending within a second become one banner, which takes the first
//! one's place on screen. Each notice is decided: held (paused, quiet hours), recorded only (off, focused), shown,
//! or coalesced with its source's burst (never one that needs the person: that one is urgent,
//! and shown alone). A notice that shows is posted (replacing its item's
//! live banner) and then marked told: a crash in between tells it again, replacing. When the hold
//! ends, one summary banner says what came in meanwhile.
//!
//! One banner's failure is that banner's problem: a banner the server refuses is tried again
//! with the next pass, and after `MAX_TRIES` it is set aside (`not shown`, with the server's
//! reason) while the others go on. Only "no server at all" holds every banner, until a server
//! appears. A banner that was posted but could not be saved as told is never posted again: its
//! id is kept in memory and the save is retried (a full disk is a visible problem, not a repeat).
//!
//! The deliverer is one task (`Task`, here) that owns what it keeps between passes as plain
//! fields; the rest of the engine holds its handle (`Deliverer`) to wake it, and to ask it which
//! notice a banner it posted shows before that is saved. One pass is in `pass.rs`; when a pass
//! decides, `settle.rs`.

mod pass;
mod settle;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use super::Engine;
use crate::lock::Locked;
use crate::notice::Source;
use crate::store::StoreError;

/// A banner the server refuses is tried this often before it is set aside.
pub const MAX_TRIES: u32 = 3;
/// When no notification server answers, untold notices are tried again this often (the
/// default of `EngineOptions::desktop_retry`).
pub const DESKTOP_RETRY: Duration = Duration::from_secs(15);
/// While a burst settles, the untold are looked at no more often than this, however fast
/// notices come (a script on the socket sends thousands a second): a follower is seen at most
/// this late, which lengthens its settle by as much (never past `settle::MAX`).
const SETTLE_LOOK: Duration = Duration::from_millis(50);

/// The deliverer's handle: what the rest of the engine wakes it with and asks it. Cheap to clone.
#[derive(Clone)]
pub(super) struct Deliverer {
    /// Wakes the deliverer: a notice saved, a setting changed, a hold ended, a server appeared.
    wake: Arc<Notify>,
    /// Banners posted whose "told" is not saved, yet or at all (notice key → banner id): never
    /// posted twice. Shared, not the task's alone: a click (click.rs) finds its notice here.
    unrecorded: Arc<Mutex<HashMap<String, u32>>>,
}

impl Deliverer {
    pub(super) fn new() -> Self {
        Deliverer { wake: Arc::new(Notify::new()), unrecorded: Default::default() }
    }

    /// Asks for a pass: something may be told now.
    pub(super) fn wake(&self) {
        self.wake.notify_one();
    }

    /// What wakes the deliverer, for the follower, which saves notices too.
    pub(super) fn waker(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    /// The notice whose banner `banner_id` is up but not yet saved as told, if any.
    pub(super) fn unrecorded_notice(&self, banner_id: u32) -> Option<String> {
        self.unrecorded.locked().iter().find(|(_, id)| **id == banner_id).map(|(key, _)| key.clone())
    }

    /// Starts the deliverer's task on `engine`'s tracker; whatever a crash left untold goes out.
    pub(super) fn start(&self, engine: &Engine, desktop_retry: Duration) {
        let task = Task {
            engine: engine.clone(),
            handle: self.clone(),
            desktop_retry,
            last_sound: HashMap::new(),
            settle: settle::Settle::default(),
            leaders: HashMap::new(),
            tries: HashMap::new(),
        };
        engine.inner.tracker.spawn(task.run());
        self.wake();
    }
}

/// The deliverer's task and what it keeps between passes, its own: the sound cooldown, the
/// settle, the bursts' leaders and the server's refusals.
struct Task {
    /// What a pass asks: the store, the settings, the focus rule, the desktop, the health.
    engine: Engine,
    handle: Deliverer,
    desktop_retry: Duration,
    /// The last sound per source (the cooldown).
    last_sound: HashMap<Source, i64>,
    /// When the deliverer decides: at once for a notice alone, after a settle for a burst.
    settle: settle::Settle,
    /// Per source, the notice told alone at the head of a chain (chain, key): a burst that
    /// follows it takes its banner's place.
    leaders: HashMap<Source, (u64, String)>,
    /// How often the server refused each untold notice's banner.
    tries: HashMap<String, u32>,
}

/// The untold keys read while a burst settles: each look reads only the notices saved since the
/// last one (a burst of thousands is looked at every `SETTLE_LOOK`), and a pass that decides
/// starts over from a full read. A notice that stops being untold while its burst settles (a
/// `notification.clear`) is dropped at that full read.
#[derive(Default)]
struct Looked {
    keys: Vec<(i64, String)>,
    /// Whether `keys` holds every untold key up to its last, read while the burst settles
    /// (false: the next look reads them all again).
    settling: bool,
}

/// How a pass ended.
enum Pass {
    /// Followers are settling: look again after this long, or when one more comes.
    Settling(Duration),
    /// Decided what there was; look again after this long (a hold ending, a retry), or when woken.
    Done(Option<Duration>),
}

/// Why a delivery pass stopped short; the pass is tried again after `desktop_retry`.
#[derive(Debug, thiserror::Error)]
enum DeliverError {
    #[error("the store: {0}")]
    Store(#[from] StoreError),
    #[error("no notification server answered: {0}")]
    NoServer(String),
    #[error("banners are turned off: {0}")]
    BannersOff(String),
    /// The banner is up but not saved as told: it is remembered in memory, never posted twice.
    #[error("banner {banner} is shown but could not be saved as told: {why}")]
    ShownNotSaved { banner: u32, why: StoreError },
}

impl Task {
    /// Passes until the engine stops: each when woken, or when the last one said to look again.
    async fn run(mut self) {
        let shutdown = self.engine.inner.shutdown.clone();
        let wake = self.handle.wake.clone();
        let mut looked = Looked::default();
        loop {
            let next = match self.pass(&mut looked).await {
                Ok(Pass::Done(next)) => next,
                Ok(Pass::Settling(wait)) => {
                    // A wake-up meanwhile is kept by `Notify` for the select below.
                    tokio::select! {
                        _ = shutdown.cancelled() => return,
                        _ = tokio::time::sleep(wait.min(SETTLE_LOOK)) => {}
                    }
                    Some(wait.saturating_sub(SETTLE_LOOK))
                }
                Err(e) => {
                    tracing::warn!("{e}; will try again");
                    if let DeliverError::NoServer(why) = &e {
                        self.engine.inner.health.set_no_server(Some(why.clone()));
                    }
                    Some(self.desktop_retry)
                }
            };
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = wake.notified() => {}
                _ = tokio::time::sleep(next.unwrap_or(Duration::ZERO)), if next.is_some() => {}
            }
        }
    }
}
