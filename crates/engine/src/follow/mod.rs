//! The follower: one task per followed item, long-polling its source (the Run API or the
//! hand-off store), with the pacing and the stop rules of docs/cloud-api.md.
//!
//! A follow is saved in the store before its task starts, so the store alone is enough to
//! resume every follow after a relaunch. Each answer goes through the notice rules and is saved,
//! with its notice, in one transaction; the deliverer is then woken. Tasks, not threads; one
//! shared HTTP client; no timer per follow except the one pause between two requests.
//! Never posts a banner.

pub mod pacing;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::clock::{Clock, DAY_MS, HOUR_MS};
use crate::cloud::{CloudClient, CloudError, Credentials, HANDOFF_HOLD, Handoff, HandoffId, RUN_HOLD, Run, RunId};
use crate::notice::{self, RunVerdict};
use crate::status::Problem;
use crate::store::{FollowKind, FollowRow, Grouped, HandoffStep, Store, StoreError};

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
            None => self.ended_run_from_outbox(id),
        }
    }

    fn ended_run_from_outbox(&self, id: &RunId) -> Result<Box<Run>, WaitError> {
        let card = self.inner.store.card(id.as_str()).ok().flatten();
        match (card, self.inner.store.follow(FollowKind::Run, id.as_str()).ok().flatten()) {
            (Some(card), _) => Ok(Box::new(Run {
                id: id.clone(),
                task: card.task,
                status: match card.outcome.as_str() {
                    "finished" => crate::cloud::RunStatus::Succeeded,
                    "cancelled" => crate::cloud::RunStatus::Cancelled,
                    _ => crate::cloud::RunStatus::Failed,
                },
                outcome: serde_json::from_value(serde_json::Value::String(card.outcome)).ok(),
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

    async fn follow_loop(&self, session: &Session, row: FollowRow, stop: &CancellationToken) -> FollowEnd {
        let inner = &self.inner;
        let mut progress = Progress { cursor: row.cursor, changed_at: row.changed_at, failures: 0, title: row.title.clone() };
        let full = match row.kind {
            FollowKind::Run => RUN_HOLD,
            FollowKind::Handoff => HANDOFF_HOLD,
        };
        // docs/cloud-api.md, "Pacing": the first hold is drawn, so that follows started together
        // spread over the beats, and every hold ends on a beat, so that one wake-up serves many.
        let mut hold = inner.pacing.first_hold(full, rand::random());
        loop {
            let now = inner.clock.now_ms();
            let expired = match row.kind {
                FollowKind::Run => now - row.started_at >= inner.limits.run_age_ms,
                FollowKind::Handoff => now - progress.changed_at >= inner.limits.handoff_idle_ms,
            };
            if expired {
                self.end_in_outbox(&row, "expired");
                return FollowEnd::Expired;
            }
            let asked = tokio::time::Instant::now();
            // The wait, and what is done with its answer, are boxed: a follow's task then weighs
            // only what it keeps between asks, and the wait in flight only what a wait needs
            // (10,000 follows are 10,000 of each; `scripts/bench` row 2, memory).
            let on_beat = inner.pacing.on_beat(hold, now);
            let asking = Box::pin(self.ask(&row, session.credentials(), progress.cursor, on_beat));
            hold = full;
            let answer = tokio::select! {
                biased;
                _ = stop.cancelled() => return FollowEnd::Stopped(stop_reason(session)),
                a = asking => a,
            };
            let pause = match Box::pin(self.take_answer(&row, session, &mut progress, answer, asked.elapsed())).await {
                Ok(pause) => pause,
                Err(end) => return end,
            };
            if progress.failures > 0 {
                // Backing off: until the pause is over, or the cloud is seen again.
                tokio::select! {
                    biased;
                    _ = stop.cancelled() => return FollowEnd::Stopped(stop_reason(session)),
                    _ = tokio::time::sleep(pause) => {}
                    _ = inner.back.notified() => {
                        tokio::time::sleep(WAKE_SPREAD.mul_f64(rand::random())).await;
                    }
                }
            } else if !pause.is_zero() {
                tokio::select! {
                    biased;
                    _ = stop.cancelled() => return FollowEnd::Stopped(stop_reason(session)),
                    _ = tokio::time::sleep(pause) => {}
                }
            }
        }
    }

    /// What an answer (or a failure) means for the follow: the pause before the next ask, or
    /// the follow's end.
    async fn take_answer(
        &self,
        row: &FollowRow,
        session: &Session,
        progress: &mut Progress,
        answer: Result<Answer, CloudError>,
        elapsed: std::time::Duration,
    ) -> Result<std::time::Duration, FollowEnd> {
        let inner = &self.inner;
        Ok(match answer {
            Ok(answer) => {
                progress.failures = 0;
                self.reachable(None);
                let named = match &answer {
                    Answer::Run(run) => notice::run_title(&run.task),
                    Answer::Handoff(h) => notice::handoff_title(h),
                };
                if progress.title.as_ref() != Some(&named) {
                    let (kind, id, name) = (row.kind, row.id.clone(), named.clone());
                    match self.on_store(move |o| o.set_follow_title(kind, &id, &name)).await {
                        Ok(changed) => {
                            if changed {
                                let _ = inner.events.send(FollowerEvent::Named);
                            }
                            progress.title = Some(named);
                        }
                        Err(e) => tracing::info!(id = %row.id, "naming the follow: {e}"),
                    }
                }
                let recorded = match answer {
                    Answer::Run(run) => self.record_run(row, session, run).await,
                    Answer::Handoff(h) => self.record_handoff(row, session, &mut progress.cursor, &mut progress.changed_at, h).await,
                };
                match recorded {
                    Ok(Some(end)) => return Err(end),
                    Ok(None) => inner.pacing.after_answer(elapsed),
                    // The store could not save it: ask again later, the server still has it.
                    Err(e) => {
                        progress.failures += 1;
                        self.problem(Problem::AnswerNotSaved { id: row.id.clone(), end: false, why: e.to_string() });
                        inner.pacing.after_failure(progress.failures, None, elapsed, rand::random())
                    }
                }
            }
            Err(CloudError::Gone { status, .. }) => {
                self.end_in_outbox(row, &format!("gone ({status})"));
                return Err(FollowEnd::Gone(status));
            }
            Err(CloudError::StaleToken) => {
                let _ = inner.events.send(FollowerEvent::StaleToken { account: session.account.clone() });
                // The engine renews the token (the next request uses it) or signs out (stop).
                progress.failures += 1;
                inner.pacing.after_failure(progress.failures, None, elapsed, rand::random())
            }
            Err(e) => {
                progress.failures += 1;
                if matches!(e, CloudError::Unreadable { .. }) {
                    self.problem(Problem::Unreadable { why: e.to_string() });
                } else {
                    // A proxy's refusal is no passing hiccup: said at once.
                    let unreachable = match e {
                        CloudError::ProxyRefused { .. } => true,
                        CloudError::RetryLater { .. } | CloudError::Unreachable { .. } => progress.failures >= UNREACHABLE_AFTER,
                        _ => false,
                    };
                    if unreachable {
                        self.reachable(Some(e.to_string()));
                        // A server that answers with errors is not looked for: it answers.
                        if e.is_unreachable() {
                            self.scout(session);
                        }
                    }
                }
                let pause = inner.pacing.after_failure(progress.failures, e.retry_after(), elapsed, rand::random());
                if !matches!(e, CloudError::Unreadable { .. }) {
                    tracing::info!(id = %row.id, failures = progress.failures, backoff_ms = pause.as_millis() as u64, "{e}");
                }
                pause
            }
        })
    }

    async fn ask(&self, row: &FollowRow, cred: Credentials, cursor: u64, hold: Duration) -> Result<Answer, CloudError> {
        let cloud = &self.inner.cloud;
        match row.kind {
            FollowKind::Run => {
                let id = RunId::parse(&row.id).map_err(|e| bad_stored_id(&row.id, e))?;
                cloud.wait_run(&cred, &id, hold).await.map(Answer::Run)
            }
            FollowKind::Handoff => {
                let id = HandoffId::parse(&row.id).map_err(|e| bad_stored_id(&row.id, e))?;
                cloud.wait_handoff(&cred, &id, cursor, hold).await.map(Answer::Handoff)
            }
        }
    }

    async fn record_run(&self, row: &FollowRow, session: &Session, run: Run) -> Result<Option<FollowEnd>, StoreError> {
        // A Run still going is the common answer (every hold that ends unchanged): no store read.
        if !run.is_terminal() {
            return Ok(None);
        }
        let (run, id, account, now) = (Box::new(run), row.id.clone(), session.account.clone(), self.inner.clock.now_ms());
        // The cancel note is read in the write's commit, not on a runtime worker, which would
        // wait for the connection while a burst of ends commits and hold up the answers still
        // coming in.
        let (told, run) = self
            .on_store(move |o| {
                let notice = match notice::run_verdict(&run, o.cancel_noted(&id)?) {
                    RunVerdict::Going | RunVerdict::EndedQuietly => None,
                    RunVerdict::Ended(n) => Some(n),
                };
                Ok((o.record_run_end(&run, notice.as_deref(), &account, now)?, run))
            })
            .await?;
        if told {
            self.inner.deliver.notify_one();
        }
        Ok(Some(FollowEnd::RunEnded(run)))
    }

    /// A store write in the store's next group commit: the follows' writes wait there
    /// together, without a thread each, and do not hold the runtime's few workers through
    /// the commit.
    async fn on_store<T: Send + 'static>(
        &self,
        write: impl FnOnce(&Grouped) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.inner.store.write_grouped(write).await
    }

    async fn record_handoff(
        &self,
        row: &FollowRow,
        session: &Session,
        cursor: &mut u64,
        changed_at: &mut i64,
        h: Handoff,
    ) -> Result<Option<FollowEnd>, StoreError> {
        let verdict = notice::handoff_verdict(&h);
        // An answer at the hold's end with nothing new is no change (and no age reset).
        if h.version <= *cursor && !verdict.closes {
            return Ok(None);
        }
        let now = self.inner.clock.now_ms();
        let (id, version, notice, closes, account) =
            (row.id.clone(), h.version, verdict.notice.clone(), verdict.closes, session.account.clone());
        let told = self
            .on_store(move |o| {
                o.record_handoff(HandoffStep { id: &id, version, notice: notice.as_ref(), silent: false, closes }, &account, now)
            })
            .await?;
        if told {
            self.inner.deliver.notify_one();
        }
        *cursor = (*cursor).max(h.version);
        *changed_at = now;
        Ok(verdict.closes.then(|| FollowEnd::HandoffClosed(Box::new(h))))
    }

    fn end_in_outbox(&self, row: &FollowRow, reason: &str) {
        if let Err(e) = self.inner.store.end_follow(row.kind, &row.id, reason, self.inner.clock.now_ms()) {
            self.problem(Problem::AnswerNotSaved { id: row.id.clone(), end: true, why: e.to_string() });
        }
    }

    /// Tells the engine when the cloud goes unreachable (`Some(why)`) or answers again (`None`),
    /// once per change.
    fn reachable(&self, unreachable: Option<String>) {
        use std::sync::atomic::Ordering;
        let was = self.inner.unreachable.swap(unreachable.is_some(), Ordering::Relaxed);
        match unreachable {
            Some(why) if !was => {
                tracing::warn!("the cloud cannot be reached: {why}");
                let _ = self.inner.events.send(FollowerEvent::Unreachable(why));
            }
            None if was => {
                tracing::info!("the cloud answers again: the follows backing off ask at once");
                self.inner.back.notify_waiters();
                let _ = self.inner.events.send(FollowerEvent::Reachable);
            }
            _ => {}
        }
    }

    /// Looks for the cloud every [`SCOUT_EVERY`] while it is unreachable (one scout at a time,
    /// for the session's account), and says when it answers again.
    fn scout(&self, session: &Session) {
        use std::sync::atomic::Ordering;
        if self.inner.scouting.swap(true, Ordering::Relaxed) {
            return;
        }
        let (this, stop, credentials) = (self.clone(), session.stop.clone(), session.credentials());
        self.inner.tracker.spawn(async move {
            while this.inner.unreachable.load(Ordering::Relaxed) {
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(SCOUT_EVERY) => {}
                }
                // Any answer is the cloud's; only a failure to reach it keeps looking.
                match this.inner.cloud.look(&credentials).await {
                    Err(e) if e.is_unreachable() => {}
                    _ => this.reachable(None),
                }
            }
            this.inner.scouting.store(false, Ordering::Relaxed);
        });
    }

    fn problem(&self, problem: Problem) {
        tracing::warn!("{problem}");
        let _ = self.inner.events.send(FollowerEvent::Problem(problem));
    }
}

enum Answer {
    Run(Run),
    Handoff(Handoff),
}

fn stop_reason(session: &Session) -> String {
    format!("stopped (account {} signed out, switched, or the app quit)", session.account)
}

fn bad_stored_id(id: &str, e: crate::cloud::BadId) -> CloudError {
    CloudError::Unreadable { what: format!("stored follow {id:?}"), detail: e.to_string() }
}

/// The token that stops a group of tasks (re-exported so shells need not name tokio-util).
pub type StopToken = CancellationToken;
