//! cmux-tray's desktop shell: a tray (menu bar) that is always there, and windows made on
//! demand, over the engine. It holds no product rule: the tray draws the engine's `TrayView`,
//! the windows call the engine through commands, and both redraw on the engine's events.
//!
//! - `windows`: the history, settings and sign-in windows, created when opened, destroyed when
//!   closed (a webview costs ~300 MB while it exists).
//! - `commands`: what the pages may ask of the engine.
//! - `tray`: the tray menu and its actions, drawn by a StatusNotifierItem of our own on Linux
//!   (ksni, so a left click works) and by Tauri's tray on macOS and Windows.
//! - `demo`: `--demo`, the simulator inside the app with a short story, in a folder of its own.
//! - `links`: `cmux-tray://` links, one instance per user, and the scheme's registration.
//! - `webkit`: WebKitGTK's network process ended once no window is left.

// A release build on Windows opens no console window beside the tray.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod autostart;
mod commands;
mod demo;
mod links;
mod tray;
mod webkit;
mod windows;

use std::sync::Mutex;

use cmux_tray_engine::EngineEvent;
use cmux_tray_engine::config::Paths;
use cmux_tray_engine::lock::Locked;
use cmux_tray_host::Host;
use tauri::{Emitter, Manager, RunEvent};

/// What every command and the tray share.
pub struct AppState {
    pub engine: cmux_tray_engine::Engine,
    pub paths: Paths,
    host: Mutex<Option<Host>>,
    /// `--demo`'s own folder, removed at quit.
    demo_root: Option<std::path::PathBuf>,
}

/// Logs to stderr and, since a tray app has no terminal, to a file a day in the log directory
/// (a week of them kept). Returns the guard that flushes the file at exit.
fn start_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = || tracing_subscriber::EnvFilter::try_from_env("CMUX_TRAY_LOG").unwrap_or_else(|_| "info".into());
    let stderr = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let file = Paths::from_env().ok().and_then(|p| {
        cmux_tray_engine::private::create_dir(&p.log_dir()).ok()?;
        tracing_appender::rolling::Builder::new()
            .rotation(tracing_appender::rolling::Rotation::DAILY)
            .filename_prefix("cmux-tray")
            .filename_suffix("log")
            .max_log_files(7)
            .build(p.log_dir())
            .ok()
    });
    match file {
        Some(appender) => {
            let (writer, guard) = tracing_appender::non_blocking(appender);
            let file_layer = tracing_subscriber::fmt::layer().with_ansi(false).with_writer(writer);
            tracing_subscriber::registry().with(filter()).with(stderr).with(file_layer).init();
            Some(guard)
        }
        None => {
            tracing_subscriber::registry().with(filter()).with(stderr).init();
            None
        }
    }
}

/// Starts the engine and what shows it (the tray, the links, the windows asked for).
fn start(app: &mut tauri::App, environment: &std::collections::BTreeMap<String, String>) -> anyhow::Result<()> {
    let demo = std::env::args().any(|a| a == "--demo");
    let (paths, env) = if demo { tauri::async_runtime::block_on(demo::prepare())? } else { (Paths::from_env()?, environment.clone()) };
    let host = tauri::async_runtime::block_on(Host::start(&paths, &env, cmux_tray_engine::desktop::Hearing::Clicks))?;
    let engine = host.engine.clone();
    // Managed before any window can open: a page's first command finds the engine.
    let demo_root = demo.then(|| paths.data_dir.parent().map(|p| p.to_path_buf())).flatten();
    app.manage(AppState { engine: engine.clone(), paths, host: Mutex::new(Some(host)), demo_root });
    if demo {
        demo::after_start(app.handle(), &engine);
    }
    links::start(app.handle(), &engine);
    // `--open history|settings|signin`: a window at start (what a launcher or a test wants).
    if let Some(page) = windows::requested(&std::env::args().collect::<Vec<_>>()) {
        windows::open(app.handle(), page, None);
    }
    // Windows redraw when the engine says something changed; a click on a banner that
    // only the app can answer (a Run's card, the history) opens its window.
    let handle = app.handle().clone();
    let mut events = engine.subscribe();
    let clicked_engine = engine.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            match events.recv().await {
                Ok(EngineEvent::Clicked { notice }) => {
                    windows::open_clicked(&handle, &notice);
                    let _ = clicked_engine.revealed(&notice.key).await;
                }
                Ok(EngineEvent::Changed) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    let _ = handle.emit("changed", ());
                }
                Err(_) => return,
            }
        }
    });
    tauri::async_runtime::block_on(tray::start(app.handle().clone(), engine))?;
    Ok(())
}

/// Says why the app cannot start, where a person will see it, and exits non-zero.
fn cannot_start(why: &str) -> ! {
    tracing::error!("cannot start: {why}");
    eprintln!("cmux-tray-app: cannot start: {why}");
    #[cfg(target_os = "linux")]
    if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() {
        use gtk::prelude::*;
        if gtk::init().is_ok() {
            let dialog = gtk::MessageDialog::new(
                None::<&gtk::Window>,
                gtk::DialogFlags::MODAL,
                gtk::MessageType::Error,
                gtk::ButtonsType::Close,
                "cmux-tray cannot start",
            );
            dialog.set_title("cmux-tray");
            dialog.set_secondary_text(Some(why));
            dialog.run();
            dialog.close();
        }
    }
    std::process::exit(1)
}

/// Set for the app alone (unless the person set it), never for what it starts. On X11, GTK 3
/// probes OpenGL as it opens the display, which maps Mesa and its LLVM into the idle tray:
/// about 50 MiB of the tray's resident memory for nothing (docs/benchmarks.md, row 3). The
/// windows draw without GDK's GL (WebKit falls back to its non-GL path in this process).
#[cfg(target_os = "linux")]
const OWN_ENVIRONMENT: &[(&str, &str)] = &[("GDK_GL", "disable")];
#[cfg(not(target_os = "linux"))]
const OWN_ENVIRONMENT: &[(&str, &str)] = &[];

fn main() {
    // Before any thread: private files from here on, and no secret in a child's environment
    // (the web processes, the opener). The settings read the secrets from what it returns.
    let environment = cmux_tray_engine::private::start_with(OWN_ENVIRONMENT);
    let _log = start_logging();
    let app = tauri::Builder::default()
        // First: a second launch hands its link to this one and exits before it starts anything.
        .plugin(tauri_plugin_single_instance::init(|app, argv, _cwd| links::second_launch(app, &argv)))
        .plugin(tauri_plugin_deep_link::init())
        // Open at login starts the tray alone, no window.
        .plugin(tauri_plugin_autostart::Builder::new().app_name("cmux-tray").arg("--hidden").build())
        .invoke_handler(tauri::generate_handler![
            commands::view,
            commands::history_view,
            commands::notice,
            commands::card,
            commands::handoff_card,
            commands::settings_view,
            commands::time_zones,
            commands::set_setting,
            commands::set_quiet_windows,
            commands::pause,
            commands::resume,
            commands::mark_all_read,
            commands::open_notice,
            commands::viewing,
            commands::sign_in_start,
            commands::sign_in_wait,
            commands::open_sign_in_page,
            commands::open_at_login,
            commands::set_open_at_login,
            commands::connection,
            commands::log_dir,
            commands::restart,
            commands::open_window,
            commands::account,
            commands::choose_team,
            commands::sign_out,
            commands::sign_in_with_token,
        ])
        // Tauri runs this once its event loop started, and would panic on an error with an
        // unrelated message: what is wrong is said here, in the terminal and a dialog.
        .setup(move |app| {
            if let Err(e) = start(app, &environment) {
                cannot_start(&format!("{e:#}"));
            }
            Ok(())
        })
        .build(tauri::generate_context!())
        .unwrap_or_else(|e| cannot_start(&e.to_string()));
    app.run(|app, event| match event {
        // Closing the last window leaves the tray; only Quit (an exit code) ends the app.
        RunEvent::ExitRequested { api, code: None, .. } => api.prevent_exit(),
        RunEvent::Exit => {
            let state = app.state::<AppState>();
            let host = state.host.locked().take();
            if let Some(host) = host {
                tauri::async_runtime::block_on(host.stop());
            }
            if let Some(root) = &state.demo_root {
                let _ = std::fs::remove_dir_all(root);
            }
        }
        _ => {}
    });
}
