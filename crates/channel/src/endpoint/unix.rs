//! Unix: a socket in the app's runtime folder; the server's uid checked (`SO_PEERCRED`,
//! `getpeereid`) before a byte is sent.

use std::path::{Path, PathBuf};

use tokio::net::UnixStream;

pub type ClientStream = UnixStream;

/// Connects to the socket at `path`, served by this user: the server's uid is checked before a
/// byte is sent, so a socket another user put where ours is looked for never hears a notice
/// nor a password.
pub async fn connect(path: &Path) -> std::io::Result<ClientStream> {
    let stream = UnixStream::connect(path).await?;
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == rustix::process::getuid().as_raw() => Ok(stream),
        Ok(cred) => Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("served by another user (uid {}); nothing was sent to it", cred.uid()),
        )),
        Err(e) => Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, format!("its server could not be checked ({e})"))),
    }
}

/// The app's private channel: `app.sock` beside the local socket.
pub fn channel_path(runtime_dir: &Path) -> PathBuf {
    runtime_dir.join("app.sock")
}
