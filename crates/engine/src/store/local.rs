//! Local notices (cmux's socket) and where a terminal shows a cloud session.

use const_format::concatcp;
use rusqlite::{OptionalExtension, params};

use super::notices::{StoredNotice, place_json, read_place};
use super::{LOCAL, Store, StoreError};

/// Where a terminal shows a cloud session (`session.attach`): a cmux surface, a terminal place,
/// or both.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionShown {
    pub workspace_id: Option<String>,
    pub surface_id: Option<String>,
    pub place: Option<crate::place::Place>,
}

impl Store {
    /// The newest `limit` local notices, oldest first (`notification.list`, `list_notifications`).
    pub fn local_notices(&self, limit: usize) -> Result<Vec<StoredNotice>, StoreError> {
        let mut newest = self.notices_where(concatcp!("source = ", LOCAL, " ORDER BY seq DESC LIMIT ?1"), [limit as i64])?;
        newest.reverse();
        Ok(newest)
    }

    /// Whether a local notice with this cmux id is known.
    pub fn local_notice_exists(&self, cmux_id: &str) -> Result<bool, StoreError> {
        self.lock()
            .query_row(concatcp!("SELECT 1 FROM notices WHERE source = ", LOCAL, " AND cmux_id = ?1"), [cmux_id], |_| Ok(()))
            .optional()
            .map(|r| r.is_some())
            .map_err(|e| self.err(e))
    }

    /// Marks unread local notices read: one by its cmux id, or all. Returns the keys it marked,
    /// in one select and one update (as `mark_all_read`), not a read of every notice.
    pub fn mark_local_read(&self, cmux_id: Option<&str>, now: i64) -> Result<Vec<String>, StoreError> {
        let clause = concatcp!("source = ", LOCAL, " AND read_at IS NULL AND (?1 IS NULL OR cmux_id = ?1)");
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| self.err(e))?;
        let keys: Vec<String> = {
            let mut stmt = tx.prepare(&format!("SELECT key FROM notices WHERE {clause}")).map_err(|e| self.err(e))?;
            let rows = stmt.query_map([cmux_id], |r| r.get(0)).map_err(|e| self.err(e))?;
            rows.collect::<Result<_, _>>().map_err(|e| self.err(e))?
        };
        tx.execute(&format!("UPDATE notices SET read_at = ?2 WHERE {clause}"), params![cmux_id, now]).map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(keys)
    }

    /// Forgets every local notice (`notification.clear`). Returns the banner ids that were live.
    pub fn clear_local(&self) -> Result<Vec<u32>, StoreError> {
        let conn = self.lock();
        let banners: Vec<u32> = {
            let mut stmt = conn
                .prepare(concatcp!("SELECT DISTINCT banner_id FROM notices WHERE source = ", LOCAL, " AND banner_id IS NOT NULL"))
                .map_err(|e| self.err(e))?;
            let rows = stmt.query_map([], |r| r.get(0)).map_err(|e| self.err(e))?;
            rows.collect::<Result<_, _>>().map_err(|e| self.err(e))?
        };
        conn.execute(concatcp!("DELETE FROM notices WHERE source = ", LOCAL), []).map_err(|e| self.err(e))?;
        Ok(banners)
    }

    /// A terminal reported that it shows this cloud session.
    pub fn attach_session(&self, session_id: &str, shown: &SessionShown, now: i64) -> Result<(), StoreError> {
        self.lock()
            .execute(
                "INSERT INTO sessions (session_id, workspace_id, surface_id, place, attached_at) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (session_id) DO UPDATE SET workspace_id = ?2, surface_id = ?3, place = ?4, attached_at = ?5",
                params![session_id, shown.workspace_id, shown.surface_id, place_json(shown.place.as_ref()), now],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Says why a click opened this notice's card instead of its terminal.
    pub fn set_reveal_note(&self, key: &str, note: &str) -> Result<(), StoreError> {
        self.lock().execute("UPDATE notices SET reveal_note = ?2 WHERE key = ?1", params![key, note]).map(drop).map_err(|e| self.err(e))
    }

    /// Where a cloud session is shown, if a terminal said so.
    pub fn session_shown(&self, session_id: &str) -> Result<Option<SessionShown>, StoreError> {
        self.lock()
            .query_row("SELECT workspace_id, surface_id, place FROM sessions WHERE session_id = ?1", [session_id], |r| {
                Ok(SessionShown { workspace_id: r.get(0)?, surface_id: r.get(1)?, place: read_place(r.get(2)?) })
            })
            .optional()
            .map_err(|e| self.err(e))
    }
}
