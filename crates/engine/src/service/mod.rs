//! The engine: wires cloud → follow → notice → store → desktop, owns the tasks and their
//! shutdown, and offers the shell (daemon, tray) a handle: commands in, state out.
//!
//! It holds no product rule of its own: what is news is `notice`, what is durable is `store`,
//! how to ask is `follow`. Nothing here is global; tests build several engines side by side.
//!
//! This file holds `Engine` (its options, events, and the handles it starts and stops) and the
//! follows. Each long-lived part owns its state in its own file, behind a handle:
//! - `deliver`: the deliverer, a task with its own state, and `Deliverer`, the handle that wakes
//!   it: untold notices through the delivery policy to banners, one failure at a time;
//! - `focus`: `Focus`, the focus rule (what the person is looking at gets no banner), and what
//!   terminals report about the sessions they show;
//! - `health`: `Health`, the problems seen lately and why the cloud or banners wait; and what
//!   `status` shows;
//! - `account_state`: `AccountState`, who is signed in and how the sign-in is kept;
//! - `updates`: `Updates`, whether a newer version is out (a daily task);
//! - `delivery_state`: the `[delivery]` settings in force, and the pause.
//!
//! What crosses parts is `Engine`'s, a file each:
//! - `sign_in`: who is signed in: a token, the teams, a switch of account, signing out;
//! - `account`: staying signed in (the device code, renewal, the saved sign-in);
//! - `listing`: the open hand-offs and Runs listed at sign-in, followed;
//! - `notices`: this machine's terminals' notices, read marks, banners taken away;
//! - `click`: what a click, a menu line or an `open` link opens (a terminal, a link, a card);
//! - `keep`: what is kept and how long (cards, the history);
//! - `views`: what the tray and the windows show.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::clock::Clock;
use crate::cloud::{CloudClient, CloudError, HandoffId, Run, RunId};
use crate::desktop::Desktop;
use crate::follow::{Follower, Limits, Pacing, Session, WaitError};
use crate::lock::Locked;
use crate::store::{Store, StoreError, StoredNotice};

/// How long a request that needs the account waits for the saved sign-in to be restored at start
/// (a keyring just after login can take seconds).
pub const SIGN_IN_RESTORE_WAIT: Duration = Duration::from_secs(20);

mod account;
mod account_state;
mod click;
mod deliver;
mod delivery_state;
mod focus;
mod health;
mod keep;
mod listing;
mod notices;
mod sign_in;
mod updates;
mod views;

pub use crate::status::Status;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Client(#[from] crate::cloud::client::ClientConfigError),
    #[error("signing in failed: {0}")]
    SignIn(CloudError),
    #[error("team {team} is not one of this account's teams ({available})")]
    NoSuchTeam { team: String, available: String },
    #[error("not signed in: sign in first (CMUX_TRAY_TOKEN, or the tray's Sign in…)")]
    SignedOut,
    #[error("not signed in yet: the cloud cannot be reached ({why}); the sign-in is tried again meanwhile")]
    NotSignedInYet { why: String },
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
    /// HTTP/2 (the default) or HTTP/1.1 to the cloud, and the proxy on the way.
    pub network: crate::cloud::Network,
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
    /// When no notification server answers, untold notices are tried again this often.
    pub desktop_retry: std::time::Duration,
    /// The release feed asked for a newer version (docs/configuration.md, "Updates"); none: no check.
    pub update_feed: Option<url::Url>,
    /// The language and locale (the host's: the system's, or `[general] language`).
    pub lang: Arc<crate::lang::Lang>,
}

impl EngineOptions {
    pub fn new(api_url: &str, auth_url: &str, database: PathBuf, desktop: Arc<dyn Desktop>) -> Self {
        EngineOptions {
            api_url: api_url.into(),
            auth_url: auth_url.into(),
            network: Default::default(),
            database,
            desktop,
            clock: Clock::System,
            pacing: Pacing::default(),
            limits: Limits::default(),
            config_file: None,
            secrets: None,
            desktop_retry: deliver::DESKTOP_RETRY,
            update_feed: None,
            lang: Arc::new(crate::lang::Lang::english()),
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

/// Tells the shell that something it shows changed; each handle whose state the tray shows holds one.
#[derive(Clone)]
struct Changes(broadcast::Sender<EngineEvent>);

impl Changes {
    fn say(&self) {
        let _ = self.0.send(EngineEvent::Changed);
    }

    /// Puts `value` in `slot`; when that changed what was there, the tray and windows redraw.
    fn set<T: PartialEq>(&self, slot: &Mutex<T>, value: T) {
        let changed = {
            let mut held = slot.locked();
            let changed = *held != value;
            *held = value;
            changed
        };
        if changed {
            self.say();
        }
    }
}

/// The running engine. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    cloud: CloudClient,
    store: Arc<Store>,
    follower: Follower,
    desktop: Arc<dyn Desktop>,
    /// Each concern's own state, declared in its file; the deliverer's handle (its state is its task's).
    deliverer: deliver::Deliverer,
    focus: focus::Focus,
    account: account_state::AccountState,
    health: Arc<health::Health>,
    updates: updates::Updates,
    terminals: Arc<dyn crate::terminal::Terminals>,
    clock: Clock,
    /// The words and dates the tray, the windows and the banners are said in.
    lang: Arc<crate::lang::Lang>,
    /// The delivery policy's settings, and where they come from.
    delivery: delivery_state::DeliveryCell,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    events: broadcast::Sender<EngineEvent>,
}

impl Engine {
    /// Opens the store and starts the deliverer; nothing is followed until someone signs in.
    pub async fn start(opts: EngineOptions) -> Result<Engine, EngineError> {
        let cloud = CloudClient::new(&opts.api_url, &opts.auth_url, &opts.network)?;
        let store = Arc::new(Store::open(&opts.database)?);
        let shutdown = CancellationToken::new();
        let tracker = TaskTracker::new();
        let deliverer = deliver::Deliverer::new();
        let (follower_tx, follower_rx) = mpsc::unbounded_channel();
        let follower = Follower::new(
            cloud.clone(),
            store.clone(),
            opts.clock.clone(),
            opts.lang.clone(),
            opts.pacing,
            opts.limits,
            tracker.clone(),
            deliverer.waker(),
            follower_tx,
        );
        let (events, _) = broadcast::channel(256);
        let changes = Changes(events.clone());
        let health = Arc::new(health::Health::new(opts.clock.clone(), changes.clone()));
        let origins = crate::secrets::Origins::of(cloud.auth_url(), cloud.api_url());
        let engine = Engine {
            inner: Arc::new(Inner {
                cloud,
                store,
                follower,
                desktop: opts.desktop,
                deliverer,
                focus: focus::Focus::new(opts.terminals.clone()),
                account: account_state::AccountState::new(opts.secrets, origins, health.clone()),
                health,
                updates: updates::Updates::new(opts.update_feed, changes.clone()),
                terminals: opts.terminals,
                clock: opts.clock,
                lang: opts.lang,
                delivery: delivery_state::DeliveryCell::new(opts.config_file.clone()),
                shutdown,
                tracker,
                events,
            }),
        };
        engine.load_delivery_settings();
        engine.inner.deliverer.start(&engine, opts.desktop_retry);
        engine.spawn_follower_events(follower_rx);
        engine.spawn_sweeper();
        engine.spawn_desktop_events();
        engine.inner.updates.start(engine.inner.cloud.clone(), &engine.inner.tracker, engine.inner.shutdown.clone());
        Ok(engine)
    }

    /// Runs `f` on the store on a blocking thread: a commit, a checkpoint it sets off, or a wait
    /// for the store's connection while the group commit holds it never holds the runtime's
    /// thread (the daemon has one; every other task would wait behind it).
    pub(super) async fn off_thread<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let store = self.inner.store.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .unwrap_or_else(|e| Err(StoreError::Lost(format!("the store's work stopped: {e}"))))
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.inner.events.subscribe()
    }

    fn changed(&self) {
        let _ = self.inner.events.send(EngineEvent::Changed);
    }

    /// Hands each of `events` to `on_event`, in order, until they end or the engine stops.
    fn spawn_event_loop<T: Send + 'static>(&self, mut events: mpsc::UnboundedReceiver<T>, on_event: impl Fn(&Engine, T) + Send + 'static) {
        let this = self.clone();
        self.inner.tracker.spawn(async move {
            loop {
                let event = tokio::select! {
                    _ = this.inner.shutdown.cancelled() => return,
                    e = events.recv() => match e { Some(e) => e, None => return },
                };
                on_event(&this, event);
            }
        });
    }

    fn session(&self) -> Option<Arc<Session>> {
        self.inner.account.session()
    }

    fn signed_in(&self) -> Result<Arc<Session>, EngineError> {
        self.inner.account.signed_in(|| self.inner.health.offline())
    }

    /// Where the refresh token is kept from now on (the host chooses it once the keyring answered).
    pub fn set_secret_store(&self, store: crate::secrets::SecretStore) {
        self.inner.account.set_secret_store(store);
        self.changed();
    }

    /// Says that the sign-in at start is under way until the returned guard is dropped: requests
    /// that need the account wait for it (see [`Self::account_ready`]).
    pub fn restoring_sign_in(&self) -> RestoringSignIn {
        self.inner.account.restoring_sign_in()
    }

    /// Waits (at most `within`) while the sign-in at start is under way, so a request made just
    /// after start is not refused as "not signed in" while the keyring is still answering. A
    /// sign-in that could not reach the cloud ends the wait: the request is told why at once.
    pub async fn account_ready(&self, within: Duration) {
        if self.session().is_some() {
            return;
        }
        let (mut restoring, mut offline) = (self.inner.account.watch_restoring(), self.inner.health.watch_offline());
        let _ = tokio::time::timeout(within, async {
            tokio::select! {
                _ = restoring.wait_for(|r| !r) => {}
                _ = offline.wait_for(Option::is_some) => {}
            }
        })
        .await;
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
        self.inner.follower.follow_run(&session, id, asked == Asked::ThisMachine).map_err(|e| self.inner.health.not_followed(e))?;
        self.changed();
        Ok(())
    }

    /// Follows a hand-off, asked by `asked`: from its first version either way; only one made on
    /// this machine may later open a workspace on the host the cloud names (docs/notices.md §4).
    pub fn follow_handoff_from(&self, id: &HandoffId, asked: Asked) -> Result<(), EngineError> {
        let session = self.signed_in()?;
        self.inner.follower.follow_handoff(&session, id, 0, asked == Asked::ThisMachine).map_err(|e| self.inner.health.not_followed(e))?;
        self.changed();
        Ok(())
    }

    /// Cancels a Run. The note that this app cancelled it is saved before the request goes out,
    /// so the end it causes never tells, whatever races or relaunches come between.
    pub async fn cancel_run(&self, id: &RunId) -> Result<(), EngineError> {
        let session = self.signed_in()?;
        self.inner.store.note_cancel(id.as_str(), self.inner.clock.now_ms())?;
        self.inner.follower.follow_run(&session, id, true).map_err(|e| self.inner.health.not_followed(e))?;
        self.inner.cloud.cancel_run(&session.credentials(), id).await.map_err(|source| EngineError::Cancel { id: id.to_string(), source })
    }

    /// Waits for a Run's end (see [`Follower::wait_run_end`]).
    pub async fn wait_run_end(&self, id: &RunId) -> Result<Box<Run>, WaitError> {
        self.inner.follower.wait_run_end(id).await
    }

    /// Stops everything and waits for every task to finish.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        self.inner.tracker.close();
        self.inner.tracker.wait().await;
    }
}
