//! Linux: the folder opened without following links, then the server's process through
//! `SO_PEERCRED` and `/proc` (its user, its pid namespace, its executable).

use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{SocketAddr, UnixStream};
use std::path::{Component, Path};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::{Distrusted, Server};

pub fn uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The socket `path` in one of `folders` (a folder of the person's, closed to others; the
/// socket no link), served by `server`'s process of the person's.
pub fn socket_in(folders: &[std::path::PathBuf], path: &Path, server: Server) -> Result<(), Distrusted> {
    let said = |why: String| Distrusted(format!("{}'s socket {}: {why}", server.name(), path.display()));
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else { return Err(said("not a socket's path".into())) };
    if !path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_))) || !folders.iter().any(|f| f == folder) {
        let allowed: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
        return Err(said(format!("not in the person's own {} folder ({})", server.name(), allowed.join(" or "))));
    }
    let dir = rustix::fs::open(folder, OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| said(format!("its folder cannot be opened as a folder of its own ({e})")))?;
    let st = rustix::fs::fstat(&dir).map_err(|e| said(e.to_string()))?;
    if st.st_uid != uid() || st.st_mode & 0o077 != 0 {
        return Err(said(format!("its folder is not the person's alone (owner {}, mode {:o})", st.st_uid, st.st_mode & 0o777)));
    }
    let sock = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| said(e.to_string()))?;
    if FileType::from_raw_mode(sock.st_mode) != FileType::Socket || sock.st_uid != uid() {
        return Err(said("not a socket of the person's (a link, or someone else's)".into()));
    }
    // Connected through the folder just checked, never through its path again.
    let through = format!("/proc/self/fd/{}/{}", dir.as_raw_fd(), name.to_string_lossy());
    let stream = UnixStream::connect(&through).map_err(|e| said(format!("nothing answers ({e})")))?;
    served_by(&stream, server).map_err(said)
}

/// A socket anywhere (kitty's `listen_on`): a socket of the person's, no link, served by
/// `server`'s process of the person's.
pub fn socket_anywhere(path: &Path, server: Server) -> Result<(), Distrusted> {
    let said = |why: String| Distrusted(format!("{}'s socket {}: {why}", server.name(), path.display()));
    let meta = std::fs::symlink_metadata(path).map_err(|e| said(format!("gone ({e})")))?;
    if !std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type()) || meta.uid() != uid() {
        return Err(said("not a socket of the person's (a link, or someone else's)".into()));
    }
    let stream = UnixStream::connect(path).map_err(|e| said(format!("nothing answers ({e})")))?;
    served_by(&stream, server).map_err(said)
}

/// An abstract socket (`@name`): it has no owner, so only its server process tells.
pub fn abstract_socket(name: &str, server: Server) -> Result<(), Distrusted> {
    let said = |why: String| Distrusted(format!("{}'s socket @{name}: {why}", server.name()));
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).map_err(|e| said(e.to_string()))?;
    let stream = UnixStream::connect_addr(&addr).map_err(|e| said(format!("nothing answers ({e})")))?;
    served_by(&stream, server).map_err(said)
}

/// Whether the process at the other end is `server`'s, run by the person, in this pid
/// namespace, from the program the engine itself would run (tmux) or one of its name.
fn served_by(stream: &UnixStream, server: Server) -> Result<(), String> {
    let cred = rustix::net::sockopt::socket_peercred(stream).map_err(|e| format!("its server cannot be asked who it is ({e})"))?;
    if cred.uid.as_raw() != uid() {
        return Err(format!("served by another user (uid {})", cred.uid.as_raw()));
    }
    // A process of another pid namespace (a sandbox, a container) shows as pid 0.
    let pid = cred.pid.as_raw_nonzero().get();
    let ns = |of: &str| std::fs::metadata(format!("/proc/{of}/ns/pid")).map(|m| (m.dev(), m.ino())).ok();
    if pid <= 0 || ns(&pid.to_string()).is_none() || ns(&pid.to_string()) != ns("self") {
        return Err("served from another pid namespace (a sandbox or a container)".into());
    }
    let exe = std::fs::metadata(format!("/proc/{pid}/exe")).map_err(|e| format!("its server's program cannot be read ({e})"))?;
    let path = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
    let file = path.file_name().map(|f| f.to_string_lossy().trim_end_matches(" (deleted)").to_string()).unwrap_or_default();
    if !server.runs_as(&file) {
        return Err(format!("served by {}, not by {}", path.display(), server.name()));
    }
    if server == Server::Tmux {
        // The very program the engine runs: a copy of the same name is not it.
        let ours = crate::terminal::process::on_path("tmux").and_then(|p| std::fs::metadata(p).ok()).map(|m| (m.dev(), m.ino()));
        if ours != Some((exe.dev(), exe.ino())) {
            return Err(format!("served by {}, which is not the tmux this engine runs", path.display()));
        }
    }
    Ok(())
}
