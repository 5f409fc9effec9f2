//! An ended Run's card (what its banner click opens, kept 7 days), and the notes of this
//! app's own cancels (a Run cancelled here ends without a banner).

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Store, StoreError};

/// An ended Run's card: what its banner click opens, kept 7 days.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Card {
    pub run_id: String,
    pub task: String,
    pub outcome: crate::cloud::Outcome,
    pub receipt: Option<serde_json::Value>,
    pub notice_key: Option<String>,
    pub ended_at: i64,
}

impl Store {
    pub fn card(&self, run_id: &str) -> Result<Option<Card>, StoreError> {
        Ok(self.cards_where("run_id = ?1", [run_id])?.pop())
    }

    /// Cards that ended before `before` (past their week).
    pub fn cards_ended_before(&self, before: i64) -> Result<Vec<Card>, StoreError> {
        self.cards_where("ended_at < ?1", [before])
    }

    fn cards_where<P: rusqlite::Params>(&self, clause: &str, p: P) -> Result<Vec<Card>, StoreError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(&format!("SELECT run_id, task, outcome, receipt, notice_key, ended_at FROM cards WHERE {clause}"))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(p, |r| {
                let receipt: Option<String> = r.get(3)?;
                Ok(Card {
                    run_id: r.get(0)?,
                    task: r.get(1)?,
                    outcome: r.get(2)?,
                    receipt: receipt.and_then(|s| serde_json::from_str(&s).ok()),
                    notice_key: r.get(4)?,
                    ended_at: r.get(5)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    pub fn drop_card(&self, run_id: &str) -> Result<(), StoreError> {
        self.lock().execute("DELETE FROM cards WHERE run_id = ?1", [run_id]).map(drop).map_err(|e| self.err(e))
    }

    pub fn note_cancel(&self, run_id: &str, now: i64) -> Result<(), StoreError> {
        self.lock()
            .execute("INSERT OR IGNORE INTO cancel_notes (run_id, noted_at) VALUES (?1, ?2)", params![run_id, now])
            .map(drop)
            .map_err(|e| self.err(e))
    }
}
