//! `cmux-tray://` links (`follow/run/<id>`, `follow/handoff/<id>`, `open/<notice>`), and the
//! scheme's registration.
//!
//! A link opened while the app runs starts a second launch, which hands its arguments to the
//! running tray over the app's channel (`instance`); on macOS it arrives as an event of the
//! tray's loop instead. The link is parsed by the engine's `AppLink` (checked ids only).
//!
//! On Linux the scheme is registered here: a `.desktop` file whose `Exec=` is written unquoted
//! (Debian 12's xdg-utils 1.1.3 cannot read a quoted one; it is quoted only when it must be),
//! made the default handler with `xdg-mime`. On Windows the installer registers it, and on
//! macOS the bundle's Info.plist does.

use std::sync::Arc;

use cmux_tray_engine::Asked;
use cmux_tray_engine::reveal::AppLink;

use crate::App;

/// Handles the links this instance was started with.
pub fn start(app: &Arc<App>, links: &[String]) {
    #[cfg(target_os = "linux")]
    if let Err(e) = register_scheme() {
        tracing::warn!("registering cmux-tray:// links: {e}");
    }
    for link in links {
        open(app, link);
    }
}

/// Another launch while this one runs: its links, else the window it asked for (`--open
/// settings`) or the history.
pub fn launched(app: &Arc<App>, argv: &[String]) {
    use clap::Parser;
    let args = match crate::args::Args::try_parse_from(argv) {
        Ok(args) => args,
        Err(e) => {
            tracing::warn!("a second launch's arguments: {e}");
            return;
        }
    };
    tracing::info!(links = args.links.len(), "a second launch was handed over");
    for link in &args.links {
        open(app, link);
    }
    if let Some(page) = args.handed_over() {
        app.windows.open(app, page, None);
    }
}

pub fn open(app: &Arc<App>, url: &str) {
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
        AppLink::FollowRun(id) => app.engine.follow_run_from(id, Asked::Link).map_err(|e| e.to_string()),
        AppLink::FollowHandoff(id) => app.engine.follow_handoff_from(id, Asked::Link).map_err(|e| e.to_string()),
        // As the tray's line for it, and a click on its banner: its terminal, or its card.
        AppLink::Open(key) => {
            crate::windows_process::open_notice(app, key.clone());
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
