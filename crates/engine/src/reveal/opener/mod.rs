//! The platform's opener, one file per platform: `xdg-open` (Linux, the BSDs) or `open`
//! (macOS) as a child with the URL as its one argument; `ShellExecuteW` on Windows.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(super) use unix::open;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(super) use windows::open;
