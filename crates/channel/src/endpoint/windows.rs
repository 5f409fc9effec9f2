//! Windows: the channel is a named pipe of this user's and logon session's,
//! `\\.\pipe\cmux-tray-app-<SID>-<session>`; a client opens it at the identification level
//! only (a server cannot act as the client with its token) and checks that the server's process
//! runs as the same user before it sends a byte. The engine's local socket names its pipe and
//! checks its server the same way (`local::endpoint`).

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::time::Duration;

use std::os::windows::io::AsRawHandle;

use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeClient};
use windows_sys::Win32::Foundation::{CloseHandle, ERROR_PIPE_BUSY, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::ConvertSidToStringSidW;
use windows_sys::Win32::Security::{GetLengthSid, GetTokenInformation, TOKEN_QUERY, TOKEN_USER, TokenUser};
use windows_sys::Win32::Storage::FileSystem::SECURITY_IDENTIFICATION;
use windows_sys::Win32::System::Pipes::GetNamedPipeServerProcessId;
use windows_sys::Win32::System::RemoteDesktop::ProcessIdToSessionId;
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetCurrentProcessId, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

pub type ClientStream = NamedPipeClient;

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

/// The app's private channel: a pipe of the same user and session.
pub fn channel_path(_runtime_dir: &Path) -> PathBuf {
    user_pipe("-app")
}

/// `\\.\pipe\cmux-tray<part>-<SID>-<session>`.
pub fn user_pipe(part: &str) -> PathBuf {
    let sid = current_user_sid().ok().map(|sid| sid_text(&sid)).unwrap_or_default();
    let mut session = 0u32;
    // SAFETY: `session` is written by the call.
    unsafe { ProcessIdToSessionId(GetCurrentProcessId(), &mut session) };
    PathBuf::from(format!(r"\\.\pipe\{}{part}-{sid}-{session}", crate::place::APP))
}

/// The SID of the user this process runs as, as bytes.
pub fn current_user_sid() -> std::io::Result<Vec<u8>> {
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
pub fn sid_text(sid: &[u8]) -> String {
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
