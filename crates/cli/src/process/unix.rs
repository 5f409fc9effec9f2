//! Unix: the tty on stdin, and signals relayed to a wrapped command.

use rustix::process::{Pid, Signal, kill_process};
use tokio::signal::unix::{SignalKind, signal};

/// The terminal this process runs in, when stdin is one (its device path).
pub fn stdin_terminal() -> Option<String> {
    if !rustix::termios::isatty(rustix::stdio::stdin()) {
        return None;
    }
    std::fs::read_link("/proc/self/fd/0").ok().map(|p| p.display().to_string())
}

/// The signal that ended a command, when one did.
pub fn ended_by_signal(status: &std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

/// The wrapper's signals while its command runs: Ctrl-C and Ctrl-\ reach the command through
/// the terminal's process group, so the wrapper only survives them (to report); SIGTERM and
/// SIGHUP, sent to the wrapper alone, are passed on to the command.
pub struct Relay {
    interrupt: Option<tokio::signal::unix::Signal>,
    quit: Option<tokio::signal::unix::Signal>,
    term: Option<tokio::signal::unix::Signal>,
    hangup: Option<tokio::signal::unix::Signal>,
}

impl Relay {
    /// Installs handlers (not SIG_IGN), so the command starts with default dispositions after
    /// exec. Call before the command starts.
    pub fn install() -> Relay {
        Relay {
            interrupt: signal(SignalKind::interrupt()).ok(),
            quit: signal(SignalKind::quit()).ok(),
            term: signal(SignalKind::terminate()).ok(),
            hangup: signal(SignalKind::hangup()).ok(),
        }
    }

    /// Waits for `child` to end, relaying signals meanwhile.
    pub async fn wait(mut self, child: &mut tokio::process::Child) -> std::io::Result<std::process::ExitStatus> {
        let pid = child.id().and_then(|p| Pid::from_raw(p as i32));
        let forward = |sig: Signal| {
            if let Some(pid) = pid {
                let _ = kill_process(pid, sig);
            }
        };
        loop {
            tokio::select! {
                s = child.wait() => return s,
                _ = recv(&mut self.interrupt) => {}
                _ = recv(&mut self.quit) => {}
                _ = recv(&mut self.term) => forward(Signal::TERM),
                _ = recv(&mut self.hangup) => forward(Signal::HUP),
            }
        }
    }
}

async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
    match s {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}
