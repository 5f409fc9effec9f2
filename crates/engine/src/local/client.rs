//! The client side: where a notice is sent (seed 000's resolution rules, as a pure function over
//! the environment and the `[notify]` table), and one request over the socket.
//!
//! - The environment wins over the config file, value by value (socket, surface, workspace).
//! - Socket: the first *meaningful* of `CMUX_SOCKET_PATH`, `CMUX_SOCKET`, `CMUX` (the last only
//!   when it looks like a path: `CMUX=1` names no socket). `0`, `false`, `no`, `off` (any case)
//!   and empty count as absent, and the search goes on; then `[notify] socket_path`; then this
//!   app's own socket, when it is live.
//! - `enabled` is tri-state: `false` turns notices off and beats everything; `true` turns them
//!   on; absent lets a socket decide — one named by the environment, or this app's own when it
//!   is running (it is the endpoint the person installed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::protocol::Method;
use super::requests::{Login, MethodRequest};
use crate::setting_keys::{Key, Kind};

/// The config file's table this reads.
const NOTIFY: &str = "notify";

/// A notice's own deadline when the config says nothing (or something not positive).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// The `[notify]` table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NotifyConfig {
    pub enabled: Option<bool>,
    pub socket_path: Option<String>,
    pub surface_id: Option<String>,
    pub workspace_id: Option<String>,
    /// Seconds; an integer and a float are the same statement.
    pub timeout: Option<f64>,
    /// `wrap`: seconds a command must run before its end is worth a notice.
    pub wrap_threshold: Option<f64>,
    /// `hook claude`: whether Claude Code's idle reminders post (off by default).
    pub idle_reminders: Option<bool>,
    /// Seconds a notice waits for a forwarded socket's link (`cmux-tray ssh`) to come back.
    pub link_wait: Option<f64>,
}

/// How long a wrapped command must run before its end is a notice, when neither `--threshold`
/// nor `[notify] wrap_threshold` says.
pub const DEFAULT_WRAP_THRESHOLD: Duration = Duration::from_secs(10);

/// How long a notice waits for a forwarded socket's link when `[notify] link_wait` says nothing.
pub const DEFAULT_LINK_WAIT: Duration = Duration::from_secs(30);

/// The longest `timeout` or `wrap_threshold` taken (their declared bound): a day.
pub const MAX_SECONDS: f64 = crate::setting_keys::A_DAY as f64;

fn seconds(key: Key, value: &toml::Value) -> Result<f64, String> {
    let secs =
        value.as_float().or_else(|| value.as_integer().map(|i| i as f64)).ok_or(format!("{key} = {value}: expected seconds (a number)"))?;
    let max = match key.setting().kind {
        Kind::Seconds { max, .. } => f64::from(max),
        _ => MAX_SECONDS,
    };
    if !secs.is_finite() || secs > max {
        return Err(format!("{key} = {value}: expected at most {max} seconds (a day)"));
    }
    Ok(secs)
}

impl NotifyConfig {
    /// Reads the `[notify]` table. A value of the wrong type names the key and what it wanted.
    pub fn from_table(table: &toml::Table) -> Result<NotifyConfig, String> {
        let mut c = NotifyConfig::default();
        for (name, value) in table {
            let Some(key) = Key::in_table(NOTIFY, name) else {
                tracing::warn!("unknown key {NOTIFY}.{name} (ignored)");
                continue;
            };
            let text = || value.as_str().map(String::from).ok_or(format!("{key} = {value}: expected a string"));
            let boolean = || value.as_bool().ok_or(format!("{key} = {value}: expected true or false"));
            match key {
                Key::NotifyEnabled => c.enabled = Some(boolean()?),
                Key::NotifyIdleReminders => c.idle_reminders = Some(boolean()?),
                Key::NotifySocketPath => c.socket_path = Some(text()?),
                Key::NotifySurfaceId => c.surface_id = Some(text()?),
                Key::NotifyWorkspaceId => c.workspace_id = Some(text()?),
                Key::NotifyTimeout => c.timeout = Some(seconds(key, value)?),
                Key::NotifyWrapThreshold => c.wrap_threshold = Some(seconds(key, value)?),
                Key::NotifyLinkWait => c.link_wait = Some(seconds(key, value)?),
                other => tracing::warn!("unknown key {NOTIFY}.{} (ignored)", other.split().1),
            }
        }
        Ok(c)
    }

    /// Reads `[notify]` from a config file; an absent file or table is an empty config.
    pub fn load(path: &Path) -> Result<NotifyConfig, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(NotifyConfig::default()),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        Self::from_text(path, &text)
    }

    /// Reads `[notify]` from a config file's text (`path` names it in errors).
    pub fn from_text(path: &Path, text: &str) -> Result<NotifyConfig, String> {
        let table: toml::Table = text.parse().map_err(|e| format!("{}: not valid TOML: {e}", path.display()))?;
        match table.get(NOTIFY) {
            None => Ok(NotifyConfig::default()),
            Some(toml::Value::Table(t)) => Self::from_table(t).map_err(|e| format!("{}: {e}", path.display())),
            Some(other) => Err(format!("{}: notify = {other}: expected a table [notify]", path.display())),
        }
    }
}

/// Where (and whether) to send.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub enabled: bool,
    /// `[notify] enabled = false`: the person turned notices off (not a fault).
    pub turned_off: bool,
    pub socket: Option<PathBuf>,
    pub surface_id: Option<String>,
    pub workspace_id: Option<String>,
    pub timeout: Duration,
}

/// Why no notice can go out before anything is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Undeliverable {
    #[error("notifications are off ([notify] enabled = false)")]
    TurnedOff,
    /// `enabled = true` and no socket anywhere.
    #[error(
        "[notify] enabled = true, but no socket is named (CMUX_SOCKET_PATH, CMUX_SOCKET, [notify] socket_path) and no cmux-tray engine runs"
    )]
    NoSocket,
    /// Nobody said where to send and this app's own socket is not live: no engine runs.
    #[error(
        "no engine answers: no socket is named (CMUX_SOCKET_PATH, CMUX_SOCKET, [notify] socket_path) and cmux-tray's own socket is not live"
    )]
    NoEngine,
}

impl Resolved {
    /// Whether a notice can go out, and if not, why.
    pub fn deliverable(&self) -> Result<&Path, Undeliverable> {
        match (&self.socket, self.enabled) {
            (_, false) if self.turned_off => Err(Undeliverable::TurnedOff),
            (_, false) => Err(Undeliverable::NoEngine),
            (None, true) => Err(Undeliverable::NoSocket),
            (Some(s), true) => Ok(s),
        }
    }
}

/// `0`, `false`, `no`, `off` in any case, and empty or blank, count as absent.
pub fn is_falsey(value: &str) -> bool {
    let v = value.trim();
    v.is_empty() || ["0", "false", "no", "off"].iter().any(|f| v.eq_ignore_ascii_case(f))
}

/// A path has a separator: `/`, or `\\` in a Windows pipe's name (`\\.\pipe\…`).
fn looks_like_path(value: &str) -> bool {
    value.contains(['/', '\\'])
}

/// The first meaningful value among `names`.
fn first_meaningful(env: &BTreeMap<String, String>, names: &[&str]) -> Option<String> {
    names.iter().filter_map(|n| env.get(*n)).find(|v| !is_falsey(v)).map(|v| v.trim().to_string())
}

/// Seed 000's resolution. `own_socket` is this app's socket when it is live (the last resort).
pub fn resolve(env: &BTreeMap<String, String>, config: &NotifyConfig, own_socket: Option<&Path>) -> Resolved {
    let env_socket = ["CMUX_SOCKET_PATH", "CMUX_SOCKET", "CMUX"]
        .iter()
        .filter_map(|name| env.get(*name).map(|v| (*name, v)))
        .find(|(name, v)| !is_falsey(v) && (*name != "CMUX" || looks_like_path(v)))
        .map(|(_, v)| PathBuf::from(v.trim()));
    let config_socket = config.socket_path.as_deref().filter(|s| !is_falsey(s)).map(PathBuf::from);
    let own = own_socket.map(Path::to_path_buf);
    let enabled = match config.enabled {
        Some(said) => said,
        None => env_socket.is_some() || own.is_some(),
    };
    let keep = |v: &Option<String>| v.as_deref().filter(|s| !is_falsey(s)).map(String::from);
    Resolved {
        enabled,
        turned_off: config.enabled == Some(false),
        socket: env_socket.or(config_socket).or(own),
        surface_id: first_meaningful(env, &["CMUX_SURFACE_ID", "CMUX_PANEL_ID"]).or_else(|| keep(&config.surface_id)),
        workspace_id: first_meaningful(env, &["CMUX_WORKSPACE_ID", "CMUX_TAB_ID"]).or_else(|| keep(&config.workspace_id)),
        timeout: config.timeout.and_then(|t| Duration::try_from_secs_f64(t).ok()).filter(|t| !t.is_zero()).unwrap_or(DEFAULT_TIMEOUT),
    }
}

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// Nothing serves the socket: no engine runs for this user (or it serves another socket).
    #[error("{}: no cmux-tray engine answers there ({source})", path.display())]
    NoEngine { path: std::path::PathBuf, source: std::io::Error },
    /// It answered with a refusal, answered nothing in time, or could not be trusted.
    #[error("{0}")]
    Failed(String),
}

impl From<String> for RequestError {
    fn from(why: String) -> Self {
        RequestError::Failed(why)
    }
}

impl From<&str> for RequestError {
    fn from(why: &str) -> Self {
        RequestError::Failed(why.into())
    }
}

/// Sends one v2 request (after `auth.login` when a password is given) and reads its reply.
pub async fn request<R: MethodRequest>(path: &Path, request: &R, password: Option<&str>, timeout: Duration) -> Result<Value, RequestError> {
    let work = async {
        let stream = super::endpoint::connect(path).await.map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
                RequestError::NoEngine { path: path.to_path_buf(), source }
            }
            _ => RequestError::Failed(format!("{}: {source}", path.display())),
        })?;
        let (read, mut write) = tokio::io::split(stream);
        let mut lines = BufReader::new(read).lines();
        let mut call = async |method: Method, params: Value| -> Result<Value, RequestError> {
            let line = json!({"id": 1, "method": method, "params": params}).to_string() + "\n";
            write.write_all(line.as_bytes()).await.map_err(|e| e.to_string())?;
            let reply = lines.next_line().await.map_err(|e| e.to_string())?.ok_or("the socket closed without a reply")?;
            let v: Value = serde_json::from_str(&reply).map_err(|e| format!("unreadable reply {reply:?}: {e}"))?;
            if v["ok"] == json!(true) {
                Ok(v["result"].clone())
            } else {
                Err(format!("{} ({})", v["error"]["message"].as_str().unwrap_or("refused"), v["error"]["code"].as_str().unwrap_or("?"))
                    .into())
            }
        };
        if let Some(password) = password {
            call(Login::METHOD, Login { password: password.to_string().into() }.params()).await?;
        }
        call(R::METHOD, request.params()).await
    };
    tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| RequestError::Failed(format!("{}: no answer within {timeout:?}", path.display())))?
}

#[cfg(test)]
mod tests;
