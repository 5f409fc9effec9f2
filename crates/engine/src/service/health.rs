//! What `status` shows (the tray, `cmux-tray status`): the account, the pause, the follows, the
//! recent notices, and the problems, each shown for an hour after it was last seen; and the
//! follows' events (offline, problems, names) that feed it.

use std::sync::Mutex;

use tokio::sync::{mpsc, watch};

use super::{Changes, Engine, EngineError, delivery_state};
use crate::clock::Clock;
use crate::follow::{FollowError, FollowerEvent};
use crate::lock::Locked;
use crate::status::{HeldBy, Problem, Status};
use crate::store::{Store, StoreError};

/// Where `status` says a sign-in from an access token given directly is kept.
pub const KEPT_IN_MEMORY: &str = "memory only (an access token given directly, such as CMUX_TRAY_TOKEN; never written anywhere)";

/// How long a problem stays in the status after it was last seen.
const PROBLEM_SHOWN_MS: i64 = 3_600_000;

impl Status {
    /// Reads the status from a store (the running engine's, or one opened read-only).
    pub fn read(store: &Store, problems: Vec<Problem>) -> Result<Status, StoreError> {
        use crate::policy::Pause;
        let pause = delivery_state::stored_pause(store, jiff::Timestamp::now().as_millisecond());
        let paused_until = match &pause {
            Some(Pause::Until(t)) => Some(t.to_string()),
            _ => None,
        };
        Ok(Status {
            account: store.account()?,
            paused: pause.as_ref().map(|p| match p {
                Pause::UntilResumed => "until resumed".to_string(),
                Pause::Until(t) => t.to_string(),
            }),
            paused_until,
            paused_indefinitely: matches!(pause, Some(Pause::UntilResumed)),
            sign_in_kept_in: None,
            sign_in_note: None,
            teams: Vec::new(),
            follows: store.follows(200)?,
            notices: store.recent_notices(20)?,
            problems,
            update_available: None,
            network: None,
            held_by: Vec::new(),
            untold_wait_for: None,
        })
    }
}

/// What is wrong now: the problems seen lately, and why the cloud cannot be reached or banners
/// wait. Noted by every task (the follows, the deliverer, the sign-in) and read by `status`, so
/// each is behind its own lock; a change the tray shows is said at once.
pub(super) struct Health {
    clock: Clock,
    changes: Changes,
    /// Recent problems and when each was last seen (ms): shown for an hour after the last time.
    problems: Mutex<Vec<(i64, Problem)>>,
    /// Why the cloud cannot be reached, while it cannot (the tray's "offline").
    offline: watch::Sender<Option<String>>,
    /// Why banners wait, while the person has turned them off (macOS, Windows).
    banners_off: Mutex<Option<String>>,
    /// Why banners wait, while no notification server answers.
    no_server: Mutex<Option<String>>,
}

impl Health {
    pub(super) fn new(clock: Clock, changes: Changes) -> Self {
        Health {
            clock,
            changes,
            problems: Mutex::new(Vec::new()),
            offline: watch::Sender::new(None),
            banners_off: Mutex::new(None),
            no_server: Mutex::new(None),
        }
    }

    /// A problem seen now.
    pub(super) fn note(&self, problem: Problem) {
        let now = self.clock.now_ms();
        let mut problems = self.problems.locked();
        // The same problem again is seen again, not listed twice.
        problems.retain(|(_, p)| *p != problem);
        problems.push((now, problem));
        let excess = problems.len().saturating_sub(20);
        problems.drain(..excess);
    }

    /// A follow that could not start is a problem the person sees, never a silent drop.
    pub(super) fn not_followed(&self, e: FollowError) -> EngineError {
        match e {
            FollowError::TooMany { id, max } => {
                self.note(Problem::TooManyFollows { max, id: id.clone() });
                self.changes.say();
                EngineError::TooManyFollows { id, max }
            }
            FollowError::Store(e) => {
                self.note(Problem::FollowNotSaved { why: e.to_string() });
                EngineError::Store(e)
            }
        }
    }

    /// What is wrong now, for `status`: offline, banners waiting, and the problems seen lately.
    fn now(&self) -> Vec<Problem> {
        let mut problems: Vec<Problem> = self.offline().map(|why| Problem::Offline { why }).into_iter().collect();
        problems.extend(self.banners_off().map(|why| Problem::BannersOff { why }));
        problems.extend(self.no_server().map(|why| Problem::NoServer { why }));
        // A problem not seen for an hour is over: the icon does not stay red for a hiccup.
        let since = self.clock.now_ms() - PROBLEM_SHOWN_MS;
        let mut recent = self.problems.locked();
        recent.retain(|(seen, _)| *seen >= since);
        problems.extend(recent.iter().map(|(_, p)| p.clone()));
        problems
    }

    /// The cloud cannot be reached (`Some(why)`), or answers again; shown as "Offline" while so.
    pub(super) fn set_offline(&self, why: Option<String>) {
        let changed = self.offline.send_if_modified(|offline| {
            let changed = *offline != why;
            *offline = why;
            changed
        });
        if changed {
            self.changes.say();
        }
    }

    /// Why the cloud cannot be reached, while it cannot.
    pub(super) fn offline(&self) -> Option<String> {
        self.offline.borrow().clone()
    }

    /// Each change of [`Self::offline`], for whoever waits for one.
    pub(super) fn watch_offline(&self) -> watch::Receiver<Option<String>> {
        self.offline.subscribe()
    }

    /// No notification server answers (`Some(why)`), or a banner went out again.
    pub(super) fn set_no_server(&self, why: Option<String>) {
        self.changes.set(&self.no_server, why);
    }

    pub(super) fn no_server(&self) -> Option<String> {
        self.no_server.locked().clone()
    }

    /// The person has turned banners off (`Some(why)`), or a banner went out again.
    pub(super) fn set_banners_off(&self, why: Option<String>) {
        self.changes.set(&self.banners_off, why);
    }

    pub(super) fn banners_off(&self) -> Option<String> {
        self.banners_off.locked().clone()
    }
}

impl Engine {
    pub fn status(&self) -> Result<Status, EngineError> {
        let mut problems = self.inner.health.now();
        problems.extend(self.inner.delivery.problem());
        let mut status = Status::read(&self.inner.store, problems)?;
        status.update_available = self.update_available();
        status.network = Some(self.cloud_route());
        let secrets = self.inner.account.secret_store();
        // A token given directly is in no store: saying the keyring there would be untrue.
        status.sign_in_kept_in =
            if self.sign_in_in_memory() { Some(KEPT_IN_MEMORY.into()) } else { secrets.as_ref().map(|s| s.describe()) };
        status.sign_in_note = secrets.as_ref().and_then(|s| s.fallback_note());
        status.held_by = self.held_by();
        status.untold_wait_for = status.held_by.iter().copied().find(|h| matches!(h, HeldBy::NoServer | HeldBy::SystemOff));
        let me = self.inner.account.me();
        status.teams =
            me.filter(|me| status.account.as_ref().is_some_and(|a| a.user_id == me.user_id)).map(|me| me.teams).unwrap_or_default();
        Ok(status)
    }

    /// How the cloud's API is reached, in words (its proxy, or why none).
    pub fn cloud_route(&self) -> String {
        self.inner.cloud.route()
    }

    /// What holds banners back now, in the order the policy asks (docs/notices.md §3).
    pub fn held_by(&self) -> Vec<HeldBy> {
        let settings = self.delivery_settings();
        let tz = self.time_zone(&settings);
        let moment = crate::policy::Moment {
            now: jiff::Timestamp::from_millisecond(self.inner.clock.now_ms()).unwrap_or(jiff::Timestamp::UNIX_EPOCH),
            tz: &tz,
            pause: self.paused(),
        };
        [
            (self.no_server().is_some(), HeldBy::NoServer),
            (self.banners_off().is_some(), HeldBy::SystemOff),
            (!settings.banners, HeldBy::BannersOff),
            (moment.paused(), HeldBy::Paused),
            (crate::policy::quiet_now(&settings, &moment), HeldBy::QuietHours),
        ]
        .into_iter()
        .filter_map(|(holds, by)| holds.then_some(by))
        .collect()
    }

    /// Why banners wait, while no notification server answers.
    pub fn no_server(&self) -> Option<String> {
        self.inner.health.no_server()
    }

    /// Why banners wait, while the person has turned them off.
    pub fn banners_off(&self) -> Option<String> {
        self.inner.health.banners_off()
    }

    pub(super) fn spawn_follower_events(&self, events: mpsc::UnboundedReceiver<FollowerEvent>) {
        self.spawn_event_loop(events, |this, event| match event {
            FollowerEvent::StaleToken { account } => this.on_stale_token(&account),
            FollowerEvent::Problem(p) => this.inner.health.note(p),
            FollowerEvent::Unreachable(why) => this.inner.health.set_offline(Some(why)),
            FollowerEvent::Named => this.changed(),
            FollowerEvent::Reachable => this.inner.health.set_offline(None),
        });
    }
}
