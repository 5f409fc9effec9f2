//! The follower: one task per followed item, long-polling its source (the Run API or the
//! hand-off store), with the pacing and the stop rules of docs/cloud-api.md.
//!
//! A follow is saved in the store before its task starts, so the store alone is enough to
//! resume every follow after a relaunch. Each answer goes through the notice rules and is saved,
//! with its notice, in one transaction; the deliverer is then woken. Tasks, not threads; one
//! shared HTTP client; no timer per follow except the one pause between two requests.
//! Never posts a banner.

pub mod pacing;
mod task;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::clock::{Clock, DAY_MS, HOUR_MS};
use crate::cloud::{CloudClient, Credentials, Handoff, HandoffId, Run, RunId};
use crate::status::Problem;
use crate::store::{FollowKind, FollowRow, Store, StoreError};

use crate::lock::Locked;
pub use pacing::Pacing;

/// How long a follow may go on.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A Run is given up this long after its follow started.
    pub run_age_ms: i64,
    /// A hand-off is given up when unchanged this long.
    pub handoff_idle_ms: i64,
    /// At most this many follows at once; past it a follow is refused and said, never dropped.
    pub max_follows: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { run_age_ms: 6 * HOUR_MS, handoff_idle_ms: 3 * DAY_MS, max_follows: 20_000 }
    }
}

/// Why a follow was not started.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("already following {max} items, the most at once; {id} was not followed")]
    TooMany { id: String, max: usize },
}

/// How a follow ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FollowEnd {
    /// The Run reached a terminal state (told, or quiet because this app cancelled it).
    RunEnded(Box<Run>),
    /// The hand-off closed.
    HandoffClosed(Box<Handoff>),
    /// The server answered 403 or 404: not this account's, or no longer there.
    Gone(u16),
    /// Its age limit passed.
    Expired,
    /// Stopped from here: sign-out, another account, a refused token, or quit.
    Stopped(String),
}

/// Why waiting on a follow gave no Run end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WaitError {
    #[error("{0} is not being followed")]
    NotFollowed(String),
    #[error("the follow of {id} ended without an end: {why}")]
    Ended { id: String, why: String },
}

/// What the follower tells the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowerEvent {
    /// A call was refused with 401 under this account: the engine refreshes or signs out.
    StaleToken { account: String },
    /// Something worth a line in the status (an unreadable answer, a store error).
    Problem(Problem),
    /// The cloud could not be reached several times in a row (the tray's "offline"), and why.
    Unreachable(String),
    /// The cloud answered again after being unreachable.
    Reachable,
    /// A follow learnt (or changed) its name: what shows it should redraw.
    Named,
}

/// Failures in a row (network, 5xx, 429) before a follow calls the cloud unreachable: one
/// dropped connection is not "offline".
const UNREACHABLE_AFTER: u32 = 3;
/// While the cloud is unreachable, one quick look (`/v1/me`) this often tells when it is back,
/// and the follows backing off are woken then: they resume within seconds of the network,
/// whatever their backoff (docs/cloud-api.md, "Offline").
const SCOUT_EVERY: Duration = Duration::from_secs(2);
/// Follows woken together when the cloud is back are spread over this long.
const WAKE_SPREAD: Duration = Duration::from_secs(1);

/// The signed-in account as the follows see it: who, with what credentials, and the token that
/// stops every follow of this account at once (sign-out, switch, quit).
pub struct Session {
    pub account: String,
    credentials: Mutex<Credentials>,
    pub stop: CancellationToken,
}

impl Session {
    pub fn new(account: &str, credentials: Credentials, stop: CancellationToken) -> Arc<Self> {
        Arc::new(Session { account: account.into(), credentials: Mutex::new(credentials), stop })
    }

    pub fn credentials(&self) -> Credentials {
        self.credentials.locked().clone()
    }

    /// A renewed access token: every follow uses it from its next request on.
    pub fn renew(&self, credentials: Credentials) {
        *self.credentials.locked() = credentials;
    }
}

struct Running {
    stop: CancellationToken,
}

type Key = (FollowKind, String);

/// What a follow carries from one answer to the next.
struct Progress {
    cursor: u64,
    changed_at: i64,
    failures: u32,
    /// The name the store has: written only when a snapshot says otherwise, not per answer.
    title: Option<String>,
}

/// Ends kept for a waiter that is slow to read them; one that misses some reads the store.
const ENDS_KEPT: usize = 256;

/// The follower. Cheap to clone.
#[derive(Clone)]
pub struct Follower {
    inner: Arc<Inner>,
}

struct Inner {
    cloud: CloudClient,
    store: Arc<Store>,
    clock: Clock,
    /// The language a banner's words are saved in.
    lang: Arc<crate::lang::Lang>,
    pacing: Pacing,
    limits: Limits,
    running: Mutex<HashMap<Key, Running>>,
    /// Every follow's end, for the few who wait for one: one channel for all, rather than one a
    /// follow (a channel of its own cost each of 10,000 follows about 400 bytes).
    ends: broadcast::Sender<(Key, FollowEnd)>,
    tracker: TaskTracker,
    deliver: Arc<Notify>,
    events: mpsc::UnboundedSender<FollowerEvent>,
    /// Whether the cloud is being called unreachable (told once per change, not per request).
    unreachable: std::sync::atomic::AtomicBool,
    /// Woken when the cloud answers again: the follows backing off ask at once.
    back: Notify,
    /// Whether a scout is looking for the cloud while it is unreachable.
    scouting: std::sync::atomic::AtomicBool,
}

impl Follower {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cloud: CloudClient,
        store: Arc<Store>,
        clock: Clock,
        lang: Arc<crate::lang::Lang>,
        pacing: Pacing,
        limits: Limits,
        tracker: TaskTracker,
        deliver: Arc<Notify>,
        events: mpsc::UnboundedSender<FollowerEvent>,
    ) -> Self {
        Follower {
            inner: Arc::new(Inner {
                cloud,
                store,
                clock,
                lang,
                pacing,
                limits,
                running: Mutex::new(HashMap::new()),
                ends: broadcast::channel(ENDS_KEPT).0,
                tracker,
                deliver,
                events,
                unreachable: Default::default(),
                back: Notify::new(),
                scouting: Default::default(),
            }),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Running>> {
        self.inner.running.locked()
    }

    /// How many follows have a task right now.
    pub fn live_count(&self) -> usize {
        self.running().len()
    }

    /// Follows a Run for the session's account. Saved first; a Run already known (followed, or
    /// ended and told) starts nothing new.
    pub fn follow_run(&self, session: &Arc<Session>, id: &RunId, made_here: bool) -> Result<(), FollowError> {
        self.room_for(FollowKind::Run, id.as_str())?;
        let now = self.inner.clock.now_ms();
        self.inner.store.add_follow(FollowKind::Run, id.as_str(), &session.account, 0, made_here, now)?;
        Ok(self.resume_one(session, FollowKind::Run, id.as_str())?)
    }

    /// Follows a hand-off from version `after` (its current state at `after` is not news).
    pub fn follow_handoff(&self, session: &Arc<Session>, id: &HandoffId, after: u64, made_here: bool) -> Result<(), FollowError> {
        self.room_for(FollowKind::Handoff, id.as_str())?;
        let now = self.inner.clock.now_ms();
        self.inner.store.add_follow(FollowKind::Handoff, id.as_str(), &session.account, after, made_here, now)?;
        Ok(self.resume_one(session, FollowKind::Handoff, id.as_str())?)
    }

    /// Whether one more follow fits (one already running always does).
    pub fn room_for(&self, kind: FollowKind, id: &str) -> Result<(), FollowError> {
        let running = self.running();
        let max = self.inner.limits.max_follows;
        if running.len() >= max && !running.contains_key(&(kind, id.to_string())) {
            return Err(FollowError::TooMany { id: id.into(), max });
        }
        Ok(())
    }

    /// Starts a task for every follow of the session's account still going in the store.
    pub fn resume(&self, session: &Arc<Session>) -> Result<usize, StoreError> {
        let rows = self.inner.store.active_follows(&session.account)?;
        let n = rows.len();
        for row in rows {
            self.spawn(session, row);
        }
        Ok(n)
    }

    fn resume_one(&self, session: &Arc<Session>, kind: FollowKind, id: &str) -> Result<(), StoreError> {
        if let Some(row) = self.inner.store.follow(kind, id)?
            && row.ended_at.is_none()
            && row.account == session.account
        {
            self.spawn(session, row);
        }
        Ok(())
    }

    fn spawn(&self, session: &Arc<Session>, row: FollowRow) {
        let key = (row.kind, row.id.clone());
        let mut running = self.running();
        if running.contains_key(&key) || session.stop.is_cancelled() {
            return;
        }
        let stop = session.stop.child_token();
        running.insert(key.clone(), Running { stop: stop.clone() });
        drop(running);
        let this = self.clone();
        let session = session.clone();
        self.inner.tracker.spawn(async move {
            let end = this.follow_loop(&session, row, &stop).await;
            tracing::debug!(kind = key.0.as_str(), id = %key.1, ?end, "follow ended");
            // Remove before telling, so a waiter arriving later reads the store instead.
            this.running().remove(&key);
            let _ = this.inner.ends.send((key, end));
        });
    }

    /// Stops one follow (it stays in the store, as it was).
    pub fn stop(&self, kind: FollowKind, id: &str) {
        if let Some(r) = self.running().get(&(kind, id.to_string())) {
            r.stop.cancel();
        }
    }

    /// Waits for a Run's end. A follow that ends any other way (gone, expired, stopped) gives an
    /// error, never a hang; a Run that ended before is answered from its card.
    pub async fn wait_run_end(&self, id: &RunId) -> Result<Box<Run>, WaitError> {
        use broadcast::error::RecvError;
        let key = (FollowKind::Run, id.to_string());
        // Listening before looking: an end told after the look is not missed.
        let mut ends = self.inner.ends.subscribe();
        let mut end = None;
        while self.running().contains_key(&key) {
            match ends.recv().await {
                Ok((k, e)) if k == key => {
                    end = Some(e);
                    break;
                }
                // Another follow's end, or some missed (thousands ended at once): look again;
                // a follow no longer running has its end in the store.
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break,
            }
        }
        match end {
            Some(FollowEnd::RunEnded(run)) => Ok(run),
            Some(other) => Err(WaitError::Ended { id: id.to_string(), why: format!("{other:?}") }),
            None => self.ended_run_from_store(id),
        }
    }

    fn ended_run_from_store(&self, id: &RunId) -> Result<Box<Run>, WaitError> {
        let card = self.inner.store.card(id.as_str()).ok().flatten();
        match (card, self.inner.store.follow(FollowKind::Run, id.as_str()).ok().flatten()) {
            (Some(card), _) => Ok(Box::new(Run {
                id: id.clone(),
                task: card.task,
                status: card.outcome.run_status(),
                outcome: Some(card.outcome),
                receipt: card.receipt.and_then(|r| serde_json::from_value(r).ok()),
                updated_at: None,
            })),
            (None, Some(row)) => Err(WaitError::Ended {
                id: id.to_string(),
                why: row.end_reason.unwrap_or_else(|| "not running under the signed-in account".into()),
            }),
            (None, None) => Err(WaitError::NotFollowed(id.to_string())),
        }
    }
}

/// The token that stops a group of tasks (re-exported so shells need not name tokio-util).
pub type StopToken = CancellationToken;
