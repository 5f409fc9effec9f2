//! What the command line needs of the operating system, one file per platform: the terminal a
//! command runs in, and a wrapped command's signals and how it ended (the signal that stops the
//! daemon is the host's, `cmux_tray_host::stop_requested`, as the app's is). The commands themselves hold no `cfg`.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{Relay, ended_by_signal, stdin_terminal};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{Relay, ended_by_signal, stdin_terminal};
