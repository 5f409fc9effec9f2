//! The two things every terminal adapter needs from the system: a process's ancestors (which
//! terminal window a process runs under) and running a terminal's own command-line tool (no
//! shell, one argument each, a time limit, no secret in its environment, no right to write
//! files, and the server's socket as `trust` checked it).

use std::time::Duration;

use super::trust::Trusted;

/// How long a terminal's tool may take to answer (tmux, kitty @, wezterm cli answer in ms).
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(3);

/// The process and its ancestors, nearest first, up to (not including) pid 1. Read from
/// `/proc/<pid>/stat`; where there is no `/proc`, the process alone.
pub fn ancestors(pid: u32) -> Vec<u32> {
    let mut chain = vec![pid];
    let mut current = pid;
    while chain.len() < 64 {
        match parent_of(current) {
            Some(parent) if parent > 1 && !chain.contains(&parent) => {
                chain.push(parent);
                current = parent;
            }
            _ => break,
        }
    }
    chain
}

/// The window of the nearest of `ancestors` among `shown` (each window's process, and what the
/// compositor says of it): how sway's, Hyprland's and KWin's layers find a process's window.
pub fn nearest_window<T: Clone>(ancestors: &[u32], shown: &[(u32, T)]) -> Option<(u32, T)> {
    ancestors.iter().find_map(|pid| shown.iter().find(|(p, _)| p == pid).cloned())
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Where `program` is on the PATH, as running it would find it: the file a server's process
/// is compared with (`trust`), and the file then run.
pub fn on_path(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// Why a terminal's tool did not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{program} is not installed or could not run: {source}")]
    Missing { program: String, source: std::io::Error },
    #[error("{program} {args} failed: {said}")]
    Failed { program: String, args: String, said: String },
    #[error("{program} did not answer within {TOOL_TIMEOUT:?}")]
    TimedOut { program: String },
    /// The server the tool would speak to is not one the engine obeys (`trust`).
    #[error("{0}")]
    Distrusted(#[from] super::trust::Distrusted),
    /// The tool's file sandboxing (`confine`) could not be made: it is not run without it.
    #[error("{program} could not be confined: {source}")]
    Unconfined { program: String, source: std::io::Error },
}

/// Runs `program args…` (the one on the PATH, [`on_path`]) with `env` added, and returns what it
/// printed. Each argument is one argument: nothing is ever read by a shell. It runs confined
/// (`confine`), and inherits `socket`'s descriptor, which its address names. What it says on
/// stderr is a server's words, hostile until cleaned: cleaned as notice text is.
pub async fn run(program: &str, args: &[&str], env: &[(&str, &str)], socket: Option<&Trusted>) -> Result<String, ToolError> {
    let missing = || ToolError::Missing { program: program.into(), source: std::io::ErrorKind::NotFound.into() };
    let path = on_path(program).ok_or_else(missing)?;
    let mut command = crate::private::person_command(&path);
    command.args(args).stdin(std::process::Stdio::null()).kill_on_drop(true);
    #[cfg(unix)]
    {
        if let Some(fd) = socket.and_then(Trusted::held) {
            inherit(&mut command, std::os::fd::AsRawFd::as_raw_fd(&fd));
        }
    }
    #[cfg(not(unix))]
    let _ = socket;
    super::confine::confine(&mut command, &path).map_err(|source| ToolError::Unconfined { program: program.into(), source })?;
    for (k, v) in env {
        command.env(k, v);
    }
    let out = tokio::time::timeout(TOOL_TIMEOUT, command.output())
        .await
        .map_err(|_| ToolError::TimedOut { program: program.into() })?
        .map_err(|source| ToolError::Missing { program: program.into(), source })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let said = crate::text::clean(&String::from_utf8_lossy(&out.stderr), false);
        let said = said.trim().chars().take(300).collect::<String>();
        Err(ToolError::Failed {
            program: program.into(),
            args: args.join(" "),
            said: if said.is_empty() { out.status.to_string() } else { said },
        })
    }
}

/// The child keeps descriptor `fd` open across its exec (the engine's copy stays close-on-exec,
/// so no other child gets it). `fd` must stay open until the child is spawned.
#[cfg(unix)]
fn inherit(command: &mut tokio::process::Command, fd: std::os::fd::RawFd) {
    // SAFETY: one fcntl(2), async-signal-safe, on a descriptor the caller holds open until spawn.
    unsafe {
        command.pre_exec(move || {
            rustix::io::fcntl_setfd(std::os::fd::BorrowedFd::borrow_raw(fd), rustix::io::FdFlags::empty())?;
            Ok(())
        });
    }
}

#[cfg(all(test, unix))] // ancestors are read from /proc
mod tests {
    use super::*;

    /// A fake server makes its tool say what it likes on stderr; what reaches the log and a
    /// card's note is one clean line, never a forged log line or an escape sequence.
    #[tokio::test]
    async fn what_a_tool_says_on_stderr_is_cleaned_before_anyone_reads_it() {
        let said = "printf '\\033[2J\\033]0;pwned\\007ok\\n2026-12-03T00:00:00Z  INFO forged: signed out' >&2; exit 3";
        let e = run("sh", &["-c", said], &[], None).await.unwrap_err().to_string();
        assert!(!e.contains('\n') && !e.contains('\u{1b}') && !e.contains('\u{7}'), "{e:?}");
        assert!(e.contains("INFO forged"), "the words stay, on one line: {e:?}");
    }

    #[test]
    fn a_process_has_its_parent_among_its_ancestors() {
        let me = std::process::id();
        let chain = ancestors(me);
        assert_eq!(chain[0], me);
        assert_eq!(
            chain.get(1).copied(),
            Some(rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32).unwrap_or(0)).filter(|p| *p > 1)
        );
    }
}
