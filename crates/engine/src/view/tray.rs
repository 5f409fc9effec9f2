//! The tray menu, derived from the engine's status: the icon's state, the
//! account line, the follows, the last notices with their unread marks. Pure; never draws.
//! The shells (the Tauri tray, the Linux StatusNotifierItem) render this and nothing else, so
//! every platform shows the same thing.

use serde::Serialize;

use jiff::tz::TimeZone;

use crate::lang::Lang;
use crate::lang::say;
use crate::notice::Item;
use crate::status::Status;
use crate::store::{FollowKind, NoticeState};

/// The icon's state, most pressing first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Icon {
    /// Something is wrong: the account needs a sign-in, a setting is bad.
    Problem,
    SignedOut,
    Paused,
    Unread,
    Following,
    Idle,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MenuFollow {
    pub label: String,
    /// `run:<id>` or `handoff:<id>`: what a click opens.
    pub item: Item,
}

/// A team of the account, to choose from the menu.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MenuTeam {
    pub id: String,
    pub label: String,
    pub chosen: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MenuNotice {
    pub label: String,
    pub unread: bool,
    pub key: String,
}

/// The tray menu's content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrayView {
    pub icon: Icon,
    /// "ada@example.com — Personal", "Sign in…", or "Sign in again (ada@example.com)".
    pub account: String,
    pub signed_in: bool,
    /// The account's teams when it has more than one (to choose from).
    pub teams: Vec<MenuTeam>,
    /// "Notifications paused (until 14:00)", while paused.
    pub paused: Option<String>,
    pub follows: Vec<MenuFollow>,
    pub notices: Vec<MenuNotice>,
    pub unread: usize,
    /// One short line per problem, with why when there is more to say.
    pub problems: Vec<MenuProblem>,
    /// Lines worth saying that are no problem (the sign-in kept in a file, not the keyring).
    pub notes: Vec<String>,
}

/// The line that says a newer version is out (docs/configuration.md, "Updates").
pub fn available(lang: &Lang, version: &str) -> String {
    say!(lang, "update-available", version = version)
}

/// A problem as the menu says it: a short line, and why (the library's words, cut) behind it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MenuProblem {
    pub line: String,
    pub why: Option<String>,
}

/// The longest "why" a menu shows (the whole is in `status` and the log).
pub const MENU_WHY: usize = 160;

/// How many follows and notices a menu lists at most (the rest are in the history window).
pub const MENU_FOLLOWS: usize = 8;
pub const MENU_NOTICES: usize = 8;
/// How long a menu line may be (a tray menu as wide as the screen helps nobody).
pub const MENU_LABEL: usize = 64;

pub fn tray_view(lang: &Lang, status: &Status, now_ms: i64, tz: &TimeZone) -> TrayView {
    let account_problem = status.account.as_ref().and_then(|a| a.problem.clone());
    // The team in use: the one chosen, else the personal one (the cloud's default).
    let chosen = status.account.as_ref().and_then(|a| a.team.clone()).or_else(|| status.teams.first().map(|t| t.id.to_string()));
    let team_name = status.teams.iter().find(|t| Some(t.id.as_str()) == chosen.as_deref()).map(|t| t.display_name.clone());
    let (account, signed_in) = match &status.account {
        None => (say!(lang, "menu-sign-in"), false),
        Some(a) if a.problem.is_some() => (say!(lang, "menu-sign-in-again", email = a.email.as_str()), false),
        Some(a) => (
            team_name.map(|t| say!(lang, "menu-account-team", email = a.email.as_str(), team = t)).unwrap_or_else(|| a.email.clone()),
            true,
        ),
    };
    let teams = if signed_in && status.teams.len() > 1 {
        status
            .teams
            .iter()
            .map(|t| MenuTeam { id: t.id.to_string(), label: t.display_name.clone(), chosen: Some(t.id.as_str()) == chosen.as_deref() })
            .collect()
    } else {
        Vec::new()
    };
    let follows: Vec<MenuFollow> = status
        .follows
        .iter()
        .filter(|f| f.ended_at.is_none())
        .filter_map(|f| Some((f, f.item()?)))
        .take(MENU_FOLLOWS)
        .map(|(f, item)| MenuFollow {
            label: match (&f.title, f.kind) {
                (Some(title), _) => crate::text::cut(title, MENU_LABEL),
                (None, FollowKind::Run) => say!(lang, "menu-run", id = short(&f.id)),
                (None, FollowKind::Handoff) => say!(lang, "menu-handoff", id = short(&f.id)),
            },
            item,
        })
        .collect();
    let shown: Vec<_> = status.notices.iter().filter(|n| n.state == NoticeState::Told).collect();
    let unread = shown.iter().filter(|n| n.read_at.is_none()).count();
    let notices = shown
        .iter()
        .take(MENU_NOTICES)
        .map(|n| MenuNotice {
            label: crate::text::cut(&if n.body.is_empty() { n.title.clone() } else { format!("{} — {}", n.title, n.body) }, MENU_LABEL),
            unread: n.read_at.is_none(),
            key: n.key.clone(),
        })
        .collect();
    // Each problem's line in the person's language, its whole story (English, with what a
    // library said) behind "Why".
    let said = |line: String, whole: String| MenuProblem { why: (line != whole).then(|| crate::text::cut(&whole, MENU_WHY)), line };
    let mut problems: Vec<MenuProblem> = account_problem.map(|p| said(p.headline(lang), p.to_string())).into_iter().collect();
    problems.extend(status.problems.iter().map(|p| said(p.headline(lang), p.to_string())));
    let icon = if !problems.is_empty() {
        Icon::Problem
    } else if !signed_in && follows.is_empty() {
        Icon::SignedOut
    } else if status.paused.is_some() {
        Icon::Paused
    } else if unread > 0 {
        Icon::Unread
    } else if !follows.is_empty() {
        Icon::Following
    } else {
        Icon::Idle
    };
    let in_file = status.sign_in_note.as_ref().map(|_| say!(lang, "sign-in-in-file"));
    let notes = in_file.into_iter().chain(status.update_available.as_ref().map(|v| available(lang, v))).collect();
    let paused_until = status.paused_until.as_deref().and_then(|t| t.parse::<jiff::Timestamp>().ok());
    let paused = match (paused_until, status.paused_indefinitely) {
        (Some(t), _) => Some(say!(lang, "menu-paused", until = super::times::until(lang, t.as_millisecond(), now_ms, tz))),
        (None, true) => Some(say!(lang, "menu-paused-until-resumed")),
        (None, false) => None,
    };
    TrayView { icon, account, signed_in, teams, paused, follows, notices, unread, problems, notes }
}

/// `run_0123…cdef` → the last 6 hex digits, enough to tell items apart in a menu.
pub(crate) fn short(id: &str) -> String {
    let tail: String = id.chars().rev().take(6).collect::<Vec<_>>().into_iter().rev().collect();
    format!("…{tail}")
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::store::{AccountRow, FollowRow, StoredNotice};

    fn account(problem: Option<crate::store::AccountProblem>) -> AccountRow {
        AccountRow { user_id: "u".into(), email: "ada@example.com".into(), team: None, signed_in_at: 0, problem }
    }

    pub(crate) fn follow(id: &str) -> FollowRow {
        FollowRow {
            kind: FollowKind::Run,
            id: id.into(),
            account: "u".into(),
            cursor: 0,
            started_at: 0,
            changed_at: 0,
            made_here: true,
            ended_at: None,
            end_reason: None,
            title: None,
        }
    }

    pub(crate) fn notice(key: &str, read: bool) -> StoredNotice {
        StoredNotice {
            seq: 1,
            key: key.into(),
            item: crate::notice::Item::parse("run:run_0123456789abcdef0123").unwrap(),
            status: crate::notice::NoticeStatus::Run(crate::cloud::Outcome::Finished),
            title: "Fix the test".into(),
            body: "Run finished".into(),
            urgent: false,
            created_at: 0,
            state: NoticeState::Told,
            told_at: Some(1),
            banner_id: Some(1),
            read_at: read.then_some(2),
            cmux_id: None,
            subtitle: String::new(),
            workspace_id: None,
            surface_id: None,
            delivery: Some(crate::policy::Reason::Shown),
            sound: false,
            session_id: None,
            local_body: None,
            host: None,
            failure: None,
            place: None,
            reveal_note: None,
        }
    }

    #[test]
    fn the_icon_shows_the_most_pressing_state() {
        let mut s = Status::default();
        assert_eq!(tray_view(&Lang::english(), &s, 0, &TimeZone::UTC).icon, Icon::SignedOut);
        assert_eq!(tray_view(&Lang::english(), &s, 0, &TimeZone::UTC).account, "Sign in…");
        s.account = Some(account(None));
        assert_eq!(tray_view(&Lang::english(), &s, 0, &TimeZone::UTC).icon, Icon::Idle);
        assert_eq!(tray_view(&Lang::english(), &s, 0, &TimeZone::UTC).account, "ada@example.com");
        let team = |id: &str, name: &str| crate::cloud::Team {
            id: crate::cloud::TeamId::parse(id).unwrap(),
            display_name: name.into(),
            kind: "stack".into(),
        };
        s.teams = vec![team("team_00000000000000000001", "Personal"), team("team_00000000000000000002", "Platform")];
        let v = tray_view(&Lang::english(), &s, 0, &TimeZone::UTC);
        assert_eq!(v.account, "ada@example.com — Personal", "no team chosen: the personal one");
        assert_eq!(v.teams.iter().map(|t| (t.label.as_str(), t.chosen)).collect::<Vec<_>>(), [("Personal", true), ("Platform", false)]);
        s.account.as_mut().unwrap().team = Some("team_00000000000000000002".into());
        assert_eq!(tray_view(&Lang::english(), &s, 0, &TimeZone::UTC).account, "ada@example.com — Platform");
        s.teams.truncate(1);
        assert!(tray_view(&Lang::english(), &s, 0, &TimeZone::UTC).teams.is_empty(), "one team: nothing to choose");
        s.follows = vec![follow("run_0123456789abcdef0123")];
        assert_eq!(tray_view(&Lang::english(), &s, 0, &TimeZone::UTC).icon, Icon::Following);
        assert_eq!(tray_view(&Lang::english(), &s, 0, &TimeZone::UTC).follows[0].label, "Run …ef0123");
        s.follows[0].title = Some("Fix the flaky login test, which has failed on every third run of the nightly build".into());
        let label = &tray_view(&Lang::english(), &s, 0, &TimeZone::UTC).follows[0].label;
        assert!(label.starts_with("Fix the flaky login test") && label.chars().count() <= MENU_LABEL, "{label}");
        s.notices = vec![notice("run:a", false), notice("run:b", true)];
        let v = tray_view(&Lang::english(), &s, 0, &TimeZone::UTC);
        assert_eq!((v.icon, v.unread), (Icon::Unread, 1));
        assert_eq!(v.notices[0].label, "Fix the test — Run finished");
        s.paused = Some("until resumed".into());
        s.paused_indefinitely = true;
        assert_eq!(tray_view(&Lang::english(), &s, 0, &TimeZone::UTC).icon, Icon::Paused);
        s.account = Some(account(Some(crate::store::AccountProblem::TokenRefused)));
        let v = tray_view(&Lang::english(), &s, 0, &TimeZone::UTC);
        assert_eq!((v.icon, v.account.as_str(), v.signed_in), (Icon::Problem, "Sign in again (ada@example.com)", false));
        // The account's problem in the person's language, its whole story behind "Why".
        let de = tray_view(&Lang::in_language(crate::lang::Language::German), &s, 0, &TimeZone::UTC);
        assert_eq!(de.problems[0].line, "Die Cloud hat die Anmeldung abgelehnt: bitte erneut anmelden");
        assert_eq!(de.problems[0].why.as_deref(), Some("The cloud refused the access token: sign in again."));
    }
}
