//! Read marks: what the person has seen, by notice, item, surface or all at once.

use const_format::concatcp;
use rusqlite::params;

use super::{Store, StoreError, TOLD};

impl Store {
    /// Marks read what came from a surface the person is now looking at. Returns the keys.
    pub fn mark_read_for_surface(&self, workspace_id: &str, surface_id: Option<&str>, now: i64) -> Result<Vec<String>, StoreError> {
        let conn = self.lock();
        let keys: Vec<String> = {
            let mut stmt = conn
                .prepare(concatcp!(
                    "SELECT n.key FROM notices n LEFT JOIN sessions s ON s.session_id = n.session_id
                     WHERE n.read_at IS NULL AND n.state = ",
                    TOLD,
                    "
                       AND ((n.workspace_id = ?1 AND (?2 IS NULL OR n.surface_id = ?2))
                         OR (s.workspace_id = ?1 AND (?2 IS NULL OR s.surface_id = ?2)))"
                ))
                .map_err(|e| self.err(e))?;
            let rows = stmt.query_map(params![workspace_id, surface_id], |r| r.get(0)).map_err(|e| self.err(e))?;
            rows.collect::<Result<_, _>>().map_err(|e| self.err(e))?
        };
        for key in &keys {
            conn.execute("UPDATE notices SET read_at = ?2 WHERE key = ?1", params![key, now]).map_err(|e| self.err(e))?;
        }
        Ok(keys)
    }

    /// Marks every told notice read. Returns their keys.
    pub fn mark_all_read(&self, now: i64) -> Result<Vec<String>, StoreError> {
        let keys: Vec<String> =
            self.notices_where(concatcp!("state = ", TOLD, " AND read_at IS NULL ORDER BY seq"), [])?.into_iter().map(|n| n.key).collect();
        self.lock()
            .execute(concatcp!("UPDATE notices SET read_at = ?1 WHERE state = ", TOLD, " AND read_at IS NULL"), [now])
            .map_err(|e| self.err(e))?;
        Ok(keys)
    }

    /// Marks every told notice of an item read (its card is on screen); returns their keys.
    pub fn mark_read_for_item(&self, item: &crate::notice::Item, now: i64) -> Result<Vec<String>, StoreError> {
        let keys: Vec<String> = self
            .notices_where(concatcp!("item = ?1 AND state = ", TOLD, " AND read_at IS NULL ORDER BY seq"), [item])?
            .into_iter()
            .map(|n| n.key)
            .collect();
        self.lock()
            .execute(
                concatcp!("UPDATE notices SET read_at = ?2 WHERE item = ?1 AND state = ", TOLD, " AND read_at IS NULL"),
                params![item, now],
            )
            .map_err(|e| self.err(e))?;
        Ok(keys)
    }

    /// Marks a notice read (its item was viewed).
    pub fn mark_read(&self, key: &str, now: i64) -> Result<(), StoreError> {
        self.lock()
            .execute("UPDATE notices SET read_at = ?2 WHERE key = ?1 AND read_at IS NULL", params![key, now])
            .map(drop)
            .map_err(|e| self.err(e))
    }
}
