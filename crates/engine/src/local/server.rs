//! The socket itself: in a folder of this user's own that nobody else can enter (0700, refused
//! otherwise), socket 0600; a stale socket of ours from a crash replaced, a live one never
//! stolen, and anything that is no socket never deleted; at stop, the socket removed only while
//! it is still the one this process made. Each peer's uid checked before a byte is read;
//! password mode with its pre-auth limits; lines capped at 64 KiB; at most `MAX_CLIENTS`
//! connections at once; each connection on its own task, answered in order, every write with a
//! time limit.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
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
/// Connections served at once; the next one is told so and closed, the others go on.
pub const MAX_CLIENTS: usize = 256;
/// A reply that cannot be written within this long (a client that stopped reading) ends the
/// connection, never the server.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

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

/// A bound socket, and which file it is (device and inode), so that stop removes only that one.
#[derive(Debug)]
pub struct BoundSocket {
    listener: UnixListener,
    path: PathBuf,
    file: (u64, u64),
}

impl BoundSocket {
    /// Removes the socket file if it is still the one bound here (another process may have
    /// replaced it since; that one is left alone).
    fn remove(&self) {
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.file) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Binds the socket at `path`, replacing a stale socket of ours but never a live one, and never
/// anything that is not a socket.
pub async fn bind(path: &Path) -> Result<BoundSocket, SocketError> {
    let io = |source| SocketError::Io { path: path.to_path_buf(), source };
    if let Some(dir) = path.parent() {
        private_folder(dir)?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(SocketError::NotASocket { path: path.to_path_buf() });
        }
        if UnixStream::connect(path).await.is_ok() {
            return Err(SocketError::InUse { path: path.to_path_buf() });
        }
        std::fs::remove_file(path).map_err(io)?;
    }
    let listener = UnixListener::bind(path).map_err(io)?;
    // The directory is 0700 already, so nobody else can reach the socket in between.
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).map_err(io)?;
    let meta = std::fs::symlink_metadata(path).map_err(io)?;
    Ok(BoundSocket { listener, path: path.to_path_buf(), file: (meta.dev(), meta.ino()) })
}

/// The socket's folder: made 0700 when missing; when it exists, it must be a folder of this
/// user's that nobody else can enter, or another user could replace the socket.
fn private_folder(dir: &Path) -> Result<(), SocketError> {
    let unsafe_folder = |why: String| SocketError::UnsafeFolder { path: dir.to_path_buf(), why };
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::private::create_dir(dir).map_err(|source| SocketError::Io { path: dir.to_path_buf(), source })
        }
        Err(source) => Err(SocketError::Io { path: dir.to_path_buf(), source }),
        Ok(m) if !m.is_dir() => Err(unsafe_folder("not a folder".into())),
        Ok(m) if m.uid() != own_uid() => Err(unsafe_folder(format!("it belongs to uid {}", m.uid()))),
        Ok(m) if m.mode() & 0o077 != 0 => Err(unsafe_folder(format!("others may enter it (mode {:o})", m.mode() & 0o7777))),
        Ok(_) => Ok(()),
    }
}

/// Serves until `stop`, then removes the socket (if it is still ours).
pub async fn serve(socket: BoundSocket, engine: Engine, options: ServerOptions, stop: CancellationToken, tracker: TaskTracker) {
    let uid = own_uid();
    let listener = &socket.listener;
    let clients = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_CLIENTS));
    loop {
        let stream = tokio::select! {
            _ = stop.cancelled() => {
                socket.remove();
                return;
            }
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
                _ = connection(stream, engine, options) => {}
            }
            drop(permit);
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
                    let _ = tokio::time::timeout(WRITE_TIMEOUT, write.write_all(b"ERROR: Authentication timed out\n")).await;
                }
                return;
            }
        };
        if n == 0 {
            return;
        }
        if line.len() > MAX_LINE {
            let _ = tokio::time::timeout(WRITE_TIMEOUT, write.write_all(b"ERROR: Line too long (limit 64 KiB)\n")).await;
            return;
        }
        if !conn.authorised {
            pre_auth_bytes += n;
            if pre_auth_bytes > PRE_AUTH_BYTES {
                let _ = tokio::time::timeout(WRITE_TIMEOUT, write.write_all(b"ERROR: Too much data before authentication\n")).await;
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
        if !matches!(tokio::time::timeout(WRITE_TIMEOUT, write.write_all(&out)).await, Ok(Ok(()))) {
            return;
        }
    }
}

/// What the connection past `MAX_CLIENTS` is told before it is closed (a v1 error line, which a
/// v2 client reads as an error too).
const TOO_MANY: &str = "ERROR: Too many connections (limit 256); try again when one has closed\n";

fn own_uid() -> u32 {
    rustix::process::getuid().as_raw()
}
