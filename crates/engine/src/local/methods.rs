//! Every v1 command and v2 method of docs/local-socket.md, with cmux's reply texts and error
//! codes, done through the engine.

use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

use super::forwarded::Forwarded;
use super::protocol::{self, ErrorCode, MethodError, Request};
use super::replies::{Replies, Write};
use crate::cloud::{HandoffId, RunId};
use crate::engine::{Engine, EngineError, SIGN_IN_RESTORE_WAIT};
use crate::notice::local::LocalPost;
use crate::place::Place;
use crate::store::{SessionShown, StoredNotice};

/// What a connection knows about itself.
pub struct Conn {
    pub authorised: bool,
    pub password: Option<SecretString>,
    /// The local ssh that forwards this connection from another machine, when it is one.
    pub forwarded: Option<Forwarded>,
}

impl Conn {
    /// A notice as this connection's sender means it (a forwarded one: its host named, its
    /// click to the local terminal running ssh).
    fn adopt(&self, mut post: LocalPost) -> LocalPost {
        if let Some(forwarded) = &self.forwarded {
            forwarded.adopt(&mut post);
        }
        post
    }

    fn check_password(&mut self, given: &str) -> bool {
        let ok = self.password.as_ref().is_some_and(|p| constant_time_eq(p.expose_secret().as_bytes(), given.as_bytes()));
        self.authorised |= ok;
        ok
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Answers request lines a client sent together, in order, into `out`. The notices among them
/// (`notify`, `notify_target`, `notification.create*`) are saved in one commit, and answered once
/// it is in the WAL; a request that reads or changes the store sees the notices asked before it
/// saved first (docs/local-socket.md, "Pipelining"). Answers go out as soon as those before
/// them are ready and enough wait ([`Replies`]): a batch of large answers is never held whole.
pub async fn answer_all<W: Write>(engine: &Engine, conn: &mut Conn, lines: &[String], out: &mut Replies<'_, W>) -> std::io::Result<()> {
    let mut replies: Vec<Option<String>> = vec![None; lines.len()];
    let mut posts: Vec<Post> = Vec::new();
    for (slot, line) in lines.iter().enumerate() {
        let reply = match protocol::parse(line) {
            Err(r) => protocol::rejected_line(&r),
            Ok(Request::V1 { command, args }) => match v1_post(conn, &command, &args) {
                Some(Ok(post)) => {
                    posts.push(Post { slot, post: conn.adopt(post), asked: Asked::V1 });
                    continue;
                }
                Some(Err(usage)) => usage,
                None => {
                    save(engine, &mut posts, &mut replies).await;
                    v1(engine, conn, &command, &args).await
                }
            },
            Ok(Request::V2 { id, method: word, params }) => {
                let method = Method::parse(&word);
                let result = match v2_post(conn, method, &params) {
                    Some(Ok(post)) => {
                        posts.push(Post { slot, post: conn.adopt(post), asked: Asked::V2 { id } });
                        continue;
                    }
                    Some(Err(invalid)) => Err(invalid),
                    None => {
                        save(engine, &mut posts, &mut replies).await;
                        v2(engine, conn, method, &word, &params).await
                    }
                };
                match result {
                    Ok(result) => protocol::v2_ok(&id, result),
                    Err(e) => protocol::v2_error(Some(&id), e.code, &e.message),
                }
            }
        };
        replies[slot] = Some(reply);
        // Every slot before this one is answered now (its notices saved first): out they go.
        out.take_ready(&mut replies).await?;
    }
    save(engine, &mut posts, &mut replies).await;
    out.take_ready(&mut replies).await
}

/// A notice asked for, waiting to be saved with the others of its batch.
struct Post {
    /// Where its answer goes among the batch's replies.
    slot: usize,
    post: LocalPost,
    asked: Asked,
}

/// How a notice was asked for, which is how its answer is written.
enum Asked {
    V1,
    V2 { id: Value },
}

/// Saves the notices waiting in `posts` in one commit and writes their answers in their slots.
async fn save(engine: &Engine, posts: &mut Vec<Post>, replies: &mut [Option<String>]) {
    if posts.is_empty() {
        return;
    }
    let (batch, answers): (Vec<LocalPost>, Vec<(usize, Asked)>) = posts.drain(..).map(|p| (p.post, (p.slot, p.asked))).unzip();
    for (saved, (slot, asked)) in engine.post_locals(batch).await.into_iter().zip(answers) {
        replies[slot] = Some(match (asked, saved) {
            (Asked::V1, Ok(_)) => "OK".into(),
            (Asked::V1, Err(e)) => format!("ERROR: {e}"),
            (Asked::V2 { id }, Ok(n)) => {
                let origin = n.local.unwrap_or_default();
                protocol::v2_ok(&id, json!({"workspace_id": origin.workspace_id, "surface_id": origin.surface_id, "id": origin.cmux_id}))
            }
            (Asked::V2 { id }, Err(e)) => protocol::v2_error(Some(&id), ErrorCode::InternalError, &e.to_string()),
        });
    }
}

/// v1 `notify` and `notify_target` from an authorised client: the notice to save, or the usage
/// error. `None` for every other command (and before authorisation), which `v1` answers.
fn v1_post(conn: &Conn, command: &str, args: &str) -> Option<Result<LocalPost, String>> {
    if !conn.authorised {
        return None;
    }
    match command {
        // `notify_needs_you` (ours): as `notify`, for a sender that waits for the person.
        "notify" | "notify_needs_you" => {
            let (title, subtitle, body) = protocol::split_payload(args);
            Some(Ok(LocalPost { title, subtitle, body, needs_you: command == "notify_needs_you", ..Default::default() }))
        }
        "notify_target" => {
            let mut parts = args.splitn(3, char::is_whitespace);
            let (Some(ws), Some(sf), payload) = (parts.next().filter(|s| !s.is_empty()), parts.next(), parts.next()) else {
                return Some(Err("ERROR: Usage: notify_target <workspace_id> <surface_id> <title>|<subtitle>|<body>".into()));
            };
            let (title, subtitle, body) = protocol::split_payload(payload.unwrap_or(""));
            Some(Ok(LocalPost { title, subtitle, body, workspace_id: Some(ws.into()), surface_id: Some(sf.into()), ..Default::default() }))
        }
        _ => None,
    }
}

/// v2 `notification.create` and `notification.create_for_caller` from an authorised client: the
/// notice to save, or what is wrong with its params. `None` for every other method.
fn v2_post(conn: &Conn, method: Option<Method>, params: &Value) -> Option<Result<LocalPost, MethodError>> {
    let (ws_key, sf_key) = match method? {
        _ if !conn.authorised => return None,
        Method::NotificationCreate => ("workspace_id", "surface_id"),
        Method::NotificationCreateForCaller => ("preferred_workspace_id", "preferred_surface_id"),
        _ => return None,
    };
    let post = || {
        Ok(LocalPost {
            title: text(params, "title", "Notification")?,
            subtitle: text(params, "subtitle", "")?,
            body: text(params, "body", "")?,
            workspace_id: optional(params, ws_key)?,
            surface_id: optional(params, sf_key)?,
            place: place(params)?,
            needs_you: flag(params, "needs_you")?,
        })
    };
    Some(post())
}

async fn v1(engine: &Engine, conn: &mut Conn, command: &str, args: &str) -> String {
    if command == "auth" {
        return if conn.password.is_none() {
            "OK: Authentication not required".into()
        } else if conn.check_password(args.trim()) {
            "OK: Authenticated".into()
        } else {
            "ERROR: Invalid password".into()
        };
    }
    if !conn.authorised {
        return "ERROR: Authentication required".into();
    }
    match command {
        "ping" => "PONG".into(),
        // `notify` and `notify_target` are saved by `answer_all` (`v1_post`).
        "list_notifications" => match engine.local_notices(LIST_LIMIT) {
            Ok(list) if list.is_empty() => "No notifications".into(),
            Ok(list) => list
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let entry = protocol::V1Entry {
                        id: n.cmux_id.as_deref().unwrap_or(""),
                        workspace: n.workspace_id.as_deref(),
                        surface: n.surface_id.as_deref(),
                        read: n.read_at.is_some(),
                        title: &n.title,
                        subtitle: &n.subtitle,
                        body: local_body(n),
                    };
                    protocol::v1_list_line(i, &entry)
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Err(e) => format!("ERROR: {e}"),
        },
        "clear_notifications" => match engine.clear_local().await {
            Ok(()) => "OK".into(),
            Err(e) => format!("ERROR: {e}"),
        },
        _ => "ERROR: Unknown command".into(),
    }
}

/// How many notices a list answers with when not asked for fewer (the newest).
pub const LIST_LIMIT: usize = 500;
/// The most a list answers with.
pub const LIST_LIMIT_MAX: usize = 5000;

type MethodResult = Result<Value, MethodError>;

/// A string parameter: absent is `default`, present must be a string.
fn text(params: &Value, key: &str, default: &str) -> Result<String, MethodError> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(default.into()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(MethodError::new(ErrorCode::InvalidParams, format!("{key} must be a string, not {other}"))),
    }
}

/// A boolean parameter: absent is false, present must be a boolean.
fn flag(params: &Value, key: &str) -> Result<bool, MethodError> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(MethodError::new(ErrorCode::InvalidParams, format!("{key} must be true or false, not {other}"))),
    }
}

fn optional(params: &Value, key: &str) -> Result<Option<String>, MethodError> {
    let s = text(params, key, "")?;
    Ok((!s.trim().is_empty()).then_some(s))
}

/// The terminal place a client sent (ours), checked field by field; absent or empty is none.
fn place(params: &Value) -> Result<Option<Place>, MethodError> {
    match params.get("place") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => Place::from_json(v).map(|p| (!p.is_empty()).then_some(p)).map_err(|e| MethodError::new(ErrorCode::InvalidParams, e)),
    }
}

fn required(params: &Value, key: &str) -> Result<String, MethodError> {
    optional(params, key)?.ok_or_else(|| MethodError::new(ErrorCode::InvalidParams, format!("{key} is required")))
}

/// A v2 request other than the notices `answer_all` saves; `word` is the method as sent, which
/// `method` is when it names one.
async fn v2(engine: &Engine, conn: &mut Conn, method: Option<Method>, word: &str, params: &Value) -> MethodResult {
    if method == Some(Method::AuthLogin) {
        let given = text(params, "password", "")?;
        return if conn.password.is_none() {
            Ok(json!({"authenticated": true, "required": false}))
        } else if conn.check_password(&given) {
            Ok(json!({"authenticated": true}))
        } else {
            Err(MethodError::new(ErrorCode::AuthFailed, "invalid password"))
        };
    }
    if !conn.authorised {
        return Err(MethodError::new(ErrorCode::AuthRequired, "authenticate first with auth.login"));
    }
    let Some(method) = method else {
        return Err(MethodError::new(ErrorCode::MethodNotFound, format!("unknown method {word:?}")));
    };
    match method {
        Method::SystemPing => Ok(json!({"pong": true})),
        Method::SystemCapabilities => Ok(json!({
            "methods": Method::ALL,
            "access_mode": if conn.password.is_some() { "password" } else { "user" },
        })),
        // `notification.create*` are saved by `answer_all` (`v2_post`).
        Method::NotificationList => {
            let limit = match params.get("limit") {
                None | Some(Value::Null) => LIST_LIMIT,
                Some(v) => v.as_u64().filter(|n| (1..=LIST_LIMIT_MAX as u64).contains(n)).ok_or_else(|| {
                    MethodError::new(ErrorCode::InvalidParams, format!("limit must be a whole number from 1 to {LIST_LIMIT_MAX}, not {v}"))
                })? as usize,
            };
            let list = engine.local_notices(limit).map_err(internal)?;
            let items: Vec<Value> = list.iter().map(list_item).collect();
            Ok(json!({"notifications": items}))
        }
        Method::NotificationMarkRead => {
            let all = params.get("all").and_then(Value::as_bool).unwrap_or(false);
            let id = optional(params, "id")?;
            if !all && id.is_none() {
                return Err(MethodError::new(ErrorCode::InvalidParams, "give id, or all: true"));
            }
            let marked = engine.mark_local_read(if all { None } else { id.as_deref() }).await.map_err(internal)?;
            if let (false, 0, Some(id)) = (all, marked, id.as_deref())
                && !engine.local_notice_exists(id).map_err(internal)?
            {
                return Err(MethodError::new(ErrorCode::NotFound, format!("no notification {id}")));
            }
            Ok(json!({"marked_read": marked}))
        }
        Method::NotificationClear => {
            engine.clear_local().await.map_err(internal)?;
            Ok(json!({}))
        }
        Method::SessionAttach => {
            let session = required(params, "session_id")?;
            let shown = SessionShown {
                workspace_id: optional(params, "workspace_id")?,
                surface_id: optional(params, "surface_id")?,
                // A remote terminal's session comes back to the local one running its ssh.
                place: match &conn.forwarded {
                    Some(forwarded) => forwarded.place.clone(),
                    None => place(params)?,
                },
            };
            if shown.workspace_id.is_none() && shown.place.is_none() {
                return Err(MethodError::new(ErrorCode::InvalidParams, "workspace_id or place is required"));
            }
            engine.attach_session(&session, &shown).map_err(internal)?;
            Ok(json!({}))
        }
        Method::SurfaceFocus => {
            let ws = required(params, "workspace_id")?;
            let focused = params
                .get("focused")
                .and_then(Value::as_bool)
                .ok_or_else(|| MethodError::new(ErrorCode::InvalidParams, "focused must be true or false".to_string()))?;
            engine.set_focus(&ws, optional(params, "surface_id")?.as_deref(), focused).await.map_err(internal)?;
            Ok(json!({}))
        }
        Method::CloudFollow => {
            let id = text(params, "id", "")?;
            let kind = text(params, "kind", "")?;
            let (run, handoff) = match kind.as_str() {
                "run" => (Some(RunId::parse(&id).map_err(invalid)?), None),
                "handoff" => (None, Some(HandoffId::parse(&id).map_err(invalid)?)),
                other => {
                    return Err(MethodError::new(ErrorCode::InvalidParams, format!("kind {other:?}: expected \"run\" or \"handoff\"")));
                }
            };
            engine.account_ready(SIGN_IN_RESTORE_WAIT).await;
            match (run, handoff) {
                (Some(run), _) => engine.follow_run(&run).map_err(engine_error)?,
                (_, Some(handoff)) => engine.follow_handoff(&handoff).map_err(engine_error)?,
                _ => unreachable!("one of the two was parsed"),
            }
            Ok(json!({"following": true}))
        }
        Method::CloudCancel => {
            let id = RunId::parse(&text(params, "id", "")?).map_err(invalid)?;
            engine.account_ready(SIGN_IN_RESTORE_WAIT).await;
            engine.cancel_run(&id).await.map_err(engine_error)?;
            Ok(json!({"cancelled": true}))
        }
        Method::DeliveryPause => {
            // `until`: RFC 3339, or absent for "until resumed".
            let until = match optional(params, "until")? {
                None => None,
                Some(t) => Some(
                    t.parse::<jiff::Timestamp>().map_err(|e| MethodError::new(ErrorCode::InvalidParams, format!("until {t:?}: {e}")))?,
                ),
            };
            engine.pause(until).map_err(internal)?;
            Ok(json!({"paused": true, "until": until.map(|t| t.to_string())}))
        }
        Method::DeliveryResume => {
            engine.resume().map_err(internal)?;
            Ok(json!({"paused": false}))
        }
        Method::AccountDeviceStart => {
            let start = engine.device_start().await.map_err(internal)?;
            Ok(serde_json::to_value(start).unwrap_or_default())
        }
        Method::AccountDeviceWait => {
            let team = optional(params, "team")?.map(|t| crate::cloud::TeamId::parse(&t)).transpose().map_err(invalid)?;
            let me = engine.device_finish(team).await.map_err(internal)?;
            Ok(json!({"email": me.email, "userId": me.user_id}))
        }
        Method::AccountSignInToken => {
            let token = required(params, "access_token")?;
            let team = optional(params, "team")?.map(|t| crate::cloud::TeamId::parse(&t)).transpose().map_err(invalid)?;
            let me = engine.sign_in_with_token(SecretString::from(token), team).await.map_err(internal)?;
            Ok(json!({"email": me.email, "userId": me.user_id}))
        }
        Method::AccountSignOut => {
            engine.sign_out().await.map_err(internal)?;
            Ok(json!({"signedOut": true}))
        }
        Method::TrayStatus => serde_json::to_value(engine.status().map_err(internal)?).map_err(internal),
        Method::TrayView => serde_json::to_value(engine.tray_view().map_err(internal)?).map_err(internal),
        Method::TrayMarkAllRead => Ok(json!({"marked_read": engine.mark_all_read().await.map_err(internal)?})),
        Method::SettingsReload => {
            engine.reload_delivery_settings();
            let problem = engine.delivery_settings_problem().map(|p| p.to_string());
            Ok(json!({"reloaded": problem.is_none(), "problem": problem}))
        }
        // Answered by `answer_all` with their batch (`v2_post`); login above.
        Method::AuthLogin | Method::NotificationCreate | Method::NotificationCreateForCaller => {
            Err(MethodError::new(ErrorCode::InternalError, format!("{method} is answered with its batch")))
        }
    }
}

crate::words::text_enum! {
    /// A v2 method (docs/local-socket.md), declared once: the dispatch matches on it and
    /// `system.capabilities` lists it, in this order.
    pub enum Method {
        /// Password mode: the password, before anything else.
        AuthLogin = "auth.login",
        /// Is the engine there.
        SystemPing = "system.ping",
        /// The methods and the access mode.
        SystemCapabilities = "system.capabilities",
        /// A notice, with the cmux surface it came from (saved with its batch).
        NotificationCreate = "notification.create",
        /// A notice, with the caller's terminal place (saved with its batch).
        NotificationCreateForCaller = "notification.create_for_caller",
        /// The newest local notices.
        NotificationList = "notification.list",
        /// Marks one local notice read, or all.
        NotificationMarkRead = "notification.mark_read",
        /// Forgets every local notice and takes their banners away.
        NotificationClear = "notification.clear",
        /// A terminal shows a cloud session: its banners come back here.
        SessionAttach = "session.attach",
        /// The person looks at a cmux surface: its notices are read.
        SurfaceFocus = "surface.focus",
        /// Follow a Run or a hand-off.
        CloudFollow = "cloud.follow",
        /// Cancel a Run from here: its end tells nothing.
        CloudCancel = "cloud.cancel",
        /// Start a device sign-in.
        AccountDeviceStart = "account.device_start",
        /// Wait for the device sign-in to be confirmed.
        AccountDeviceWait = "account.device_wait",
        /// Sign in with an access token (kept in memory).
        AccountSignInToken = "account.sign_in_token",
        /// Sign out and forget the saved sign-in.
        AccountSignOut = "account.sign_out",
        /// Pause banners until a time, or until resumed.
        DeliveryPause = "delivery.pause",
        /// Resume banners.
        DeliveryResume = "delivery.resume",
        /// Read the config file again.
        SettingsReload = "settings.reload",
        /// What `status` shows.
        TrayStatus = "tray.status",
        /// What the tray shows.
        TrayView = "tray.view",
        /// Marks every notice read.
        TrayMarkAllRead = "tray.mark_all_read",
    }
}

/// The body as the terminal sent it. A notice stored before schema 4 kept only the banner body
/// (subtitle joined in, cut at 200 characters): the subtitle is taken off that.
fn local_body(n: &StoredNotice) -> &str {
    match &n.local_body {
        Some(body) => body,
        None => n.body.strip_prefix(&format!("{} — ", n.subtitle)).filter(|_| !n.subtitle.is_empty()).unwrap_or(&n.body),
    }
}

fn list_item(n: &StoredNotice) -> Value {
    let created = jiff::Timestamp::from_millisecond(n.created_at).map(|t| t.to_string()).unwrap_or_default();
    json!({
        "id": n.cmux_id,
        "workspace_id": n.workspace_id,
        "surface_id": n.surface_id,
        "title": n.title,
        "subtitle": n.subtitle,
        "body": local_body(n),
        "created_at": created,
        "is_read": n.read_at.is_some(),
    })
}

fn invalid(e: impl std::fmt::Display) -> MethodError {
    MethodError::new(ErrorCode::InvalidParams, e.to_string())
}

/// An engine error's code: "not signed in" has its own, the rest are internal.
fn engine_error(e: EngineError) -> MethodError {
    match e {
        EngineError::SignedOut => MethodError::new(ErrorCode::NotSignedIn, e.to_string()),
        EngineError::TooManyFollows { .. } => MethodError::new(ErrorCode::TooManyFollows, e.to_string()),
        e => internal(e),
    }
}

fn internal(e: impl std::fmt::Display) -> MethodError {
    MethodError::new(ErrorCode::InternalError, e.to_string())
}
