//! The local socket: cmux's notification protocol on a Unix socket of the user's own, and the
//! way this machine's commands reach the running engine (`cloud.follow`, `cloud.cancel`).
//!
//! It owns the socket file (directory 0700, socket 0600, a stale file from a crash replaced, a
//! live one never stolen), checks each peer's uid before reading a byte, caps a line at 64 KiB,
//! and answers each connection's requests in order. It never trusts a peer it has not checked.

pub mod protocol;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cloud::{HandoffId, RunId};
use crate::engine::Engine;
use protocol::Request;

/// A line longer than this is refused and the connection closed.
pub const MAX_LINE: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    #[error("{path}: another cmux-tray is serving this socket; not taking it over")]
    InUse { path: PathBuf },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Binds the socket at `path`, replacing a stale file but never a live one.
pub async fn bind(path: &Path) -> Result<UnixListener, SocketError> {
    let io = |source| SocketError::Io { path: path.to_path_buf(), source };
    if let Some(dir) = path.parent() {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b.create(dir).map_err(io)?;
    }
    if path.exists() {
        if UnixStream::connect(path).await.is_ok() {
            return Err(SocketError::InUse { path: path.to_path_buf() });
        }
        std::fs::remove_file(path).map_err(io)?;
    }
    // The umask keeps the socket the user's alone from the moment it exists.
    let old = unsafe_umask(0o177);
    let bound = UnixListener::bind(path);
    unsafe_umask(old);
    let listener = bound.map_err(io)?;
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).map_err(io)?;
    Ok(listener)
}

fn unsafe_umask(mask: u32) -> u32 {
    // SAFETY: umask has no memory-safety preconditions; it is process-wide, and we only narrow
    // it around one bind.
    unsafe { libc_umask(mask) }
}

unsafe extern "C" {
    #[link_name = "umask"]
    fn libc_umask(mask: u32) -> u32;
}

/// Serves until `stop`; each connection on its own task.
pub async fn serve(listener: UnixListener, engine: Engine, stop: CancellationToken, tracker: TaskTracker) {
    let uid = current_uid();
    loop {
        let stream = tokio::select! {
            _ = stop.cancelled() => return,
            a = listener.accept() => match a {
                Ok((s, _)) => s,
                Err(e) => { tracing::warn!("local socket accept: {e}"); continue; }
            },
        };
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == uid => {}
            Ok(cred) => {
                tracing::warn!(peer_uid = cred.uid(), "refused a connection from another user");
                continue;
            }
            Err(e) => {
                tracing::warn!("refused a connection whose peer could not be checked: {e}");
                continue;
            }
        }
        let engine = engine.clone();
        let stop = stop.clone();
        tracker.spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = connection(stream, engine) => {}
            }
        });
    }
}

async fn connection(stream: UnixStream, engine: Engine) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = match (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).await {
            Ok(n) => n,
            Err(_) => return,
        };
        if n == 0 {
            return;
        }
        if line.len() > MAX_LINE || (!line.ends_with(b"\n") && line.len() == MAX_LINE + 1) {
            let _ = write.write_all(b"ERROR: Line too long (limit 64 KiB)\n").await;
            return;
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        let reply = answer(&engine, &text).await;
        if write.write_all(reply.as_bytes()).await.is_err() || write.write_all(b"\n").await.is_err() {
            return;
        }
    }
}

async fn answer(engine: &Engine, line: &str) -> String {
    match protocol::parse(line) {
        Err(r) => protocol::rejected_line(&r),
        Ok(Request::V1 { command, .. }) => match command.as_str() {
            "ping" => "PONG".into(),
            _ => "ERROR: Unknown command".into(),
        },
        Ok(Request::V2 { id, method, params }) => match method_result(engine, &method, &params).await {
            Ok(result) => protocol::v2_ok(&id, result),
            Err((code, message)) => protocol::v2_error(Some(&id), code, &message),
        },
    }
}

type MethodResult = Result<Value, (&'static str, String)>;

async fn method_result(engine: &Engine, method: &str, params: &Value) -> MethodResult {
    let text = |key: &str| params.get(key).and_then(Value::as_str).unwrap_or("");
    match method {
        "system.ping" => Ok(json!({"pong": true})),
        "system.capabilities" => Ok(json!({"methods": METHODS, "access_mode": "owner"})),
        "cloud.follow" => {
            let id = text("id");
            match text("kind") {
                "run" => {
                    let id = RunId::parse(id).map_err(invalid)?;
                    engine.follow_run(&id).map_err(internal)?;
                }
                "handoff" => {
                    let id = HandoffId::parse(id).map_err(invalid)?;
                    engine.follow_handoff(&id).map_err(internal)?;
                }
                other => return Err(("invalid_params", format!("kind {other:?}: expected \"run\" or \"handoff\""))),
            }
            Ok(json!({"following": true}))
        }
        "cloud.cancel" => {
            let id = RunId::parse(text("id")).map_err(invalid)?;
            engine.cancel_run(&id).await.map_err(internal)?;
            Ok(json!({"cancelled": true}))
        }
        _ => Err(("method_not_found", format!("unknown method {method:?}"))),
    }
}

const METHODS: &[&str] = &["system.ping", "system.capabilities", "cloud.follow", "cloud.cancel"];

fn invalid(e: impl std::fmt::Display) -> (&'static str, String) {
    ("invalid_params", e.to_string())
}

fn internal(e: impl std::fmt::Display) -> (&'static str, String) {
    ("internal_error", e.to_string())
}

fn current_uid() -> u32 {
    // The owner of our own runtime files is us; std has no getuid, and this needs no unsafe.
    std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").expect("/proc/self is readable"))
}

/// Sends one v2 request and reads its one-line reply (for this machine's commands).
pub async fn request(path: &Path, method: &str, params: Value, timeout: Duration) -> Result<Value, String> {
    let work = async {
        let mut stream = UnixStream::connect(path).await.map_err(|e| format!("{}: {e}", path.display()))?;
        let line = json!({"id": 1, "method": method, "params": params}).to_string() + "\n";
        stream.write_all(line.as_bytes()).await.map_err(|e| e.to_string())?;
        let mut reply = String::new();
        BufReader::new(stream).read_line(&mut reply).await.map_err(|e| e.to_string())?;
        let v: Value = serde_json::from_str(&reply).map_err(|e| format!("unreadable reply {reply:?}: {e}"))?;
        if v["ok"] == json!(true) {
            Ok(v["result"].clone())
        } else {
            Err(v["error"]["message"].as_str().unwrap_or("the engine refused").to_string())
        }
    };
    tokio::time::timeout(timeout, work).await.map_err(|_| format!("{}: no answer in {timeout:?}", path.display()))?
}
