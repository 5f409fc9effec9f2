//! Windows: Ctrl-C and Ctrl-Break relayed to a wrapped command, no tty path.

/// A Windows console has no device path to name it by.
pub fn stdin_terminal() -> Option<String> {
    None
}

/// Windows has no signals: a command's end is its exit code.
pub fn ended_by_signal(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// The wrapper's Ctrl-C while its command runs: the console sends it to both, so the wrapper
/// only survives it (to report).
pub struct Relay {
    interrupt: tokio::signal::windows::CtrlC,
}

impl Relay {
    /// Installs the handler. Call before the command starts.
    pub fn install() -> Relay {
        Relay { interrupt: tokio::signal::windows::ctrl_c().expect("a Ctrl-C handler can be installed") }
    }

    /// Waits for `child` to end, surviving Ctrl-C meanwhile.
    pub async fn wait(mut self, child: &mut tokio::process::Child) -> std::io::Result<std::process::ExitStatus> {
        loop {
            tokio::select! {
                s = child.wait() => return s,
                _ = self.interrupt.recv() => {}
            }
        }
    }
}
