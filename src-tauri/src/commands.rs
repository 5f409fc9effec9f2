//! What the app's pages may ask of the engine. No network access from a page: everything goes
//! through these.

use cmux_tray_engine::store::{Card, StoredNotice};
use cmux_tray_engine::view::TrayView;
use cmux_tray_engine::view::history::{HandoffCard, HistoryFilter, HistoryView};
use cmux_tray_engine::view::settings::{KeptIn, QuietWindowDraft, SettingsView};
use cmux_tray_engine::view::signin::SignInView;
use tauri::State;

use crate::AppState;

/// Why a command failed, in words the page shows as they are: the pages receive it as a
/// string (serialised as its message), Rust code builds it from any error.
#[derive(Debug)]
pub struct CommandError(String);

impl serde::Serialize for CommandError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl From<String> for CommandError {
    fn from(message: String) -> Self {
        CommandError(message)
    }
}

impl From<&str> for CommandError {
    fn from(message: &str) -> Self {
        CommandError(message.into())
    }
}

impl From<cmux_tray_engine::EngineError> for CommandError {
    fn from(e: cmux_tray_engine::EngineError) -> Self {
        failed(e)
    }
}

fn failed(e: impl std::fmt::Display) -> CommandError {
    CommandError(e.to_string())
}

#[tauri::command]
pub fn view(state: State<'_, AppState>) -> Result<TrayView, CommandError> {
    state.engine.tray_view().map_err(failed)
}

/// The history's rows (kind, relative time, why no banner, what a click opens) and follows,
/// narrowed by kind and a search.
#[tauri::command]
pub fn history_view(state: State<'_, AppState>, filter: HistoryFilter) -> Result<HistoryView, CommandError> {
    state.engine.history_view(&filter).map_err(failed)
}

/// A terminal's notice whose click could not reach its terminal, for its card.
#[tauri::command]
pub fn notice(state: State<'_, AppState>, key: String) -> Result<Option<StoredNotice>, CommandError> {
    state.engine.notice(&key).map_err(failed)
}

#[tauri::command]
pub fn card(state: State<'_, AppState>, run_id: String) -> Result<Option<Card>, CommandError> {
    state.engine.run_card(&run_id).map_err(failed)
}

#[tauri::command]
pub fn handoff_card(state: State<'_, AppState>, handoff_id: String) -> Result<HandoffCard, CommandError> {
    state.engine.handoff_card(&handoff_id).map_err(failed)
}

/// Every delivery setting in words, the quiet-hours windows, whether they are on now, the pause.
#[tauri::command]
pub fn settings_view(state: State<'_, AppState>) -> SettingsView {
    state.engine.settings_view()
}

/// The zones quiet hours may be read in.
#[tauri::command]
pub fn time_zones() -> Vec<String> {
    cmux_tray_engine::view::settings::time_zones()
}

/// Saves one setting to the config file, checked as `config set` checks it (the file is never
/// left unreadable), and applies it at once.
#[tauri::command]
pub fn set_setting(state: State<'_, AppState>, key: String, value: String) -> Result<(), CommandError> {
    cmux_tray_engine::config::set_in_file(&state.paths.config_file, &key, &value)?;
    state.engine.reload_delivery_settings();
    Ok(())
}

/// Saves the quiet-hours windows as the editor drew them.
#[tauri::command]
pub fn set_quiet_windows(state: State<'_, AppState>, windows: Vec<QuietWindowDraft>) -> Result<(), CommandError> {
    let value = cmux_tray_engine::view::settings::windows_value(&windows)?;
    set_setting(state, "delivery.quiet_hours.windows".into(), value)
}

/// Pauses banners: `hour`, `tomorrow` or `until-resumed`, as the tray's menu does.
#[tauri::command]
pub fn pause(state: State<'_, AppState>, how: cmux_tray_engine::policy::PauseFor) -> Result<(), CommandError> {
    state.engine.pause(how.until(&jiff::Zoned::now())?).map_err(failed)
}

#[tauri::command]
pub fn resume(state: State<'_, AppState>) -> Result<(), CommandError> {
    state.engine.resume().map_err(failed)
}

/// The history window shows this item's card to the person (focused), or nothing: the engine
/// treats it as looked at (marked read, no banner while shown).
#[tauri::command]
pub async fn viewing(state: State<'_, AppState>, item: Option<String>) -> Result<(), CommandError> {
    let item = item.filter(|i| i.starts_with("run:") || i.starts_with("handoff:"));
    state.engine.set_viewing(item.as_deref()).await.map_err(failed)
}

/// A notice opened from the history, as a click on its banner opens it.
#[tauri::command]
pub async fn open_notice(state: State<'_, AppState>, key: String) -> Result<bool, CommandError> {
    state.engine.open_notice(&key).await.map_err(failed)
}

#[tauri::command]
pub async fn mark_all_read(state: State<'_, AppState>) -> Result<usize, CommandError> {
    state.engine.mark_all_read().await.map_err(failed)
}

/// A device sign-in's code and page, with the waiting state in words.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignInStart {
    user_code: String,
    verification_url: String,
    waiting: SignInView,
}

#[tauri::command]
pub async fn sign_in_start(state: State<'_, AppState>) -> Result<SignInStart, CommandError> {
    let start = state.engine.device_start().await.map_err(failed)?;
    Ok(SignInStart {
        waiting: cmux_tray_engine::view::signin::waiting(start.expires_in_seconds),
        user_code: start.user_code,
        verification_url: start.verification_url,
    })
}

/// How the device sign-in ended: done, expired or refused, in words.
#[tauri::command]
pub async fn sign_in_wait(state: State<'_, AppState>) -> Result<SignInView, CommandError> {
    let result = state.engine.device_finish(None).await;
    Ok(cmux_tray_engine::engine::sign_in_ended(&result))
}

/// Opens the sign-in page in the browser (the page itself has no network access).
#[tauri::command]
pub async fn open_sign_in_page(state: State<'_, AppState>) -> Result<(), CommandError> {
    let url = state.engine.pending_device_url().ok_or("no sign-in under way")?;
    cmux_tray_engine::reveal::open_sign_in_page(&url).await.map_err(failed)
}

/// Whether the app opens at login (started with `--hidden`: the tray alone).
#[tauri::command]
pub fn open_at_login(app: tauri::AppHandle) -> Result<bool, CommandError> {
    Ok(crate::autostart::is_enabled(&app)?)
}

#[tauri::command]
pub fn set_open_at_login(app: tauri::AppHandle, enabled: bool) -> Result<(), CommandError> {
    Ok(crate::autostart::set(&app, enabled)?)
}

/// One setting outside `[delivery]`, for the settings window.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    key: &'static str,
    about: &'static str,
    /// As the config file says (empty: the default).
    value: String,
    /// What the running app uses (the environment may override the file; a change applies at
    /// the next start).
    in_force: String,
}

/// The cloud origins, the proxy and the local socket: as the file says, and as the running app
/// uses them.
#[tauri::command]
pub fn connection(state: State<'_, AppState>) -> Vec<Connection> {
    use cmux_tray_engine::config;
    config::EDITABLE
        .iter()
        .map(|(key, about)| {
            let in_force = match *key {
                "cloud.api_url" => state.engine.api_url().trim_end_matches('/').to_string(),
                "cloud.auth_url" => state.engine.auth_url().trim_end_matches('/').to_string(),
                "cloud.proxy" => state.engine.cloud_route(),
                "local.socket_path" => state.paths.socket().display().to_string(),
                _ => String::new(),
            };
            let value = config::get_in_file(&state.paths.config_file, key).unwrap_or_default();
            Connection { key, about, value, in_force }
        })
        .collect()
}

/// Where the log is, for the settings window.
#[tauri::command]
pub fn log_dir(state: State<'_, AppState>) -> String {
    state.paths.log_dir().display().to_string()
}

/// Opens another of the app's windows (the settings window's "Sign in…").
#[tauri::command]
pub fn open_window(app: tauri::AppHandle, page: String) -> Result<(), CommandError> {
    let page = crate::windows::Page::parse(&page).ok_or_else(|| format!("no window {page:?}"))?;
    crate::windows::open(&app, page, None);
    Ok(())
}

/// Quits and starts again (cloud origins and the socket path apply at start).
#[tauri::command]
pub fn restart(app: tauri::AppHandle) {
    app.restart();
}

/// The account, its teams and where its sign-in is kept, for the settings window.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    email: Option<String>,
    problem: Option<String>,
    team: Option<String>,
    teams: Vec<cmux_tray_engine::cloud::Team>,
    kept_in: Option<KeptIn>,
    /// Why the teams could not be listed.
    teams_error: Option<String>,
}

#[tauri::command]
pub async fn account(state: State<'_, AppState>) -> Result<Account, CommandError> {
    let status = state.engine.status().map_err(failed)?;
    let row = status.account;
    let (teams, teams_error) = match &row {
        Some(a) if a.problem.is_none() => match state.engine.teams().await {
            Ok(t) => (t, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        },
        _ => (Vec::new(), None),
    };
    Ok(Account {
        email: row.as_ref().map(|a| a.email.clone()),
        problem: row.as_ref().and_then(|a| a.problem.clone()),
        team: row.and_then(|a| a.team),
        teams,
        kept_in: state.engine.sign_in_kept_in(),
        teams_error,
    })
}

#[tauri::command]
pub async fn choose_team(state: State<'_, AppState>, team: String) -> Result<(), CommandError> {
    let team = cmux_tray_engine::cloud::TeamId::parse(&team).map_err(failed)?;
    state.engine.choose_team(team).await.map_err(failed)
}

#[tauri::command]
pub async fn sign_out(state: State<'_, AppState>) -> Result<(), CommandError> {
    state.engine.sign_out().await.map_err(failed)
}

/// The second way in: an access token pasted by hand (a service that issues API tokens). Kept
/// in memory only, like `CMUX_TRAY_TOKEN`: it has no refresh token to keep.
#[tauri::command]
pub async fn sign_in_with_token(state: State<'_, AppState>, token: String) -> Result<SignInView, CommandError> {
    let token = token.trim();
    if token.is_empty() {
        return Err("paste a token first".into());
    }
    let result = state.engine.sign_in_with_token(token.to_string().into(), None).await;
    Ok(cmux_tray_engine::engine::sign_in_ended(&result))
}
