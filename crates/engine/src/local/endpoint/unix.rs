//! The local socket on Unix: a socket file in a folder of this user's own that nobody else can
//! enter (0700, refused otherwise), the socket 0600; a stale socket of ours from a crash
//! replaced, a live one never stolen, and anything that is no socket never deleted; at stop,
//! the socket removed only while it is still the one this process made. Each peer's uid is
//! checked (`SO_PEERCRED`, `getpeereid`) before a byte is read, and a client checks its server's
//! the same way before a byte is sent.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use tokio::net::{UnixListener, UnixStream};

use super::Accepted;
use crate::local::server::SocketError;

pub type ServerStream = UnixStream;
pub use cmux_tray_channel::endpoint::{ClientStream, channel_path, connect};

/// The process at the other end of an accepted connection, as the kernel says (`SO_PEERCRED`,
/// `LOCAL_PEERPID`); none when it cannot say (a peer in a pid namespace the engine cannot see).
pub fn peer_pid(stream: &ServerStream) -> Option<u32> {
    stream.peer_cred().ok()?.pid().and_then(|pid| u32::try_from(pid).ok()).filter(|pid| *pid != 0)
}

/// A bound socket, and which file it is (device and inode), so that stop removes only that one.
#[derive(Debug)]
pub struct Listener {
    listener: UnixListener,
    path: PathBuf,
    file: (u64, u64),
    uid: u32,
}

impl Listener {
    /// The next connection, its peer's uid checked.
    pub async fn accept(&self) -> std::io::Result<Accepted> {
        let (stream, _) = self.listener.accept().await?;
        Ok(match stream.peer_cred() {
            Ok(cred) if cred.uid() == self.uid => Accepted::Peer(stream),
            Ok(cred) => Accepted::Refused(format!("a peer of another user (uid {})", cred.uid())),
            Err(e) => Accepted::Refused(format!("a peer that could not be checked: {e}")),
        })
    }

    /// Removes the socket file if it is still the one bound here (another process may have
    /// replaced it since; that one is left alone).
    pub fn remove(&self) {
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.file) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Binds the socket at `path`, replacing a stale socket of ours but never a live one, and never
/// anything that is not a socket.
pub async fn bind(path: &Path) -> Result<Listener, SocketError> {
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
    Ok(Listener { listener, path: path.to_path_buf(), file: (meta.dev(), meta.ino()), uid: own_uid() })
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

/// Whether something serves the socket at `path` now (without a runtime).
pub fn is_live(path: &Path) -> bool {
    std::os::unix::net::UnixStream::connect(path).is_ok()
}

/// The socket's place when the config names none: `cmux.sock` in the app's runtime folder.
pub fn default_path(runtime_dir: &Path) -> PathBuf {
    runtime_dir.join("cmux.sock")
}

fn own_uid() -> u32 {
    rustix::process::getuid().as_raw()
}
