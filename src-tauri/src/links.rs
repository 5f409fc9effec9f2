//! `cmux-tray://` links (`follow/run/<id>`, `follow/handoff/<id>`, `open/<notice>`), one app
//! instance per user, and the scheme's registration.
//!
//! A second launch (a link opened while the app runs) hands its arguments to the running
//! instance through tauri-plugin-single-instance, which passes links on to
//! tauri-plugin-deep-link; the link is parsed by the engine's `AppLink` (checked ids only).
//!
//! On Linux the scheme is registered here rather than by the plugin: the plugin's `.desktop`
//! file quotes its `Exec=` path, which Debian 12's xdg-utils 1.1.3 cannot read, so `xdg-open`
//! of a link fails. Ours writes the path unquoted (it quotes only when it must) and makes it
//! the default handler with `xdg-mime`. On Windows the installer registers it, and the app
//! registers it again for the current user (a copy run from elsewhere); on macOS the bundle's
//! Info.plist does.

use cmux_tray_engine::reveal::AppLink;
use cmux_tray_engine::{Asked, Engine};
use tauri::AppHandle;
use tauri_plugin_deep_link::DeepLinkExt;

use crate::windows::{self, Page};

/// Handles the links this instance was started with, and those handed to it later.
pub fn start(app: &AppHandle, engine: &Engine) {
    #[cfg(target_os = "linux")]
    if let Err(e) = register_scheme() {
        tracing::warn!("registering cmux-tray:// links: {e}");
    }
    // The installer registers the scheme; a copy run from elsewhere registers itself (HKCU).
    #[cfg(target_os = "windows")]
    if let Err(e) = app.deep_link().register_all() {
        tracing::warn!("registering cmux-tray:// links: {e}");
    }
    let handle = app.clone();
    let e = engine.clone();
    app.deep_link().on_open_url(move |event| {
        for url in event.urls() {
            open(&handle, &e, url.as_str());
        }
    });
    if let Ok(Some(urls)) = app.deep_link().get_current() {
        for url in urls {
            open(app, engine, url.as_str());
        }
    }
}

/// Another launch while this one runs: without a link, bring the app forward, at the window it
/// asked for (`--open settings`) or the history.
pub fn second_launch(app: &AppHandle, argv: &[String]) {
    let has_link = argv.iter().skip(1).any(|a| a.starts_with("cmux-tray:"));
    tracing::info!(has_link, "a second launch was handed over");
    if !has_link {
        windows::open(app, windows::requested(argv).unwrap_or(Page::History), None);
    }
}

fn open(app: &AppHandle, engine: &Engine, url: &str) {
    let link = match AppLink::parse(url) {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!("ignored a link: {e}");
            return;
        }
    };
    tracing::info!(?link, "link");
    let done = match &link {
        // Any web page can fire a link: it never marks an item as made here.
        AppLink::FollowRun(id) => engine.follow_run_from(id, Asked::Link).map_err(|e| e.to_string()),
        AppLink::FollowHandoff(id) => engine.follow_handoff_from(id, Asked::Link).map_err(|e| e.to_string()),
        // As the tray's line for it, and a click on its banner: its terminal, or its card.
        AppLink::Open(key) => {
            crate::tray::Action::OpenNotice(key.clone()).run(app, engine);
            Ok(())
        }
    };
    if let Err(e) = done {
        tracing::warn!("{url}: {e}");
    }
}

/// The package's desktop entry, when the app is installed: it is the scheme's handler.
#[cfg(target_os = "linux")]
fn installed_entry() -> Option<std::path::PathBuf> {
    let dirs = std::env::var("XDG_DATA_DIRS").ok().filter(|d| !d.is_empty()).unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    std::env::split_paths(&dirs).map(|d| d.join("applications/cmux-tray.desktop")).find(|p| p.is_file())
}

/// An app run from a build tree writes `$XDG_DATA_HOME/applications/dev.cmux.tray.desktop` and
/// makes it the handler of `x-scheme-handler/cmux-tray`. An installed one leaves that to the
/// package's entry (and takes away its own, from a build run before the install).
#[cfg(target_os = "linux")]
fn register_scheme() -> anyhow::Result<()> {
    let dir = cmux_tray_engine::config::data_home()
        .ok_or_else(|| anyhow::anyhow!("no data directory (set HOME or XDG_DATA_HOME)"))?
        .join("applications");
    if let Some(entry) = installed_entry() {
        tracing::debug!("cmux-tray:// links are handled by {}", entry.display());
        let _ = std::fs::remove_file(dir.join("dev.cmux.tray.desktop"));
        return Ok(());
    }
    let exec = crate::autostart::exec_of(&std::env::current_exe()?);
    std::fs::create_dir_all(&dir)?;
    let entry = format!(
        "[Desktop Entry]\nType=Application\nName=cmux-tray\nComment=Banners when cloud Runs and hand-offs need you\nExec={exec} %u\nTerminal=false\nNoDisplay=true\nMimeType=x-scheme-handler/cmux-tray;\n"
    );
    let file = dir.join("dev.cmux.tray.desktop");
    if std::fs::read_to_string(&file).ok().as_deref() != Some(entry.as_str()) {
        std::fs::write(&file, entry)?;
    }
    let status = cmux_tray_engine::private::person_command("xdg-mime")
        .args(["default", "dev.cmux.tray.desktop", "x-scheme-handler/cmux-tray"])
        .as_std_mut()
        .status()?;
    anyhow::ensure!(status.success(), "xdg-mime default failed ({status})");
    Ok(())
}
