//! sway's window layer (Wayland, where EWMH does not reach): which terminal window has the focus
//! and bringing one forward, through sway's IPC (the i3 protocol: `i3-ipc`, a length, a type and
//! JSON; `GET_TREE` lists each window with its `pid` and `focused`, `RUN_COMMAND` runs `[pid=N]
//! focus`). The socket is `SWAYSOCK`, spoken to only when it is the user's own socket, not a link. A window
//! is found from a process by its ancestors: the terminal whose pid sway lists is one of them.

use std::path::PathBuf;

/// sway's IPC socket, when this session has one that is the user's own.
pub fn socket() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("SWAYSOCK")?);
    super::trust::persons_socket(&path).then_some(path)
}

/// The message types used (sway-ipc(7)).
#[cfg(unix)]
#[derive(Clone, Copy)]
enum Message {
    RunCommand = 0,
    GetTree = 4,
}

/// One request and its answer, within the terminals' time limit.
#[cfg(unix)]
async fn ask(socket: &std::path::Path, kind: Message, payload: &str) -> Result<serde_json::Value, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const MAGIC: &[u8] = b"i3-ipc";
    // A tree of a few hundred windows is well under this; anything longer is not sway's answer.
    const LONGEST: usize = 16 << 20;
    let exchange = async {
        let mut stream = tokio::net::UnixStream::connect(socket).await?;
        let mut request = MAGIC.to_vec();
        request.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
        request.extend_from_slice(&(kind as u32).to_ne_bytes());
        request.extend_from_slice(payload.as_bytes());
        stream.write_all(&request).await?;
        let mut header = [0u8; 14];
        stream.read_exact(&mut header).await?;
        let length = u32::from_ne_bytes(header[6..10].try_into().expect("4 bytes")) as usize;
        if &header[..6] != MAGIC || length > LONGEST {
            return Err(std::io::Error::other("not an answer of sway's IPC"));
        }
        let mut body = vec![0u8; length];
        stream.read_exact(&mut body).await?;
        serde_json::from_slice(&body).map_err(std::io::Error::other)
    };
    match tokio::time::timeout(super::process::TOOL_TIMEOUT, exchange).await {
        Ok(answer) => answer.map_err(|e| format!("sway's IPC at {}: {e}", socket.display())),
        Err(_) => Err(format!("sway's IPC at {} did not answer within {:?}", socket.display(), super::process::TOOL_TIMEOUT)),
    }
}

/// Every window sway shows: (its process, whether it has the focus).
#[cfg(unix)]
async fn windows(socket: &std::path::Path) -> Result<Vec<(u32, bool)>, String> {
    fn walk(node: &serde_json::Value, out: &mut Vec<(u32, bool)>) {
        if let Some(pid) = node["pid"].as_u64().and_then(|p| u32::try_from(p).ok()) {
            out.push((pid, node["focused"].as_bool().unwrap_or(false)));
        }
        for child in ["nodes", "floating_nodes"].iter().filter_map(|k| node[k].as_array()).flatten() {
            walk(child, out);
        }
    }
    let tree = ask(socket, Message::GetTree, "").await?;
    let mut out = Vec::new();
    walk(&tree, &mut out);
    Ok(out)
}

/// The window of the nearest of `ancestors` that sway shows, and whether it has the focus.
#[cfg(unix)]
async fn window_of(socket: &std::path::Path, ancestors: &[u32]) -> Result<Option<(u32, bool)>, String> {
    Ok(super::process::nearest_window(ancestors, &windows(socket).await?))
}

/// Whether the window holding any of `pids` (a terminal's clients) has the focus.
#[cfg(unix)]
pub async fn shows_focused(socket: &std::path::Path, pids: &[u32]) -> Result<bool, String> {
    let shown = windows(socket).await?;
    Ok(pids.iter().any(|pid| matches!(super::process::nearest_window(&super::process::ancestors(*pid), &shown), Some((_, true)))))
}

/// Focuses (and so raises) the window that holds `pid`.
#[cfg(unix)]
pub async fn focus(socket: &std::path::Path, pid: u32) -> Result<(), String> {
    let Some((window, _)) = window_of(socket, &super::process::ancestors(pid)).await? else {
        return Err(format!("sway shows no window of process {pid} or its parents"));
    };
    let answer = ask(socket, Message::RunCommand, &format!("[pid={window}] focus")).await?;
    match answer[0]["success"].as_bool() {
        Some(true) => Ok(()),
        _ => Err(format!(
            "sway refused to focus the window of process {window}: {}",
            answer[0]["error"].as_str().unwrap_or("no reason given")
        )),
    }
}

#[cfg(not(unix))]
pub async fn shows_focused(_: &std::path::Path, _: &[u32]) -> Result<bool, String> {
    Err("sway runs on Unix only".into())
}

#[cfg(not(unix))]
pub async fn focus(_: &std::path::Path, _: u32) -> Result<(), String> {
    Err("sway runs on Unix only".into())
}
