//! The follows: what is followed, for which account, how far it has been read, and why it ended.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Store, StoreError};
use crate::notice::{Item, Notice};

crate::words::text_enum! {
    /// What a follow follows.
    pub enum FollowKind {
        Run = "run",
        Handoff = "handoff",
    }
}

/// A follow as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FollowRow {
    pub kind: FollowKind,
    pub id: String,
    pub account: String,
    /// Hand-offs: the last version seen. Runs: unused (0).
    pub cursor: u64,
    pub started_at: i64,
    pub changed_at: i64,
    pub made_here: bool,
    pub ended_at: Option<i64>,
    pub end_reason: Option<String>,
    /// The Run's task or the hand-off's title, once a snapshot said it.
    pub title: Option<String>,
}

impl FollowRow {
    /// The item its notices are about; none for an id that is not its kind's (never saved: a
    /// follow is saved from a checked id).
    pub fn item(&self) -> Option<Item> {
        match self.kind {
            FollowKind::Run => crate::cloud::RunId::parse(&self.id).ok().map(Item::Run),
            FollowKind::Handoff => crate::cloud::HandoffId::parse(&self.id).ok().map(Item::Handoff),
        }
    }
}

/// A hand-off's new version, as [`Store::record_handoff`] keeps it.
pub struct HandoffStep<'a> {
    pub id: &'a str,
    pub version: u64,
    pub notice: Option<&'a Notice>,
    /// Known but not news (a hand-off found at sign-in): kept, never told.
    pub silent: bool,
    /// The hand-off closed: its follow ends.
    pub closes: bool,
}

impl Store {
    /// Saves a follow unless the item is known already (followed, or ended). Returns whether it
    /// is new. A follow asked from here marks a known item made here too: the engine may have
    /// found the hand-off in the cloud's list before the hand-over's own `follow` reached it.
    pub fn add_follow(
        &self,
        kind: FollowKind,
        id: &str,
        account: &str,
        cursor: u64,
        made_here: bool,
        now: i64,
    ) -> Result<bool, StoreError> {
        let n = self
            .lock()
            .execute(
                "INSERT OR IGNORE INTO follows (kind, id, account, cursor, started_at, changed_at, made_here)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)",
                params![kind.as_str(), id, account, cursor as i64, now, made_here],
            )
            .map_err(|e| self.err(e))?;
        if n == 0 && made_here {
            self.lock()
                .execute("UPDATE follows SET made_here = 1 WHERE kind = ?1 AND id = ?2", params![kind.as_str(), id])
                .map_err(|e| self.err(e))?;
        }
        Ok(n == 1)
    }

    pub fn follow(&self, kind: FollowKind, id: &str) -> Result<Option<FollowRow>, StoreError> {
        self.lock()
            .query_row(&format!("{FOLLOW_COLUMNS} WHERE kind = ?1 AND id = ?2"), params![kind.as_str(), id], follow_row)
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The follows still going for an account, oldest first.
    pub fn active_follows(&self, account: &str) -> Result<Vec<FollowRow>, StoreError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(&format!("{FOLLOW_COLUMNS} WHERE account = ?1 AND ended_at IS NULL ORDER BY started_at, id"))
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map([account], follow_row).map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Every follow, newest first (for `status`).
    pub fn follows(&self, limit: usize) -> Result<Vec<FollowRow>, StoreError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(&format!("{FOLLOW_COLUMNS} ORDER BY ended_at IS NOT NULL, started_at DESC LIMIT ?1"))
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map([limit as i64], follow_row).map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    pub fn end_follow(&self, kind: FollowKind, id: &str, reason: &str, now: i64) -> Result<(), StoreError> {
        self.lock()
            .execute(
                "UPDATE follows SET ended_at = ?3, end_reason = ?4 WHERE kind = ?1 AND id = ?2 AND ended_at IS NULL",
                params![kind.as_str(), id, now, reason],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }
}

const FOLLOW_COLUMNS: &str =
    "SELECT kind, id, account, cursor, started_at, changed_at, made_here, ended_at, end_reason, title FROM follows";

fn follow_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<FollowRow> {
    let cursor: i64 = r.get(3)?;
    Ok(FollowRow {
        kind: r.get(0)?,
        id: r.get(1)?,
        account: r.get(2)?,
        cursor: cursor.max(0) as u64,
        started_at: r.get(4)?,
        changed_at: r.get(5)?,
        made_here: r.get(6)?,
        ended_at: r.get(7)?,
        end_reason: r.get(8)?,
        title: r.get(9)?,
    })
}
