//! The system asking the process to stop, the daemon and the tray app alike.

/// Returns when the process is asked to stop: Ctrl-C, or SIGTERM (systemd, `kill`, a session
/// ending). A handler that cannot be installed is said in the log; the others still stop it.
#[cfg(unix)]
pub async fn stop_requested() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        },
        Err(e) => {
            tracing::warn!("no SIGTERM handler ({e}): only Ctrl-C stops this process");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Returns when the process is asked to stop: Ctrl-C, Ctrl-Break, or its console closing. A
/// handler that cannot be installed is said in the log; the others still stop it.
#[cfg(windows)]
pub async fn stop_requested() {
    use tokio::signal::windows::{ctrl_break, ctrl_close};
    let mut brk = installed("Ctrl-Break", ctrl_break());
    let mut close = installed("console-close", ctrl_close());
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        Some(_) = async { brk.as_mut()?.recv().await } => {}
        Some(_) = async { close.as_mut()?.recv().await } => {}
    }
}

/// A handler, or `None` (said in the log) where it cannot be installed.
#[cfg(windows)]
fn installed<T>(what: &str, handler: std::io::Result<T>) -> Option<T> {
    handler.map_err(|e| tracing::warn!("no {what} handler: {e}")).ok()
}
