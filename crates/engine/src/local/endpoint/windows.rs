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
use std::path::{Path, PathBuf};
use std::time::Duration;

use std::os::windows::io::AsRawHandle;

use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions};
use tokio::sync::Mutex;
use windows_sys::Win32::Foundation::{CloseHandle, ERROR_ACCESS_DENIED, ERROR_PIPE_BUSY, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{GetLengthSid, GetTokenInformation, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER, TokenUser};
use windows_sys::Win32::Storage::FileSystem::SECURITY_IDENTIFICATION;
use windows_sys::Win32::System::Pipes::GetNamedPipeServerProcessId;
use windows_sys::Win32::System::RemoteDesktop::ProcessIdToSessionId;
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetCurrentProcessId, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

use super::Accepted;
use crate::local::server::SocketError;

pub type ServerStream = NamedPipeServer;
pub type ClientStream = NamedPipeClient;

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

/// Connects to the pipe at `path`, waiting while every instance is busy (the request's own
/// deadline bounds the wait). Opened at the identification level (tokio's default, said here
/// so it stays so), and refused unless the server's process runs as this user.
pub async fn connect(path: &Path) -> std::io::Result<ClientStream> {
    let client = loop {
        match ClientOptions::new().security_qos_flags(SECURITY_IDENTIFICATION).open(path) {
            Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32) => tokio::time::sleep(Duration::from_millis(20)).await,
            other => break other?,
        }
    };
    let mut pid = 0u32;
    // SAFETY: the handle is the open pipe's; `pid` is written by the call.
    if unsafe { GetNamedPipeServerProcessId(client.as_raw_handle() as HANDLE, &mut pid) } == 0 {
        return Err(refused(format!("its server could not be asked who it is ({})", std::io::Error::last_os_error())));
    }
    match (process_user_sid(pid), current_user_sid()) {
        (Ok(server), Ok(ours)) if server == ours => Ok(client),
        (Ok(_), Ok(_)) => Err(refused("served by another user; nothing was sent to it".into())),
        (Err(e), _) | (_, Err(e)) => Err(refused(format!("its server could not be checked ({e})"))),
    }
}

fn refused(why: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::PermissionDenied, why)
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

/// The app's private channel (`crate::channel`): a pipe of the same user and session.
pub fn channel_path(_runtime_dir: &Path) -> PathBuf {
    user_pipe("-app")
}

/// `\\.\pipe\cmux-tray<part>-<SID>-<session>`.
fn user_pipe(part: &str) -> PathBuf {
    let sid = current_user_sid().ok().map(|sid| sid_text(&sid)).unwrap_or_default();
    let mut session = 0u32;
    // SAFETY: `session` is written by the call.
    unsafe { ProcessIdToSessionId(GetCurrentProcessId(), &mut session) };
    PathBuf::from(format!(r"\\.\pipe\{}{part}-{sid}-{session}", crate::config::APP))
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

/// The SID of the user this process runs as, as bytes.
fn current_user_sid() -> std::io::Result<Vec<u8>> {
    // SAFETY: the token handle is this process's own, closed by `token_user_sid`.
    unsafe {
        let mut token: HANDLE = std::ptr::null_mut();
        if OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) == 0 {
            return Err(std::io::Error::last_os_error());
        }
        token_user_sid(token)
    }
}

/// The SID of the user process `pid` runs as, as bytes.
fn process_user_sid(pid: u32) -> std::io::Result<Vec<u8>> {
    // SAFETY: both handles are closed before returning.
    unsafe {
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if process.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        let mut token: HANDLE = std::ptr::null_mut();
        let opened = OpenProcessToken(process, TOKEN_QUERY, &mut token);
        CloseHandle(process);
        if opened == 0 {
            return Err(std::io::Error::last_os_error());
        }
        token_user_sid(token)
    }
}

/// The user SID of a token (which it closes), as bytes.
///
/// # Safety
/// `token` must be an open token handle with `TOKEN_QUERY`.
unsafe fn token_user_sid(token: HANDLE) -> std::io::Result<Vec<u8>> {
    // SAFETY: every pointer handed to the calls points at a live buffer of the size given.
    unsafe {
        let mut needed = 0u32;
        GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut needed);
        // u64s, so the TOKEN_USER read from the buffer is aligned.
        let mut buffer = vec![0u64; (needed as usize).div_ceil(8)];
        let read = GetTokenInformation(token, TokenUser, buffer.as_mut_ptr().cast(), needed, &mut needed);
        CloseHandle(token);
        if read == 0 {
            return Err(std::io::Error::last_os_error());
        }
        let user = &*buffer.as_ptr().cast::<TOKEN_USER>();
        let len = GetLengthSid(user.User.Sid) as usize;
        Ok(std::slice::from_raw_parts(user.User.Sid.cast::<u8>(), len).to_vec())
    }
}

/// A SID in its string form (`S-1-5-21-…`).
fn sid_text(sid: &[u8]) -> String {
    // SAFETY: `sid` holds a SID (from `token_user_sid`); the string is freed before returning.
    unsafe {
        let mut text: *mut u16 = std::ptr::null_mut();
        if ConvertSidToStringSidW(sid.as_ptr() as *mut c_void, &mut text) == 0 {
            return String::new();
        }
        let len = (0..).take_while(|&i| *text.add(i) != 0).count();
        let s = String::from_utf16_lossy(std::slice::from_raw_parts(text, len));
        LocalFree(text.cast());
        s
    }
}
