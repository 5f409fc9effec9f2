//! The simulated cloud's data, and the control API that changes it.
//!
//! Every change to a Run or hand-off wakes the `/wait` calls held on it. Ids follow the
//! backend's style (`run_`/`ho_`/`team_` + 20 hex digits), handed out from a counter so a test's
//! ids are predictable.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::script::{Fault, LoggedRequest};

/// The simulator: cheap to clone, shared by the server and the test that drives it.
#[derive(Clone)]
pub struct Sim {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) state: Mutex<State>,
    pub(crate) faults: Mutex<Vec<Fault>>,
    pub(crate) log: Mutex<Vec<LoggedRequest>>,
    pub(crate) started: tokio::time::Instant,
}

#[derive(Default)]
pub(crate) struct State {
    counter: u64,
    pub(crate) users: Vec<User>,
    /// access token → (user id, expiry on tokio's clock)
    pub(crate) tokens: HashMap<String, (String, Option<tokio::time::Instant>)>,
    /// refresh token → user id
    pub(crate) refresh_tokens: HashMap<String, String>,
    pub(crate) access_ttl_secs: Option<u64>,
    pub(crate) runs: Vec<Run>,
    pub(crate) handoffs: Vec<Handoff>,
    pub(crate) devices: Vec<Device>,
    /// When false, `GET /api/runs` answers 404 (the list "is not offered").
    pub(crate) run_list_offered: bool,
    /// Whether a Run wait's `timeoutMs` shortens its hold (ours, not the published contract's).
    pub(crate) run_timeout_honoured: bool,
}

pub(crate) struct User {
    pub(crate) id: String,
    pub(crate) email: String,
    pub(crate) teams: Vec<Value>,
}

pub(crate) struct Run {
    pub(crate) id: String,
    pub(crate) owner: String,
    task: String,
    pub(crate) status: String,
    outcome: Option<String>,
    receipt: Option<Value>,
    updated_at: String,
    pub(crate) changes: watch::Sender<u64>,
}

pub(crate) struct Handoff {
    pub(crate) id: String,
    pub(crate) owner: String,
    pub(crate) version: u64,
    turn: u32,
    /// `None` is a store from before turns: the field is left out of every answer.
    pub(crate) state: Option<String>,
    pub(crate) legacy: bool,
    status: String,
    title: Option<String>,
    summary: Option<String>,
    session_id: Option<String>,
    host: Option<String>,
    updated_at: String,
    pub(crate) removed: bool,
    pub(crate) changes: watch::Sender<u64>,
}

pub(crate) struct Device {
    pub(crate) device_code: String,
    pub(crate) user_code: String,
    pub(crate) expires: tokio::time::Instant,
    pub(crate) approved_for: Option<String>,
    pub(crate) handed_out: bool,
}

/// An account of the simulated cloud, with a fresh pair of tokens.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimUser {
    pub user_id: String,
    pub email: String,
    pub access_token: String,
    pub refresh_token: String,
    pub teams: Vec<String>,
}

/// A scripted change to a Run (control API).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunChange {
    pub status: Option<String>,
    pub outcome: Option<String>,
    pub receipt: Option<Value>,
}

impl RunChange {
    pub fn status(status: &str) -> Self {
        Self { status: Some(status.into()), ..Self::default() }
    }
}

/// A scripted change to a hand-off (control API). Every change bumps the version.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandoffChange {
    pub status: Option<String>,
    pub summary: Option<String>,
    pub title: Option<String>,
    /// Open the next turn (a follow-up in the same chat).
    #[serde(default)]
    pub next_turn: bool,
    /// Close the hand-off (`state: closed`); ignored for a legacy hand-off.
    #[serde(default)]
    pub close: bool,
}

impl HandoffChange {
    pub fn status(status: &str) -> Self {
        Self { status: Some(status.into()), ..Self::default() }
    }
}

/// How a hand-off is created (control API).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewHandoff {
    pub owner: String,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub session_id: Option<String>,
    pub host: Option<String>,
    /// A store from before turns: no `state` field, ever.
    #[serde(default)]
    pub legacy: bool,
}

fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}

fn run_is_terminal(status: &str, receipt: &Option<Value>) -> bool {
    receipt.is_some() || matches!(status, "succeeded" | "failed" | "cancelled")
}

impl Run {
    pub(crate) fn json(&self) -> Value {
        let mut v = json!({
            "id": self.id, "task": self.task, "status": self.status, "updatedAt": self.updated_at,
        });
        if let Some(o) = &self.outcome {
            v["outcome"] = json!(o);
        }
        if let Some(r) = &self.receipt {
            v["receipt"] = r.clone();
        }
        v
    }

    pub(crate) fn is_terminal(&self) -> bool {
        run_is_terminal(&self.status, &self.receipt)
    }
}

impl Handoff {
    pub(crate) fn json(&self) -> Value {
        let mut v = json!({
            "id": self.id, "version": self.version, "turn": self.turn, "status": self.status,
            "updatedAt": self.updated_at,
        });
        for (k, f) in [("title", &self.title), ("summary", &self.summary), ("sessionId", &self.session_id), ("host", &self.host)] {
            if let Some(s) = f {
                v[k] = json!(s);
            }
        }
        if let Some(s) = &self.state {
            v["state"] = json!(s);
        }
        v
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.as_deref() == Some("closed")
    }
}

impl Default for Sim {
    fn default() -> Self {
        Self::new()
    }
}

impl Sim {
    pub fn new() -> Self {
        Sim {
            inner: Arc::new(Inner {
                state: Mutex::new(State { run_list_offered: true, run_timeout_honoured: true, ..State::default() }),
                faults: Mutex::new(Vec::new()),
                log: Mutex::new(Vec::new()),
                started: tokio::time::Instant::now(),
            }),
        }
    }

    pub(crate) fn state(&self) -> std::sync::MutexGuard<'_, State> {
        crate::lock::locked(&self.inner.state)
    }

    /// Milliseconds since the simulator was made, on tokio's clock (virtual when paused).
    pub fn elapsed_ms(&self) -> u64 {
        self.inner.started.elapsed().as_millis() as u64
    }

    /// A new account with a personal team and a fresh pair of tokens.
    pub fn add_user(&self, email: &str) -> SimUser {
        let mut st = self.state();
        let id = format!("user_{:020x}", st.next());
        let team = format!("team_{:020x}", st.next());
        st.users.push(User {
            id: id.clone(),
            email: email.into(),
            teams: vec![json!({"id": team, "displayName": "Personal", "kind": "personal"})],
        });
        let (access_token, refresh_token) = st.issue_tokens(&id);
        SimUser { user_id: id, email: email.into(), access_token, refresh_token, teams: vec![team] }
    }

    /// Adds a stack team to an account and returns its id.
    pub fn add_team(&self, user_id: &str, name: &str) -> String {
        let mut st = self.state();
        let team = format!("team_{:020x}", st.next());
        if let Some(u) = st.users.iter_mut().find(|u| u.id == user_id) {
            u.teams.push(json!({"id": team, "displayName": name, "kind": "stack"}));
        }
        team
    }

    /// A fresh access token for an account (another device signing in).
    pub fn issue_token(&self, user_id: &str) -> String {
        self.state().issue_tokens(user_id).0
    }

    /// Makes a token stale: every call with it answers 401.
    pub fn revoke_token(&self, token: &str) {
        let mut st = self.state();
        st.tokens.remove(token);
        st.refresh_tokens.remove(token);
    }

    /// Revokes every access and refresh token of an account (a password change, a revoked
    /// device): its next refresh is refused.
    pub fn revoke_user_tokens(&self, user_id: &str) {
        let mut st = self.state();
        st.tokens.retain(|_, (u, _)| u != user_id);
        st.refresh_tokens.retain(|_, u| u != user_id);
    }

    /// Access tokens issued from now on expire after this many seconds (tokio clock).
    pub fn set_access_ttl(&self, secs: Option<u64>) {
        self.state().access_ttl_secs = secs;
    }

    /// Whether `GET /api/runs?active=1` is offered (a 404 otherwise).
    pub fn offer_run_list(&self, offered: bool) {
        self.state().run_list_offered = offered;
    }

    /// Whether a Run wait's `timeoutMs` shortens its hold (yes by default). The parameter is this
    /// project's, not seed 003's: a cloud that ignores it holds every Run wait the full 10 s.
    pub fn honour_run_timeout(&self, honoured: bool) {
        self.state().run_timeout_honoured = honoured;
    }

    /// A queued Run owned by `owner`.
    pub fn create_run(&self, owner: &str, task: &str) -> String {
        let mut st = self.state();
        let id = format!("run_{:020x}", st.next());
        st.runs.push(Run {
            id: id.clone(),
            owner: owner.into(),
            task: task.into(),
            status: "queued".into(),
            outcome: None,
            receipt: None,
            updated_at: now_rfc3339(),
            changes: watch::channel(0).0,
        });
        id
    }

    /// Changes a Run and wakes its waiters. A terminal status without an outcome gets the
    /// matching one, and a receipt is made up for `succeeded`, as the real API does.
    pub fn update_run(&self, id: &str, change: RunChange) -> Option<Value> {
        let mut st = self.state();
        let run = st.runs.iter_mut().find(|r| r.id == id)?;
        if let Some(s) = change.status {
            run.outcome = change.outcome.clone().or_else(|| {
                match s.as_str() {
                    "succeeded" => Some("finished"),
                    "failed" => Some("failed"),
                    "cancelled" => Some("cancelled"),
                    _ => None,
                }
                .map(String::from)
            });
            if s == "succeeded" && change.receipt.is_none() && run.receipt.is_none() {
                run.receipt = Some(json!({
                    "summary": format!("Done: {}", run.task.lines().next().unwrap_or("")),
                    "url": format!("https://cmux.com/runs/{}", run.id),
                    "sessionId": format!("sess_{}", &run.id[4..]),
                    "host": "sandbox-1",
                }));
            }
            run.status = s;
        } else if let Some(o) = change.outcome {
            run.outcome = Some(o);
        }
        if let Some(r) = change.receipt {
            run.receipt = Some(r);
        }
        run.updated_at = now_rfc3339();
        run.changes.send_modify(|n| *n += 1);
        Some(run.json())
    }

    /// The Run as the API would answer it.
    pub fn run(&self, id: &str) -> Option<Value> {
        self.state().runs.iter().find(|r| r.id == id).map(Run::json)
    }

    /// An open hand-off at version 1, turn 1, `starting` (no `state` when `legacy`).
    pub fn create_handoff(&self, new: NewHandoff) -> String {
        let mut st = self.state();
        let id = format!("ho_{:020x}", st.next());
        let session = new.session_id.unwrap_or_else(|| format!("sess_{}", &id[3..]));
        st.handoffs.push(Handoff {
            id: id.clone(),
            owner: new.owner,
            version: 1,
            turn: 1,
            state: (!new.legacy).then(|| "open".to_string()),
            legacy: new.legacy,
            status: "starting".into(),
            title: new.title,
            summary: new.summary,
            session_id: Some(session),
            host: new.host.or_else(|| Some("devbox-1".into())),
            updated_at: now_rfc3339(),
            removed: false,
            changes: watch::channel(0).0,
        });
        id
    }

    /// Changes a hand-off, bumps its version, and wakes its waiters.
    pub fn update_handoff(&self, id: &str, change: HandoffChange) -> Option<Value> {
        let mut st = self.state();
        let h = st.handoffs.iter_mut().find(|h| h.id == id)?;
        if change.next_turn {
            h.turn += 1;
            h.summary = None;
            if change.status.is_none() {
                h.status = "starting".into();
            }
        }
        if let Some(s) = change.status {
            h.status = s;
        }
        if let Some(s) = change.summary {
            h.summary = Some(s);
        }
        if let Some(t) = change.title {
            h.title = Some(t);
        }
        if change.close && !h.legacy {
            h.state = Some("closed".into());
        }
        h.version += 1;
        h.updated_at = now_rfc3339();
        h.changes.send_modify(|n| *n += 1);
        Some(h.json())
    }

    /// The store no longer shows this hand-off: every read of it answers 404.
    pub fn remove_handoff(&self, id: &str) {
        let mut st = self.state();
        if let Some(h) = st.handoffs.iter_mut().find(|h| h.id == id) {
            h.removed = true;
            h.changes.send_modify(|n| *n += 1);
        }
    }

    pub fn handoff(&self, id: &str) -> Option<Value> {
        self.state().handoffs.iter().find(|h| h.id == id).map(Handoff::json)
    }

    /// Approves a pending device code (what the person does in the browser).
    pub fn approve_device(&self, user_code: &str, user_id: &str) -> bool {
        self.with_device(user_code, |d| d.approved_for = Some(user_id.into()))
    }

    /// Ends a pending device code's time (what waiting past `expiresInSeconds` does).
    pub fn expire_device(&self, user_code: &str) -> bool {
        self.with_device(user_code, |d| d.expires = tokio::time::Instant::now())
    }

    /// Changes the device sign-in showing `user_code`; false when there is none.
    fn with_device(&self, user_code: &str, change: impl FnOnce(&mut Device)) -> bool {
        let mut st = self.state();
        st.devices.iter_mut().find(|d| d.user_code == user_code).map(change).is_some()
    }

    /// The user code of the newest device sign-in, as the browser page would show it.
    pub fn last_user_code(&self) -> Option<String> {
        self.state().devices.last().map(|d| d.user_code.clone())
    }

    /// Adds a fault to the script; faults are tried in order, each for its `times`.
    /// How many waits are held on this Run or hand-off right now (benchmarks wait for a follow's
    /// first wait before they change its item, so the change is the only thing timed).
    pub fn held_waits(&self, id: &str) -> usize {
        let st = self.state();
        let run = st.runs.iter().find(|r| r.id == id).map(|r| r.changes.receiver_count());
        run.or_else(|| st.handoffs.iter().find(|h| h.id == id).map(|h| h.changes.receiver_count())).unwrap_or(0)
    }

    pub fn add_fault(&self, fault: Fault) {
        crate::lock::locked(&self.inner.faults).push(fault);
    }

    pub fn clear_faults(&self) {
        crate::lock::locked(&self.inner.faults).clear();
    }

    /// Every request the public API received, in arrival order.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        crate::lock::locked(&self.inner.log).clone()
    }

    pub fn clear_requests(&self) {
        crate::lock::locked(&self.inner.log).clear();
    }
}

impl State {
    fn next(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    pub(crate) fn issue_tokens(&mut self, user_id: &str) -> (String, String) {
        let n = self.next();
        let access = format!("at_{n:04}_{:016x}", rand::random::<u64>());
        let refresh = format!("rt_{n:04}_{:016x}", rand::random::<u64>());
        let expiry = self.access_ttl_secs.map(|s| tokio::time::Instant::now() + std::time::Duration::from_secs(s));
        self.tokens.insert(access.clone(), (user_id.into(), expiry));
        self.refresh_tokens.insert(refresh.clone(), user_id.into());
        (access, refresh)
    }

    pub(crate) fn new_device(&mut self) -> (String, String) {
        const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
        let device_code: String = (0..4).map(|_| format!("{:016x}", rand::random::<u64>())).collect();
        let pick = |_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char;
        let user_code = format!("{}-{}", (0..4).map(pick).collect::<String>(), (0..4).map(pick).collect::<String>());
        self.devices.push(Device {
            device_code: device_code.clone(),
            user_code: user_code.clone(),
            expires: tokio::time::Instant::now() + std::time::Duration::from_secs(900),
            approved_for: None,
            handed_out: false,
        });
        (device_code, user_code)
    }

    pub(crate) fn user(&self, id: &str) -> Option<&User> {
        self.users.iter().find(|u| u.id == id)
    }
}
