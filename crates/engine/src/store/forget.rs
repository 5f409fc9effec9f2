//! What the history forgets: rows past their days, never an untold notice or what an item still
//! followed said.

use const_format::concatcp;

use super::{Store, StoreError, UNTOLD};

impl Store {
    /// Forgets what is older than `before` (ms): decided notices (what is untold is kept, and so
    /// is what an item still followed said), ended follows, terminals' session reports and the
    /// notes of our own cancels. Returns how many rows went.
    pub fn forget_before(&self, before: i64) -> Result<usize, StoreError> {
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| self.err(e))?;
        let mut gone = 0;
        for sql in [
            concatcp!(
                "DELETE FROM notices WHERE created_at < ?1 AND state != ",
                UNTOLD,
                " AND item NOT IN (SELECT kind || ':' || id FROM follows WHERE ended_at IS NULL)"
            ),
            "DELETE FROM follows WHERE ended_at IS NOT NULL AND ended_at < ?1",
            "DELETE FROM sessions WHERE attached_at < ?1",
            "DELETE FROM cancel_notes WHERE noted_at < ?1",
        ] {
            gone += tx.execute(sql, [before]).map_err(|e| self.err(e))?;
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(gone)
    }
}
