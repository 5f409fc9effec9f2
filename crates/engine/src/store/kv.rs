//! Small durable state by key (the pause, the last good delivery settings, the remembered team).

use rusqlite::{OptionalExtension, params};

use super::{Store, StoreError};

impl Store {
    pub fn get(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.lock().query_row("SELECT value FROM kv WHERE key = ?1", [key], |r| r.get(0)).optional().map_err(|e| self.err(e))
    }

    pub fn set(&self, key: &str, value: Option<&str>) -> Result<(), StoreError> {
        let conn = self.lock();
        match value {
            Some(v) => {
                conn.execute("INSERT INTO kv (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2", params![key, v])
            }
            None => conn.execute("DELETE FROM kv WHERE key = ?1", [key]),
        }
        .map(drop)
        .map_err(|e| self.err(e))
    }
}
