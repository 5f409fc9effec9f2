//! What the app's pages may ask of the engine, answered: one typed call each
//! (`cmux_tray_channel::Call`, read by the windows process from the page's `invoke(name, args)`).
//! No network access from a page: everything goes through these. Which page may make which
//! call is the windows process's to check (each window's Tauri capability).

use cmux_tray_channel::Call;
use cmux_tray_engine::lang::say;
use cmux_tray_engine::notice::Item;
use cmux_tray_engine::setting_keys::Key;
use serde_json::{Value, json};

use crate::App;

fn to_value(value: impl serde::Serialize) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| e.to_string())
}

fn failed(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Answers the page's call from the engine; the error is in words the page shows.
pub async fn run(app: &App, call: Call) -> Result<Value, String> {
    use cmux_tray_engine::view::settings_page as settings;
    let engine = &app.engine;
    match call {
        Call::View {} => to_value(engine.tray_view().map_err(failed)?),
        Call::HistoryView { filter } => to_value(engine.history_view(&filter).map_err(failed)?),
        Call::Notice { key } => to_value(engine.notice(&key).map_err(failed)?),
        Call::Card { run_id } => to_value(engine.run_card(&run_id).map_err(failed)?),
        Call::HandoffCard { handoff_id } => to_value(engine.handoff_card(&handoff_id).map_err(failed)?),
        Call::SettingsView {} => {
            let mut view = to_value(engine.settings_view())?;
            // Whether this platform's installer updates itself (docs/configuration.md, "Updates").
            view["updateInstalls"] = json!(INSTALLS_UPDATES && engine.update_offered().is_some());
            Ok(view)
        }
        Call::TimeZones {} => to_value(settings::time_zones()),
        Call::SetSetting { key, value } => set_setting(app, &key, &value),
        Call::SetQuietWindows { windows } => {
            set_setting(app, Key::QuietWindows.as_str(), &settings::windows_value(&windows).map_err(failed)?)
        }
        Call::Pause { how } => {
            to_value(engine.pause(cmux_tray_engine::policy::pause_until(how, &jiff::Zoned::now()).map_err(failed)?).map_err(failed)?)
        }
        Call::Resume {} => to_value(engine.resume().map_err(failed)?),
        Call::MarkAllRead {} => to_value(engine.mark_all_read().await.map_err(failed)?),
        Call::OpenNotice { key } => to_value(engine.open_notice(&key).await.map_err(failed)?),
        Call::OpenItem { item } => to_value(engine.open_item(&Item::parse(&item).map_err(failed)?).await.map_err(failed)?),
        Call::Viewing { item } => {
            // Anything but a Run or a hand-off is looking at nothing.
            let item = item.and_then(|i| Item::parse(&i).ok()).filter(Item::is_cloud);
            to_value(engine.set_viewing(item.as_ref()).await.map_err(failed)?)
        }
        Call::SignInStart {} => {
            let start = engine.device_start().await.map_err(failed)?;
            Ok(json!({
                "userCode": start.user_code,
                "verificationUrl": start.verification_url,
                "waiting": engine.sign_in_waiting(start.expires_in_seconds),
            }))
        }
        Call::SignInWait {} => to_value(engine.sign_in_ended(&engine.device_finish(None).await)),
        Call::OpenSignInPage {} => {
            let url = engine.pending_device_url().ok_or("no sign-in under way")?;
            to_value(cmux_tray_engine::reveal::open_sign_in_page(&url).await.map_err(failed)?)
        }
        Call::OpenAtLogin {} => to_value(crate::autostart::is_enabled()?),
        Call::SetOpenAtLogin { enabled } => to_value(crate::autostart::set(enabled)?),
        Call::Connection {} => to_value(connection(app)),
        Call::LogDir {} => to_value(app.paths.log_dir().display().to_string()),
        Call::Restart {} => {
            app.restart();
            Ok(Value::Null)
        }
        Call::OpenWindow { page } => {
            app.windows.open(app, page, None);
            Ok(Value::Null)
        }
        Call::Account {} => account(app).await,
        Call::ChooseTeam { team } => {
            let team = cmux_tray_engine::cloud::TeamId::parse(&team).map_err(failed)?;
            to_value(engine.choose_team(team).await.map_err(failed)?)
        }
        Call::SignOut {} => to_value(engine.sign_out().await.map_err(failed)?),
        Call::SignInWithToken { token } => {
            let token = token.trim();
            if token.is_empty() {
                return Err("paste a token first".into());
            }
            to_value(engine.sign_in_ended(&engine.sign_in_with_token(token.to_string().into(), None).await))
        }
        Call::PageWords {} => Ok(json!({
            "language": engine.lang().language(),
            "locale": engine.lang().dates().locale().to_string(),
            "words": engine.lang().page_words(),
        })),
        Call::Languages {} => Ok(languages(app)),
        Call::InstallUpdate {} => {
            let lang = engine.lang();
            if !INSTALLS_UPDATES {
                return Err(say!(lang, "update-by-package-manager"));
            }
            let (feed, _) = engine.update_offered().ok_or_else(|| say!(lang, "update-none"))?;
            if !app.windows.install(feed.to_string(), engine.proxy_for_update(&feed)) {
                return Err(say!(lang, "update-no-window"));
            }
            Ok(Value::Null)
        }
        Call::Quit {} => {
            // Answered first: the installer waits for this answer, then for the tray to end.
            let quit = app.quit.clone();
            app.spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                quit.cancel();
            });
            Ok(Value::Null)
        }
    }
}

fn set_setting(app: &App, key: &str, value: &str) -> Result<Value, String> {
    cmux_tray_engine::config::set_in_file(&app.paths.config_file, key, value).map_err(failed)?;
    app.engine.reload_delivery_settings();
    Ok(Value::Null)
}

/// One setting outside `[delivery]`, for the settings window.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Connection {
    key: Key,
    about: String,
    /// As the config file says (empty: the default).
    value: String,
    /// What the running app uses (the environment may override the file; a change applies at
    /// the next start).
    in_force: String,
}

/// Whether the windows process installs updates here: the macOS and Windows installers update
/// themselves (tauri-plugin-updater); Linux packages update through the package manager.
const INSTALLS_UPDATES: bool = cfg!(any(target_os = "macos", windows));

/// The choice of languages: the system's (named in its own language) first, then each the
/// catalogue speaks, by its own name.
fn languages(app: &App) -> Value {
    use cmux_tray_engine::lang::{Language, SystemLocale};
    let system = SystemLocale::from_env().language.unwrap_or(Language::English);
    let lang = app.engine.lang();
    let mut choices = vec![json!({ "code": "", "label": say!(lang, "language-system", language = system.own_name()) })];
    choices.extend(Language::ALL.iter().map(|l| json!({ "code": l.as_str(), "label": l.own_name() })));
    let chosen = cmux_tray_engine::config::get_in_file(&app.paths.config_file, Key::Language.as_str()).unwrap_or_default();
    json!({ "key": Key::Language, "chosen": chosen, "choices": choices })
}

/// The settings the declaration places under "Advanced", each with its label in the person's
/// language.
fn connection(app: &App) -> Vec<Connection> {
    use cmux_tray_engine::setting_keys::{Place, SETTINGS};
    let lang = app.engine.lang();
    SETTINGS
        .iter()
        .filter(|s| s.place == Place::Advanced)
        .map(|s| {
            let key = s.key;
            let about = s.label.map(|id| lang.say(id, None)).unwrap_or_else(|| key.to_string());
            let in_force = match key {
                Key::ApiUrl => app.engine.api_url().trim_end_matches('/').to_string(),
                Key::AuthUrl => app.engine.auth_url().trim_end_matches('/').to_string(),
                Key::Proxy => app.engine.cloud_route(),
                Key::SocketPath => app.paths.socket().display().to_string(),
                _ => String::new(),
            };
            let value = cmux_tray_engine::config::get_in_file(&app.paths.config_file, key.as_str()).unwrap_or_default();
            Connection { key, about, value, in_force }
        })
        .collect()
}

/// The account, its teams and where its sign-in is kept, for the settings window.
async fn account(app: &App) -> Result<Value, String> {
    let status = app.engine.status().map_err(failed)?;
    let row = status.account;
    let (teams, teams_error) = match &row {
        Some(a) if a.problem.is_none() => match app.engine.teams().await {
            Ok(t) => (t, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        },
        _ => (Vec::new(), None),
    };
    Ok(json!({
        "email": row.as_ref().map(|a| a.email.clone()),
        "problem": row.as_ref().and_then(|a| a.problem.as_ref()).map(|p| p.headline(app.engine.lang())),
        "team": row.and_then(|a| a.team),
        "teams": teams,
        "keptIn": app.engine.sign_in_kept_in(),
        "teamsError": teams_error,
    }))
}
