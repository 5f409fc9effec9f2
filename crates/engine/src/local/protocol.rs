//! cmux's socket protocol as pure functions: a line in, a request or an error out; a result
//! out, a line (docs/local-socket.md). A trimmed line starting with `{` or `[` is v2 JSON,
//! anything else v1 text.

use serde_json::{Value, json};

/// One parsed request line.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    V1 { command: String, args: String },
    V2 { id: Value, method: String, params: Value },
}

crate::words::text_enum! {
    /// A v2 error's code (docs/local-socket.md, "v2"), declared once.
    pub enum ErrorCode {
        ParseError = "parse_error",
        InvalidRequest = "invalid_request",
        MethodNotFound = "method_not_found",
        InvalidParams = "invalid_params",
        NotFound = "not_found",
        AuthRequired = "auth_required",
        AuthFailed = "auth_failed",
        InternalError = "internal_error",
        NotSignedIn = "not_signed_in",
        TooManyFollows = "too_many_follows",
    }
}

/// Why a v2 request failed: its code, and what was wrong in words.
#[derive(Debug)]
pub struct MethodError {
    pub code: ErrorCode,
    pub message: String,
}

impl MethodError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        MethodError { code, message: message.into() }
    }
}

/// A line that is not a request, with the reply it gets.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejected {
    /// v2 decoding errors carry no id.
    V2 { id: Option<Value>, code: ErrorCode, message: String },
}

pub fn parse(line: &str) -> Result<Request, Rejected> {
    let trimmed = line.trim();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        let (command, args) = trimmed.split_once(char::is_whitespace).unwrap_or((trimmed, ""));
        return Ok(Request::V1 { command: command.to_string(), args: args.trim_start().to_string() });
    }
    let value: Value = serde_json::from_str(trimmed).map_err(|e| Rejected::V2 {
        id: None,
        code: ErrorCode::ParseError,
        message: format!("invalid JSON: {e}"),
    })?;
    let Value::Object(obj) = value else {
        return Err(Rejected::V2 { id: None, code: ErrorCode::InvalidRequest, message: "a request must be a JSON object".into() });
    };
    let id = obj.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = obj.get("method").and_then(Value::as_str) else {
        return Err(Rejected::V2 { id: Some(id), code: ErrorCode::InvalidRequest, message: "missing method".into() });
    };
    let params = obj.get("params").cloned().unwrap_or_else(|| json!({}));
    if !params.is_object() {
        return Err(Rejected::V2 { id: Some(id), code: ErrorCode::InvalidParams, message: "params must be an object".into() });
    }
    Ok(Request::V2 { id, method: method.to_string(), params })
}

/// `{"id", "ok": true, "result"}` on one line.
pub fn v2_ok(id: &Value, result: Value) -> String {
    json!({"id": id, "ok": true, "result": result}).to_string()
}

/// `{"id"?, "ok": false, "error": {"code", "message"}}` on one line.
pub fn v2_error(id: Option<&Value>, code: ErrorCode, message: &str) -> String {
    let mut v = json!({"ok": false, "error": {"code": code, "message": message}});
    if let Some(id) = id {
        v["id"] = id.clone();
    }
    v.to_string()
}

/// `notify`'s payload: split on `|` into at most 3 parts — title|subtitle|body, title|body, or
/// title — each trimmed. (An empty title becomes "Notification" when the notice is made.)
pub fn split_payload(payload: &str) -> (String, String, String) {
    let parts: Vec<&str> = payload.splitn(3, '|').map(str::trim).collect();
    match parts.as_slice() {
        [t, s, b] => (t.to_string(), s.to_string(), b.to_string()),
        [t, b] => (t.to_string(), String::new(), b.to_string()),
        [t] => (t.to_string(), String::new(), String::new()),
        _ => Default::default(),
    }
}

/// One notice as `list_notifications` lists it.
pub struct V1Entry<'a> {
    pub id: &'a str,
    pub workspace: Option<&'a str>,
    pub surface: Option<&'a str>,
    pub read: bool,
    pub title: &'a str,
    pub subtitle: &'a str,
    pub body: &'a str,
}

/// One line of `list_notifications`; fields never contain a newline or a `|` of their own.
pub fn v1_list_line(idx: usize, e: &V1Entry) -> String {
    let clean = |f: &str| f.replace(['\n', '\r'], " ").replace('|', "/");
    format!(
        "{idx}:{}|{}|{}|{}|{}|{}|{}",
        e.id,
        e.workspace.unwrap_or("none"),
        e.surface.unwrap_or("none"),
        if e.read { "read" } else { "unread" },
        clean(e.title),
        clean(e.subtitle),
        clean(e.body)
    )
}

pub fn rejected_line(r: &Rejected) -> String {
    match r {
        Rejected::V2 { id, code, message } => v2_error(id.as_ref(), *code, message),
    }
}

crate::words::text_enum! {
    /// A v1 command (docs/local-socket.md, "v1"), declared once: the dispatch matches on it.
    pub enum Command {
        /// The password, in password mode before anything else.
        Auth = "auth",
        Ping = "ping",
        /// A notice: `title|subtitle|body` (saved with its batch).
        Notify = "notify",
        /// Ours: as `notify`, for a sender that waits for the person.
        NotifyNeedsYou = "notify_needs_you",
        /// A notice with its cmux workspace and surface.
        NotifyTarget = "notify_target",
        ListNotifications = "list_notifications",
        ClearNotifications = "clear_notifications",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_rules() {
        assert_eq!(parse("ping\n"), Ok(Request::V1 { command: "ping".into(), args: "".into() }));
        assert_eq!(parse("notify a|b|c"), Ok(Request::V1 { command: "notify".into(), args: "a|b|c".into() }));
        let Err(Rejected::V2 { id: None, code, .. }) = parse("{nope") else { panic!() };
        assert_eq!(code.as_str(), "parse_error");
        let Err(Rejected::V2 { id: None, code, .. }) = parse("[]") else { panic!() };
        assert_eq!(code.as_str(), "invalid_request");
        let Err(Rejected::V2 { id: Some(id), code, .. }) = parse(r#"{"id": 7}"#) else { panic!() };
        assert_eq!((id, code.as_str()), (json!(7), "invalid_request"));
        assert_eq!(
            parse(r#" {"id": "a", "method": "system.ping"} "#),
            Ok(Request::V2 { id: json!("a"), method: "system.ping".into(), params: json!({}) })
        );
    }

    #[test]
    fn notify_payloads_split_in_at_most_three() {
        let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
        assert_eq!(split_payload("a|b|c"), s("a", "b", "c"));
        assert_eq!(split_payload(" a | b "), s("a", "", "b"));
        assert_eq!(split_payload("a"), s("a", "", ""));
        assert_eq!(split_payload("|b|c"), s("", "b", "c"));
        assert_eq!(split_payload("a|b|c|d"), s("a", "b", "c|d"));
    }

    #[test]
    fn replies_are_one_line() {
        let line = v2_ok(&json!(1), json!({"text": "a\nb"}));
        assert!(!line.contains('\n'));
        assert_eq!(v2_error(None, ErrorCode::ParseError, "x"), r#"{"error":{"code":"parse_error","message":"x"},"ok":false}"#);
    }
}
