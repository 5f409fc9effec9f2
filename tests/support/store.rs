//! The engine's store read from outside, as `status` reads it: read-only, waiting out a writer,
//! while the daemon may be down, killed mid-commit, or writing. The crash and power-cut proofs
//! count "told" here.

use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::Home;

impl Home {
    /// The store opened read-only, or why not.
    fn read_store(&self) -> Result<Connection, rusqlite::Error> {
        let db = Connection::open_with_flags(self.database(), OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        db.busy_timeout(Duration::from_secs(2))?;
        Ok(db)
    }

    /// Whether the store marks the notice `key` told (false while it cannot be read).
    pub fn notice_told(&self, key: &str) -> bool {
        let told = self
            .read_store()
            .and_then(|db| db.query_row("SELECT state = 'told' FROM notices WHERE key = ?1", [key], |r| r.get::<_, bool>(0)));
        match told {
            Ok(told) => told,
            Err(rusqlite::Error::QueryReturnedNoRows) => false,
            Err(e) => {
                eprintln!("reading {}: {e}", self.database().display());
                false
            }
        }
    }

    /// The notice's row (state, delivery, banner id) in words, for a failure's message.
    pub fn notice_row(&self, key: &str) -> String {
        let row = self.read_store().and_then(|db| {
            db.query_row("SELECT state, delivery, banner_id FROM notices WHERE key = ?1", [key], |r| {
                Ok(format!(
                    "state {:?}, delivery {:?}, banner {:?}",
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<i64>>(2)?
                ))
            })
        });
        row.unwrap_or_else(|e| format!("not read from the store ({e})"))
    }

    /// How many notices the store holds untold; `None` while it cannot be read.
    pub fn untold_notices(&self) -> Option<usize> {
        let n = self
            .read_store()
            .and_then(|db| db.query_row("SELECT COUNT(*) FROM notices WHERE state = 'untold'", [], |r| r.get::<_, i64>(0)));
        n.ok().and_then(|n| usize::try_from(n).ok())
    }
}
