//! WebKitGTK's network process outlives the last window: WebKit keeps it for the next webview,
//! and it holds about 50 MiB while the app is only a tray again (docs/benchmarks.md, row 3).
//! Once no window is left it is ended; WebKit starts a new one with the next window.

use std::time::Duration;

use tauri::{AppHandle, Manager};

/// How long after a window closed the check waits (a window opened meanwhile keeps it).
const AFTER_CLOSE: Duration = Duration::from_secs(2);

/// Called when a window was destroyed: ends the network process if no window is left.
pub fn window_destroyed(app: &AppHandle) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(AFTER_CLOSE).await;
        if app.webview_windows().is_empty() {
            end_network_process();
        }
    });
}

#[cfg(target_os = "linux")]
fn end_network_process() {
    let me = std::process::id();
    let tasks = std::fs::read_dir(format!("/proc/{me}/task")).into_iter().flatten().flatten();
    let children = tasks.flat_map(|t| {
        std::fs::read_to_string(t.path().join("children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|c| c.parse::<i32>().ok())
            .collect::<Vec<_>>()
    });
    for child in children {
        let comm = std::fs::read_to_string(format!("/proc/{child}/comm")).unwrap_or_default();
        // The kernel cuts a process's name to 15 bytes: "WebKitNetworkPr".
        if comm.trim().starts_with("WebKitNetworkP") {
            // SAFETY: kill(2) with a pid read from our own children and a plain signal.
            let ended = unsafe { libc::kill(child, libc::SIGTERM) } == 0;
            tracing::info!(pid = child, ended, "no window left: WebKit's network process ended");
        }
    }
}

/// WebKit's processes on macOS and Windows are the system's own (WKWebView, WebView2), which end
/// them themselves.
#[cfg(not(target_os = "linux"))]
fn end_network_process() {}
