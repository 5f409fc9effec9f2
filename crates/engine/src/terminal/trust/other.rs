//! Elsewhere than Linux: no `SO_PEERCRED` and no `/proc`. On macOS a socket is spoken to when it
//! is the person's, in the terminal's folder where it has one, and no link, and what serves it
//! is a process of the person's (`getpeereid`, `LOCAL_PEERPID`) from the terminal's program
//! (`proc_pidpath`) that is not sandboxed (`sandbox_check`). macOS has no `O_PATH` descriptor
//! to hand on, so the tool looks the path up again. Abstract sockets do not exist there. On
//! Windows no terminal socket is spoken to.

use std::path::Path;

use super::{Distrusted, Server, Trusted};

#[cfg(unix)]
pub fn uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

#[cfg(not(unix))]
pub fn uid() -> u32 {
    0
}

pub fn socket_in(folders: &[std::path::PathBuf], path: &Path, server: Server) -> Result<Trusted, Distrusted> {
    if !path.parent().is_some_and(|p| folders.iter().any(|f| f == p)) {
        return Err(Distrusted(format!("{}'s socket {}: not in the person's own {} folder", server.name(), path.display(), server.name())));
    }
    socket_anywhere(path, server)
}

pub fn socket_anywhere(path: &Path, server: Server) -> Result<Trusted, Distrusted> {
    let said = |why: String| Distrusted(format!("{}'s socket {}: {why}", server.name(), path.display()));
    #[cfg(unix)]
    {
        if !super::persons_socket(path) {
            return Err(said("not a socket of the person's (a link, or someone else's)".into()));
        }
        let stream = std::os::unix::net::UnixStream::connect(path).map_err(|e| said(format!("nothing answers ({e})")))?;
        served_by(&stream, server).map_err(said)?;
        Ok(Trusted::named(path.to_string_lossy().into_owned()))
    }
    #[cfg(not(unix))]
    Err(said("no terminal socket is spoken to here".into()))
}

/// A process's program is asked of a connection's peer on Linux alone (`/proc`).
pub fn program(pid: u32, server: Server) -> Result<(), Distrusted> {
    Err(Distrusted(format!("process {pid}: whether it is {} is known on Linux alone", server.name())))
}

pub fn abstract_socket(name: &str, server: Server) -> Result<Trusted, Distrusted> {
    Err(Distrusted(format!("{}'s socket @{name}: abstract sockets exist on Linux alone", server.name())))
}

#[cfg(target_os = "macos")]
unsafe extern "C" {
    /// libsystem_sandbox (part of libSystem): nonzero when `pid` runs in a sandbox (with no
    /// operation named, `SANDBOX_FILTER_NONE`, it asks whether any sandbox applies).
    fn sandbox_check(pid: libc::pid_t, operation: *const libc::c_char, filter_type: libc::c_int, ...) -> libc::c_int;
}

/// Whether the process at the other end is run by the person, from `server`'s program, and
/// not sandboxed (an agent's sandbox, whose server would have its client read and write files
/// for it).
#[cfg(target_os = "macos")]
fn served_by(stream: &std::os::unix::net::UnixStream, server: Server) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    let (mut peer_uid, mut peer_gid): (libc::uid_t, libc::gid_t) = (0, 0);
    // SAFETY: two out-parameters of the types getpeereid writes, on a socket open through the call.
    if unsafe { libc::getpeereid(fd, &mut peer_uid, &mut peer_gid) } != 0 {
        return Err(format!("its server cannot be asked who it is ({})", std::io::Error::last_os_error()));
    }
    if peer_uid != uid() {
        return Err(format!("served by another user (uid {peer_uid})"));
    }
    let mut pid: libc::pid_t = 0;
    let mut len = std::mem::size_of::<libc::pid_t>() as libc::socklen_t;
    // SAFETY: LOCAL_PEERPID writes one pid_t, of `len` bytes, into `pid`.
    let r = unsafe { libc::getsockopt(fd, libc::SOL_LOCAL, libc::LOCAL_PEERPID, (&raw mut pid).cast(), &mut len) };
    if r != 0 || pid <= 0 {
        return Err(format!("its server's process cannot be told ({})", std::io::Error::last_os_error()));
    }
    let mut path = vec![0u8; libc::PROC_PIDPATHINFO_MAXSIZE as usize];
    // SAFETY: the buffer is as long as the size given.
    let n = unsafe { libc::proc_pidpath(pid, path.as_mut_ptr().cast(), path.len() as u32) };
    path.truncate(usize::try_from(n).unwrap_or(0));
    let path = std::path::PathBuf::from(String::from_utf8_lossy(&path).into_owned());
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    if !server.runs_as(&file) {
        return Err(format!("served by {}, not by {}", path.display(), server.name()));
    }
    // SAFETY: no operation is named, so no further argument is read.
    if unsafe { sandbox_check(pid, std::ptr::null(), 0) } != 0 {
        return Err("served by a sandboxed process (an agent's sandbox)".into());
    }
    Ok(())
}

/// Other Unix systems (the BSDs, which the app is not built for): the socket's owner alone.
#[cfg(all(unix, not(target_os = "macos")))]
fn served_by(_stream: &std::os::unix::net::UnixStream, _server: Server) -> Result<(), String> {
    Ok(())
}
