//! The socket itself: directory 0700, socket 0600, a stale file from a crash replaced and a live
//! one never stolen; each peer's uid checked before a byte is read; password mode with its
//! pre-auth limits; lines capped at 64 KiB; each connection on its own task, answered in order.

use std::path::{Path, PathBuf};
use std::time::Duration;

use secrecy::SecretString;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::methods::{self, Conn};
use crate::engine::Engine;

/// A line longer than this is refused and the connection closed.
pub const MAX_LINE: usize = 64 * 1024;
/// Before a connection is authorised it may send at most this much …
pub const PRE_AUTH_BYTES: usize = 4 * 1024 * 1024;
/// … and must be authorised within this long.
pub const PRE_AUTH_TIME: Duration = Duration::from_secs(2);
/// An authorised connection that says nothing for this long is closed.
pub const IDLE: Duration = Duration::from_secs(600);

#[derive(Clone, Default)]
pub struct ServerOptions {
    /// Password mode: `auth <password>` / `auth.login` before anything else.
    pub password: Option<SecretString>,
}

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
    if std::fs::symlink_metadata(path).is_ok() {
        if UnixStream::connect(path).await.is_ok() {
            return Err(SocketError::InUse { path: path.to_path_buf() });
        }
        std::fs::remove_file(path).map_err(io)?;
    }
    let listener = UnixListener::bind(path).map_err(io)?;
    // The directory is 0700 already, so nobody else can reach the socket in between.
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).map_err(io)?;
    Ok(listener)
}

/// Serves until `stop`.
pub async fn serve(listener: UnixListener, engine: Engine, options: ServerOptions, stop: CancellationToken, tracker: TaskTracker) {
    let uid = own_uid();
    loop {
        let stream = tokio::select! {
            _ = stop.cancelled() => return,
            a = listener.accept() => match a {
                Ok((s, _)) => s,
                Err(e) => {
                    tracing::warn!("local socket: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == uid => {}
            Ok(cred) => {
                tracing::warn!(peer_uid = cred.uid(), "local socket: refused a peer of another user");
                continue;
            }
            Err(e) => {
                tracing::warn!("local socket: refused a peer that could not be checked: {e}");
                continue;
            }
        }
        let (engine, options, stop) = (engine.clone(), options.clone(), stop.clone());
        tracker.spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = connection(stream, engine, options) => {}
            }
        });
    }
}

async fn connection(stream: UnixStream, engine: Engine, options: ServerOptions) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut conn = Conn { authorised: options.password.is_none(), password: options.password };
    let opened = Instant::now();
    let mut pre_auth_bytes = 0usize;
    let mut line = Vec::new();
    loop {
        line.clear();
        let deadline = if conn.authorised { Instant::now() + IDLE } else { opened + PRE_AUTH_TIME };
        let read = tokio::time::timeout_at(deadline, (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line)).await;
        let n = match read {
            Ok(Ok(n)) => n,
            Ok(Err(_)) => return,
            Err(_) => {
                if !conn.authorised {
                    let _ = write.write_all(b"ERROR: Authentication timed out\n").await;
                }
                return;
            }
        };
        if n == 0 {
            return;
        }
        if line.len() > MAX_LINE {
            let _ = write.write_all(b"ERROR: Line too long (limit 64 KiB)\n").await;
            return;
        }
        if !conn.authorised {
            pre_auth_bytes += n;
            if pre_auth_bytes > PRE_AUTH_BYTES {
                let _ = write.write_all(b"ERROR: Too much data before authentication\n").await;
                return;
            }
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        let reply = methods::answer(&engine, &mut conn, &text).await;
        let mut out = reply.into_bytes();
        out.push(b'\n');
        if write.write_all(&out).await.is_err() {
            return;
        }
    }
}

fn own_uid() -> u32 {
    rustix::process::getuid().as_raw()
}
