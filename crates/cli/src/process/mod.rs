//! What the command line needs of the operating system, one file per platform: the signal that
//! stops the daemon, the descriptor limit, the terminal a command runs in, and a wrapped
//! command's signals and how it ended. The commands themselves hold no `cfg`.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{Relay, ended_by_signal, stdin_terminal, stop_requested};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{Relay, ended_by_signal, stdin_terminal, stop_requested};
