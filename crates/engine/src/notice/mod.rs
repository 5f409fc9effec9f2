//! Notice rules: is this snapshot news, and what does its banner say (docs/notices.md §1).
//!
//! Pure functions: snapshot (+ what this app knows) → at most one notice with its key and words.
//! Never does I/O; the store makes "at most once per key" durable.

pub mod item;
pub mod local;
mod reports;

pub use item::{BadItem, Item};
pub use reports::{AppStatus, LocalStatus, NoticeStatus};

use serde::{Deserialize, Serialize};

use crate::cloud::{Handoff, HandoffStatus, Outcome, Run};
use crate::lang::Lang;
use crate::lang::say;
use crate::text;

crate::words::text_enum! {
    /// Where a notice comes from; each source has its own settings and banner words.
    pub enum Source {
        Run = "run",
        Handoff = "handoff",
        Local = "local",
        /// The app itself: the account needs a new sign-in, a summary after quiet hours, a burst.
        App = "app",
    }
}

/// Something worth one banner.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    /// Unique per piece of news: `run:<id>`, `handoff:<id>:<turn>:<status>` (built by [`Item`]).
    pub key: String,
    /// One live banner per item: a later notice for the same item replaces this one's banner.
    pub item: Item,
    /// Where it came from and what it reports, in its source's own words (stored and sent as
    /// `source` and `status`).
    #[serde(flatten)]
    pub status: NoticeStatus,
    pub title: String,
    pub body: String,
    /// A request for attention (urgency), for `needs-you`.
    pub urgent: bool,
    /// For notices from this machine's terminals: where they came from.
    pub local: Option<LocalOrigin>,
    /// The cloud session it is about (a hand-off's, a Run's receipt's), for focus and clicks.
    pub session_id: Option<String>,
    /// The host a hand-off's session runs on: a click may open a workspace there.
    #[serde(default)]
    pub host: Option<String>,
}

impl Notice {
    pub fn source(&self) -> Source {
        self.status.source()
    }
}

/// A local notice's cmux fields: its id, its subtitle, and the terminal surface it came from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalOrigin {
    pub cmux_id: String,
    pub subtitle: String,
    /// The body as the terminal sent it (one line, not cut; the banner's body is cut).
    pub body: String,
    pub workspace_id: Option<String>,
    pub surface_id: Option<String>,
    /// The terminal it came from (tmux pane, kitty window …), for the click and the focus rule.
    #[serde(default)]
    pub place: Option<crate::place::Place>,
}

/// What a Run snapshot means for its follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunVerdict {
    /// Not terminal: keep following.
    Going,
    /// Terminal, and this app cancelled it: end the follow, tell nothing.
    EndedQuietly,
    /// Terminal: end the follow and tell this.
    Ended(Box<Notice>),
}

/// A Run's end is news once, unless this app cancelled it.
pub fn run_verdict(lang: &Lang, run: &Run, cancelled_here: bool) -> RunVerdict {
    if !run.is_terminal() {
        return RunVerdict::Going;
    }
    let outcome = run.outcome().unwrap_or(Outcome::Finished);
    if cancelled_here && outcome == Outcome::Cancelled {
        return RunVerdict::EndedQuietly;
    }
    RunVerdict::Ended(Box::new(Notice {
        key: Item::Run(run.id.clone()).key(),
        item: Item::Run(run.id.clone()),
        status: NoticeStatus::Run(outcome),
        title: run_title(lang, &run.task),
        body: run_body(lang, outcome),
        urgent: false,
        local: None,
        session_id: run.receipt.as_ref().and_then(|r| r.session_id.clone()),
        host: None, // a Run's click opens its card (docs/notices.md §4)
    }))
}

/// A Run banner's title: the task's first line (cut like a body), else "Cloud Run".
pub fn run_title(lang: &Lang, task: &str) -> String {
    text::first_line(task).map(|l| text::cut(&l, text::MAX_BODY_CHARS)).unwrap_or_else(|| say!(lang, "run-title"))
}

pub fn run_body(lang: &Lang, outcome: Outcome) -> String {
    match outcome {
        Outcome::Finished => say!(lang, "run-finished"),
        Outcome::Failed => say!(lang, "run-failed"),
        Outcome::TimedOut => say!(lang, "run-timed-out"),
        Outcome::Cancelled => say!(lang, "run-cancelled"),
    }
}

/// What a hand-off snapshot means for its follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandoffVerdict {
    /// Candidate news; the store tells each key once.
    pub notice: Option<Notice>,
    /// The hand-off is closed: the follow ends after this.
    pub closes: bool,
}

/// Done, failed and needs-you are news, once per (id, turn, status); cancel and progress never.
pub fn handoff_verdict(lang: &Lang, h: &Handoff) -> HandoffVerdict {
    let closes = h.is_closed();
    let word = match h.status {
        HandoffStatus::Done => say!(lang, "handoff-done"),
        HandoffStatus::Failed => say!(lang, "handoff-failed"),
        HandoffStatus::NeedsYou => say!(lang, "handoff-needs-you"),
        HandoffStatus::Cancelled | HandoffStatus::Starting | HandoffStatus::Running => {
            return HandoffVerdict { notice: None, closes };
        }
    };
    // The summary joins the body once a turn ends; a needs-you is not an end.
    let summary = if h.status.ends_turn() { h.summary.as_deref().and_then(text::one_line) } else { None };
    let body = match summary {
        Some(s) => text::cut(&format!("{word} — {s}"), text::MAX_BODY_CHARS),
        None => word,
    };
    let item = Item::Handoff(h.id.clone());
    let notice = Notice {
        key: item.key_with(format_args!("{}:{}", h.turn, h.status.as_str())),
        item,
        status: NoticeStatus::Handoff(h.status),
        title: handoff_title(lang, h),
        body,
        urgent: h.status == HandoffStatus::NeedsYou,
        local: None,
        session_id: h.session_id.clone(),
        host: h.host.clone(),
    };
    HandoffVerdict { notice: Some(notice), closes }
}

/// The chat's tab title, else the summary's first line, else "Cloud task".
pub fn handoff_title(lang: &Lang, h: &Handoff) -> String {
    h.title
        .as_deref()
        .and_then(text::one_line)
        .or_else(|| h.summary.as_deref().and_then(text::first_line))
        .map(|t| text::cut(&t, text::MAX_BODY_CHARS))
        .unwrap_or_else(|| say!(lang, "handoff-title"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::{HandoffId, HandoffState, RunId, RunStatus};

    fn run(status: RunStatus, task: &str) -> Run {
        Run {
            id: RunId::parse("run_0123456789abcdef0123").unwrap(),
            task: task.into(),
            status,
            outcome: None,
            receipt: None,
            updated_at: None,
        }
    }

    fn handoff(status: HandoffStatus, state: Option<HandoffState>) -> Handoff {
        Handoff {
            id: HandoffId::parse("ho_0123456789abcdef0123").unwrap(),
            version: 3,
            turn: 2,
            state,
            status,
            title: None,
            summary: Some("Which branch should I push to?\nI found two …".into()),
            session_id: None,
            host: None,
            updated_at: None,
        }
    }

    #[test]
    fn the_banner_reads_the_tasks_first_line_and_the_outcome() {
        let cases = [
            (RunStatus::Succeeded, None, "Run finished"),
            (RunStatus::Failed, None, "Run failed"),
            (RunStatus::Failed, Some(Outcome::TimedOut), "Run timed out"),
            (RunStatus::Cancelled, None, "Run cancelled"),
        ];
        for (status, outcome, body) in cases {
            let mut r = run(status, "\nFix the flaky login test\n\nDetails …");
            r.outcome = outcome;
            let RunVerdict::Ended(n) = run_verdict(&Lang::english(), &r, false) else { panic!("{status:?} ends") };
            assert_eq!((n.title.as_str(), n.body.as_str()), ("Fix the flaky login test", body));
            assert_eq!(n.key, "run:run_0123456789abcdef0123");
        }
        assert_eq!(run_title(&Lang::english(), "   "), "Cloud Run");
    }

    #[test]
    fn progress_is_not_an_end_and_an_own_cancel_is_quiet() {
        for s in [RunStatus::Queued, RunStatus::Running, RunStatus::Cancelling] {
            assert_eq!(run_verdict(&Lang::english(), &run(s, "t"), false), RunVerdict::Going);
        }
        assert_eq!(run_verdict(&Lang::english(), &run(RunStatus::Cancelled, "t"), true), RunVerdict::EndedQuietly);
        // A note of our cancel does not silence a Run that ended some other way first.
        assert!(matches!(run_verdict(&Lang::english(), &run(RunStatus::Succeeded, "t"), true), RunVerdict::Ended(_)));
        assert!(matches!(run_verdict(&Lang::english(), &run(RunStatus::Cancelled, "t"), false), RunVerdict::Ended(_)));
    }

    #[test]
    fn the_handoff_banners_words() {
        let open = Some(HandoffState::Open);
        let n = handoff_verdict(&Lang::english(), &handoff(HandoffStatus::Done, open)).notice.unwrap();
        assert_eq!(n.title, "Which branch should I push to?");
        assert_eq!(n.body, "Done — Which branch should I push to? I found two …");
        assert_eq!(n.key, "handoff:ho_0123456789abcdef0123:2:done");
        assert_eq!(n.item.to_string(), "handoff:ho_0123456789abcdef0123");
        let n = handoff_verdict(&Lang::english(), &handoff(HandoffStatus::NeedsYou, open)).notice.unwrap();
        assert_eq!((n.body.as_str(), n.urgent), ("Needs you", true));
        let n = handoff_verdict(&Lang::english(), &handoff(HandoffStatus::Failed, open)).notice.unwrap();
        assert!(n.body.starts_with("Failed — "));
        let mut titled = handoff(HandoffStatus::Done, open);
        titled.title = Some("Refactor the parser".into());
        assert_eq!(handoff_verdict(&Lang::english(), &titled).notice.unwrap().title, "Refactor the parser");
        titled.title = None;
        titled.summary = None;
        let n = handoff_verdict(&Lang::english(), &titled).notice.unwrap();
        assert_eq!((n.title.as_str(), n.body.as_str()), ("Cloud task", "Done"));
    }

    #[test]
    fn cancel_and_progress_never_post() {
        for s in [HandoffStatus::Cancelled, HandoffStatus::Starting, HandoffStatus::Running] {
            assert_eq!(handoff_verdict(&Lang::english(), &handoff(s, Some(HandoffState::Open))).notice, None);
        }
        // A legacy store closes at its first cancel, still without a notice.
        let v = handoff_verdict(&Lang::english(), &handoff(HandoffStatus::Cancelled, None));
        assert_eq!((v.notice, v.closes), (None, true));
    }
}
