//! The store: the only memory the engine has across a relaunch (SQLite, WAL, one writer).
//!
//! It owns the follows, the notices (untold → told, or silent), the ended Runs' cards and the
//! notes of this app's own cancels. A notice's key is unique: whatever the number of waiters or
//! relaunches, a key is inserted once, and only a key in the store is ever posted. It never knows
//! HTTP or D-Bus. It never starts empty over a file it cannot read: it says what is wrong and where.

mod account;
mod cards;
mod checkpoint;
mod delivery;
mod follows;
mod forget;
mod group;
mod grouped;
mod kv;
mod local;
mod notices;
mod read;
mod schema;

pub use account::{AccountProblem, AccountRow};
pub use cards::Card;
pub use follows::{FollowKind, FollowRow, HandoffStep};
pub use grouped::Grouped;
pub use local::SessionShown;
pub use notices::{NoticeState, StoredNotice};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::lock::Locked;
use crate::notice::Source;
use crate::policy::Reason;
use crate::words::sql_word;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the state database {path} is not readable as a database ({detail}); it was left untouched — move it aside to start afresh")]
    Corrupt { path: PathBuf, detail: String },
    #[error("the state database {path} is locked by another process ({detail}); is another cmux-tray running?")]
    Locked { path: PathBuf, detail: String },
    #[error("the state database {path} was written by a newer cmux-tray (schema {found}, this one knows {known}); it was left untouched")]
    TooNew { path: PathBuf, found: i64, known: i64 },
    #[error("the state database {path}: {source}")]
    Sql { path: PathBuf, source: rusqlite::Error },
    #[error("cannot make {path} private to this user: {source}")]
    Dir { path: PathBuf, source: std::io::Error },
    /// The work given to the store's thread never came back (it panicked).
    #[error("{0}")]
    Lost(String),
}

pub struct Store {
    conn: Mutex<Connection>,
    /// What the follows and the socket record shares commits (`group`).
    group: group::Group,
    /// Checkpoints on a thread of their own, not inside a writer's commit (`checkpoint`).
    _checkpoint: Option<checkpoint::Checkpointer>,
    path: PathBuf,
}

const BUSY_TIMEOUT: Duration = Duration::from_secs(2);

impl Store {
    /// Opens (or creates) the store and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            crate::private::create_dir(dir).map_err(|source| StoreError::Dir { path: dir.to_path_buf(), source })?;
        }
        // Made 0600 before SQLite opens it: SQLite gives its WAL and shared-memory files the
        // main file's mode. Older ones are tightened.
        let private = |p: &Path| crate::private::touch_file(p).map_err(|source| StoreError::Dir { path: p.to_path_buf(), source });
        private(path)?;
        for side in ["-wal", "-shm"] {
            let name = beside(path, side);
            crate::private::tighten_file(&name).map_err(|source| StoreError::Dir { path: name.clone(), source })?;
        }
        let conn = Connection::open(path).map_err(|e| classify(path, e))?;
        let mut store = Store { conn: Mutex::new(conn), group: Default::default(), _checkpoint: None, path: path.to_path_buf() };
        store.prepare()?;
        match checkpoint::Checkpointer::start(path) {
            Ok(checkpointer) => {
                checkpointer.watch(&store.lock()).map_err(|e| store.err(e))?;
                store._checkpoint = Some(checkpointer);
            }
            // SQLite's own checkpoints then, inside the writes.
            Err(e) => tracing::warn!(path = %path.display(), "checkpoints stay in the writes: {e}"),
        }
        Ok(store)
    }

    /// Opens an existing store read-only (for `status`), never creating or migrating it.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .map_err(|e| classify(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| classify(path, e))?;
        let store = Store { conn: Mutex::new(conn), group: Default::default(), _checkpoint: None, path: path.to_path_buf() };
        let version: i64 = store.lock().query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| classify(path, e))?;
        store.check_version(version)?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.locked()
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        classify(&self.path, e)
    }

    fn check_version(&self, found: i64) -> Result<(), StoreError> {
        let known = schema::MIGRATIONS.len() as i64;
        if found > known {
            return Err(StoreError::TooNew { path: self.path.clone(), found, known });
        }
        Ok(())
    }

    fn prepare(&self) -> Result<(), StoreError> {
        let mut conn = self.lock();
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| self.err(e))?;
        // Every statement a burst runs (the group commit's own, a notice's insert, a follow's
        // end, marking told) stays prepared: parsing an insert was a twelfth of a notice's cost.
        conn.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
        // The first read tells a file that is no database from one that is.
        let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(|e| self.err(e))?;
        if check != "ok" {
            return Err(StoreError::Corrupt { path: self.path.clone(), detail: check });
        }
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(|e| self.err(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %self.path.display(), mode, "the state database is not in WAL mode");
        }
        // FULL: a commit is on the disk when it returns (the WAL flushed), so an `OK` or a told
        // mark outlives a power cut, not only a crash (docs/architecture.md, "Durable on
        // return"; tests/powercut.rs). A WAL started over keeps 32 MiB (`checkpoint::KEPT_WAL_BYTES`).
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;").map_err(|e| self.err(e))?;
        conn.pragma_update(None, "journal_size_limit", checkpoint::KEPT_WAL_BYTES).map_err(|e| self.err(e))?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| self.err(e))?;
        self.check_version(version)?;
        for (i, sql) in schema::MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = conn.transaction().map_err(|e| self.err(e))?;
            tx.execute_batch(sql).map_err(|e| self.err(e))?;
            tx.pragma_update(None, "user_version", (i + 1) as i64).map_err(|e| self.err(e))?;
            tx.commit().map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Runs `write` in the next group commit, for a caller on the async runtime: it waits in the
    /// queue, not on a thread of its own, and one blocking thread commits what queued
    /// (`group`). 10,000 follows ending at once are 10,000 queued writes and one thread.
    pub async fn write_grouped<T: Send + 'static>(
        self: &Arc<Self>,
        write: impl FnOnce(&Grouped) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let reply = move |result| {
            let _ = tx.send(result);
        };
        if self.group.queue(move |c| write(&Grouped(c)), reply) {
            let store = Arc::clone(self);
            tokio::task::spawn_blocking(move || store.group.lead(&store.conn));
        }
        rx.await.unwrap_or_else(|_| Err(group::lost())).map_err(|e| self.err(e))
    }

    /// How many commits the writes that share them (`group`) have made: the follows' and the
    /// socket's notices, not the deliverer's. For the tests that a batch is one commit.
    pub fn grouped_commits(&self) -> usize {
        self.group.commits()
    }

    /// Sets `synchronous` to FULL (the product's) or NORMAL; for the benchmark that weighs the
    /// two (benches/store_commit.rs).
    #[doc(hidden)]
    pub fn set_synchronous_full(&self, full: bool) -> Result<(), StoreError> {
        self.lock().pragma_update(None, "synchronous", if full { "FULL" } else { "NORMAL" }).map_err(|e| self.err(e))
    }

    /// While set, every write fails as on a full disk (SQLite refuses it); for tests of what a
    /// failed write does. Reads go on.
    #[doc(hidden)]
    pub fn refuse_writes(&self, refuse: bool) -> Result<(), StoreError> {
        self.lock().pragma_update(None, "query_only", refuse).map_err(|e| self.err(e))
    }
}

// The stored words that queries spell out (a partial index serves only a query that names its
// condition's words), each read from its type's declaration.
const UNTOLD: &str = sql_word!(NoticeState::Untold);
const TOLD: &str = sql_word!(NoticeState::Told);
const SILENT: &str = sql_word!(NoticeState::Silent);
const LOCAL: &str = sql_word!(Source::Local);
const RUN: &str = sql_word!(FollowKind::Run);
const HANDOFF: &str = sql_word!(FollowKind::Handoff);
const SHOWN: &str = sql_word!(Reason::Shown);
const COALESCED: &str = sql_word!(Reason::Coalesced);
const PAUSED: &str = sql_word!(Reason::Paused);
const QUIET_HOURS: &str = sql_word!(Reason::QuietHours);

/// How many prepared statements the store's connection keeps (rusqlite keeps 16 by default; the
/// store has about 20 it runs often).
const STATEMENTS_KEPT: usize = 32;

/// SQLite's file beside the database: `-wal` or `-shm` after its name.
fn beside(path: &Path, side: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(side);
    name.into()
}

fn classify(path: &Path, e: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    let path = path.to_path_buf();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::Corrupt { path, detail: e.to_string() },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Locked { path, detail: e.to_string() },
        _ => StoreError::Sql { path, source: e },
    }
}

#[cfg(test)]
mod tests;
