//! A tmux pane on another machine, selected over the ssh connection the notice came through:
//! its ControlMaster socket (`cmux-tray ssh` makes one), never a new connection (a failing
//! master falls back to `ProxyCommand=false`, which connects nowhere) and no credentials of
//! ours. Only when `delivery.remote_tmux` is on (docs/terminals.md, "Agents on another
//! machine"): a click selects the pane, and the focus rule asks whether it is looked at.

use std::time::Duration;

use crate::place::RemotePlace;

/// How long the remote tmux may take to answer over the master.
const REMOTE_TIMEOUT: Duration = Duration::from_secs(5);

/// Selects the notice's remote tmux pane (its window, then the pane) over the session's
/// ControlMaster. What goes wrong is logged: the local terminal was revealed already.
pub async fn select(there: &RemotePlace) {
    let (Some(pane), Some(control)) = (&there.tmux, &there.control) else { return };
    // The remote shell reads ssh's command line: the socket single-quoted, the ids are checked
    // `%N` shapes (place.rs).
    let socket = quoted(&pane.socket.to_string_lossy());
    let id = quoted(&pane.pane);
    let command = format!("tmux -S {socket} select-window -t {id} \\; select-pane -t {id}");
    match over_master(control, &there.host, &command).await {
        Ok(_) => tracing::info!(host = %there.host, pane = %pane.pane, "the remote pane selected"),
        Err(why) => tracing::info!(host = %there.host, "the remote pane was not selected: {why}"),
    }
}

/// Whether the person looks at the notice's remote pane: it is the active pane of its window,
/// the active window of a session a client is attached to. `None` when it cannot be told (no
/// master, no answer).
pub async fn looked_at(there: &RemotePlace) -> Option<bool> {
    let (Some(pane), Some(control)) = (&there.tmux, &there.control) else { return None };
    let socket = quoted(&pane.socket.to_string_lossy());
    let command =
        format!("tmux -S {socket} display -p -t {} '#{{pane_active}} #{{window_active}} #{{session_attached}}'", quoted(&pane.pane));
    let out = over_master(control, &there.host, &command).await.ok()?;
    let said = String::from_utf8_lossy(&out.stdout);
    let mut words = said.split_whitespace();
    let (pane_active, window_active, attached) = (words.next()?, words.next()?, words.next()?.parse::<u32>().ok()?);
    Some(pane_active == "1" && window_active == "1" && attached > 0)
}

/// One command on the remote over the ControlMaster `control`, never a new connection. The
/// master is checked first (`trust::ssh_master`: the one `cmux-tray ssh` made, in the engine's
/// own 0700 folder, served by the person's ssh); the client runs confined, as the terminals'
/// tools do, since a client does what its master says. ssh closes every descriptor it inherits
/// when it starts, so it is given the path checked, not the socket held.
async fn over_master(control: &std::path::Path, host: &str, command: &str) -> Result<std::process::Output, String> {
    let runtime_dir = cmux_tray_channel::place::runtime_dir().ok_or("no runtime folder")?;
    super::trust::ssh_master(&runtime_dir, control).map_err(|e| e.to_string())?;
    let ssh = super::process::on_path("ssh").ok_or("ssh is not installed")?;
    let mut run = crate::private::person_command(&ssh);
    run.arg("-S")
        .arg(control)
        .args(["-o", "ControlMaster=no", "-o", "ProxyCommand=false", "-o", "BatchMode=yes", "-T", "--"])
        .arg(host)
        .arg(command)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    super::confine::confine(&mut run, &ssh).map_err(|e| format!("ssh could not be confined: {e}"))?;
    let run = run.output();
    match tokio::time::timeout(REMOTE_TIMEOUT, run).await {
        Ok(Ok(out)) if out.status.success() => Ok(out),
        Ok(Ok(out)) => Err(format!("ssh exited {} ({})", out.status, String::from_utf8_lossy(&out.stderr).trim())),
        Ok(Err(e)) => Err(format!("ssh could not run: {e}")),
        Err(_) => Err(format!("no answer within {REMOTE_TIMEOUT:?}")),
    }
}

/// A word the remote's shell reads as itself.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_word_is_quoted_for_the_remote_shell() {
        assert_eq!(super::quoted("/tmp/tmux-1000/default"), "'/tmp/tmux-1000/default'");
        assert_eq!(super::quoted("/tmp/o'neil"), "'/tmp/o'\\''neil'");
    }
}
