//! Windows: `ShellExecuteW` with the `open` verb, the URL as the file to open; the shell hands
//! `cmux://` to the registered handler and `https://` to the browser. No `cmd /c start` (its
//! parser would read `&` in a URL as a command separator).

use windows_sys::Win32::UI::Shell::ShellExecuteW;
use windows_sys::Win32::UI::WindowsAndMessaging::SW_SHOWNORMAL;

use super::super::{OPEN_TIMEOUT, OpenError};

const OPENER: &str = "ShellExecuteW";

/// Asks the shell to open `url`; `Ok` only when it said it did. Windows has no activation token.
pub(in crate::reveal) async fn open(url: &str, _activation: Option<&str>) -> Result<(), OpenError> {
    let wide = |s: &str| s.encode_utf16().chain([0]).collect::<Vec<u16>>();
    let (verb, file) = (wide("open"), wide(url));
    // The call may wait on the handler's start: off the runtime's workers, with a deadline.
    let call = tokio::task::spawn_blocking(move || {
        // SAFETY: both strings are NUL-terminated and outlive the call; the other pointers may
        // be null.
        let instance =
            unsafe { ShellExecuteW(std::ptr::null_mut(), verb.as_ptr(), file.as_ptr(), std::ptr::null(), std::ptr::null(), SW_SHOWNORMAL) };
        instance as isize
    });
    let code = tokio::time::timeout(OPEN_TIMEOUT, call)
        .await
        .map_err(|_| OpenError::TimedOut { program: OPENER, url: url.into() })?
        .map_err(|e| OpenError::Spawn { program: OPENER, source: std::io::Error::other(e) })?;
    // ShellExecuteW's documented success: a value greater than 32.
    if code > 32 { Ok(()) } else { Err(OpenError::Failed { program: OPENER, status: format!("error {code}"), url: url.into() }) }
}
