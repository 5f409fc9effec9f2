//! What the app's pages may ask of the engine. No network access from a page: everything goes
//! through these.

use cmux_tray_engine::outbox::Card;
use cmux_tray_engine::policy::settings as delivery;
use cmux_tray_engine::view::TrayView;
use cmux_tray_engine::Status;
use tauri::State;

use crate::AppState;

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

#[tauri::command]
pub fn view(state: State<'_, AppState>) -> Result<TrayView, String> {
    state.engine.tray_view().map_err(text)
}

#[tauri::command]
pub fn history(state: State<'_, AppState>) -> Result<Status, String> {
    state.engine.status().map_err(text)
}

#[tauri::command]
pub fn card(state: State<'_, AppState>, run_id: String) -> Result<Option<Card>, String> {
    state.engine.outbox().card(&run_id).map_err(text)
}

/// Every delivery setting and its value in force, in the order `config get` lists them.
#[tauri::command]
pub fn settings(state: State<'_, AppState>) -> Vec<(String, String)> {
    let s = state.engine.delivery_settings();
    delivery::KEYS.iter().filter_map(|(k, _)| delivery::get(&s, k).map(|v| (k.to_string(), v))).collect()
}

/// Saves one setting to the config file (checked first; the file is never left unreadable) and
/// applies it at once.
#[tauri::command]
pub fn set_setting(state: State<'_, AppState>, key: String, value: String) -> Result<(), String> {
    delivery::set_in_file(&state.paths.config_file, &key, &value)?;
    state.engine.reload_delivery_settings();
    Ok(())
}

#[tauri::command]
pub async fn mark_all_read(state: State<'_, AppState>) -> Result<usize, String> {
    state.engine.mark_all_read().await.map_err(text)
}

#[tauri::command]
pub async fn sign_in_start(state: State<'_, AppState>) -> Result<cmux_tray_engine::cloud::auth::DeviceStart, String> {
    state.engine.device_start().await.map_err(text)
}

#[tauri::command]
pub async fn sign_in_wait(state: State<'_, AppState>) -> Result<String, String> {
    state.engine.device_finish(None).await.map(|me| me.email).map_err(text)
}

/// Opens the sign-in page in the browser (the page itself has no network access).
#[tauri::command]
pub async fn open_sign_in_page(state: State<'_, AppState>) -> Result<(), String> {
    let start = state.engine.pending_device_url().ok_or("no sign-in under way")?;
    std::process::Command::new("xdg-open").arg(start).spawn().map(drop).map_err(text)
}

/// Whether the app opens at login (tauri-plugin-autostart; started with `--hidden`).
#[tauri::command]
pub fn open_at_login(app: tauri::AppHandle) -> Result<bool, String> {
    use tauri_plugin_autostart::ManagerExt;
    app.autolaunch().is_enabled().map_err(text)
}

#[tauri::command]
pub fn set_open_at_login(app: tauri::AppHandle, enabled: bool) -> Result<(), String> {
    use tauri_plugin_autostart::ManagerExt;
    let launch = app.autolaunch();
    if enabled { launch.enable() } else { launch.disable() }.map_err(text)
}

/// Where things are, for the settings window: the API and auth origins, the socket.
#[tauri::command]
pub fn about(state: State<'_, AppState>) -> Vec<(String, String)> {
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let settings = cmux_tray_engine::config::Settings::load(&state.paths.config_file, &env).ok();
    let mut rows = vec![("local socket".to_string(), state.paths.socket().display().to_string())];
    if let Some(s) = settings {
        rows.insert(0, ("auth URL (cloud.auth_url)".into(), s.auth_url));
        rows.insert(0, ("API URL (cloud.api_url)".into(), s.api_url));
    }
    rows.push(("log".into(), state.paths.log_dir().display().to_string()));
    rows
}
