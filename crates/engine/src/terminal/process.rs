//! The two things every terminal adapter needs from the system: a process's ancestors (which
//! terminal window a process runs under) and running a terminal's own command-line tool (no
//! shell, one argument each, a time limit, no secret in its environment).

use std::time::Duration;

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

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Whether `path` is a socket of this user's: a terminal's socket is only spoken to when it is
/// (a place names it; another user's socket is not ours to drive).
pub fn is_own_socket(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket() && m.uid() == rustix::process::geteuid().as_raw())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
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
}

/// Runs `program args…` with `env` added, and returns what it printed. Each argument is one
/// argument: nothing is ever read by a shell.
pub async fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> Result<String, ToolError> {
    let mut command = crate::private::person_command(program);
    command.args(args).stdin(std::process::Stdio::null()).kill_on_drop(true);
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
        let said = String::from_utf8_lossy(&out.stderr).trim().chars().take(300).collect::<String>();
        Err(ToolError::Failed {
            program: program.into(),
            args: args.join(" "),
            said: if said.is_empty() { out.status.to_string() } else { said },
        })
    }
}

#[cfg(all(test, unix))] // ancestors are read from /proc
mod tests {
    use super::*;

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
