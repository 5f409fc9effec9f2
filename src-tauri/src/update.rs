//! Installing the newer version the release feed offers, where the installers update themselves
//! (macOS, Windows), with tauri-plugin-updater: the feed is a Tauri update manifest (`version`,
//! and per platform the artifact's URL and its minisign signature), verified with the bundle's
//! key (`plugins.updater.pubkey`, which the release build sets; a build without one installs
//! nothing). What happens is said to the pages as `update` events. Linux packages update through
//! the package manager: the tray never asks for this there.

#[cfg(any(target_os = "macos", windows))]
pub use installer::install;

/// Never asked on Linux (the tray refuses it there); said in the log if it were.
#[cfg(not(any(target_os = "macos", windows)))]
pub fn install(_: &tauri::AppHandle, _: &crate::tray_link::TrayLink, feed: String) {
    tracing::warn!("asked to install the update at {feed}: on Linux the package manager updates cmux-tray");
}

#[cfg(any(target_os = "macos", windows))]
mod installer {
    use serde::Serialize;
    use tauri::{AppHandle, Emitter};

    use crate::tray_link::TrayLink;

    /// What the settings page says while an update is installed.
    #[derive(Clone, Debug, Serialize)]
    #[serde(tag = "state", rename_all = "kebab-case")]
    enum Progress {
        Checking,
        Downloading { version: String, percent: Option<u8> },
        Installing { version: String },
        Failed { why: String },
    }

    fn say(app: &AppHandle, progress: Progress) {
        let _ = app.emit("update", progress);
    }

    /// Checks `feed`, downloads and verifies the update, has the tray step aside, and installs it.
    pub fn install(app: &AppHandle, link: &TrayLink, feed: String) {
        let (app, link) = (app.clone(), link.clone());
        tauri::async_runtime::spawn(async move {
            say(&app, Progress::Checking);
            if let Err(why) = run(&app, &link, &feed).await {
                tracing::warn!("the update from {feed}: {why}");
                say(&app, Progress::Failed { why });
            }
        });
    }

    async fn run(app: &AppHandle, link: &TrayLink, feed: &str) -> Result<(), String> {
        use tauri_plugin_updater::UpdaterExt;
        let feed: url::Url = feed.parse().map_err(|e| format!("the feed {feed:?}: {e}"))?;
        // The key the release build puts in the bundle: without it nothing can be verified.
        let key = app.config().plugins.0.get("updater").and_then(|u| u["pubkey"].as_str()).unwrap_or_default().trim().to_string();
        if key.is_empty() {
            return Err("this build of cmux-tray carries no update key: install the new version from its installer".into());
        }
        let quit = link.clone();
        let updater = app
            .updater_builder()
            .endpoints(vec![feed])
            .map_err(|e| e.to_string())?
            // Windows: the installer replaces the programs once they have ended; the tray is asked
            // to quit (and has answered) before it starts, and the installer starts cmux-tray again.
            .on_before_exit(move || {
                if let Err(e) = tauri::async_runtime::block_on(quit.call("quit".into(), serde_json::json!({}))) {
                    tracing::warn!("asking the tray to quit for the update: {e}");
                }
            })
            .build()
            .map_err(|e| e.to_string())?;
        let update = updater.check().await.map_err(|e| e.to_string())?.ok_or("the feed offers no newer version for this platform")?;
        let version = update.version.clone();
        let (mut got, mut shown) = (0usize, None);
        let bytes = update
            .download(
                |chunk, total| {
                    got += chunk;
                    let percent = total.filter(|t| *t > 0).map(|t| (got as u64 * 100 / t).min(100) as u8);
                    if percent != shown {
                        shown = percent;
                        say(app, Progress::Downloading { version: version.clone(), percent });
                    }
                },
                || {},
            )
            .await
            .map_err(|e| e.to_string())?;
        say(app, Progress::Installing { version: version.clone() });
        // On Windows `install` starts the installer and ends this process; it runs off the runtime,
        // where the hook above may wait for the tray's answer.
        tauri::async_runtime::spawn_blocking(move || update.install(bytes)).await.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        // macOS: the bundle was replaced in place; the tray starts again from it.
        link.call("restart".into(), serde_json::json!({})).await.map(|_| ())
    }
}
