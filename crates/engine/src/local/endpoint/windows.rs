//! The local socket on Windows: a named pipe, `\\.\pipe\cmux-tray-<SID>-<session>`, named from
//! the user's SID and logon session (a user name is not unique, and may be empty), whose ACL
//! grants that SID alone (protected from inheritance, so not even Administrators are let in) and
//! which refuses remote clients. The first instance is created with
//! `FILE_FLAG_FIRST_PIPE_INSTANCE`, so a pipe another process serves is never taken over; there
//! is no file, so nothing is stale after a crash and nothing is removed at stop. The ACL is the
//! peer check: a peer of another user cannot open the pipe at all. A client opens the pipe at the
//! identification level only (a server cannot act as the client with its token) and checks that
//! the server's process runs as the same user before it sends a byte.

use std::ffi::c_void;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};

use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
use tokio::sync::Mutex;
use windows_sys::Win32::Foundation::{ERROR_ACCESS_DENIED, ERROR_PIPE_BUSY, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1};
use windows_sys::Win32::Security::SECURITY_ATTRIBUTES;
use windows_sys::Win32::Storage::FileSystem::SECURITY_IDENTIFICATION;

pub use cmux_tray_channel::endpoint::{ClientStream, channel_path, connect};
use cmux_tray_channel::endpoint::{current_user_sid, sid_text, user_pipe};

use super::Accepted;
use crate::local::server::SocketError;

pub type ServerStream = NamedPipeServer;

/// The process at the other end of an accepted connection (`GetNamedPipeClientProcessId`).
pub fn peer_pid(stream: &ServerStream) -> Option<u32> {
    let mut pid = 0u32;
    // SAFETY: the handle is the stream's own, open for the call; `pid` is written by it.
    let ok = unsafe { windows_sys::Win32::System::Pipes::GetNamedPipeClientProcessId(stream.as_raw_handle() as HANDLE, &mut pid) };
    (ok != 0 && pid != 0).then_some(pid)
}

/// The pipe, with the instance that waits for the next client.
#[derive(Debug)]
pub struct Listener {
    path: PathBuf,
    next: Mutex<NamedPipeServer>,
    acl: UserOnly,
}

impl Listener {
    /// The next connection; a fresh instance waits for the one after it.
    pub async fn accept(&self) -> std::io::Result<Accepted> {
        let mut next = self.next.lock().await;
        next.connect().await?;
        let fresh = instance(&self.path, &self.acl, false)?;
        Ok(Accepted::Peer(std::mem::replace(&mut *next, fresh)))
    }

    /// A pipe leaves no file behind: nothing to remove.
    pub fn remove(&self) {}
}

/// Creates the pipe at `path` for this user alone; refused when another process serves it.
pub async fn bind(path: &Path) -> Result<Listener, SocketError> {
    let io = |source| SocketError::Io { path: path.to_path_buf(), source };
    // Asked first as a client too, as on Unix: wine (where the tests run) does not refuse a
    // second first instance; Windows does, which covers a race between the two.
    if is_live(path) {
        return Err(SocketError::InUse { path: path.to_path_buf() });
    }
    let acl = UserOnly::new().map_err(io)?;
    let first = instance(path, &acl, true).map_err(|e| {
        if e.raw_os_error() == Some(ERROR_ACCESS_DENIED as i32) { SocketError::InUse { path: path.to_path_buf() } } else { io(e) }
    })?;
    Ok(Listener { path: path.to_path_buf(), next: Mutex::new(first), acl })
}

fn instance(path: &Path, acl: &UserOnly, first: bool) -> std::io::Result<NamedPipeServer> {
    let mut attributes =
        SECURITY_ATTRIBUTES { nLength: size_of::<SECURITY_ATTRIBUTES>() as u32, lpSecurityDescriptor: acl.0, bInheritHandle: 0 };
    let mut options = ServerOptions::new();
    options.first_pipe_instance(first).reject_remote_clients(true);
    // SAFETY: `attributes` points at a valid security descriptor (owned by `acl`, alive for the
    // call), which is all the call reads.
    unsafe { options.create_with_security_attributes_raw(path, (&raw mut attributes).cast::<c_void>()) }
}

/// Whether something serves the pipe at `path` now (without a runtime). Opened at the
/// identification level: a server asked whether it is there cannot act as this user.
pub fn is_live(path: &Path) -> bool {
    use std::os::windows::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new().read(true).write(true).security_qos_flags(SECURITY_IDENTIFICATION).open(path) {
        Ok(_) => true,
        Err(e) => e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32),
    }
}

/// The pipe's name when the config names none: one per user and logon session, from the user's
/// SID (`runtime_dir` has no part in it). A user whose SID cannot be read gets the process's
/// session alone, which another account cannot take first either: its ACL would refuse us.
pub fn default_path(_runtime_dir: &Path) -> PathBuf {
    user_pipe("")
}

/// A security descriptor whose DACL grants the current user's SID everything and nobody else
/// anything (`D:P(A;;GA;;;<sid>)`).
#[derive(Debug)]
struct UserOnly(*mut c_void);

// SAFETY: the descriptor is written once at creation and only read after; LocalFree at drop.
unsafe impl Send for UserOnly {}
unsafe impl Sync for UserOnly {}

impl UserOnly {
    fn new() -> std::io::Result<UserOnly> {
        let sddl = format!("D:P(A;;GA;;;{})", sid_text(&current_user_sid()?));
        let wide: Vec<u16> = sddl.encode_utf16().chain([0]).collect();
        let mut descriptor: *mut c_void = std::ptr::null_mut();
        // SAFETY: `wide` is NUL-terminated; the descriptor is allocated by the call and freed by
        // `Drop`.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(wide.as_ptr(), SDDL_REVISION_1, &mut descriptor, std::ptr::null_mut())
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(UserOnly(descriptor))
    }
}

impl Drop for UserOnly {
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW.
        unsafe { LocalFree(self.0) };
    }
}
