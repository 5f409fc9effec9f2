//! kitty: a window is brought forward with `kitty @ focus-window --match id:N` on the socket its
//! shell was given (`KITTY_LISTEN_ON`; kitty needs `allow_remote_control` and `listen_on`), and
//! is looked at when `kitty @ ls` says it is the focused window of the focused tab of a focused
//! OS window. Under sway or Hyprland the compositor says whether the OS window has the focus (kitty hears it
//! only through keyboard focus) and raises it, found from the window's shell process.

use serde_json::Value;

use super::compositor::Compositor;
use super::process::{ToolError, run};
use super::{Outcome, RevealError};
use crate::place::KittyWindow;

/// Every run first asks whether kitty's server is one the engine obeys (`trust`: an abstract
/// name has no owner), and is given the very socket checked.
async fn kitty(w: &KittyWindow, args: &[&str], env: &[(&str, &str)]) -> Result<String, ToolError> {
    let socket = super::trust::kitty(&w.socket)?;
    let to = format!("unix:{}", socket.address());
    let mut all = vec!["@", "--to", &to];
    all.extend_from_slice(args);
    run("kitty", &all, env, Some(&socket)).await
}

/// A window as `kitty @ ls` lists it.
struct Listed {
    /// Kitty's OS window has the focus, as kitty heard it.
    os_focused: bool,
    /// The window is the focused one of its OS window's focused tab.
    current: bool,
    /// The process it runs (its shell), whose ancestors lead to kitty.
    pid: Option<u32>,
}

impl Listed {
    /// Kitty's own account of the focus: its OS window, its tab and itself all focused.
    fn focused(&self) -> bool {
        self.os_focused && self.current
    }
}

fn find(ls: &Value, id: u64) -> Option<Listed> {
    let on = |v: &Value| v["is_focused"].as_bool().unwrap_or(false);
    for os in ls.as_array()? {
        for tab in os["tabs"].as_array().into_iter().flatten() {
            for w in tab["windows"].as_array().into_iter().flatten() {
                if w["id"].as_u64() == Some(id) {
                    let pid = w["pid"].as_u64().and_then(|p| u32::try_from(p).ok());
                    return Some(Listed { os_focused: on(os), current: on(tab) && on(w), pid });
                }
            }
        }
    }
    None
}

async fn list(w: &KittyWindow) -> Result<Value, RevealError> {
    let text = kitty(w, &["ls"], &[]).await.map_err(|e| match e {
        ToolError::Distrusted(why) => RevealError::Gone(why.to_string()),
        ToolError::Failed { said, .. } => RevealError::Gone(format!("kitty at {} does not answer ({said})", w.socket)),
        e => RevealError::Failed(e.to_string()),
    })?;
    serde_json::from_str(&text).map_err(|e| RevealError::Failed(format!("kitty @ ls: {e}")))
}

pub async fn reveal(w: &KittyWindow, env: &[(&str, &str)]) -> Result<Outcome, RevealError> {
    let Some(listed) = find(&list(w).await?, w.window) else {
        return Err(RevealError::Gone(format!("kitty window {} is closed", w.window)));
    };
    kitty(w, &["focus-window", "--match", &format!("id:{}", w.window)], env).await.map_err(|e| RevealError::Failed(e.to_string()))?;
    // Under sway or Hyprland the OS window is raised by the compositor; elsewhere kitty's X11
    // window is the one the notice named.
    Ok(Outcome { raise_pid: Compositor::of_session().and(listed.pid), note: None })
}

/// `Some(true)` when the window has the focus; `None` when kitty cannot be asked.
pub async fn looked_at(w: &KittyWindow) -> Option<bool> {
    let ls = list(w).await.inspect_err(|e| tracing::debug!("kitty at {} not asked: {e}", w.socket)).ok()?;
    let Some(listed) = find(&ls, w.window) else { return Some(false) };
    match (Compositor::of_session(), listed.pid) {
        (Some(compositor), Some(pid)) if listed.current => {
            compositor.shows_focused(&[pid]).await.inspect_err(|e| tracing::debug!("the compositor not asked: {e}")).ok()
        }
        _ => Some(listed.focused()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_window_is_focused_only_when_its_os_window_and_tab_are() {
        let ls = json!([{"id": 1, "is_focused": true, "tabs": [
            {"id": 1, "is_focused": true, "windows": [{"id": 1, "is_focused": false}, {"id": 2, "is_focused": true}]},
            {"id": 2, "is_focused": false, "windows": [{"id": 3, "is_focused": true}]}]}]);
        assert_eq!(find(&ls, 2).map(|w| w.focused()), Some(true));
        assert_eq!(find(&ls, 1).map(|w| w.focused()), Some(false));
        assert_eq!(find(&ls, 3).map(|w| w.focused()), Some(false));
        assert_eq!(find(&ls, 9).map(|w| w.focused()), None);
        let unfocused = json!([{"id": 1, "is_focused": false, "tabs": [{"is_focused": true, "windows": [{"id": 2, "is_focused": true}]}]}]);
        assert_eq!(find(&unfocused, 2).map(|w| w.focused()), Some(false));
    }
}
