//! The engine: wires cloud → follow → notice → outbox → desktop, owns the tasks and their
//! shutdown, and offers the shell (daemon, tray) a handle: commands in, state out.
//!
//! It holds no product rule of its own: what is news is `notice`, what is durable is `outbox`,
//! how to ask is `follow`. Nothing here is global; tests build several engines side by side.
//!
//! This file holds the handle, follows, local notices and the status; beside it:
//! - `account`: signing in, staying signed in (renewal, the saved sign-in), signing out;
//! - `deliver`: untold notices through the delivery policy to banners, one failure at a time;
//! - `click`: what a click, a menu line or an `open` link opens (a terminal, a link, a card);
//! - `focus`: the focus rule (what the person is looking at gets no banner), and what terminals
//!   report about the sessions they show;
//! - `keep`: what is kept and how long (cards, the history);
//! - `settings`: the `[delivery]` settings in force, and the pause.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use secrecy::SecretString;
use serde::Serialize;
use tokio::sync::{Notify, broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::clock::Clock;
use crate::cloud::{CloudClient, CloudError, Credentials, Handoff, HandoffId, Me, Run, RunId, Team, TeamId};
use crate::desktop::Desktop;
use crate::follow::{FollowError, Follower, FollowerEvent, Limits, Pacing, Session, WaitError};
use crate::notice::local::LocalPost;
use crate::notice::{self, Notice, Source};
use crate::outbox::{AccountRow, FollowKind, FollowRow, HandoffStep, Outbox, OutboxError, StoredNotice};

/// How long a problem stays in the status after it was last seen.
const PROBLEM_SHOWN_MS: i64 = 3_600_000;
/// How long a request that needs the account waits for the saved sign-in to be restored at start
/// (a keyring just after login can take seconds).
pub const SIGN_IN_RESTORE_WAIT: Duration = Duration::from_secs(20);
/// How long a sign-in waits for the host to choose where to keep it (the keyring asked at start).
const SECRET_STORE_WAIT: Duration = Duration::from_secs(90);

mod account;
mod click;
mod deliver;
mod focus;
mod keep;
mod settings;
mod settle;
mod views;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Outbox(#[from] OutboxError),
    #[error(transparent)]
    Client(#[from] crate::cloud::client::ClientConfigError),
    #[error("signing in failed: {0}")]
    SignIn(CloudError),
    #[error("team {team} is not one of this account's teams ({available})")]
    NoSuchTeam { team: String, available: String },
    #[error("not signed in: sign in first (CMUX_TRAY_TOKEN, or the tray's Sign in…)")]
    SignedOut,
    #[error("already following {max} items, the most at once: {id} was not followed (it is listed as a problem)")]
    TooManyFollows { id: String, max: usize },
    #[error("cancelling {id} failed: {source}")]
    Cancel { id: String, source: CloudError },
    #[error("no device sign-in was started")]
    NoDeviceSignIn,
    #[error("the sign-in code expired before it was approved: start again")]
    DeviceExpired,
}

/// How to build an engine.
pub struct EngineOptions {
    pub api_url: String,
    pub auth_url: String,
    /// HTTP/2 (the default) or HTTP/1.1 to the cloud.
    pub transport: crate::cloud::client::Transport,
    pub database: PathBuf,
    pub desktop: Arc<dyn Desktop>,
    pub clock: Clock,
    pub pacing: Pacing,
    pub limits: Limits,
    /// The config file whose `[delivery]` table is the delivery policy (re-read when it changes).
    pub config_file: Option<PathBuf>,
    /// Where the refresh token is kept; `None` keeps nothing (a token given directly).
    pub secrets: Option<crate::secrets::SecretStore>,
    /// This machine's terminals: bringing a notice's place forward, and the focus rule.
    pub terminals: Arc<dyn crate::terminal::Terminals>,
}

impl EngineOptions {
    pub fn new(api_url: &str, auth_url: &str, database: PathBuf, desktop: Arc<dyn Desktop>) -> Self {
        EngineOptions {
            api_url: api_url.into(),
            auth_url: auth_url.into(),
            transport: Default::default(),
            database,
            desktop,
            clock: Clock::System,
            pacing: Pacing::default(),
            limits: Limits::default(),
            config_file: None,
            secrets: None,
            terminals: Arc::new(crate::terminal::System),
        }
    }
}

/// What the shell hears about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineEvent {
    /// Something changed that a tray or window shows (account, follows, notices).
    Changed,
    /// A banner was clicked; `notice` is what it told.
    Clicked { notice: Box<StoredNotice> },
}

/// Everything `status` shows.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub account: Option<AccountRow>,
    /// When banners are paused: an RFC 3339 time, or "until resumed".
    pub paused: Option<String>,
    /// Where the sign-in is kept (the keyring, or the file fallback and why).
    pub sign_in_kept_in: Option<String>,
    /// Said in the tray when the sign-in is not in the keyring (the file fallback), never silently.
    #[serde(default)]
    pub sign_in_note: Option<String>,
    /// The signed-in account's teams as the cloud listed them at sign-in (personal first).
    #[serde(default)]
    pub teams: Vec<Team>,
    pub follows: Vec<FollowRow>,
    pub notices: Vec<StoredNotice>,
    pub problems: Vec<String>,
}

impl Status {
    /// Reads the status from a store (the running engine's, or one opened read-only).
    pub fn read(outbox: &Outbox, problems: Vec<String>) -> Result<Status, OutboxError> {
        let paused = settings::stored_pause(outbox, jiff::Timestamp::now().as_millisecond()).map(|p| match p {
            crate::policy::Pause::UntilResumed => "until resumed".to_string(),
            crate::policy::Pause::Until(t) => t.to_string(),
        });
        Ok(Status {
            account: outbox.account()?,
            paused,
            sign_in_kept_in: None,
            sign_in_note: None,
            teams: Vec::new(),
            follows: outbox.follows(200)?,
            notices: outbox.recent_notices(20)?,
            problems,
        })
    }
}

/// Where the team an account chose is kept: per account, across sign-outs.
fn team_key(account: &str) -> String {
    format!("team.{account}")
}

/// Who asked for a follow. This machine's own programs (the command line, the local socket of
/// this user) say an item was made here; a link from outside (any web page can fire a
/// `cmux-tray://` link) never does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asked {
    ThisMachine,
    Link,
}

/// Held while the sign-in at start is under way; dropped (done, failed or given up), requests
/// waiting for the account go on.
pub struct RestoringSignIn(tokio::sync::watch::Sender<bool>);

impl Drop for RestoringSignIn {
    fn drop(&mut self) {
        self.0.send_replace(false);
    }
}

/// The running engine. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    cloud: CloudClient,
    outbox: Arc<Outbox>,
    follower: Follower,
    desktop: Arc<dyn Desktop>,
    terminals: Arc<dyn crate::terminal::Terminals>,
    clock: Clock,
    session: Mutex<Option<Arc<Session>>>,
    /// Recent problems and when each was last seen (ms): shown for an hour after the last time.
    problems: Mutex<Vec<(i64, String)>>,
    /// Terminal surfaces the person is looking at, as terminals report them (`surface.focus`).
    focused: Mutex<std::collections::HashSet<(String, Option<String>)>>,
    /// Items the app's own window shows right now.
    viewing: Mutex<std::collections::HashSet<String>>,
    /// The delivery policy's settings, and where they come from.
    delivery: settings::DeliveryCell,
    /// The last sound per source (the cooldown).
    last_sound: Mutex<std::collections::HashMap<Source, i64>>,
    /// Where the refresh token is kept; chosen by the host once the keyring answered (or not).
    secrets: tokio::sync::watch::Sender<Option<crate::secrets::SecretStore>>,
    renewal: Mutex<Option<Arc<account::Renewal>>>,
    pending_device: Mutex<Option<crate::cloud::auth::DeviceStart>>,
    /// Who the signed-in account is and its teams, as `/v1/me` last said.
    me: Mutex<Option<Me>>,
    /// Why the cloud cannot be reached, while it cannot (the tray's "offline").
    offline: Mutex<Option<String>>,
    deliver: Arc<Notify>,
    /// True while the sign-in at start (the saved one, or a given token) is under way.
    restoring: tokio::sync::watch::Sender<bool>,
    /// Counts sign-outs: a restore that began before one never signs the account in again.
    sign_outs: std::sync::atomic::AtomicU64,
    /// Saves and deletes of the saved sign-in, one at a time and in order.
    secret_writes: tokio::sync::Mutex<()>,
    /// `sign_outs` when the sign-in at start began.
    restore_began: std::sync::atomic::AtomicU64,
    /// When the deliverer decides: at once for a notice alone, after a settle for a burst.
    settle: Mutex<settle::Settle>,
    /// Per source, the notice told alone at the head of a chain (chain, key): a burst that
    /// follows it takes its banner's place.
    leaders: Mutex<std::collections::HashMap<Source, (u64, String)>>,
    /// How often the server refused each untold notice's banner.
    tries: Mutex<std::collections::HashMap<String, u32>>,
    /// Banners posted whose "told" could not be saved (notice key → banner id): never posted twice.
    unrecorded: Mutex<std::collections::HashMap<String, u32>>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    events: broadcast::Sender<EngineEvent>,
}

impl Engine {
    /// Opens the store and starts the deliverer; nothing is followed until someone signs in.
    pub async fn start(opts: EngineOptions) -> Result<Engine, EngineError> {
        let cloud = CloudClient::new(&opts.api_url, &opts.auth_url, opts.transport)?;
        let outbox = Arc::new(Outbox::open(&opts.database)?);
        let shutdown = CancellationToken::new();
        let tracker = TaskTracker::new();
        let deliver = Arc::new(Notify::new());
        let (follower_tx, follower_rx) = mpsc::unbounded_channel();
        let follower = Follower::new(
            cloud.clone(),
            outbox.clone(),
            opts.clock.clone(),
            opts.pacing,
            opts.limits,
            tracker.clone(),
            deliver.clone(),
            follower_tx,
        );
        let (events, _) = broadcast::channel(256);
        let engine = Engine {
            inner: Arc::new(Inner {
                cloud,
                outbox,
                follower,
                desktop: opts.desktop,
                terminals: opts.terminals,
                clock: opts.clock,
                session: Mutex::new(None),
                problems: Mutex::new(Vec::new()),
                focused: Mutex::new(Default::default()),
                viewing: Mutex::new(Default::default()),
                delivery: settings::DeliveryCell::new(opts.config_file.clone()),
                last_sound: Mutex::new(Default::default()),
                secrets: tokio::sync::watch::Sender::new(opts.secrets),
                renewal: Mutex::new(None),
                pending_device: Mutex::new(None),
                me: Mutex::new(None),
                offline: Mutex::new(None),
                deliver,
                restoring: tokio::sync::watch::Sender::new(false),
                sign_outs: Default::default(),
                restore_began: Default::default(),
                secret_writes: Default::default(),
                settle: Mutex::new(Default::default()),
                leaders: Mutex::new(Default::default()),
                tries: Mutex::new(Default::default()),
                unrecorded: Mutex::new(Default::default()),
                shutdown,
                tracker,
                events,
            }),
        };
        engine.load_delivery_settings();
        engine.spawn_deliverer();
        engine.spawn_follower_events(follower_rx);
        engine.spawn_sweeper();
        engine.spawn_desktop_events();
        Ok(engine)
    }

    pub fn outbox(&self) -> &Outbox {
        &self.inner.outbox
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.inner.events.subscribe()
    }

    fn changed(&self) {
        let _ = self.inner.events.send(EngineEvent::Changed);
    }

    fn session(&self) -> Option<Arc<Session>> {
        self.inner.session.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn signed_in(&self) -> Result<Arc<Session>, EngineError> {
        self.session().ok_or(EngineError::SignedOut)
    }

    /// Where the refresh token is kept from now on (the host chooses it once the keyring answered).
    pub fn set_secret_store(&self, store: crate::secrets::SecretStore) {
        self.inner.secrets.send_replace(Some(store));
        self.changed();
    }

    fn secret_store(&self) -> Option<crate::secrets::SecretStore> {
        self.inner.secrets.borrow().clone()
    }

    /// The store, waiting for the host's choice while the sign-in at start is under way (a sign-in
    /// made meanwhile is kept in the store chosen, not lost).
    async fn secret_store_ready(&self) -> Option<crate::secrets::SecretStore> {
        if self.secret_store().is_none() && *self.inner.restoring.borrow() {
            let mut chosen = self.inner.secrets.subscribe();
            let _ = tokio::time::timeout(SECRET_STORE_WAIT, chosen.wait_for(Option::is_some)).await;
        }
        self.secret_store()
    }

    /// Says that the sign-in at start is under way until the returned guard is dropped: requests
    /// that need the account wait for it (see [`Self::account_ready`]).
    pub fn restoring_sign_in(&self) -> RestoringSignIn {
        let sign_outs = self.inner.sign_outs.load(std::sync::atomic::Ordering::SeqCst);
        self.inner.restore_began.store(sign_outs, std::sync::atomic::Ordering::SeqCst);
        self.inner.restoring.send_replace(true);
        RestoringSignIn(self.inner.restoring.clone())
    }

    /// Waits (at most `within`) while the sign-in at start is under way, so a request made just
    /// after start is not refused as "not signed in" while the keyring is still answering.
    pub async fn account_ready(&self, within: Duration) {
        if self.session().is_some() {
            return;
        }
        let mut restoring = self.inner.restoring.subscribe();
        let _ = tokio::time::timeout(within, restoring.wait_for(|r| !r)).await;
    }

    /// The cloud API's origin in use.
    pub fn api_url(&self) -> &str {
        self.inner.cloud.api_url().as_str()
    }

    /// The sign-in origin in use.
    pub fn auth_url(&self) -> &str {
        self.inner.cloud.auth_url().as_str()
    }

    /// How many follows have a running task.
    pub fn live_follows(&self) -> usize {
        self.inner.follower.live_count()
    }

    // ── account ──────────────────────────────────────────────────────────────────────────────

    /// Signs in with an access token. The same account again only renews the token; another
    /// account stops the follows of the one before (they stay saved under it) and resumes its own.
    /// Then the hand-off list (and the active Run list, where offered) is read in the background.
    pub async fn sign_in_with_token(&self, token: SecretString, team: Option<TeamId>) -> Result<Me, EngineError> {
        let mut cred = Credentials { access_token: token, team };
        let me = self.who_is(&mut cred).await?;
        self.activate(me, cred)
    }

    /// Who the token belongs to, and whether the chosen team is theirs. With no team given, the
    /// team this account chose last (kept across sign-outs) is filled in while it is still theirs.
    async fn who_is(&self, cred: &mut Credentials) -> Result<Me, EngineError> {
        let me = self.inner.cloud.me(&Credentials { team: None, ..cred.clone() }).await.map_err(EngineError::SignIn)?;
        if cred.team.is_none() {
            let remembered = self.inner.outbox.get(&team_key(&me.user_id))?.and_then(|t| TeamId::parse(&t).ok());
            cred.team = remembered.filter(|t| me.teams.iter().any(|m| &m.id == t));
        }
        if let Some(team) = &cred.team
            && !me.teams.iter().any(|t| &t.id == team)
        {
            let available = me.teams.iter().map(|t| t.id.to_string()).collect::<Vec<_>>().join(", ");
            return Err(EngineError::NoSuchTeam { team: team.to_string(), available });
        }
        *self.inner.me.lock().unwrap_or_else(|p| p.into_inner()) = Some(me.clone());
        Ok(me)
    }

    /// The signed-in account's teams (personal first), asked of the cloud now so a team joined
    /// since the sign-in shows; the list from the sign-in when the cloud cannot be asked.
    pub async fn teams(&self) -> Result<Vec<Team>, EngineError> {
        let session = self.signed_in()?;
        match self.who_is(&mut session.credentials()).await {
            Ok(me) => Ok(me.teams),
            Err(e) => {
                let me = self.inner.me.lock().unwrap_or_else(|p| p.into_inner());
                me.as_ref().filter(|me| me.user_id == session.account).map(|me| me.teams.clone()).ok_or(e)
            }
        }
    }

    /// Chooses the team whose Runs and hand-offs this account follows, and remembers it for the
    /// account. Follows under way go on (their next request carries the team); the lists are
    /// read again so the team's open items are adopted.
    pub async fn choose_team(&self, team: TeamId) -> Result<(), EngineError> {
        let session = self.signed_in()?;
        let mut cred = Credentials { team: Some(team.clone()), ..session.credentials() };
        self.who_is(&mut cred).await?;
        if self.session().is_none_or(|s| !Arc::ptr_eq(&s, &session)) {
            return Err(EngineError::SignedOut); // signed out or switched while asking
        }
        session.renew(cred);
        if let Some(mut row) = self.inner.outbox.account()?.filter(|a| a.user_id == session.account) {
            row.team = Some(team.to_string());
            self.inner.outbox.set_account(&row)?;
        }
        self.inner.outbox.set(&team_key(&session.account), Some(team.as_str()))?;
        tracing::info!(%team, "team chosen");
        self.spawn_listing(session);
        self.changed();
        Ok(())
    }

    /// Makes `me` the signed-in account with these credentials (see [`Self::sign_in_with_token`]).
    fn activate(&self, me: Me, cred: Credentials) -> Result<Me, EngineError> {
        let team = cred.team.clone();
        let row = AccountRow {
            user_id: me.user_id.clone(),
            email: me.email.clone(),
            team: team.as_ref().map(|t| t.to_string()),
            signed_in_at: self.inner.clock.now_ms(),
            problem: None,
        };
        let session = {
            let mut slot = self.inner.session.lock().unwrap_or_else(|p| p.into_inner());
            match slot.as_ref() {
                Some(s) if s.account == me.user_id && s.credentials().team == team => {
                    s.renew(cred);
                    drop(slot);
                    self.inner.outbox.set_account(&row)?;
                    self.changed();
                    return Ok(me);
                }
                Some(old) => {
                    old.stop.cancel();
                    if old.account != me.user_id {
                        // A switch of account: the one before keeps its follows (parked under it)
                        // but not its saved sign-in.
                        let (this, account) = (self.clone(), old.account.clone());
                        self.inner.tracker.spawn(async move { this.forget_secret(&account).await });
                    }
                }
                None => {}
            }
            let session = Session::new(&me.user_id, cred, self.inner.shutdown.child_token());
            *slot = Some(session.clone());
            session
        };
        self.inner.outbox.set_account(&row)?;
        let resumed = self.inner.follower.resume(&session)?;
        tracing::info!(account = %me.email, resumed, "signed in");
        self.spawn_listing(session);
        self.changed();
        Ok(me)
    }

    /// Signs out: every follow of the account stops (they stay saved under it), its saved
    /// sign-in is deleted and the account is forgotten.
    pub async fn sign_out(&self) -> Result<(), EngineError> {
        self.inner.sign_outs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let session = self.inner.session.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(s) = &session {
            s.stop.cancel();
        }
        self.inner.renewal.lock().unwrap_or_else(|p| p.into_inner()).take();
        let account = session.map(|s| s.account.clone()).or(self.inner.outbox.account()?.map(|a| a.user_id));
        if let Some(account) = account {
            self.forget_secret(&account).await;
        }
        self.inner.outbox.clear_account()?;
        self.inner.me.lock().unwrap_or_else(|p| p.into_inner()).take();
        tracing::info!("signed out");
        self.changed();
        Ok(())
    }

    /// The token was refused and cannot be renewed: stop, say so (tray state and one banner).
    fn sign_in_needed(&self, account: &str) {
        let session = {
            let mut slot = self.inner.session.lock().unwrap_or_else(|p| p.into_inner());
            match slot.as_ref() {
                Some(s) if s.account != account => return, // another account is signed in now
                Some(_) => slot.take(),
                None => None, // not signed in yet (a refused refresh at start): say so all the same
            }
        };
        if let Some(s) = session {
            s.stop.cancel();
        }
        let problem = "The cloud refused the access token: sign in again.";
        let _ = self.inner.outbox.set_account_problem(Some(problem));
        let now = self.inner.clock.now_ms();
        let notice = Notice {
            key: format!("account:{account}:sign-in-needed:{now}"),
            item: format!("account:{account}"),
            source: Source::App,
            status: "sign-in-needed".into(),
            title: "cmux-tray: sign in again".into(),
            body: "The cloud refused the access token; Runs and hand-offs are not being followed.".into(),
            urgent: false,
            local: None,
            session_id: None,
            host: None,
        };
        if self.inner.outbox.record_notice(&notice, now).unwrap_or(false) {
            self.inner.deliver.notify_one();
        }
        self.note_problem(problem.into());
        self.changed();
    }

    /// A follow that could not start is a problem the person sees, never a silent drop.
    fn not_followed(&self, e: FollowError) -> EngineError {
        match e {
            FollowError::TooMany { id, max } => {
                self.note_problem(format!("Following {max} items, the most at once: {id} was not followed"));
                self.changed();
                EngineError::TooManyFollows { id, max }
            }
            FollowError::Store(e) => {
                self.note_problem(format!("a follow could not be saved: {e}"));
                EngineError::Outbox(e)
            }
        }
    }

    fn note_problem(&self, problem: String) {
        let now = self.inner.clock.now_ms();
        let mut problems = self.inner.problems.lock().unwrap_or_else(|p| p.into_inner());
        // The same problem again is seen again, not listed twice.
        problems.retain(|(_, p)| *p != problem);
        problems.push((now, problem));
        let excess = problems.len().saturating_sub(20);
        problems.drain(..excess);
    }

    // ── follows ──────────────────────────────────────────────────────────────────────────────

    /// Follows a Run handed over from this machine.
    pub fn follow_run(&self, id: &RunId) -> Result<(), EngineError> {
        self.follow_run_from(id, Asked::ThisMachine)
    }

    /// Follows a hand-off made from this machine: everything from its first version is news.
    pub fn follow_handoff(&self, id: &HandoffId) -> Result<(), EngineError> {
        self.follow_handoff_from(id, Asked::ThisMachine)
    }

    /// Follows a Run, asked by `asked`.
    pub fn follow_run_from(&self, id: &RunId, asked: Asked) -> Result<(), EngineError> {
        let session = self.signed_in()?;
        self.inner.follower.follow_run(&session, id, asked == Asked::ThisMachine).map_err(|e| self.not_followed(e))?;
        self.changed();
        Ok(())
    }

    /// Follows a hand-off, asked by `asked`: from its first version either way; only one made on
    /// this machine may later open a workspace on the host the cloud names (docs/notices.md §4).
    pub fn follow_handoff_from(&self, id: &HandoffId, asked: Asked) -> Result<(), EngineError> {
        let session = self.signed_in()?;
        self.inner.follower.follow_handoff(&session, id, 0, asked == Asked::ThisMachine).map_err(|e| self.not_followed(e))?;
        self.changed();
        Ok(())
    }

    /// Cancels a Run. The note that this app cancelled it is saved before the request goes out,
    /// so the end it causes never tells, whatever races or relaunches come between.
    pub async fn cancel_run(&self, id: &RunId) -> Result<(), EngineError> {
        let session = self.signed_in()?;
        self.inner.outbox.note_cancel(id.as_str(), self.inner.clock.now_ms())?;
        self.inner.follower.follow_run(&session, id, true).map_err(|e| self.not_followed(e))?;
        self.inner.cloud.cancel_run(&session.credentials(), id).await.map_err(|source| EngineError::Cancel { id: id.to_string(), source })
    }

    /// Waits for a Run's end (see [`Follower::wait_run_end`]).
    pub async fn wait_run_end(&self, id: &RunId) -> Result<Box<Run>, WaitError> {
        self.inner.follower.wait_run_end(id).await
    }

    // ── local notices (this machine's terminals) ─────────────────────────────────────────────

    /// A notice from a terminal: saved, then told like any other. Returns it with its cmux id.
    pub fn post_local(&self, post: LocalPost) -> Result<Notice, EngineError> {
        let id = uuid::Uuid::new_v4().to_string().to_uppercase();
        let notice = notice::local::local_notice(&post, &id);
        if self.inner.outbox.record_notice(&notice, self.inner.clock.now_ms())? {
            self.inner.deliver.notify_one();
        }
        self.changed();
        Ok(notice)
    }

    /// The newest `limit` local notices, oldest first.
    pub fn local_notices(&self, limit: usize) -> Result<Vec<StoredNotice>, EngineError> {
        Ok(self.inner.outbox.local_notices(limit)?)
    }

    /// Marks local notices read (one, or all) and withdraws their banners. Returns how many.
    pub async fn mark_local_read(&self, cmux_id: Option<&str>) -> Result<usize, EngineError> {
        let keys = self.inner.outbox.mark_local_read(cmux_id, self.inner.clock.now_ms())?;
        self.withdraw_banners_of(&keys).await?;
        Ok(keys.len())
    }

    /// Whether a local notice with this cmux id is known.
    pub fn local_notice_exists(&self, cmux_id: &str) -> Result<bool, EngineError> {
        Ok(self.inner.outbox.local_notice_exists(cmux_id)?)
    }

    /// Forgets every local notice and withdraws their banners.
    pub async fn clear_local(&self) -> Result<(), EngineError> {
        for banner in self.inner.outbox.clear_local()? {
            self.withdraw(banner).await;
        }
        self.changed();
        Ok(())
    }

    /// "Mark all read" (the tray): every notice read, their banners taken away.
    pub async fn mark_all_read(&self) -> Result<usize, EngineError> {
        let keys = self.inner.outbox.mark_all_read(self.inner.clock.now_ms())?;
        self.withdraw_banners_of(&keys).await?;
        Ok(keys.len())
    }

    /// The shell showed what a click asked for (a card, the history): the notice is read.
    pub async fn revealed(&self, notice_key: &str) -> Result<(), EngineError> {
        self.inner.outbox.mark_read(notice_key, self.inner.clock.now_ms())?;
        self.withdraw_banners_of(&[notice_key.to_string()]).await
    }

    /// What the tray shows now.
    pub fn tray_view(&self) -> Result<crate::view::TrayView, EngineError> {
        Ok(crate::view::tray_view(&self.status()?))
    }

    /// Takes away the banners of these notices where they are still their item's live banner.
    async fn withdraw_banners_of(&self, keys: &[String]) -> Result<(), EngineError> {
        for key in keys {
            let Some(n) = self.inner.outbox.notice(key)? else { continue };
            if let Some(banner) = n.banner_id
                && self.inner.outbox.live_banner(&n.item)? == Some(banner)
            {
                self.withdraw(banner).await;
            }
        }
        self.changed();
        Ok(())
    }

    /// Takes one banner away. A banner the person already closed is no error worth more than a line.
    async fn withdraw(&self, banner: u32) {
        if let Err(e) = self.inner.desktop.withdraw(banner).await {
            tracing::info!("withdrawing banner {banner}: {e}");
        }
    }

    pub fn status(&self) -> Result<Status, EngineError> {
        let offline = self.inner.offline.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut problems: Vec<String> = offline.map(|why| format!("Offline: the cloud cannot be reached ({why})")).into_iter().collect();
        {
            // A problem not seen for an hour is over: the icon does not stay red for a hiccup.
            let since = self.inner.clock.now_ms() - PROBLEM_SHOWN_MS;
            let mut recent = self.inner.problems.lock().unwrap_or_else(|p| p.into_inner());
            recent.retain(|(seen, _)| *seen >= since);
            problems.extend(recent.iter().map(|(_, p)| p.clone()));
        }
        problems.extend(self.inner.delivery.problem());
        let mut status = Status::read(&self.inner.outbox, problems)?;
        let secrets = self.secret_store();
        status.sign_in_kept_in = secrets.as_ref().map(|s| s.describe());
        status.sign_in_note = secrets.as_ref().and_then(|s| s.fallback_note());
        let me = self.inner.me.lock().unwrap_or_else(|p| p.into_inner()).clone();
        status.teams =
            me.filter(|me| status.account.as_ref().is_some_and(|a| a.user_id == me.user_id)).map(|me| me.teams).unwrap_or_default();
        Ok(status)
    }

    /// Stops everything and waits for every task to finish.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        self.inner.tracker.close();
        self.inner.tracker.wait().await;
    }

    // ── background work ──────────────────────────────────────────────────────────────────────

    /// Reads the hand-off list (and the active Runs, where offered) at sign-in and follows what
    /// is open and not yet known, from the version the list shows. Retried until it succeeds or
    /// the session ends; a new sign-in replaces it (the old session's token stops it).
    fn spawn_listing(&self, session: Arc<Session>) {
        let this = self.clone();
        self.inner.tracker.spawn(async move {
            let pacing = Pacing::default();
            let mut failures = 0;
            loop {
                let attempt = async { this.adopt_listed(&session).await };
                let result = tokio::select! {
                    _ = session.stop.cancelled() => return,
                    r = attempt => r,
                };
                match result {
                    Ok(()) => return,
                    Err(e) => {
                        failures += 1;
                        if matches!(e, CloudError::StaleToken) {
                            // Renew (or sign out visibly) like any follow would; then read again.
                            this.on_stale_token(&session.account);
                        }
                        tracing::info!("reading the lists at sign-in: {e}");
                        let pause = pacing.after_failure(failures, e.retry_after(), Duration::ZERO, rand::random());
                        tokio::select! {
                            _ = session.stop.cancelled() => return,
                            _ = tokio::time::sleep(pause) => {}
                        }
                    }
                }
            }
        });
    }

    async fn adopt_listed(&self, session: &Arc<Session>) -> Result<(), CloudError> {
        let cred = session.credentials();
        let handoffs = match self.inner.cloud.list_handoffs(&cred).await {
            Ok(l) => Some(l),
            // Where the store is not deployed every read is a 404: nothing to follow.
            Err(CloudError::Gone { .. }) => None,
            Err(e) => return Err(e),
        };
        let runs = self.inner.cloud.active_runs(&cred).await?;
        if let Some(listing) = handoffs {
            for problem in listing.problems {
                self.note_problem(problem);
            }
            for h in listing.items.iter().filter(|h| !h.is_closed()) {
                if let Err(e) = self.adopt_handoff(session, h) {
                    self.not_followed(e);
                }
            }
        }
        if let Some(listing) = runs {
            for problem in listing.problems {
                self.note_problem(problem);
            }
            for run in listing.items.iter().filter(|r| !r.is_terminal()) {
                if let Err(e) = self.inner.follower.follow_run(session, &run.id, false) {
                    self.not_followed(e);
                }
                let _ = self.inner.outbox.set_follow_title(FollowKind::Run, run.id.as_str(), &notice::run_title(&run.task));
            }
        }
        self.changed();
        Ok(())
    }

    /// A hand-off from the list: follow it from the listed version, its current state known but
    /// not news. One already known keeps its own cursor.
    fn adopt_handoff(&self, session: &Arc<Session>, h: &Handoff) -> Result<(), FollowError> {
        self.inner.follower.room_for(FollowKind::Handoff, h.id.as_str())?;
        let outbox = &self.inner.outbox;
        let now = self.inner.clock.now_ms();
        if outbox.add_follow(FollowKind::Handoff, h.id.as_str(), &session.account, h.version, false, now)? {
            let verdict = notice::handoff_verdict(h);
            let step = HandoffStep { id: h.id.as_str(), version: h.version, notice: verdict.notice.as_ref(), silent: true, closes: false };
            outbox.record_handoff(step, &session.account, now)?;
        }
        outbox.set_follow_title(FollowKind::Handoff, h.id.as_str(), &notice::handoff_title(h))?;
        self.inner.follower.follow_handoff(session, &h.id, h.version, false)
    }

    fn spawn_follower_events(&self, mut rx: mpsc::UnboundedReceiver<FollowerEvent>) {
        let this = self.clone();
        self.inner.tracker.spawn(async move {
            loop {
                let event = tokio::select! {
                    _ = this.inner.shutdown.cancelled() => return,
                    e = rx.recv() => match e { Some(e) => e, None => return },
                };
                match event {
                    FollowerEvent::StaleToken { account } => this.on_stale_token(&account),
                    FollowerEvent::Problem(p) => this.note_problem(p),
                    FollowerEvent::Unreachable(why) => {
                        *this.inner.offline.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
                        this.changed();
                    }
                    FollowerEvent::Named => this.changed(),
                    FollowerEvent::Reachable => {
                        this.inner.offline.lock().unwrap_or_else(|p| p.into_inner()).take();
                        this.changed();
                    }
                }
            }
        });
    }
}
