//! The store as a write in a group commit sees it: one connection, inside the batch's transaction.

use const_format::concatcp;
use rusqlite::{Connection, OptionalExtension, params};

use super::follows::{FollowKind, HandoffStep};
use super::notices::{NoticeState, insert_notice};
use super::{HANDOFF, RUN, Store, StoreError};
use crate::notice::Notice;

/// The store on its connection, as a write in a group commit sees it (in a savepoint of the
/// batch's transaction): what the follows write there, and what they read to decide it.
pub struct Grouped<'c>(pub(super) &'c Connection);

impl Grouped<'_> {
    /// Whether the person cancelled this Run from here (its end then tells nothing).
    pub fn cancel_noted(&self, run_id: &str) -> rusqlite::Result<bool> {
        self.0
            .prepare_cached("SELECT 1 FROM cancel_notes WHERE run_id = ?1")?
            .query_row([run_id], |_| Ok(()))
            .optional()
            .map(|r| r.is_some())
    }

    /// Names a follow as its item is called now; returns whether the name changed.
    pub fn set_follow_title(&self, kind: FollowKind, id: &str, title: &str) -> rusqlite::Result<bool> {
        self.0
            .prepare_cached("UPDATE follows SET title = ?3 WHERE kind = ?1 AND id = ?2 AND title IS NOT ?3")?
            .execute(params![kind, id, title])
            .map(|n| n > 0)
    }

    /// A Run's end: its notice (unless quiet), its card, the follow ended. Returns whether a
    /// notice became untold (the deliverer has work).
    pub fn record_run_end(&self, run: &crate::cloud::Run, notice: Option<&Notice>, account: &str, now: i64) -> rusqlite::Result<bool> {
        let tx = self.0;
        // An end says how it ended (a receipt alone reads as finished, as its banner does).
        let outcome = run.outcome().unwrap_or(crate::cloud::Outcome::Finished);
        // The card shows the task with its lines; cleaned like every notice's words.
        let task = crate::text::clean(&run.task, true);
        let receipt = run.receipt.as_ref().map(|r| serde_json::to_string(r).unwrap_or_default());
        let told = match notice {
            Some(n) => insert_notice(tx, n, Some(account), now, NoticeState::Untold)?,
            None => false,
        };
        tx.prepare_cached(
            "INSERT OR IGNORE INTO cards (run_id, task, outcome, receipt, notice_key, ended_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![run.id.as_str(), task, outcome, receipt, notice.map(|n| n.key.as_str()), now])?;
        let reason = if notice.is_some() { "ended" } else { "cancelled here" };
        tx.prepare_cached(concatcp!(
            "UPDATE follows SET ended_at = ?2, end_reason = ?3, changed_at = ?2 WHERE kind = ",
            RUN,
            " AND id = ?1 AND ended_at IS NULL"
        ))?
        .execute(params![run.id.as_str(), now, reason])?;
        Ok(told)
    }

    /// A hand-off's new version: the cursor moves, its notice is inserted (`silent` when it is
    /// known but not news), and the follow ends when the hand-off closes. Returns whether a
    /// notice became untold.
    pub fn record_handoff(&self, step: HandoffStep, account: &str, now: i64) -> rusqlite::Result<bool> {
        let tx = self.0;
        let HandoffStep { id, version, notice, silent, closes } = step;
        let told = match notice {
            Some(n) => insert_notice(tx, n, Some(account), now, if silent { NoticeState::Silent } else { NoticeState::Untold })? && !silent,
            None => false,
        };
        tx.prepare_cached(concatcp!(
            "UPDATE follows SET cursor = MAX(cursor, ?2), changed_at = ?3 WHERE kind = ",
            HANDOFF,
            " AND id = ?1"
        ))?
        .execute(params![id, version as i64, now])?;
        if closes {
            tx.prepare_cached(concatcp!(
                "UPDATE follows SET ended_at = ?2, end_reason = ?3 WHERE kind = ",
                HANDOFF,
                " AND id = ?1 AND ended_at IS NULL"
            ))?
            .execute(params![id, now, "closed"])?;
        }
        Ok(told)
    }
}

/// The writes that also run alone, each in a commit of its own group.
impl Store {
    /// Names a follow (from a snapshot); a title already known is written again only when it changed.
    /// Returns whether the name changed.
    pub fn set_follow_title(&self, kind: FollowKind, id: &str, title: &str) -> Result<bool, StoreError> {
        Grouped(&self.lock()).set_follow_title(kind, id, title).map_err(|e| self.err(e))
    }

    /// A hand-off's new version (see [`Grouped::record_handoff`]), in a commit of its own group.
    pub fn record_handoff(&self, step: HandoffStep, account: &str, now: i64) -> Result<bool, StoreError> {
        let HandoffStep { id, version, notice, silent, closes } = step;
        let (id, notice, account) = (id.to_owned(), notice.cloned(), account.to_owned());
        self.group
            .write(&self.conn, move |c| {
                Grouped(c).record_handoff(HandoffStep { id: &id, version, notice: notice.as_ref(), silent, closes }, &account, now)
            })
            .map_err(|e| self.err(e))
    }
}
