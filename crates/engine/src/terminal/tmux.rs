//! tmux: a pane is brought forward by selecting its window and pane and switching an attached
//! client to it; it is looked at when an attached client shows it. Everything goes through the
//! `tmux` program on the pane's own server socket (`tmux -S`), with ids only (`%3`, `@2`).

use super::process::{ToolError, run};
use super::{Outcome, RevealError};
use crate::place::TmuxPane;

/// What a client of the server is showing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Client {
    pub name: String,
    pub pid: u32,
    pub session: String,
    pub pane: String,
    pub activity: u64,
}

/// The `list-clients` format: name, pid, session id, the pane it shows, last activity.
const CLIENT_FORMAT: &str = "#{client_name}\t#{client_pid}\t#{session_id}\t#{pane_id}\t#{client_activity}";

/// Parses `list-clients -F CLIENT_FORMAT`; lines of another shape are skipped.
pub fn parse_clients(text: &str) -> Vec<Client> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let [name, pid, session, pane, activity] = f.as_slice() else { return None };
            Some(Client {
                name: name.to_string(),
                pid: pid.parse().ok()?,
                session: session.to_string(),
                pane: pane.to_string(),
                activity: activity.parse().unwrap_or(0),
            })
        })
        .collect()
}

async fn tmux(pane: &TmuxPane, args: &[&str]) -> Result<String, ToolError> {
    tmux_with(pane, args, &[]).await
}

/// Every run first asks whether the pane's server is one the engine obeys (`trust`): a tmux
/// client does what its server tells it. The client is given the very socket checked
/// (`-S /proc/self/fd/N`), never its path to look up again.
async fn tmux_with(pane: &TmuxPane, args: &[&str], env: &[(&str, &str)]) -> Result<String, ToolError> {
    let socket = super::trust::tmux(&pane.socket)?;
    let mut all = vec!["-S", socket.address()];
    all.extend_from_slice(args);
    run("tmux", &all, env, Some(&socket)).await
}

/// The session and window a pane is in, from `list-panes -a` (`display-message -t` would fall
/// back to the current pane when the pane is gone).
pub fn find_pane(list: &str, pane: &str) -> Option<(String, String)> {
    list.lines().find_map(|l| {
        let mut f = l.split('\t');
        (f.next()? == pane).then_some(())?;
        Some((f.next()?.to_string(), f.next()?.to_string()))
    })
}

/// The session and window the pane is in now; `None` when the server or the pane is gone.
pub async fn ids_of(pane: &TmuxPane) -> Result<Option<(String, String)>, ToolError> {
    let list = tmux(pane, &["list-panes", "-a", "-F", "#{pane_id}\t#{session_id}\t#{window_id}"]).await?;
    Ok(find_pane(&list, &pane.pane))
}

/// Whether the server still answers and has the pane; `Gone` when either is not so.
async fn pane_session(pane: &TmuxPane) -> Result<String, RevealError> {
    let ended = || RevealError::Gone(format!("the tmux server of pane {} has ended", pane.pane));
    match ids_of(pane).await {
        Ok(Some((session, _))) => Ok(session),
        Ok(None) => Err(RevealError::Gone(format!("tmux pane {} is gone", pane.pane))),
        Err(ToolError::Failed { .. }) => Err(ended()),
        Err(ToolError::Distrusted(why)) => Err(RevealError::Gone(why.to_string())),
        Err(e) => Err(RevealError::Failed(e.to_string())),
    }
}

/// Makes the pane the current one of its window and its window the current one of its session,
/// then switches a client to it: one attached to that session (the most recently used), else the
/// most recently used of all. Returns the client's process, whose terminal the caller raises.
pub async fn reveal(pane: &TmuxPane, env: &[(&str, &str)]) -> Result<Outcome, RevealError> {
    let session = pane_session(pane).await?;
    let failed = |e: ToolError| RevealError::Failed(e.to_string());
    tmux(pane, &["select-window", "-t", &pane.pane]).await.map_err(failed)?;
    tmux(pane, &["select-pane", "-t", &pane.pane]).await.map_err(failed)?;
    let mut clients = parse_clients(&tmux(pane, &["list-clients", "-F", CLIENT_FORMAT]).await.map_err(failed)?);
    clients.sort_by_key(|c| (c.session == session, c.activity));
    let Some(client) = clients.pop() else {
        // Nobody is attached: the pane is current for whoever attaches next.
        return Ok(Outcome { raise_pid: None, note: Some(format!("tmux pane {} is selected; no client is attached", pane.pane)) });
    };
    tmux_with(pane, &["switch-client", "-c", &client.name, "-t", &pane.pane], env).await.map_err(failed)?;
    Ok(Outcome { raise_pid: Some(client.pid), note: None })
}

/// The processes of the clients showing this pane now (each client shows the active pane of the
/// current window of its session); empty when none does.
pub async fn clients_showing(pane: &TmuxPane) -> Result<Vec<u32>, ToolError> {
    let clients = parse_clients(&tmux(pane, &["list-clients", "-F", CLIENT_FORMAT]).await?);
    Ok(clients.into_iter().filter(|c| c.pane == pane.pane).map(|c| c.pid).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pane_is_found_by_its_id_alone() {
        let list = "%1\t$0\t@0\n%12\t$1\t@3\n";
        assert_eq!(find_pane(list, "%12"), Some(("$1".into(), "@3".into())));
        assert_eq!(find_pane(list, "%2"), None);
    }

    #[test]
    fn clients_are_read_and_odd_lines_skipped() {
        let text = "/dev/pts/3\t4242\t$0\t%1\t1700000000\nnot a client\n/dev/pts/4\tx\t$1\t%2\t1\n";
        assert_eq!(
            parse_clients(text),
            vec![Client { name: "/dev/pts/3".into(), pid: 4242, session: "$0".into(), pane: "%1".into(), activity: 1_700_000_000 }]
        );
    }
}
