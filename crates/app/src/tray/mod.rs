//! The tray: one menu, drawn from the engine's `TrayView`, and the actions its items run. One
//! renderer a platform draws it, with no toolkit of the windows': `sni`, a StatusNotifierItem
//! of our own over D-Bus (ksni) on Linux, where the appindicator tray delivers no left click;
//! `native`, tray-icon on tao's event loop, on macOS and Windows. Neither holds a rule of its
//! own: what an item says and does is decided here.

use std::sync::Arc;

use cmux_tray_channel::Page;
use cmux_tray_engine::lang::Lang;
use cmux_tray_engine::lang::say;
use cmux_tray_engine::notice::Item;
use cmux_tray_engine::policy::{PauseFor, pause_until};
use cmux_tray_engine::view::{Icon, TrayView};

use crate::App;

#[cfg(target_os = "linux")]
mod host;
#[cfg(any(target_os = "macos", windows))]
mod native;
#[cfg(target_os = "linux")]
mod sni;

/// One line of the menu.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    Action { action: Action, label: String },
    Disabled(String),
    Sub { label: String, entries: Vec<Entry> },
    Separator,
}

/// What a menu item does.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    SignIn,
    SignOut,
    /// A followed item (`run:<id>`, `handoff:<id>`): its tab, a workspace on its host, or its card.
    OpenItem(Item),
    /// A notice, as a click on its banner opens it.
    OpenNotice(String),
    /// The team whose Runs and hand-offs are followed.
    ChooseTeam(String),
    MarkAllRead,
    PauseHour,
    PauseTomorrow,
    Resume,
    Settings,
    History,
    /// The log folder in the file manager (About).
    OpenLogFolder,
    Quit,
}

// tray-icon's menus carry string ids; ksni's items carry the action itself.
#[cfg(any(target_os = "macos", windows, test))]
impl Action {
    /// A menu item id.
    pub fn id(&self) -> String {
        match self {
            Action::OpenItem(item) => format!("item:{item}"),
            Action::OpenNotice(key) => format!("notice:{key}"),
            Action::ChooseTeam(team) => format!("team:{team}"),
            other => format!("{other:?}"),
        }
    }

    pub fn from_id(id: &str) -> Option<Action> {
        if let Some(item) = id.strip_prefix("item:") {
            return Item::parse(item).ok().map(Action::OpenItem);
        }
        if let Some(key) = id.strip_prefix("notice:") {
            return Some(Action::OpenNotice(key.into()));
        }
        if let Some(team) = id.strip_prefix("team:") {
            return Some(Action::ChooseTeam(team.into()));
        }
        use Action::*;
        [SignIn, SignOut, MarkAllRead, PauseHour, PauseTomorrow, Resume, Settings, History, OpenLogFolder, Quit]
            .into_iter()
            .find(|a| a.id() == id)
    }
}

impl Action {
    /// Runs the action; engine calls go off the tray's own thread.
    pub fn run(self, app: &Arc<App>) {
        let engine = app.engine.clone();
        match self {
            Action::SignIn => app.windows.open(app, Page::SignIn, None),
            Action::SignOut => app.spawn(async move {
                if let Err(e) = engine.sign_out().await {
                    tracing::error!("signing out: {e}");
                }
            }),
            Action::OpenItem(item) => {
                let app = app.clone();
                app.clone().spawn(async move {
                    match engine.open_item(&item).await {
                        Ok(true) => {}
                        Ok(false) => crate::windows_process::open_item(&app, &item), // nothing told yet: its card
                        Err(e) => tracing::warn!("opening {item}: {e}"),
                    }
                })
            }
            Action::OpenNotice(key) => crate::windows_process::open_notice(app, key),
            Action::ChooseTeam(team) => app.spawn(async move {
                let chosen = match cmux_tray_engine::cloud::TeamId::parse(&team) {
                    Ok(id) => engine.choose_team(id).await.map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                };
                if let Err(e) = chosen {
                    tracing::warn!("choosing team {team}: {e}");
                }
            }),
            Action::MarkAllRead => app.spawn(async move {
                if let Err(e) = engine.mark_all_read().await {
                    tracing::warn!("marking all read: {e}");
                }
            }),
            Action::PauseHour => pause(&engine, PauseFor::Hour),
            Action::PauseTomorrow => pause(&engine, PauseFor::Tomorrow),
            Action::Resume => {
                if let Err(e) = engine.resume() {
                    tracing::warn!("resuming: {e}");
                }
            }
            Action::Settings => app.windows.open(app, Page::Settings, None),
            Action::History => app.windows.open(app, Page::History, None),
            Action::OpenLogFolder => {
                let logs = app.paths.log_dir();
                app.spawn(async move {
                    if let Err(e) = cmux_tray_engine::reveal::open_folder(&logs).await {
                        tracing::warn!("opening {}: {e}", logs.display());
                    }
                })
            }
            Action::Quit => app.quit(),
        }
    }
}

fn pause(engine: &cmux_tray_engine::Engine, how: PauseFor) {
    let paused = pause_until(how, &jiff::Zoned::now()).and_then(|until| engine.pause(until).map_err(|e| e.to_string()));
    if let Err(e) = paused {
        tracing::warn!("pausing: {e}");
    }
}

/// What About says: the version, the licence, where the logs are.
pub struct About {
    pub version: &'static str,
    pub licence: &'static str,
    pub log_dir: String,
}

impl About {
    pub fn of(app: &App) -> About {
        About { version: env!("CARGO_PKG_VERSION"), licence: env!("CARGO_PKG_LICENSE"), log_dir: app.paths.log_dir().display().to_string() }
    }
}

/// The menu for this view.
pub fn entries(lang: &Lang, v: &TrayView, about: &About) -> Vec<Entry> {
    let action = |action: Action, label: &str| Entry::Action { action, label: label.into() };
    let mut menu = Vec::new();
    if v.signed_in {
        let mut account = Vec::new();
        if !v.teams.is_empty() {
            account.push(Entry::Disabled(say!(lang, "menu-team")));
            for t in &v.teams {
                let label = if t.chosen { format!("✓ {}", t.label) } else { format!("   {}", t.label) };
                account.push(action(Action::ChooseTeam(t.id.clone()), &label));
            }
            account.push(Entry::Separator);
        }
        account.push(action(Action::SignOut, &say!(lang, "menu-sign-out")));
        menu.push(Entry::Sub { label: v.account.clone(), entries: account });
    } else {
        menu.push(action(Action::SignIn, &v.account));
    }
    // A problem is one short line; what the library said is behind it, and whole in the log.
    menu.extend(v.problems.iter().map(|p| match &p.why {
        Some(why) => Entry::Sub {
            label: format!("⚠ {}", p.line),
            entries: vec![
                Entry::Disabled(say!(lang, "menu-why", why = why.as_str())),
                action(Action::OpenLogFolder, &say!(lang, "menu-open-log-folder")),
            ],
        },
        None => Entry::Disabled(format!("⚠ {}", p.line)),
    }));
    menu.extend(v.notes.iter().map(|n| Entry::Disabled(n.clone())));
    menu.push(Entry::Separator);
    let follows = if v.follows.is_empty() {
        vec![Entry::Disabled(say!(lang, "menu-nothing-followed"))]
    } else {
        v.follows.iter().map(|f| action(Action::OpenItem(f.item.clone()), &f.label)).collect()
    };
    menu.push(Entry::Sub { label: say!(lang, "menu-following", n = v.follows.len()), entries: follows });
    menu.push(Entry::Separator);
    menu.push(Entry::Disabled(if v.unread > 0 {
        say!(lang, "menu-last-notices-unread", n = v.unread)
    } else {
        say!(lang, "menu-last-notices")
    }));
    for n in &v.notices {
        let label = if n.unread { format!("● {}", n.label) } else { format!("   {}", n.label) };
        menu.push(action(Action::OpenNotice(n.key.clone()), &label));
    }
    menu.push(action(Action::MarkAllRead, &say!(lang, "menu-mark-all-read")));
    menu.push(Entry::Separator);
    let mut pause =
        vec![action(Action::PauseHour, &say!(lang, "menu-pause-hour")), action(Action::PauseTomorrow, &say!(lang, "menu-pause-tomorrow"))];
    if v.paused.is_some() {
        pause.push(action(Action::Resume, &say!(lang, "menu-resume")));
    }
    let pause_label = v.paused.clone().unwrap_or_else(|| say!(lang, "menu-pause"));
    menu.push(Entry::Sub { label: pause_label, entries: pause });
    menu.push(action(Action::Settings, &say!(lang, "menu-settings")));
    menu.push(Entry::Sub {
        label: say!(lang, "menu-about"),
        entries: vec![
            Entry::Disabled(say!(lang, "menu-version", version = about.version)),
            Entry::Disabled(say!(lang, "menu-licence", licence = about.licence)),
            Entry::Disabled(say!(lang, "menu-logs", dir = about.log_dir.as_str())),
            action(Action::OpenLogFolder, &say!(lang, "menu-open-log-folder")),
        ],
    });
    menu.push(Entry::Separator);
    menu.push(action(Action::Quit, &say!(lang, "menu-quit")));
    menu
}

/// The tray icon for a state (icons/tray-*.png, 32×32).
fn icon_png(icon: Icon) -> &'static [u8] {
    match icon {
        Icon::Problem => include_bytes!("../../../../icons/tray-problem.png"),
        Icon::SignedOut => include_bytes!("../../../../icons/tray-signed-out.png"),
        Icon::Paused => include_bytes!("../../../../icons/tray-paused.png"),
        Icon::Unread => include_bytes!("../../../../icons/tray-unread.png"),
        Icon::Following => include_bytes!("../../../../icons/tray-following.png"),
        Icon::Idle => include_bytes!("../../../../icons/tray-idle.png"),
    }
}

/// A state's icon decoded: width, height and RGBA pixels.
pub struct Pixels {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

pub fn icon_pixels(icon: Icon) -> anyhow::Result<Pixels> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(icon_png(icon)));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16 | png::Transformations::ALPHA);
    let mut reader = decoder.read_info()?;
    let mut rgba = vec![0; reader.output_buffer_size().ok_or_else(|| anyhow::anyhow!("the {icon:?} icon is too large"))?];
    let frame = reader.next_frame(&mut rgba)?;
    anyhow::ensure!(frame.color_type == png::ColorType::Rgba, "the {icon:?} icon decodes to {:?}, not RGBA", frame.color_type);
    rgba.truncate(frame.buffer_size());
    Ok(Pixels { width: frame.width, height: frame.height, rgba })
}

/// The tooltip: the account, the unread count, the problems.
pub fn tooltip(lang: &Lang, v: &TrayView) -> String {
    let mut lines = vec![v.account.clone()];
    if v.unread > 0 {
        lines.push(say!(lang, "menu-unread", n = v.unread));
    }
    lines.extend(v.problems.iter().map(|p| p.line.clone()));
    lines.extend(v.notes.iter().cloned());
    lines.join("\n")
}

/// Publishes the tray, keeps it in step with the engine and runs until Quit; then `stop`.
/// On macOS and Windows the tray's event loop takes this (the main) thread.
pub fn run(runtime: tokio::runtime::Runtime, app: Arc<App>, stop: impl FnOnce(&tokio::runtime::Runtime) + 'static) {
    #[cfg(target_os = "linux")]
    {
        let published = runtime.block_on(sni::start(app.clone()));
        if let Err(e) = &published {
            tracing::error!("the tray: {e:#}");
        }
        if published.is_ok() {
            runtime.block_on(app.quit.cancelled());
        }
        stop(&runtime);
        if let Err(e) = published {
            crate::cannot_start(&format!(
                "no desktop session to show the tray in (its D-Bus session bus: {e:#}); `cmux-tray daemon` runs the engine without a tray"
            ));
        }
    }
    #[cfg(any(target_os = "macos", windows))]
    native::run(runtime, app, stop);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_survives_its_menu_id() {
        let all = [
            Action::SignIn,
            Action::SignOut,
            Action::OpenItem(Item::parse("run:run_0123456789abcdef0123").unwrap()),
            Action::OpenNotice("handoff:ho_0123456789abcdef0123:2:done".into()),
            Action::ChooseTeam("team_0123456789abcdef0123".into()),
            Action::MarkAllRead,
            Action::PauseHour,
            Action::PauseTomorrow,
            Action::Resume,
            Action::Settings,
            Action::History,
            Action::OpenLogFolder,
            Action::Quit,
        ];
        for a in all {
            assert_eq!(Action::from_id(&a.id()), Some(a.clone()), "{}", a.id());
        }
        assert_eq!(Action::from_id("Nonsense"), None);
    }

    #[test]
    fn every_state_has_an_icon_that_decodes() {
        for icon in [Icon::Problem, Icon::SignedOut, Icon::Paused, Icon::Unread, Icon::Following, Icon::Idle] {
            let pixels = icon_pixels(icon).expect("a PNG");
            assert_eq!((pixels.width, pixels.height, pixels.rgba.len()), (32, 32, 32 * 32 * 4), "{icon:?}");
        }
    }
}
