//! An unexpected stop, said at the next start. While the tray runs, `running` in its data folder
//! says so; a clean stop (Quit, SIGTERM, a restart) removes it. Found at start, the last run
//! ended otherwise (a panic, a kill, a power cut): one notice, "cmux-tray stopped unexpectedly",
//! says where the log is, which holds the panic and its backtrace when there was one
//! (`cmux_tray_host::logging`). Nothing is sent anywhere.

use std::path::PathBuf;

use cmux_tray_engine::lang::say;
use cmux_tray_engine::notice::local::LocalPost;

use crate::App;

/// The marker of a run in progress.
pub struct Running {
    marker: PathBuf,
}

impl Running {
    /// A clean stop: the next start says nothing.
    pub fn stopped_cleanly(self) {
        if let Err(e) = std::fs::remove_file(&self.marker) {
            tracing::warn!("{}: {e}", self.marker.display());
        }
    }
}

/// Says an unexpected stop of the last run, if there was one, and marks this run.
pub async fn start(app: &App) -> Running {
    let marker = app.paths.data_dir.join("running");
    let log = app.paths.log_dir();
    if marker.exists() {
        tracing::warn!("the last run stopped unexpectedly (see the log before this start)");
        // Its words: docs/notices.md, "The app's own notices".
        let lang = app.engine.lang();
        let post = LocalPost {
            title: say!(lang, "stopped-title"),
            body: say!(lang, "stopped-body", log = log.display().to_string()),
            ..Default::default()
        };
        if let Err(e) = app.engine.post_local(post).await {
            tracing::warn!("the notice of an unexpected stop: {e}");
        }
    }
    if let Err(e) = cmux_tray_engine::private::write_file(&marker, &format!("{}\n", std::process::id())) {
        tracing::warn!("{}: {e}", marker.display());
    }
    Running { marker }
}
