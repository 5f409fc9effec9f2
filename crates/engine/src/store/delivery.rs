//! The deliverer's decisions: told with why, set aside, coalesced into one banner, summarized.

use const_format::concatcp;
use rusqlite::params;

use super::notices::{NoticeState, StoredNotice, insert_notice};
use super::{COALESCED, PAUSED, QUIET_HOURS, SHOWN, Store, StoreError, TOLD, UNTOLD};
use crate::notice::{Notice, Source};
use crate::policy::Reason;

impl Store {
    /// Marks a notice told: decided, with why, and the banner id the desktop gave it when it
    /// showed one.
    pub fn mark_told(&self, key: &str, banner_id: Option<u32>, delivery: Reason, sound: bool, now: i64) -> Result<(), StoreError> {
        self.lock()
            .prepare_cached(concatcp!(
                "UPDATE notices SET state = ",
                TOLD,
                ", told_at = ?2, banner_id = ?3, delivery = ?4, sound = ?5
                     WHERE key = ?1 AND state = ",
                UNTOLD
            ))
            .and_then(|mut s| s.execute(params![key, now, banner_id, delivery, sound]))
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Sets a notice aside whose banner the server would not show after its tries: decided,
    /// `not shown`, with the server's reason, so the history and `status` say it and the
    /// banners after it go out.
    pub fn set_aside(&self, key: &str, why: &str, now: i64) -> Result<(), StoreError> {
        self.lock()
            .execute(
                concatcp!(
                    "UPDATE notices SET state = ",
                    TOLD,
                    ", told_at = ?2, delivery = ?3, failure = ?4 WHERE key = ?1 AND state = ",
                    UNTOLD
                ),
                params![key, now, Reason::NotShown, why],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Decides a batch at once: every `keys` notice told as coalesced, and the one banner that
    /// stands for them saved untold — in one transaction, so a crash leaves neither half.
    pub fn coalesce(&self, keys: &[String], folded: Option<&str>, banner: &Notice, now: i64) -> Result<(), StoreError> {
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| self.err(e))?;
        // The burst's leading notice, shown alone a moment before: its banner becomes the burst's.
        if let Some(key) = folded {
            tx.execute(concatcp!("UPDATE notices SET delivery = ", COALESCED, ", banner_id = NULL WHERE key = ?1"), [key])
                .map_err(|e| self.err(e))?;
        }
        {
            // Prepared once: a burst is thousands of keys.
            let mut mark = tx
                .prepare_cached(concatcp!(
                    "UPDATE notices SET state = ",
                    TOLD,
                    ", told_at = ?2, delivery = ",
                    COALESCED,
                    " WHERE key = ?1 AND state = ",
                    UNTOLD
                ))
                .map_err(|e| self.err(e))?;
            for key in keys {
                mark.execute(params![key, now]).map_err(|e| self.err(e))?;
            }
        }
        insert_notice(&tx, banner, None, now, NoticeState::Untold).map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))
    }

    /// How many notices of a source showed a banner or were coalesced since `since`.
    pub fn shown_since(&self, source: Source, since: i64) -> Result<usize, StoreError> {
        self.lock()
            .prepare_cached(SHOWN_SINCE)
            .and_then(|mut s| s.query_row(params![source, since], |r| r.get::<_, i64>(0)))
            .map(|n| n as usize)
            .map_err(|e| self.err(e))
    }

    /// Notices held back (paused, quiet hours) that no summary has covered yet, oldest first.
    pub fn held_unsummarized(&self) -> Result<Vec<StoredNotice>, StoreError> {
        self.notices_where(concatcp!("delivery IN (", PAUSED, ", ", QUIET_HOURS, ") AND summarized = 0 ORDER BY seq"), [])
    }

    /// Saves the summary banner and marks what it covers, in one transaction.
    pub fn summarize(&self, keys: &[String], summary: &Notice, now: i64) -> Result<(), StoreError> {
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| self.err(e))?;
        {
            let mut mark = tx.prepare_cached("UPDATE notices SET summarized = 1 WHERE key = ?1").map_err(|e| self.err(e))?;
            for key in keys {
                mark.execute([key]).map_err(|e| self.err(e))?;
            }
        }
        insert_notice(&tx, summary, None, now, NoticeState::Untold).map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))
    }
}

/// Counts a source's banners since a moment; its `delivery` term is the one of the partial
/// index `notices_shown` (schema 7), word for word, which is what lets SQLite use it.
pub(super) const SHOWN_SINCE: &str =
    concatcp!("SELECT COUNT(*) FROM notices WHERE source = ?1 AND told_at >= ?2 AND delivery IN (", SHOWN, ", ", COALESCED, ")");
