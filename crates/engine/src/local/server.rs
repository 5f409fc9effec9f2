//! Serving the socket, the same on every platform: peers the platform's [`endpoint`] let in;
//! password mode with its pre-auth limits; lines capped at 64 KiB; at most `MAX_CLIENTS`
//! connections at once; each connection on its own task, answered in order (what a client
//! pipelined, together), every write with a time limit.
//!
//! [`endpoint`]: super::endpoint

use std::path::PathBuf;
use std::time::Duration;

use futures_util::StreamExt;
use secrecy::SecretString;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, FramedRead};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::conn::Conn;
use super::endpoint::{self, Accepted, Listener};
use super::forwarded::{self, Forwarded};
use super::methods;
use super::replies::{Replies, WRITE_TIMEOUT};
use crate::service::Engine;

/// A line longer than this (its `\n` aside) is refused and the connection closed.
pub const MAX_LINE: usize = 64 * 1024;
/// Before a connection is authorised it may send at most this much …
pub const PRE_AUTH_BYTES: usize = 4 * 1024 * 1024;
/// … and must be authorised within this long.
pub const PRE_AUTH_TIME: Duration = Duration::from_secs(2);
/// The most request lines a pipelining client gets answered together (their notices in one
/// commit): enough to share a commit's cost, few enough that the first waits little.
pub const MAX_BATCH: usize = 64;
/// An authorised connection that says nothing for this long is closed.
pub const IDLE: Duration = Duration::from_secs(600);
/// Connections served at once; the next one is told so and closed, the others go on.
pub const MAX_CLIENTS: usize = 256;
#[derive(Clone, Default)]
pub struct ServerOptions {
    /// Password mode: `auth <password>` / `auth.login` before anything else.
    pub password: Option<SecretString>,
}

#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    #[error("{path}: another cmux-tray is serving this socket; not taking it over")]
    InUse { path: PathBuf },
    #[error("{path}: there is a file here that is not a socket; not deleting it (is `socket_path` mistyped?)")]
    NotASocket { path: PathBuf },
    #[error("{path}: {why}; the socket needs a folder of this user's own that nobody else can enter (0700)")]
    UnsafeFolder { path: PathBuf, why: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Serves until `stop`, then removes the socket (if it is still ours).
pub async fn serve(socket: Listener, engine: Engine, options: ServerOptions, stop: CancellationToken, tracker: TaskTracker) {
    let clients = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_CLIENTS));
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => None,
            a = socket.accept() => Some(a),
        };
        let stream = match accepted {
            None => {
                socket.remove();
                return;
            }
            Some(Ok(Accepted::Peer(s))) => s,
            Some(Ok(Accepted::Refused(who))) => {
                tracing::warn!("local socket: refused {who}");
                continue;
            }
            Some(Err(e)) => {
                tracing::warn!("local socket: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = clients.clone().try_acquire_owned() else {
            tracing::warn!("local socket: {MAX_CLIENTS} connections already; refused one more");
            tracker.spawn(async move {
                let mut stream = stream;
                let _ = tokio::time::timeout(WRITE_TIMEOUT, stream.write_all(TOO_MANY.as_bytes())).await;
            });
            continue;
        };
        let (engine, options, stop) = (engine.clone(), options.clone(), stop.clone());
        tracker.spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = async {
                    let forwarded = forwarded::of_peer(endpoint::peer_pid(&stream)).await;
                    connection(stream, engine, options, forwarded).await
                } => {}
            }
            drop(permit);
        });
    }
}

async fn connection(stream: impl AsyncRead + AsyncWrite, engine: Engine, options: ServerOptions, forwarded: Option<Forwarded>) {
    let (read, mut write) = tokio::io::split(stream);
    // tokio_util's framing, not `LinesCodec`: that one ends the stream at a line that is not
    // UTF-8, and an agent's notice with one stray byte should still arrive (lossily decoded).
    let mut frames = FramedRead::new(read, AnyDelimiterCodec::new_with_max_length(b"\n".to_vec(), Vec::new(), MAX_LINE));
    let mut conn = Conn { authorised: options.password.is_none(), password: options.password, forwarded };
    let opened = Instant::now();
    let mut pre_auth_bytes = 0usize;
    let mut lines = Vec::new();
    loop {
        // The first line is waited for. Once authorised, the whole lines already read behind it
        // (a client that pipelines) are taken along and answered together, in one write.
        lines.clear();
        // `Some(last)`: the connection ends once the lines read are answered, `last` said after
        // them (nothing when empty).
        let end = loop {
            let deadline = if conn.authorised { Instant::now() + IDLE } else { opened + PRE_AUTH_TIME };
            let line = match tokio::time::timeout_at(deadline, frames.next()).await {
                Ok(Some(Ok(line))) => line,
                Ok(Some(Err(AnyDelimiterCodecError::MaxChunkLengthExceeded))) => break Some("ERROR: Line too long (limit 64 KiB)\n"),
                Ok(Some(Err(AnyDelimiterCodecError::Io(_)))) | Ok(None) => break Some(""),
                Err(_) if conn.authorised => break Some(""),
                Err(_) => break Some("ERROR: Authentication timed out\n"),
            };
            if !conn.authorised {
                pre_auth_bytes += line.len() + 1;
                if pre_auth_bytes > PRE_AUTH_BYTES {
                    break Some("ERROR: Too much data before authentication\n");
                }
            }
            let text = String::from_utf8_lossy(&line);
            if !text.trim().is_empty() {
                lines.push(text.into_owned());
            }
            if !lines.is_empty() && (!conn.authorised || lines.len() >= MAX_BATCH || !frames.read_buffer().contains(&b'\n')) {
                break None;
            }
        };
        if !lines.is_empty() {
            let mut out = Replies::new(&mut write);
            if methods::answer_all(&engine, &mut conn, &lines, &mut out).await.is_err() || out.flush().await.is_err() {
                return;
            }
        }
        if let Some(last) = end {
            if !last.is_empty() {
                let _ = tokio::time::timeout(WRITE_TIMEOUT, write.write_all(last.as_bytes())).await;
            }
            return;
        }
    }
}

/// What the connection past `MAX_CLIENTS` is told before it is closed (a v1 error line, which a
/// v2 client reads as an error too).
const TOO_MANY: &str = "ERROR: Too many connections (limit 256); try again when one has closed\n";
