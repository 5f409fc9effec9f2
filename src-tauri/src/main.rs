//! cmux-tray's desktop shell: a tray (menu bar) that is always there, and windows made on
//! demand, over the engine. It holds no product rule: the tray draws the engine's `TrayView`,
//! the windows call the engine through commands, and both redraw on the engine's events.
//!
//! - `windows`: the history, settings and sign-in windows, created when opened, destroyed when
//!   closed (a webview costs ~300 MB while it exists).
//! - `commands`: what the pages may ask of the engine.
//! - `tray_linux`: the Linux tray, a StatusNotifierItem of our own (ksni), so a left click works.
//! - `demo`: `--demo`, the simulator inside the app with a short story, in a folder of its own.
//! - `links`: `cmux-tray://` links, one instance per user, and the scheme's registration.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod demo;
mod links;
#[cfg(target_os = "linux")]
mod tray_linux;
mod windows;

use std::sync::Mutex;

use cmux_tray_cli::host::Host;
use cmux_tray_engine::EngineEvent;
use cmux_tray_engine::config::Paths;
use tauri::{Emitter, Manager, RunEvent};

/// What every command and the tray share.
pub struct AppState {
    pub engine: cmux_tray_engine::Engine,
    pub paths: Paths,
    host: Mutex<Option<Host>>,
    /// `--demo`'s own folder, removed at quit.
    demo_root: Option<std::path::PathBuf>,
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CMUX_TRAY_LOG").unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let app = tauri::Builder::default()
        // First: a second launch hands its link to this one and exits before it starts anything.
        .plugin(tauri_plugin_single_instance::init(|app, argv, _cwd| links::second_launch(app, &argv)))
        .plugin(tauri_plugin_deep_link::init())
        .invoke_handler(tauri::generate_handler![
            commands::view,
            commands::history,
            commands::card,
            commands::settings,
            commands::set_setting,
            commands::mark_all_read,
            commands::sign_in_start,
            commands::sign_in_wait,
            commands::open_sign_in_page,
        ])
        .setup(|app| {
            let demo = std::env::args().any(|a| a == "--demo");
            let (paths, env) = if demo {
                tauri::async_runtime::block_on(demo::prepare())?
            } else {
                (Paths::from_env()?, std::env::vars().collect())
            };
            let host = tauri::async_runtime::block_on(Host::start(&paths, &env))?;
            let engine = host.engine.clone();
            if demo {
                demo::after_start(app.handle(), &engine);
            }
            links::start(app.handle(), &engine);
            let demo_root = demo.then(|| paths.data_dir.parent().map(|p| p.to_path_buf())).flatten();
            app.manage(AppState { engine: engine.clone(), paths, host: Mutex::new(Some(host)), demo_root });
            // Windows redraw when the engine says something changed; a click on a banner that
            // only the app can answer (a Run's card, the history) opens its window.
            let handle = app.handle().clone();
            let mut events = engine.subscribe();
            let clicked_engine = engine.clone();
            tauri::async_runtime::spawn(async move {
                loop {
                    match events.recv().await {
                        Ok(EngineEvent::Clicked { notice }) => {
                            let query = notice.item.strip_prefix("run:").map(|id| format!("run={id}"));
                            windows::open(&handle, windows::Page::History, query.as_deref());
                            let _ = clicked_engine.revealed(&notice.key).await;
                        }
                        Ok(EngineEvent::Changed) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                            let _ = handle.emit("changed", ());
                        }
                        Err(_) => return,
                    }
                }
            });
            #[cfg(target_os = "linux")]
            tauri::async_runtime::block_on(tray_linux::start(app.handle().clone(), engine))?;
            Ok(())
        })
        .build(tauri::generate_context!())
        .expect("the app's context is valid");
    app.run(|app, event| match event {
        // Closing the last window leaves the tray; only Quit (an exit code) ends the app.
        RunEvent::ExitRequested { api, code: None, .. } => api.prevent_exit(),
        RunEvent::Exit => {
            let state = app.state::<AppState>();
            let host = state.host.lock().unwrap_or_else(|p| p.into_inner()).take();
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
