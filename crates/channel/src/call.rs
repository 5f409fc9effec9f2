//! What a page may ask of the tray: one typed request each, with its arguments as the pages
//! name them (camelCase). The windows process reads a page's `invoke(name, args)` into a
//! [`Call`] before it reaches the channel (a name or argument no call has is refused there, by
//! name), and the tray answers it from the engine with a `Result` ([`crate::FromTray::Answer`]).
//! Which page may make which call is the windows process's to check (each window's Tauri
//! capability, `src-tauri/capabilities/`).

use serde::{Deserialize, Serialize};

use crate::page::Page;

/// One call; on the line its `command` (snake_case) and its `args`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", content = "args", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Call {
    View {},
    /// The history's rows and follows, narrowed by kind and a search.
    HistoryView {
        filter: HistoryFilter,
    },
    /// A terminal's notice whose click could not reach its terminal, for its card.
    Notice {
        key: String,
    },
    Card {
        run_id: String,
    },
    HandoffCard {
        handoff_id: String,
    },
    SettingsView {},
    /// The zones quiet hours may be read in.
    TimeZones {},
    /// One setting saved to the config file, checked as `config set` checks it, applied at once.
    SetSetting {
        key: String,
        value: String,
    },
    SetQuietWindows {
        windows: Vec<QuietWindowDraft>,
    },
    /// As the tray's menu offers.
    Pause {
        how: PauseFor,
    },
    Resume {},
    MarkAllRead {},
    /// A notice opened from the history, as a click on its banner opens it.
    OpenNotice {
        key: String,
    },
    /// A followed item (`run:<id>`, `handoff:<id>`) opened as the tray's line for it opens it:
    /// false when nothing was told about it yet (the page shows its card).
    OpenItem {
        item: String,
    },
    /// The history shows this item's card to the person (focused), or nothing.
    Viewing {
        item: Option<String>,
    },
    SignInStart {},
    SignInWait {},
    OpenSignInPage {},
    OpenAtLogin {},
    SetOpenAtLogin {
        enabled: bool,
    },
    /// The cloud origins, the proxy and the local socket: as the file says and as in force.
    Connection {},
    LogDir {},
    Restart {},
    /// Another of the app's windows (the settings window's "Sign in…").
    OpenWindow {
        page: Page,
    },
    Account {},
    ChooseTeam {
        team: String,
    },
    SignOut {},
    /// An access token pasted by hand; kept in memory only, like `CMUX_TRAY_TOKEN`.
    SignInWithToken {
        token: String,
    },
    /// The pages' words in the person's language, and the locale their numbers and dates are
    /// said in (the tray sends them with every window it asks for; a page may ask again).
    PageWords {},
    /// The languages to choose from, and the one chosen (empty: the system's).
    Languages {},
    /// Install the newer version the release feed offers, where the installers update
    /// themselves (macOS, Windows); on Linux the package manager does.
    InstallUpdate {},
    /// The tray quits (asked by the windows process before an installer replaces it).
    Quit {},
}

impl Call {
    /// A page's `invoke(command, args)` as its call; `Null` arguments are none. The error names
    /// the command and what was wrong with its arguments (never their values).
    pub fn read(command: &str, args: serde_json::Value) -> Result<Call, String> {
        let args = if args.is_null() { serde_json::json!({}) } else { args };
        serde_json::from_value(serde_json::json!({ "command": command, "args": args })).map_err(|e| format!("{command}: {e}"))
    }

    /// Its command's name, as the page and the log say it.
    pub fn command(&self) -> String {
        serde_json::to_value(self).ok().and_then(|v| v["command"].as_str().map(String::from)).unwrap_or_default()
    }
}

/// What kind of notice a history row is, as the history's icons and filter name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoticeKind {
    Run,
    Handoff,
    Terminal,
    App,
}

impl NoticeKind {
    pub const ALL: [NoticeKind; 4] = [NoticeKind::Run, NoticeKind::Handoff, NoticeKind::Terminal, NoticeKind::App];
}

/// What the person narrowed the history to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryFilter {
    /// One kind, or every kind.
    #[serde(default)]
    pub kind: Option<NoticeKind>,
    /// Words the title or body holds (any case); empty matches all.
    #[serde(default)]
    pub query: String,
}

/// A quiet-hours window as the settings' editor sends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuietWindowDraft {
    pub days: [bool; 7],
    pub from: String,
    pub to: String,
}

/// The pauses the tray menu and the settings window offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PauseFor {
    Hour,
    /// Until the morning hour tomorrow (the engine's `policy::MORNING_HOUR`).
    Tomorrow,
    UntilResumed,
}
