//! The API's shapes (docs/cloud-api.md). Parsing is strict: an answer that is not the expected
//! shape — a wrong id, an unknown status, a missing field — is unreadable, never an end.

use serde::{Deserialize, Serialize};

use super::ids::{HandoffId, RunId, TeamId};

crate::words::text_enum! {
    /// A Run's status as the API sends it (docs/cloud-api.md).
    pub enum RunStatus {
        Queued = "queued",
        Running = "running",
        Cancelling = "cancelling",
        Succeeded = "succeeded",
        Failed = "failed",
        Cancelled = "cancelled",
    }
}

crate::words::text_enum! {
    /// How a Run ended: the four words of a Run banner's body, as the API sends them, and as a
    /// card and a notice keep them.
    pub enum Outcome {
        Finished = "finished",
        Failed = "failed",
        TimedOut = "timedOut",
        Cancelled = "cancelled",
    }
}

impl Outcome {
    /// The terminal status a Run with this outcome has (a Run read back from its card).
    pub fn run_status(self) -> RunStatus {
        match self {
            Outcome::Finished => RunStatus::Succeeded,
            Outcome::Cancelled => RunStatus::Cancelled,
            Outcome::Failed | Outcome::TimedOut => RunStatus::Failed,
        }
    }
}

/// What a finished Run hands back: enough to open its card or its session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub host: Option<String>,
}

/// A Run snapshot as `/api/runs/{id}/wait` answers it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub id: RunId,
    pub task: String,
    pub status: RunStatus,
    #[serde(default)]
    pub outcome: Option<Outcome>,
    #[serde(default)]
    pub receipt: Option<Receipt>,
    #[serde(default)]
    pub updated_at: Option<String>,
}

impl Run {
    /// Terminal: a receipt is present, or the status is succeeded, failed or cancelled.
    pub fn is_terminal(&self) -> bool {
        self.receipt.is_some() || matches!(self.status, RunStatus::Succeeded | RunStatus::Failed | RunStatus::Cancelled)
    }

    /// The outcome as sent, else derived from the status (a receipt alone reads as finished).
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome.or(match self.status {
            RunStatus::Succeeded => Some(Outcome::Finished),
            RunStatus::Failed => Some(Outcome::Failed),
            RunStatus::Cancelled => Some(Outcome::Cancelled),
            _ if self.receipt.is_some() => Some(Outcome::Finished),
            _ => None,
        })
    }
}

crate::words::text_enum! {
    /// A hand-off turn's status as the hand-off store sends it.
    pub enum HandoffStatus {
        Starting = "starting",
        Running = "running",
        Done = "done",
        Failed = "failed",
        Cancelled = "cancelled",
        NeedsYou = "needs-you",
    }
}

impl HandoffStatus {
    /// done, failed and cancelled end a turn (not the hand-off).
    pub fn ends_turn(self) -> bool {
        matches!(self, Self::Done | Self::Failed | Self::Cancelled)
    }
}

crate::words::text_enum! {
    /// Whether a hand-off takes more turns.
    pub enum HandoffState {
        Open = "open",
        Closed = "closed",
    }
}

/// A hand-off as the store answers it. `state` is absent in a store from before turns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Handoff {
    pub id: HandoffId,
    pub version: u64,
    pub turn: u32,
    #[serde(default)]
    pub state: Option<HandoffState>,
    pub status: HandoffStatus,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
}

impl Handoff {
    /// Closed: `state: closed`, or — a store without `state` — its first turn end.
    pub fn is_closed(&self) -> bool {
        match self.state {
            Some(s) => s == HandoffState::Closed,
            None => self.status.ends_turn(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Team {
    pub id: TeamId,
    pub display_name: String,
    pub kind: String,
}

/// What a release feed says (docs/configuration.md, "Updates").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Release {
    /// The newest version out: numbers and dots, as `0.2.0`.
    pub version: String,
}

/// Who the signed-in account is (`GET /v1/me`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Me {
    pub user_id: String,
    pub email: String,
    #[serde(default)]
    pub teams: Vec<Team>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_of_another_shape_is_refused() {
        for body in [
            r#"{"ok": true}"#,
            r#"{"id": "run_0123456789abcdef0123", "task": "t", "status": "exploded"}"#,
            r#"{"id": "run_BAD", "task": "t", "status": "queued"}"#,
            r#"{"id": "run_0123456789abcdef0123", "status": "succeeded"}"#,
            r#"[]"#,
        ] {
            assert!(serde_json::from_str::<Run>(body).is_err(), "{body}");
        }
    }

    #[test]
    fn terminal_and_outcome_follow_the_spec() {
        let mut run: Run = serde_json::from_str(r#"{"id": "run_0123456789abcdef0123", "task": "t", "status": "running"}"#).unwrap();
        assert!(!run.is_terminal());
        assert_eq!(run.outcome(), None);
        run.receipt = Some(Receipt::default());
        assert!(run.is_terminal());
        assert_eq!(run.outcome(), Some(Outcome::Finished));
        run.status = RunStatus::Failed;
        run.receipt = None;
        assert_eq!(run.outcome(), Some(Outcome::Failed));
        run.outcome = Some(Outcome::TimedOut);
        assert_eq!(run.outcome(), Some(Outcome::TimedOut));
    }

    #[test]
    fn a_store_without_state_closes_at_its_first_end() {
        let h = |state: &str, status: &str| -> Handoff {
            serde_json::from_str(&format!(r#"{{"id": "ho_0123456789abcdef0123", "version": 2, "turn": 1, {state} "status": "{status}"}}"#))
                .unwrap()
        };
        assert!(!h(r#""state": "open","#, "done").is_closed());
        assert!(h(r#""state": "closed","#, "running").is_closed());
        assert!(!h("", "needs-you").is_closed());
        assert!(!h("", "running").is_closed());
        for end in ["done", "failed", "cancelled"] {
            assert!(h("", end).is_closed(), "{end}");
        }
    }
}
