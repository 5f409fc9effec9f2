//! Every v1 command and v2 method of docs/local-socket.md, with cmux's reply texts and error
//! codes, done through the engine.

use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

use super::forwarded::Forwarded;
use super::protocol::{self, ErrorCode, Method, MethodError, Request};
use super::replies::{Replies, Write};
use super::requests::params::{flag, internal, optional, place, required, text};
use super::requests::{
    Cancel, DeviceStart, DeviceWait, Follow, GetStatus, MethodRequest as _, Pause, Reload, Resume, SignInToken, SignOut,
};
use crate::engine::Engine;
use crate::notice::local::LocalPost;
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
                    posts.push(Post { slot, post: conn.adopt(post), asked: AnsweredAs::V1 });
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
                        posts.push(Post { slot, post: conn.adopt(post), asked: AnsweredAs::V2 { id } });
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
    asked: AnsweredAs,
}

/// How a notice was asked for, which is how its answer is written.
enum AnsweredAs {
    V1,
    V2 { id: Value },
}

/// Saves the notices waiting in `posts` in one commit and writes their answers in their slots.
async fn save(engine: &Engine, posts: &mut Vec<Post>, replies: &mut [Option<String>]) {
    if posts.is_empty() {
        return;
    }
    let (batch, answers): (Vec<LocalPost>, Vec<(usize, AnsweredAs)>) = posts.drain(..).map(|p| (p.post, (p.slot, p.asked))).unzip();
    for (saved, (slot, asked)) in engine.post_locals(batch).await.into_iter().zip(answers) {
        replies[slot] = Some(match (asked, saved) {
            (AnsweredAs::V1, Ok(_)) => "OK".into(),
            (AnsweredAs::V1, Err(e)) => format!("ERROR: {e}"),
            (AnsweredAs::V2 { id }, Ok(n)) => {
                let origin = n.local.unwrap_or_default();
                protocol::v2_ok(&id, json!({"workspace_id": origin.workspace_id, "surface_id": origin.surface_id, "id": origin.cmux_id}))
            }
            (AnsweredAs::V2 { id }, Err(e)) => protocol::v2_error(Some(&id), ErrorCode::InternalError, &e.to_string()),
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
        Method::CloudFollow => Follow::parse(params)?.apply(engine).await,
        Method::CloudCancel => Cancel::parse(params)?.apply(engine).await,
        Method::DeliveryPause => Pause::parse(params)?.apply(engine),
        Method::DeliveryResume => Resume::parse(params)?.apply(engine),
        Method::AccountDeviceStart => DeviceStart::parse(params)?.apply(engine).await,
        Method::AccountDeviceWait => DeviceWait::parse(params)?.apply(engine).await,
        Method::AccountSignInToken => SignInToken::parse(params)?.apply(engine).await,
        Method::AccountSignOut => SignOut::parse(params)?.apply(engine).await,
        Method::TrayStatus => GetStatus::parse(params)?.apply(engine),
        Method::TrayView => serde_json::to_value(engine.tray_view().map_err(internal)?).map_err(internal),
        Method::TrayMarkAllRead => Ok(json!({"marked_read": engine.mark_all_read().await.map_err(internal)?})),
        Method::SettingsReload => Reload::parse(params)?.apply(engine),
        // Answered by `answer_all` with their batch (`v2_post`); login above.
        Method::AuthLogin | Method::NotificationCreate | Method::NotificationCreateForCaller => {
            Err(MethodError::new(ErrorCode::InternalError, format!("{method} is answered with its batch")))
        }
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
