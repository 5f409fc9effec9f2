//! Elsewhere than Linux: no `SO_PEERCRED` and no `/proc` to ask who serves a socket. On other
//! Unix systems (macOS) a socket is spoken to when it is the person's, in the terminal's folder
//! where it has one, and no link; abstract sockets do not exist there. On Windows no terminal
//! socket is spoken to.

use std::path::Path;

use super::{Distrusted, Server};

#[cfg(unix)]
pub fn uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

#[cfg(not(unix))]
pub fn uid() -> u32 {
    0
}

pub fn socket_in(folders: &[std::path::PathBuf], path: &Path, server: Server) -> Result<(), Distrusted> {
    if !path.parent().is_some_and(|p| folders.iter().any(|f| f == p)) {
        return Err(Distrusted(format!("{}'s socket {}: not in the person's own {} folder", server.name(), path.display(), server.name())));
    }
    socket_anywhere(path, server)
}

pub fn socket_anywhere(path: &Path, server: Server) -> Result<(), Distrusted> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let own = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket() && m.uid() == uid());
        match own {
            true => Ok(()),
            false => Err(Distrusted(format!("{}'s socket {}: not a socket of the person's", server.name(), path.display()))),
        }
    }
    #[cfg(not(unix))]
    Err(Distrusted(format!("{}'s socket {}: no terminal socket is spoken to here", server.name(), path.display())))
}

pub fn abstract_socket(name: &str, server: Server) -> Result<(), Distrusted> {
    Err(Distrusted(format!("{}'s socket @{name}: abstract sockets exist on Linux alone", server.name())))
}
