//! Hyprland's window layer, over its command socket (wiki.hypr.land, "IPC" and "Using hyprctl"):
//! `$XDG_RUNTIME_DIR/hypr/$HYPRLAND_INSTANCE_SIGNATURE/.socket.sock` (before Hyprland 0.40,
//! `/tmp/hypr/…`) takes one request a connection, answers and closes. `j/clients` lists each
//! window with its `pid` and `address`, `j/activewindow` the focused one (`{}` when none), and
//! `dispatch focuswindow address:0x…` focuses one, answering `ok`. A window is found from a
//! process by its ancestors, as under sway. Hyprland is not in Debian 12: the tests speak to a
//! stand-in that answers as the wiki says.

use std::path::{Path, PathBuf};

/// Hyprland's command socket, when this session has one that is the person's own.
pub fn socket() -> Option<PathBuf> {
    let signature = std::env::var("HYPRLAND_INSTANCE_SIGNATURE").ok()?;
    // A name, never a path of its own: it is joined to a folder.
    if signature.is_empty() || signature.contains('/') || signature.starts_with('.') {
        return None;
    }
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|d| d.is_absolute());
    let places = runtime.map(|d| d.join("hypr")).into_iter().chain([PathBuf::from("/tmp/hypr")]);
    places.map(|folder| folder.join(&signature).join(".socket.sock")).find(|p| super::trust::persons_socket(p))
}

/// One request and its whole answer, within the terminals' time limit. Hyprland serves its
/// socket synchronously, so the connection is closed as soon as the answer is read.
#[cfg(unix)]
async fn ask(socket: &Path, request: &str) -> Result<String, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A list of a few hundred windows is well under this; anything longer is not Hyprland's.
    const LONGEST: u64 = 16 << 20;
    let exchange = async {
        let mut stream = tokio::net::UnixStream::connect(socket).await?;
        stream.write_all(request.as_bytes()).await?;
        let mut answer = Vec::new();
        (&mut stream).take(LONGEST).read_to_end(&mut answer).await?;
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&answer).into_owned())
    };
    match tokio::time::timeout(super::process::TOOL_TIMEOUT, exchange).await {
        Ok(answer) => answer.map_err(|e| format!("Hyprland's socket {}: {e}", socket.display())),
        Err(_) => Err(format!("Hyprland's socket {} did not answer within {:?}", socket.display(), super::process::TOOL_TIMEOUT)),
    }
}

#[cfg(unix)]
async fn ask_json(socket: &Path, request: &str) -> Result<serde_json::Value, String> {
    let answer = ask(socket, request).await?;
    serde_json::from_str(&answer).map_err(|e| format!("Hyprland's answer to {request}: {e}"))
}

/// A window Hyprland shows: its process and its address.
#[cfg(unix)]
fn window(v: &serde_json::Value) -> Option<(u32, String)> {
    let pid = v["pid"].as_u64().and_then(|p| u32::try_from(p).ok())?;
    let address = v["address"].as_str().filter(|a| a.starts_with("0x") && a.len() > 2 && a[2..].chars().all(|c| c.is_ascii_hexdigit()))?;
    Some((pid, address.to_string()))
}

/// The window of the nearest of `ancestors` that Hyprland shows.
#[cfg(unix)]
async fn window_of(socket: &Path, ancestors: &[u32]) -> Result<Option<(u32, String)>, String> {
    Ok(super::process::nearest_window(ancestors, &windows(socket).await?))
}

/// Every window Hyprland shows: its process and its address.
#[cfg(unix)]
async fn windows(socket: &Path) -> Result<Vec<(u32, String)>, String> {
    let clients = ask_json(socket, "j/clients").await?;
    Ok(clients.as_array().map(|all| all.iter().filter_map(window).collect()).unwrap_or_default())
}

/// Whether the window holding any of `pids` (a terminal's clients) has the focus.
#[cfg(unix)]
pub async fn shows_focused(socket: &Path, pids: &[u32]) -> Result<bool, String> {
    let Some((_, active)) = window(&ask_json(socket, "j/activewindow").await?) else { return Ok(false) };
    let shown = windows(socket).await?;
    Ok(pids
        .iter()
        .any(|pid| super::process::nearest_window(&super::process::ancestors(*pid), &shown).is_some_and(|(_, address)| address == active)))
}

/// Focuses (and so raises) the window that holds `pid`.
#[cfg(unix)]
pub async fn focus(socket: &Path, pid: u32) -> Result<(), String> {
    let Some((window, address)) = window_of(socket, &super::process::ancestors(pid)).await? else {
        return Err(format!("Hyprland shows no window of process {pid} or its parents"));
    };
    let answer = ask(socket, &format!("dispatch focuswindow address:{address}")).await?;
    match answer.trim() {
        "ok" => Ok(()),
        said => Err(format!("Hyprland refused to focus the window of process {window}: {}", crate::text::clean(said, false))),
    }
}

#[cfg(not(unix))]
pub async fn shows_focused(_: &Path, _: &[u32]) -> Result<bool, String> {
    Err("Hyprland runs on Unix only".into())
}

#[cfg(not(unix))]
pub async fn focus(_: &Path, _: u32) -> Result<(), String> {
    Err("Hyprland runs on Unix only".into())
}

#[cfg(all(test, unix))]
mod tests {
    use std::sync::{Arc, Mutex};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A stand-in for Hyprland's command socket that answers as the wiki documents: one request
    /// a connection, the answer, then the connection closed. It records each request.
    fn stand_in(socket: PathBuf, clients: serde_json::Value, active: serde_json::Value) -> Arc<Mutex<Vec<String>>> {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let listener = tokio::net::UnixListener::bind(&socket).unwrap();
        let record = asked.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buf = vec![0u8; 4096];
                let n = stream.read(&mut buf).await.unwrap();
                let request = String::from_utf8_lossy(&buf[..n]).into_owned();
                let answer = match request.as_str() {
                    "j/clients" => clients.to_string(),
                    "j/activewindow" => active.to_string(),
                    r if r.starts_with("dispatch focuswindow address:") => "ok".into(),
                    _ => "unknown request".into(),
                };
                record.lock().unwrap().push(request);
                stream.write_all(answer.as_bytes()).await.unwrap();
            }
        });
        asked
    }

    /// This test's process is the terminal: its window, at `0x5a`, is found from it, is looked
    /// at while it is the active window and not when another is, and a click focuses it by
    /// address.
    #[tokio::test]
    async fn a_terminals_window_is_found_by_its_process_told_focused_and_focused_by_address() {
        let dir = tempfile::tempdir().unwrap();
        let me = std::process::id();
        let clients = serde_json::json!([
            {"address": "0x1f", "pid": 1, "class": "other"},
            {"address": "0x5a", "pid": me, "class": "foot"},
        ]);
        let focused = dir.path().join("focused.sock");
        stand_in(focused.clone(), clients.clone(), serde_json::json!({"address": "0x5a", "pid": me}));
        assert_eq!(shows_focused(&focused, &[me]).await, Ok(true));
        let elsewhere = dir.path().join("elsewhere.sock");
        let asked = stand_in(elsewhere.clone(), clients.clone(), serde_json::json!({"address": "0x1f", "pid": 1}));
        assert_eq!(shows_focused(&elsewhere, &[me]).await, Ok(false));
        assert_eq!(focus(&elsewhere, me).await, Ok(()));
        assert_eq!(asked.lock().unwrap().last().map(String::as_str), Some("dispatch focuswindow address:0x5a"));
        let none = dir.path().join("none.sock");
        stand_in(none.clone(), serde_json::json!([]), serde_json::json!({}));
        assert_eq!(shows_focused(&none, &[me]).await, Ok(false), "no window has the focus");
        assert!(focus(&none, me).await.unwrap_err().contains("shows no window of process"));
    }

    #[test]
    fn the_socket_is_found_only_under_a_signature_that_is_a_name() {
        // SAFETY: this test alone reads and writes these variables in this process.
        unsafe {
            std::env::set_var("HYPRLAND_INSTANCE_SIGNATURE", "../../etc");
        }
        assert_eq!(socket(), None);
        unsafe {
            std::env::remove_var("HYPRLAND_INSTANCE_SIGNATURE");
        }
    }
}
