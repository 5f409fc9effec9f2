//! The history window's content: each notice as a row a person reads at a glance (what kind it
//! is, when in words, whether it is unread, why it had no banner, where a click goes), grouped
//! by day and narrowed by kind and a search; and what is being followed, for how long.

use jiff::tz::TimeZone;
use serde::Serialize;

use super::times;
use crate::cloud::Outcome;
use crate::lang::Lang;
use crate::lang::say;
use crate::notice::{Item, Source};
use crate::policy::Reason;
use crate::store::{Card, FollowKind, FollowRow, NoticeState, StoredNotice};

/// What kind of notice a row is and what the person narrowed the history to: the page sends
/// them, so the channel declares them.
pub use cmux_tray_channel::call::{HistoryFilter, NoticeKind};

/// A notice's kind, from its source.
fn kind_of(n: &StoredNotice) -> NoticeKind {
    match n.source() {
        Source::Run => NoticeKind::Run,
        Source::Handoff => NoticeKind::Handoff,
        Source::Local => NoticeKind::Terminal,
        Source::App => NoticeKind::App,
    }
}

/// A kind as a row says it.
fn kind_label(kind: NoticeKind, lang: &Lang) -> String {
    match kind {
        NoticeKind::Run => say!(lang, "kind-run"),
        NoticeKind::Handoff => say!(lang, "kind-handoff"),
        NoticeKind::Terminal => say!(lang, "kind-terminal"),
        NoticeKind::App => say!(lang, "kind-app"),
    }
}

/// A kind as the filter lists it.
fn kind_plural(kind: NoticeKind, lang: &Lang) -> String {
    match kind {
        NoticeKind::Run => say!(lang, "kinds-run"),
        NoticeKind::Handoff => say!(lang, "kinds-handoff"),
        NoticeKind::Terminal => say!(lang, "kinds-terminal"),
        NoticeKind::App => say!(lang, "kinds-app"),
    }
}

/// Whether `filter` keeps a notice of this kind.
fn keeps(filter: &HistoryFilter, kind: NoticeKind, n: &StoredNotice) -> bool {
    let query = filter.query.trim().to_lowercase();
    filter.kind.is_none_or(|k| k == kind)
        && (query.is_empty() || query.split_whitespace().all(|w| format!("{}\n{}", n.title, n.body).to_lowercase().contains(w)))
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryRow {
    pub key: String,
    pub kind: NoticeKind,
    pub kind_label: String,
    pub title: String,
    /// The body's first line, cut to fit one line.
    pub line: String,
    /// "2 min ago"; `exact` is for the tooltip.
    pub ago: String,
    pub exact: String,
    pub unread: bool,
    /// A "needs you".
    pub urgent: bool,
    /// Why it had no banner, in words; `None` when its banner was shown.
    pub no_banner: Option<String>,
    /// What a click opens, in words ("Opens tmux pane %3").
    pub opens: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryDay {
    /// "Today", "Yesterday", "Saturday 28 November".
    pub label: String,
    pub rows: Vec<HistoryRow>,
}

/// One followed Run or hand-off.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FollowLine {
    /// `run:<id>` or `handoff:<id>`.
    pub item: Item,
    pub kind: NoticeKind,
    pub kind_label: String,
    pub title: String,
    /// "Running for 12 min", "Open for 2 h 5 min".
    pub state: String,
    pub exact: String,
}

/// A choice of the kind filter, with how many notices it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KindChoice {
    pub kind: Option<NoticeKind>,
    pub label: String,
    pub count: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryView {
    pub days: Vec<HistoryDay>,
    pub following: Vec<FollowLine>,
    pub kinds: Vec<KindChoice>,
    pub unread: usize,
    /// What the list says when it has no row ("No notices yet.", "Nothing matches …").
    pub empty: String,
}

/// An ended Run's card: as stored, with its title and outcome in words.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunCard {
    #[serde(flatten)]
    pub card: Card,
    /// "Cloud Run", for a card whose task has no first line.
    pub title: String,
    /// "finished", "timed out".
    pub outcome_words: String,
}

pub fn run_card(lang: &Lang, card: Card) -> RunCard {
    let outcome_words = match card.outcome {
        Outcome::Finished => say!(lang, "outcome-finished"),
        Outcome::Failed => say!(lang, "outcome-failed"),
        Outcome::TimedOut => say!(lang, "outcome-timed-out"),
        Outcome::Cancelled => say!(lang, "outcome-cancelled"),
    };
    RunCard { title: say!(lang, "run-title"), outcome_words, card }
}

/// A hand-off's card: its follow (title, state) and its turns as this app saw them.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandoffCard {
    pub follow: Option<FollowRow>,
    pub turns: Vec<HistoryRow>,
}

/// How long a row's line may be.
pub const LINE: usize = 140;

/// Why a notice had no banner, in words; `None` when it had one (or is still to be decided).
pub fn no_banner(lang: &Lang, n: &StoredNotice) -> Option<String> {
    match n.state {
        NoticeState::Untold => return Some(say!(lang, "no-banner-untold")),
        NoticeState::Silent => return Some(say!(lang, "no-banner-silent")),
        NoticeState::Told => {}
    }
    Some(match n.delivery? {
        Reason::Shown => return None,
        Reason::Off => match kind_of(n) {
            NoticeKind::Run => say!(lang, "no-banner-off-run"),
            NoticeKind::Handoff => say!(lang, "no-banner-off-handoff"),
            NoticeKind::Terminal => say!(lang, "no-banner-off-terminal"),
            NoticeKind::App => say!(lang, "no-banner-off-app"),
        },
        Reason::Paused => say!(lang, "no-banner-paused"),
        Reason::QuietHours => say!(lang, "no-banner-quiet"),
        Reason::Focused if kind_of(n) == NoticeKind::Terminal => say!(lang, "no-banner-focused-terminal"),
        Reason::Focused => say!(lang, "no-banner-focused"),
        Reason::Coalesced => say!(lang, "no-banner-coalesced"),
        Reason::NotShown => match &n.failure {
            Some(f) => say!(lang, "no-banner-not-shown-why", why = f.as_str()),
            None => say!(lang, "no-banner-not-shown"),
        },
    })
}

/// What an untold notice waits for while something holds every banner back (docs/notices.md §3),
/// in words; `None` when nothing does (it is being decided).
pub fn untold_waits_for(lang: &Lang, held: Option<crate::status::HeldBy>) -> Option<String> {
    use crate::status::HeldBy;
    match held? {
        HeldBy::NoServer => Some(say!(lang, "no-banner-untold-no-server")),
        HeldBy::SystemOff => Some(say!(lang, "no-banner-untold-system-off")),
        HeldBy::BannersOff | HeldBy::QuietHours | HeldBy::Paused => None,
    }
}

/// One notice as the history shows it; `opens` is what a click on it opens, in words.
pub fn row(lang: &Lang, n: &StoredNotice, opens: String, now_ms: i64, tz: &TimeZone) -> HistoryRow {
    let kind = kind_of(n);
    HistoryRow {
        key: n.key.clone(),
        kind,
        kind_label: kind_label(kind, lang),
        title: n.title.clone(),
        line: crate::text::cut(n.body.lines().next().unwrap_or(""), LINE),
        ago: times::ago(lang, n.created_at, now_ms, tz),
        exact: times::exact(lang, n.created_at, tz),
        unread: n.state == NoticeState::Told && n.read_at.is_none(),
        urgent: n.urgent,
        no_banner: no_banner(lang, n),
        opens,
    }
}

/// The history window's content. `opens` says in words what a click on a notice opens (the
/// engine's click routing knows).
pub fn history_view(
    lang: &Lang,
    notices: &[StoredNotice],
    follows: &[FollowRow],
    filter: &HistoryFilter,
    opens: &dyn Fn(&StoredNotice) -> String,
    now_ms: i64,
    tz: &TimeZone,
) -> HistoryView {
    let mut days: Vec<HistoryDay> = Vec::new();
    for n in notices {
        let kind = kind_of(n);
        if !keeps(filter, kind, n) {
            continue;
        }
        let row = row(lang, n, opens(n), now_ms, tz);
        let label = times::day(lang, n.created_at, now_ms, tz);
        match days.last_mut() {
            Some(d) if d.label == label => d.rows.push(row),
            _ => days.push(HistoryDay { label, rows: vec![row] }),
        }
    }
    let count = |k: Option<NoticeKind>| notices.iter().filter(|n| k.is_none_or(|k| kind_of(n) == k)).count();
    let mut kinds = vec![KindChoice { kind: None, label: say!(lang, "kinds-all"), count: count(None) }];
    kinds.extend(NoticeKind::ALL.into_iter().map(|k| KindChoice { kind: Some(k), label: kind_plural(k, lang), count: count(Some(k)) }));
    let empty = if notices.is_empty() {
        say!(lang, "history-empty")
    } else if filter.query.trim().is_empty() {
        match filter.kind {
            None => say!(lang, "history-empty-all"),
            Some(NoticeKind::Run) => say!(lang, "history-empty-run"),
            Some(NoticeKind::Handoff) => say!(lang, "history-empty-handoff"),
            Some(NoticeKind::Terminal) => say!(lang, "history-empty-terminal"),
            Some(NoticeKind::App) => say!(lang, "history-empty-app"),
        }
    } else {
        say!(lang, "history-no-match", query = filter.query.trim())
    };
    let following = follows
        .iter()
        .filter(|f| f.ended_at.is_none())
        .filter_map(|f| Some((f, f.item()?)))
        .map(|(f, item)| {
            let span = times::span(lang, now_ms - f.started_at);
            let (kind, state, title) = match f.kind {
                FollowKind::Run => {
                    (NoticeKind::Run, say!(lang, "follow-running", span = span), say!(lang, "menu-run", id = super::tray::short(&f.id)))
                }
                FollowKind::Handoff => (
                    NoticeKind::Handoff,
                    say!(lang, "follow-open", span = span),
                    say!(lang, "menu-handoff", id = super::tray::short(&f.id)),
                ),
            };
            FollowLine {
                item,
                kind,
                kind_label: kind_label(kind, lang),
                title: f.title.clone().unwrap_or(title),
                state,
                exact: say!(lang, "follow-since", time = times::exact(lang, f.started_at, tz)),
            }
        })
        .collect();
    let unread = notices.iter().filter(|n| n.state == NoticeState::Told && n.read_at.is_none()).count();
    HistoryView { days, following, kinds, unread, empty }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::tray::tests::{follow, notice};

    const MIN: i64 = 60_000;

    fn at(n: StoredNotice, source: &str, created_at: i64, delivery: &str) -> StoredNotice {
        use crate::notice::{AppStatus, LocalStatus, NoticeStatus};
        let status = match Source::parse(source).unwrap() {
            Source::Run => NoticeStatus::Run(Outcome::Finished),
            Source::Handoff => NoticeStatus::Handoff(crate::cloud::HandoffStatus::Done),
            Source::Local => NoticeStatus::Local(LocalStatus::Posted),
            Source::App => NoticeStatus::App(AppStatus::Summary),
        };
        StoredNotice { status, created_at, delivery: Some(Reason::parse(delivery).unwrap()), ..n }
    }

    fn utc() -> TimeZone {
        TimeZone::UTC
    }

    // 2026-12-01T12:00:00Z
    const NOW: i64 = 1_796_126_400_000;

    fn view(notices: &[StoredNotice], filter: &HistoryFilter) -> HistoryView {
        history_view(&Lang::english(), notices, &[], filter, &|n| format!("opens {}", n.key), NOW, &utc())
    }

    #[test]
    fn rows_say_kind_time_and_why_no_banner_in_words_and_group_by_day() {
        let notices = [
            at(notice("local:a", false), "local", NOW - 2 * MIN, "focused"),
            at(notice("run:b", true), "run", NOW - 3 * 60 * MIN, "shown"),
            at(notice("handoff:c", true), "handoff", NOW - 24 * 60 * MIN, "quiet hours"),
            at(notice("app:d", true), "app", NOW - 25 * 60 * MIN, "coalesced"),
        ];
        let v = view(&notices, &HistoryFilter::default());
        let days: Vec<(&str, usize)> = v.days.iter().map(|d| (d.label.as_str(), d.rows.len())).collect();
        assert_eq!(days, [("Today", 2), ("Yesterday", 2)]);
        let rows: Vec<&HistoryRow> = v.days.iter().flat_map(|d| &d.rows).collect();
        assert_eq!(rows.iter().map(|r| r.kind_label.as_str()).collect::<Vec<_>>(), ["Terminal", "Run", "Hand-off", "cmux-tray"]);
        assert_eq!(rows[0].ago, "2 min ago");
        assert_eq!(rows[0].exact, "Tue, 1 Dec 2026, 11:58");
        assert_eq!(rows[0].no_banner.as_deref(), Some("No banner: you were looking at its terminal"));
        assert!(rows[0].unread && !rows[1].unread);
        assert_eq!(rows[1].no_banner, None, "shown: nothing to explain");
        assert_eq!(rows[2].no_banner.as_deref(), Some("No banner: quiet hours were on"));
        assert_eq!(rows[3].no_banner.as_deref(), Some("Grouped with others into one banner"));
        assert_eq!(rows[1].opens, "opens run:b");
        assert_eq!(v.unread, 1);
        let counts: Vec<(String, usize)> = v.kinds.iter().map(|k| (k.label.clone(), k.count)).collect();
        assert_eq!(
            counts,
            [("All".into(), 4), ("Runs".into(), 1), ("Hand-offs".into(), 1), ("Terminals".into(), 1), ("cmux-tray".into(), 1)]
        );
    }

    #[test]
    fn every_reason_reads_in_words() {
        let n = |delivery: &str| at(notice("run:x", true), "run", NOW, delivery);
        assert_eq!(no_banner(&Lang::english(), &n("banners off")).unwrap(), "No banner: banners for Runs were off");
        assert_eq!(no_banner(&Lang::english(), &n("paused")).unwrap(), "No banner: notifications were paused");
        assert_eq!(no_banner(&Lang::english(), &n("focused")).unwrap(), "No banner: you were looking at it");
        let refused = StoredNotice { failure: Some("org.freedesktop.DBus.Error.NoReply".into()), ..n("not shown") };
        assert_eq!(
            no_banner(&Lang::english(), &refused).unwrap(),
            "The desktop did not show its banner: org.freedesktop.DBus.Error.NoReply"
        );
        let waiting = StoredNotice { state: NoticeState::Untold, delivery: None, ..n("shown") };
        assert_eq!(no_banner(&Lang::english(), &waiting).unwrap(), "Not shown yet: waiting for its banner");
        use crate::status::HeldBy;
        assert_eq!(
            untold_waits_for(&Lang::english(), Some(HeldBy::NoServer)).as_deref(),
            Some("Not shown yet: no notification server is running; it shows when one starts")
        );
        assert_eq!(untold_waits_for(&Lang::english(), Some(HeldBy::QuietHours)), None);
        let known = StoredNotice { state: NoticeState::Silent, delivery: None, ..n("shown") };
        assert_eq!(no_banner(&Lang::english(), &known).unwrap(), "No banner: it was already so when it was first seen");
    }

    #[test]
    fn the_filter_and_the_search_narrow_the_rows() {
        let notices = [
            StoredNotice { title: "Tests passed".into(), body: "412 green".into(), ..at(notice("local:a", true), "local", NOW, "shown") },
            StoredNotice { title: "Ship the release notes".into(), ..at(notice("run:b", true), "run", NOW, "shown") },
            StoredNotice {
                title: "Fix the parser".into(),
                body: "Release blocked".into(),
                ..at(notice("run:c", true), "run", NOW, "shown")
            },
        ];
        let keys = |v: &HistoryView| v.days.iter().flat_map(|d| d.rows.iter().map(|r| r.key.clone())).collect::<Vec<_>>();
        assert_eq!(keys(&view(&notices, &HistoryFilter { kind: Some(NoticeKind::Run), query: String::new() })), ["run:b", "run:c"]);
        assert_eq!(
            keys(&view(&notices, &HistoryFilter { kind: None, query: " RELEASE ".into() })),
            ["run:b", "run:c"],
            "title or body, any case"
        );
        assert_eq!(keys(&view(&notices, &HistoryFilter { kind: None, query: "release notes".into() })), ["run:b"], "every word");
        let none = view(&notices, &HistoryFilter { kind: Some(NoticeKind::Terminal), query: "release".into() });
        assert!(none.days.is_empty());
        assert_eq!(none.empty, "Nothing matches “release”.");
        assert_eq!(
            view(&notices, &HistoryFilter { kind: Some(NoticeKind::Handoff), query: String::new() }).empty,
            "No hand-offs in the history."
        );
    }

    #[test]
    fn follows_say_their_state_and_for_how_long() {
        let mut run = follow("run_0123456789abcdef0123");
        run.started_at = NOW - 12 * MIN;
        let mut handoff = follow("ho_0123456789abcdef0456");
        handoff.kind = FollowKind::Handoff;
        handoff.title = Some("Refactor the parser".into());
        handoff.started_at = NOW - 125 * MIN;
        let mut ended = follow("run_0123456789abcdef0789");
        ended.ended_at = Some(NOW);
        let v = history_view(&Lang::english(), &[], &[run, handoff, ended], &HistoryFilter::default(), &|_| String::new(), NOW, &utc());
        let lines: Vec<(&str, &str)> = v.following.iter().map(|f| (f.title.as_str(), f.state.as_str())).collect();
        assert_eq!(lines, [("Run …ef0123", "Running for 12 min"), ("Refactor the parser", "Open for 2 h 5 min")]);
        assert_eq!(v.following[1].item.to_string(), "handoff:ho_0123456789abcdef0456");
        assert!(v.empty.starts_with("No notices yet."));
    }
}
