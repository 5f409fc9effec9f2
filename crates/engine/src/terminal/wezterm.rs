//! WezTerm: a pane is brought forward with `wezterm cli activate-pane --pane-id N`, then the GUI
//! window of the most recently used client is raised; it is looked at when a client's focused
//! pane is it and that client's window has the focus. The socket a pane was given
//! (`WEZTERM_UNIX_SOCKET`) is passed on as the file `trust` checked; a pane that named none is
//! not asked about. WezTerm is not in Debian: this is checked
//! against its documented CLI output (wezterm.org/cli), not a running WezTerm.

use serde_json::Value;

use super::process::{ToolError, run};
use super::{Outcome, RevealError};
use crate::place::WeztermPane;

/// Whether `wezterm cli list --format json` lists the pane.
pub fn lists_pane(list: &Value, pane: u64) -> bool {
    list.as_array().into_iter().flatten().any(|p| p["pane_id"].as_u64() == Some(pane))
}

/// From `wezterm cli list-clients --format json`: the client processes whose focused pane is
/// this one, and the most recently used client (least idle) of all.
pub fn clients(list: &Value, pane: u64) -> (Vec<u32>, Option<u32>) {
    let all: Vec<&Value> = list.as_array().into_iter().flatten().collect();
    let pid = |c: &Value| c["pid"].as_u64().and_then(|p| u32::try_from(p).ok());
    // Compared as (seconds, nanoseconds), never summed: a huge `secs` from the server cannot overflow.
    let idle = |c: &Value| (c["idle_time"]["secs"].as_u64().unwrap_or(u64::MAX), c["idle_time"]["nanos"].as_u64().unwrap_or(0));
    let showing = all.iter().filter(|c| c["focused_pane_id"].as_u64() == Some(pane)).filter_map(|c| pid(c)).collect();
    let recent = all.iter().min_by_key(|c| idle(c)).and_then(|c| pid(c));
    (showing, recent)
}

/// The `wezterm` arguments for each request (and the socket, passed as WezTerm reads it).
/// `--no-auto-start`: asked about a pane whose mux server is not running, `wezterm cli` would
/// otherwise start a detached `wezterm-mux-server` that outlives the question.
pub fn args(what: &str, pane: u64) -> Vec<String> {
    let mut args: Vec<String> = vec!["cli".into(), "--no-auto-start".into()];
    match what {
        "list" => args.extend(["list".into(), "--format".into(), "json".into()]),
        "list-clients" => args.extend(["list-clients".into(), "--format".into(), "json".into()]),
        _ => args.extend(["activate-pane".into(), "--pane-id".into(), pane.to_string()]),
    }
    args
}

/// Every run first asks whether the server of the socket the pane named is one the engine obeys
/// (`trust`), and is given the very socket checked. A pane that named none is not asked:
/// `wezterm cli` would pick a socket of its own, unchecked.
async fn wezterm(p: &WeztermPane, what: &str, extra: &[(&str, &str)]) -> Result<String, ToolError> {
    let args = args(what, p.pane);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(path) = p.socket.as_deref() else {
        return Err(super::trust::Distrusted(format!("WezTerm pane {} named no socket (WEZTERM_UNIX_SOCKET)", p.pane)).into());
    };
    let socket = super::trust::wezterm(path)?;
    let mut env = vec![("WEZTERM_UNIX_SOCKET", socket.address())];
    env.extend_from_slice(extra);
    run("wezterm", &args, &env, Some(&socket)).await
}

async fn json(p: &WeztermPane, what: &str) -> Result<Value, RevealError> {
    let text = wezterm(p, what, &[]).await.map_err(|e| match e {
        ToolError::Distrusted(why) => RevealError::Gone(why.to_string()),
        ToolError::Failed { said, .. } => RevealError::Gone(format!("WezTerm does not answer ({said})")),
        e => RevealError::Failed(e.to_string()),
    })?;
    serde_json::from_str(&text).map_err(|e| RevealError::Failed(format!("wezterm cli {what}: {e}")))
}

pub async fn reveal(p: &WeztermPane, env: &[(&str, &str)]) -> Result<Outcome, RevealError> {
    if !lists_pane(&json(p, "list").await?, p.pane) {
        return Err(RevealError::Gone(format!("WezTerm pane {} is closed", p.pane)));
    }
    wezterm(p, "activate", env).await.map_err(|e| RevealError::Failed(e.to_string()))?;
    let (_, recent) = clients(&json(p, "list-clients").await.unwrap_or_default(), p.pane);
    Ok(Outcome { raise_pid: recent, note: None })
}

/// The client processes whose focused pane this is (their windows decide whether it is seen).
pub async fn clients_showing(p: &WeztermPane) -> Option<Vec<u32>> {
    Some(clients(&json(p, "list-clients").await.ok()?, p.pane).0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // The shapes wezterm.org/cli/cli/list.html and list-clients.html document.
    #[test]
    fn the_documented_json_is_read() {
        let list = json!([{"window_id": 0, "tab_id": 0, "pane_id": 0, "workspace": "default",
                           "size": {"rows": 24, "cols": 80}, "title": "wezterm cli list", "cwd": "file://foo/home/wez/"},
                          {"window_id": 0, "tab_id": 1, "pane_id": 3, "workspace": "default"}]);
        assert!(lists_pane(&list, 3));
        assert!(!lists_pane(&list, 4));
        let clients_json = json!([
            {"username": "wez", "hostname": "foo", "pid": 1098536, "connection_elapsed": {"secs": 226, "nanos": 502667166},
             "idle_time": {"secs": 0, "nanos": 502667166}, "workspace": "default", "focused_pane_id": 3},
            {"username": "wez", "hostname": "foo", "pid": 77, "idle_time": {"secs": 9, "nanos": 0}, "focused_pane_id": 0}]);
        assert_eq!(clients(&clients_json, 3), (vec![1098536], Some(1098536)));
        assert_eq!(clients(&clients_json, 0), (vec![77], Some(1098536)));
        assert_eq!(clients(&json!([]), 0), (vec![], None));
    }

    /// A server's idle time may be any `u64` of seconds: the most recent client is still the one
    /// least idle (summed into nanoseconds, a huge one overflowed: a panic, or the wrong window).
    #[test]
    fn a_huge_idle_time_is_the_longest_not_an_overflow() {
        let clients_json = json!([
            {"pid": 10, "idle_time": {"secs": u64::MAX, "nanos": 999_999_999}, "focused_pane_id": 1},
            {"pid": 20, "idle_time": {"secs": 18_446_744_073_u64, "nanos": 709_551_615}, "focused_pane_id": 1},
            {"pid": 30, "idle_time": {"secs": 2, "nanos": 0}, "focused_pane_id": 1}]);
        assert_eq!(clients(&clients_json, 1), (vec![10, 20, 30], Some(30)));
        let no_recent = json!([{"pid": 10, "idle_time": {"secs": u64::MAX, "nanos": 1}}, {"pid": 20, "idle_time": {"secs": 5}}]);
        assert_eq!(clients(&no_recent, 1).1, Some(20));
    }

    /// A pane that named no socket is never asked about: `wezterm cli` would pick one itself.
    #[tokio::test]
    async fn a_pane_that_named_no_socket_is_refused_before_wezterm_runs() {
        let e = reveal(&WeztermPane { socket: None, pane: 3 }, &[]).await.unwrap_err();
        assert_eq!(e, RevealError::Gone("WezTerm pane 3 named no socket (WEZTERM_UNIX_SOCKET)".into()));
    }

    /// Every question is asked with `--no-auto-start`: asked about a pane whose mux server is not
    /// running, `wezterm cli` would start a detached `wezterm-mux-server` that outlives it.
    #[test]
    fn the_documented_commands_are_asked_and_none_starts_a_mux_server() {
        assert_eq!(args("activate", 3), ["cli", "--no-auto-start", "activate-pane", "--pane-id", "3"]);
        assert_eq!(args("list", 3), ["cli", "--no-auto-start", "list", "--format", "json"]);
        assert_eq!(args("list-clients", 3), ["cli", "--no-auto-start", "list-clients", "--format", "json"]);
    }
}
