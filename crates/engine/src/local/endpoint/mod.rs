//! Where the local socket lives, one file per platform (docs/local-socket.md "Where it lives"):
//! a Unix socket on Linux, the BSDs and macOS; a named pipe on Windows. Each file gives the same
//! names: [`Listener`] (bind, accept a checked peer, remove at stop), [`ServerStream`],
//! [`connect`] and [`ClientStream`], [`is_live`], and the default place. The protocol, the
//! limits and password mode above them are the same everywhere (`server`, `methods`).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{ClientStream, Listener, ServerStream, bind, channel_path, connect, default_path, is_live, peer_pid};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{ClientStream, Listener, ServerStream, bind, channel_path, connect, default_path, is_live, peer_pid};

impl crate::config::Paths {
    /// The local socket (docs/local-socket.md "Where it lives"): `[local] socket_path`, else the
    /// platform's place (the runtime directory's `cmux.sock`; a named pipe on Windows).
    pub fn socket(&self) -> std::path::PathBuf {
        self.socket_path.clone().unwrap_or_else(|| default_path(&self.runtime_dir))
    }

    /// Where the tray serves the app's channel (`cmux_tray_channel`).
    pub fn channel(&self) -> std::path::PathBuf {
        channel_path(&self.runtime_dir)
    }
}

/// What `Listener::accept` hands over.
pub enum Accepted {
    /// A peer that passed the platform's check (same uid; on Windows the pipe's ACL let it in).
    Peer(ServerStream),
    /// A peer that was refused before a byte was read, and why (for the log).
    Refused(String),
}
