//! The outbox: the only memory the engine has across a relaunch (SQLite, WAL, one writer).
//!
//! It owns the follows, the notices (untold → told, or silent), the ended Runs' cards and the
//! notes of this app's own cancels. A notice's key is unique: whatever the number of waiters or
//! relaunches, a key is inserted once, and only a key in the store is ever posted. It never knows
//! HTTP or D-Bus. It never starts empty over a file it cannot read: it says what is wrong and where.

mod checkpoint;
mod group;
mod schema;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::notice::{Notice, Source};

#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FollowKind {
    Run,
    Handoff,
}

impl FollowKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FollowKind::Run => "run",
            FollowKind::Handoff => "handoff",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "run" => Some(FollowKind::Run),
            "handoff" => Some(FollowKind::Handoff),
            _ => None,
        }
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

/// A notice as stored, with its delivery state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredNotice {
    pub seq: i64,
    pub key: String,
    pub item: String,
    pub source: String,
    pub status: String,
    pub title: String,
    pub body: String,
    pub urgent: bool,
    pub created_at: i64,
    pub state: String,
    pub told_at: Option<i64>,
    pub banner_id: Option<u32>,
    pub read_at: Option<i64>,
    /// Local notices: the cmux id, subtitle and the surface they came from.
    pub cmux_id: Option<String>,
    pub subtitle: String,
    pub workspace_id: Option<String>,
    pub surface_id: Option<String>,
    /// Why it did or did not show a banner (`shown`, `quiet hours`, `focused` …).
    pub delivery: Option<String>,
    /// Whether its banner asked for a sound.
    pub sound: bool,
    pub session_id: Option<String>,
    /// A terminal's body as it sent it (one line, uncut); `None` for other notices and for
    /// local ones stored before schema 4.
    #[serde(default)]
    pub local_body: Option<String>,
    /// A hand-off's host (see `Notice::host`).
    #[serde(default)]
    pub host: Option<String>,
    /// Why its banner could not be shown (delivery `not shown`): what the server said.
    #[serde(default)]
    pub failure: Option<String>,
    /// The terminal a local notice came from (schema 6; `None` before).
    #[serde(default)]
    pub place: Option<crate::terminal::Place>,
    /// Why the last click opened this card rather than the terminal ("tmux pane %3 is gone").
    #[serde(default)]
    pub reveal_note: Option<String>,
}

/// Where a terminal shows a cloud session (`session.attach`): a cmux surface, a terminal place,
/// or both.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionShown {
    pub workspace_id: Option<String>,
    pub surface_id: Option<String>,
    pub place: Option<crate::terminal::Place>,
}

fn place_json(place: Option<&crate::terminal::Place>) -> Option<String> {
    place.filter(|p| !p.is_empty()).and_then(|p| serde_json::to_string(p).ok())
}

/// A stored place; one that no longer reads (or checks) as a place is none: the click then opens
/// the card, as for a place that is gone.
fn read_place(text: Option<String>) -> Option<crate::terminal::Place> {
    let place: crate::terminal::Place = serde_json::from_str(&text?).ok()?;
    place.check().is_ok().then_some(place)
}

/// The signed-in account, as remembered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountRow {
    pub user_id: String,
    pub email: String,
    pub team: Option<String>,
    pub signed_in_at: i64,
    pub problem: Option<String>,
}

/// An ended Run's card: what its banner click opens, kept 7 days.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Card {
    pub run_id: String,
    pub task: String,
    pub outcome: String,
    pub receipt: Option<serde_json::Value>,
    pub notice_key: Option<String>,
    pub ended_at: i64,
}

pub struct Outbox {
    conn: Mutex<Connection>,
    /// What the follows and the socket record shares commits (`group`).
    group: group::Group,
    /// Checkpoints on a thread of their own, not inside a writer's commit (`checkpoint`).
    _checkpoint: Option<checkpoint::Checkpointer>,
    path: PathBuf,
}

const BUSY_TIMEOUT: Duration = Duration::from_secs(2);

/// A hand-off's new version, as [`Outbox::record_handoff`] keeps it.
pub struct HandoffStep<'a> {
    pub id: &'a str,
    pub version: u64,
    pub notice: Option<&'a Notice>,
    /// Known but not news (a hand-off found at sign-in): kept, never told.
    pub silent: bool,
    /// The hand-off closed: its follow ends.
    pub closes: bool,
}

impl Outbox {
    /// Opens (or creates) the store and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Outbox, OutboxError> {
        if let Some(dir) = path.parent() {
            crate::private::create_dir(dir).map_err(|source| OutboxError::Dir { path: dir.to_path_buf(), source })?;
        }
        // Made 0600 before SQLite opens it: SQLite gives its WAL and shared-memory files the
        // main file's mode. Older ones are tightened.
        let private = |p: &Path| crate::private::touch_file(p).map_err(|source| OutboxError::Dir { path: p.to_path_buf(), source });
        private(path)?;
        for side in ["-wal", "-shm"] {
            let name = beside(path, side);
            crate::private::tighten_file(&name).map_err(|source| OutboxError::Dir { path: name.clone(), source })?;
        }
        let conn = Connection::open(path).map_err(|e| classify(path, e))?;
        let mut outbox = Outbox { conn: Mutex::new(conn), group: Default::default(), _checkpoint: None, path: path.to_path_buf() };
        outbox.prepare()?;
        match checkpoint::Checkpointer::start(path) {
            Ok(checkpointer) => {
                checkpointer.watch(&outbox.lock()).map_err(|e| outbox.err(e))?;
                outbox._checkpoint = Some(checkpointer);
            }
            // SQLite's own checkpoints, inside the writes, as before.
            Err(e) => tracing::warn!(path = %path.display(), "checkpoints stay in the writes: {e}"),
        }
        Ok(outbox)
    }

    /// Opens an existing store read-only (for `status`), never creating or migrating it.
    pub fn open_read_only(path: &Path) -> Result<Outbox, OutboxError> {
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .map_err(|e| classify(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| classify(path, e))?;
        let outbox = Outbox { conn: Mutex::new(conn), group: Default::default(), _checkpoint: None, path: path.to_path_buf() };
        let version: i64 = outbox.lock().query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| classify(path, e))?;
        outbox.check_version(version)?;
        Ok(outbox)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn err(&self, e: rusqlite::Error) -> OutboxError {
        classify(&self.path, e)
    }

    fn check_version(&self, found: i64) -> Result<(), OutboxError> {
        let known = schema::MIGRATIONS.len() as i64;
        if found > known {
            return Err(OutboxError::TooNew { path: self.path.clone(), found, known });
        }
        Ok(())
    }

    fn prepare(&self) -> Result<(), OutboxError> {
        let mut conn = self.lock();
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| self.err(e))?;
        // Every statement a burst runs (the group commit's own, a notice's insert, a follow's
        // end, marking told) stays prepared: parsing an insert was a twelfth of a notice's cost.
        conn.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
        // The first read tells a file that is no database from one that is.
        let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(|e| self.err(e))?;
        if check != "ok" {
            return Err(OutboxError::Corrupt { path: self.path.clone(), detail: check });
        }
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(|e| self.err(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %self.path.display(), mode, "the state database is not in WAL mode");
        }
        // NORMAL: a commit is in the WAL when it returns, so it outlives the app's crash; a
        // power cut may take back the last seconds of them (docs/architecture.md, "Durable on
        // return"). A WAL started over keeps 32 MiB of file (`checkpoint::KEPT_WAL_BYTES`).
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;").map_err(|e| self.err(e))?;
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

    // ── the account ──────────────────────────────────────────────────────────────────────────

    pub fn account(&self) -> Result<Option<AccountRow>, OutboxError> {
        self.lock()
            .query_row("SELECT user_id, email, team, signed_in_at, problem FROM account", [], |r| {
                Ok(AccountRow { user_id: r.get(0)?, email: r.get(1)?, team: r.get(2)?, signed_in_at: r.get(3)?, problem: r.get(4)? })
            })
            .optional()
            .map_err(|e| self.err(e))
    }

    pub fn set_account(&self, a: &AccountRow) -> Result<(), OutboxError> {
        self.lock()
            .execute(
                "INSERT INTO account (only, user_id, email, team, signed_in_at, problem) VALUES (1, ?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (only) DO UPDATE SET user_id = ?1, email = ?2, team = ?3, signed_in_at = ?4, problem = ?5",
                params![a.user_id, a.email, a.team, a.signed_in_at, a.problem],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Notes why the account stopped working (or clears it).
    pub fn set_account_problem(&self, problem: Option<&str>) -> Result<(), OutboxError> {
        self.lock().execute("UPDATE account SET problem = ?1", [problem]).map(drop).map_err(|e| self.err(e))
    }

    pub fn clear_account(&self) -> Result<(), OutboxError> {
        self.lock().execute("DELETE FROM account", []).map(drop).map_err(|e| self.err(e))
    }

    // ── follows ──────────────────────────────────────────────────────────────────────────────

    /// Saves a follow unless the item is known already (followed, or ended). Returns whether it
    /// is new.
    pub fn add_follow(
        &self,
        kind: FollowKind,
        id: &str,
        account: &str,
        cursor: u64,
        made_here: bool,
        now: i64,
    ) -> Result<bool, OutboxError> {
        let n = self
            .lock()
            .execute(
                "INSERT OR IGNORE INTO follows (kind, id, account, cursor, started_at, changed_at, made_here)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)",
                params![kind.as_str(), id, account, cursor as i64, now, made_here],
            )
            .map_err(|e| self.err(e))?;
        Ok(n == 1)
    }

    /// Names a follow (from a snapshot); a title already known is written again only when it changed.
    /// Returns whether the name changed.
    pub fn set_follow_title(&self, kind: FollowKind, id: &str, title: &str) -> Result<bool, OutboxError> {
        Grouped(&self.lock()).set_follow_title(kind, id, title).map_err(|e| self.err(e))
    }

    pub fn follow(&self, kind: FollowKind, id: &str) -> Result<Option<FollowRow>, OutboxError> {
        self.lock()
            .query_row(&format!("{FOLLOW_COLUMNS} WHERE kind = ?1 AND id = ?2"), params![kind.as_str(), id], follow_row)
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The follows still going for an account, oldest first.
    pub fn active_follows(&self, account: &str) -> Result<Vec<FollowRow>, OutboxError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(&format!("{FOLLOW_COLUMNS} WHERE account = ?1 AND ended_at IS NULL ORDER BY started_at, id"))
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map([account], follow_row).map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Every follow, newest first (for `status`).
    pub fn follows(&self, limit: usize) -> Result<Vec<FollowRow>, OutboxError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(&format!("{FOLLOW_COLUMNS} ORDER BY ended_at IS NOT NULL, started_at DESC LIMIT ?1"))
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map([limit as i64], follow_row).map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    pub fn end_follow(&self, kind: FollowKind, id: &str, reason: &str, now: i64) -> Result<(), OutboxError> {
        self.lock()
            .execute(
                "UPDATE follows SET ended_at = ?3, end_reason = ?4 WHERE kind = ?1 AND id = ?2 AND ended_at IS NULL",
                params![kind.as_str(), id, now, reason],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// A hand-off's new version (see [`Grouped::record_handoff`]), in a commit of its own group.
    pub fn record_handoff(&self, step: HandoffStep, account: &str, now: i64) -> Result<bool, OutboxError> {
        let HandoffStep { id, version, notice, silent, closes } = step;
        let (id, notice, account) = (id.to_owned(), notice.cloned(), account.to_owned());
        self.group
            .write(&self.conn, move |c| {
                Grouped(c).record_handoff(HandoffStep { id: &id, version, notice: notice.as_ref(), silent, closes }, &account, now)
            })
            .map_err(|e| self.err(e))
    }

    /// Runs `write` in the next group commit, for a caller on the async runtime: it waits in the
    /// queue, not on a thread of its own, and one blocking thread commits what queued
    /// (`group`). 10,000 follows ending at once are 10,000 queued writes and one thread.
    pub async fn write_grouped<T: Send + 'static>(
        self: &Arc<Self>,
        write: impl FnOnce(&Grouped) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, OutboxError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let reply = move |result| {
            let _ = tx.send(result);
        };
        if self.group.queue(move |c| write(&Grouped(c)), reply) {
            let outbox = Arc::clone(self);
            tokio::task::spawn_blocking(move || outbox.group.lead(&outbox.conn));
        }
        rx.await.unwrap_or_else(|_| Err(group::lost())).map_err(|e| self.err(e))
    }

    /// A notice from a source without a follow (local agents). Returns whether it is new.
    pub fn record_notice(&self, n: &Notice, now: i64) -> Result<bool, OutboxError> {
        self.record_notices(std::slice::from_ref(n), now).pop().unwrap_or_else(|| Err(self.err(group::lost())))
    }

    /// How many commits the writes that share them (`group`) have made: the follows' and the
    /// socket's notices, not the deliverer's. For the tests that a batch is one commit.
    pub fn grouped_commits(&self) -> usize {
        self.group.commits()
    }

    /// Several such notices in one commit, each in a savepoint of its own (one that fails fails
    /// alone). Returns, for each, whether it is new.
    pub fn record_notices(&self, notices: &[Notice], now: i64) -> Vec<Result<bool, OutboxError>> {
        let writes = notices.iter().cloned().map(|n| move |c: &Connection| insert_notice(c, &n, None, now, "untold"));
        self.group.write_each(&self.conn, writes).into_iter().map(|r| r.map_err(|e| self.err(e))).collect()
    }

    /// [`Self::record_notices`] for a caller on the async runtime: the notices queue for the
    /// group's next commit, made on the group's blocking thread, so neither the commit nor a
    /// checkpoint it triggers ever holds the runtime's thread (the daemon has one).
    pub async fn record_notices_grouped(self: &Arc<Self>, notices: Vec<Notice>, now: i64) -> Vec<Result<bool, OutboxError>> {
        let (writes, answers): (Vec<_>, Vec<_>) = notices
            .into_iter()
            .map(|n| {
                let (tx, rx) = tokio::sync::oneshot::channel();
                let write = move |c: &Connection| insert_notice(c, &n, None, now, "untold");
                let reply = move |result| {
                    let _ = tx.send(result);
                };
                ((write, reply), rx)
            })
            .unzip();
        if self.group.queue_each(writes) {
            let outbox = Arc::clone(self);
            tokio::task::spawn_blocking(move || outbox.group.lead(&outbox.conn));
        }
        let mut saved = Vec::with_capacity(answers.len());
        for rx in answers {
            saved.push(rx.await.unwrap_or_else(|_| Err(group::lost())).map_err(|e| self.err(e)));
        }
        saved
    }

    // ── local notices (cmux's socket) ───────────────────────────────────────────────────────

    /// The newest `limit` local notices, oldest first (`notification.list`, `list_notifications`).
    pub fn local_notices(&self, limit: usize) -> Result<Vec<StoredNotice>, OutboxError> {
        let mut newest = self.notices_where("source = 'local' ORDER BY seq DESC LIMIT ?1", [limit as i64])?;
        newest.reverse();
        Ok(newest)
    }

    /// Whether a local notice with this cmux id is known.
    pub fn local_notice_exists(&self, cmux_id: &str) -> Result<bool, OutboxError> {
        self.lock()
            .query_row("SELECT 1 FROM notices WHERE source = 'local' AND cmux_id = ?1", [cmux_id], |_| Ok(()))
            .optional()
            .map(|r| r.is_some())
            .map_err(|e| self.err(e))
    }

    /// Marks unread local notices read: one by its cmux id, or all. Returns the keys it marked,
    /// in one select and one update (as `mark_all_read`), not a read of every notice.
    pub fn mark_local_read(&self, cmux_id: Option<&str>, now: i64) -> Result<Vec<String>, OutboxError> {
        let clause = "source = 'local' AND read_at IS NULL AND (?1 IS NULL OR cmux_id = ?1)";
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

    /// Forgets what is older than `before` (ms): decided notices (what is untold is kept, and so
    /// is what an item still followed said), ended follows, terminals' session reports and the
    /// notes of our own cancels. Returns how many rows went.
    pub fn forget_before(&self, before: i64) -> Result<usize, OutboxError> {
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| self.err(e))?;
        let mut gone = 0;
        for sql in [
            "DELETE FROM notices WHERE created_at < ?1 AND state != 'untold'
               AND item NOT IN (SELECT kind || ':' || id FROM follows WHERE ended_at IS NULL)",
            "DELETE FROM follows WHERE ended_at IS NOT NULL AND ended_at < ?1",
            "DELETE FROM sessions WHERE attached_at < ?1",
            "DELETE FROM cancel_notes WHERE noted_at < ?1",
        ] {
            gone += tx.execute(sql, [before]).map_err(|e| self.err(e))?;
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(gone)
    }

    /// Forgets every local notice (`notification.clear`). Returns the banner ids that were live.
    pub fn clear_local(&self) -> Result<Vec<u32>, OutboxError> {
        let conn = self.lock();
        let banners: Vec<u32> = {
            let mut stmt = conn
                .prepare("SELECT DISTINCT banner_id FROM notices WHERE source = 'local' AND banner_id IS NOT NULL")
                .map_err(|e| self.err(e))?;
            let rows = stmt.query_map([], |r| r.get(0)).map_err(|e| self.err(e))?;
            rows.collect::<Result<_, _>>().map_err(|e| self.err(e))?
        };
        conn.execute("DELETE FROM notices WHERE source = 'local'", []).map_err(|e| self.err(e))?;
        Ok(banners)
    }

    /// A terminal reported that it shows this cloud session.
    pub fn attach_session(&self, session_id: &str, shown: &SessionShown, now: i64) -> Result<(), OutboxError> {
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
    pub fn set_reveal_note(&self, key: &str, note: &str) -> Result<(), OutboxError> {
        self.lock().execute("UPDATE notices SET reveal_note = ?2 WHERE key = ?1", params![key, note]).map(drop).map_err(|e| self.err(e))
    }

    /// Where a cloud session is shown, if a terminal said so.
    pub fn session_shown(&self, session_id: &str) -> Result<Option<SessionShown>, OutboxError> {
        self.lock()
            .query_row("SELECT workspace_id, surface_id, place FROM sessions WHERE session_id = ?1", [session_id], |r| {
                Ok(SessionShown { workspace_id: r.get(0)?, surface_id: r.get(1)?, place: read_place(r.get(2)?) })
            })
            .optional()
            .map_err(|e| self.err(e))
    }

    // ── own cancels ──────────────────────────────────────────────────────────────────────────

    pub fn note_cancel(&self, run_id: &str, now: i64) -> Result<(), OutboxError> {
        self.lock()
            .execute("INSERT OR IGNORE INTO cancel_notes (run_id, noted_at) VALUES (?1, ?2)", params![run_id, now])
            .map(drop)
            .map_err(|e| self.err(e))
    }

    // ── delivery ─────────────────────────────────────────────────────────────────────────────

    /// Notices saved but not yet told, oldest first.
    pub fn untold(&self) -> Result<Vec<StoredNotice>, OutboxError> {
        self.notices_where("state = 'untold' ORDER BY seq", [])
    }

    /// The keys and sequence numbers of the untold notices not of `source` saved after `seq`
    /// (all of them from `i64::MIN`), oldest first: what the deliverer looks at while a burst
    /// settles, many times a second, without whole rows. A notice saved later has a larger
    /// `seq`: the store's one connection saves them in turn.
    pub fn untold_keys_except(&self, source: &str, after: i64) -> Result<Vec<(i64, String)>, OutboxError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached("SELECT seq, key FROM notices WHERE state = 'untold' AND source != ?1 AND seq > ?2 ORDER BY seq")
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map(params![source, after], |r| Ok((r.get(0)?, r.get(1)?))).map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The most recent notices that are news (told or still untold), newest first.
    pub fn recent_notices(&self, limit: usize) -> Result<Vec<StoredNotice>, OutboxError> {
        self.notices_where("state != 'silent' ORDER BY seq DESC LIMIT ?1", [limit as i64])
    }

    /// What was said about one item (a hand-off's turns, a Run's end), oldest first, silent ones
    /// (seen but not news) included: the history's card.
    pub fn notices_for_item(&self, item: &str, limit: usize) -> Result<Vec<StoredNotice>, OutboxError> {
        self.notices_where("item = ?1 ORDER BY seq LIMIT ?2", params![item, limit as i64])
    }

    /// The newest notice told about an item.
    pub fn latest_told(&self, item: &str) -> Result<Option<StoredNotice>, OutboxError> {
        Ok(self.notices_where("item = ?1 AND state = 'told' ORDER BY seq DESC LIMIT 1", [item])?.pop())
    }

    /// The newest notice told with this banner id.
    pub fn notice_by_banner(&self, banner_id: u32) -> Result<Option<StoredNotice>, OutboxError> {
        Ok(self.notices_where("banner_id = ?1 ORDER BY seq DESC LIMIT 1", [banner_id])?.pop())
    }

    pub fn notice(&self, key: &str) -> Result<Option<StoredNotice>, OutboxError> {
        Ok(self.notices_where("key = ?1", [key])?.pop())
    }

    fn notices_where<P: rusqlite::Params>(&self, clause: &str, p: P) -> Result<Vec<StoredNotice>, OutboxError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT seq, key, item, source, status, title, body, urgent, created_at, state, told_at, banner_id, read_at,
                        cmux_id, subtitle, workspace_id, surface_id, delivery, sound, session_id, local_body, host, failure, place, reveal_note
                 FROM notices WHERE {clause}"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(p, |r| {
                Ok(StoredNotice {
                    seq: r.get(0)?,
                    key: r.get(1)?,
                    item: r.get(2)?,
                    source: r.get(3)?,
                    status: r.get(4)?,
                    title: r.get(5)?,
                    body: r.get(6)?,
                    urgent: r.get(7)?,
                    created_at: r.get(8)?,
                    state: r.get(9)?,
                    told_at: r.get(10)?,
                    banner_id: r.get(11)?,
                    read_at: r.get(12)?,
                    cmux_id: r.get(13)?,
                    subtitle: r.get(14)?,
                    workspace_id: r.get(15)?,
                    surface_id: r.get(16)?,
                    delivery: r.get(17)?,
                    sound: r.get(18)?,
                    session_id: r.get(19)?,
                    local_body: r.get(20)?,
                    host: r.get(21)?,
                    failure: r.get(22)?,
                    place: read_place(r.get(23)?),
                    reveal_note: r.get(24)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Marks a notice told: decided, with why, and the banner id the desktop gave it when it
    /// showed one.
    pub fn mark_told(&self, key: &str, banner_id: Option<u32>, delivery: &str, sound: bool, now: i64) -> Result<(), OutboxError> {
        self.lock()
            .prepare_cached(
                "UPDATE notices SET state = 'told', told_at = ?2, banner_id = ?3, delivery = ?4, sound = ?5
                 WHERE key = ?1 AND state = 'untold'",
            )
            .and_then(|mut s| s.execute(params![key, now, banner_id, delivery, sound]))
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Sets a notice aside whose banner the server would not show after its tries: decided,
    /// `not shown`, with the server's reason, so the history and `status` say it and the
    /// banners after it go out.
    pub fn set_aside(&self, key: &str, why: &str, now: i64) -> Result<(), OutboxError> {
        self.lock()
            .execute(
                "UPDATE notices SET state = 'told', told_at = ?2, delivery = ?3, failure = ?4 WHERE key = ?1 AND state = 'untold'",
                params![key, now, crate::policy::Reason::NotShown.as_str(), why],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Sets `synchronous` to FULL or NORMAL (the product's); for the benchmark that weighs the
    /// two (benches/outbox_commit.rs).
    #[doc(hidden)]
    pub fn set_synchronous_full(&self, full: bool) -> Result<(), OutboxError> {
        self.lock().pragma_update(None, "synchronous", if full { "FULL" } else { "NORMAL" }).map_err(|e| self.err(e))
    }

    /// While set, every write fails as on a full disk (SQLite refuses it); for tests of what a
    /// failed write does. Reads go on.
    #[doc(hidden)]
    pub fn refuse_writes(&self, refuse: bool) -> Result<(), OutboxError> {
        self.lock().pragma_update(None, "query_only", refuse).map_err(|e| self.err(e))
    }

    /// Decides a batch at once: every `keys` notice told as coalesced, and the one banner that
    /// stands for them saved untold — in one transaction, so a crash leaves neither half.
    pub fn coalesce(&self, keys: &[String], folded: Option<&str>, banner: &Notice, now: i64) -> Result<(), OutboxError> {
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| self.err(e))?;
        // The burst's leading notice, shown alone a moment before: its banner becomes the burst's.
        if let Some(key) = folded {
            tx.execute("UPDATE notices SET delivery = 'coalesced', banner_id = NULL WHERE key = ?1", [key]).map_err(|e| self.err(e))?;
        }
        {
            // Prepared once: a burst is thousands of keys.
            let mut mark = tx
                .prepare_cached(
                    "UPDATE notices SET state = 'told', told_at = ?2, delivery = 'coalesced' WHERE key = ?1 AND state = 'untold'",
                )
                .map_err(|e| self.err(e))?;
            for key in keys {
                mark.execute(params![key, now]).map_err(|e| self.err(e))?;
            }
        }
        insert_notice(&tx, banner, None, now, "untold").map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))
    }

    /// How many notices of a source showed a banner or were coalesced since `since`.
    pub fn shown_since(&self, source: &str, since: i64) -> Result<usize, OutboxError> {
        self.lock()
            .prepare_cached(SHOWN_SINCE)
            .and_then(|mut s| s.query_row(params![source, since], |r| r.get::<_, i64>(0)))
            .map(|n| n as usize)
            .map_err(|e| self.err(e))
    }

    /// Notices held back (paused, quiet hours) that no summary has covered yet, oldest first.
    pub fn held_unsummarized(&self) -> Result<Vec<StoredNotice>, OutboxError> {
        self.notices_where("delivery IN ('paused', 'quiet hours') AND summarized = 0 ORDER BY seq", [])
    }

    /// Saves the summary banner and marks what it covers, in one transaction.
    pub fn summarize(&self, keys: &[String], summary: &Notice, now: i64) -> Result<(), OutboxError> {
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| self.err(e))?;
        {
            let mut mark = tx.prepare_cached("UPDATE notices SET summarized = 1 WHERE key = ?1").map_err(|e| self.err(e))?;
            for key in keys {
                mark.execute([key]).map_err(|e| self.err(e))?;
            }
        }
        insert_notice(&tx, summary, None, now, "untold").map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))
    }

    /// Marks read what came from a surface the person is now looking at. Returns the keys.
    pub fn mark_read_for_surface(&self, workspace_id: &str, surface_id: Option<&str>, now: i64) -> Result<Vec<String>, OutboxError> {
        let conn = self.lock();
        let keys: Vec<String> = {
            let mut stmt = conn
                .prepare(
                    "SELECT n.key FROM notices n LEFT JOIN sessions s ON s.session_id = n.session_id
                     WHERE n.read_at IS NULL AND n.state = 'told'
                       AND ((n.workspace_id = ?1 AND (?2 IS NULL OR n.surface_id = ?2))
                         OR (s.workspace_id = ?1 AND (?2 IS NULL OR s.surface_id = ?2)))",
                )
                .map_err(|e| self.err(e))?;
            let rows = stmt.query_map(params![workspace_id, surface_id], |r| r.get(0)).map_err(|e| self.err(e))?;
            rows.collect::<Result<_, _>>().map_err(|e| self.err(e))?
        };
        for key in &keys {
            conn.execute("UPDATE notices SET read_at = ?2 WHERE key = ?1", params![key, now]).map_err(|e| self.err(e))?;
        }
        Ok(keys)
    }

    // ── small durable state ──────────────────────────────────────────────────────────────────

    pub fn get(&self, key: &str) -> Result<Option<String>, OutboxError> {
        self.lock().query_row("SELECT value FROM kv WHERE key = ?1", [key], |r| r.get(0)).optional().map_err(|e| self.err(e))
    }

    pub fn set(&self, key: &str, value: Option<&str>) -> Result<(), OutboxError> {
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

    /// Marks every told notice read. Returns their keys.
    pub fn mark_all_read(&self, now: i64) -> Result<Vec<String>, OutboxError> {
        let keys: Vec<String> =
            self.notices_where("state = 'told' AND read_at IS NULL ORDER BY seq", [])?.into_iter().map(|n| n.key).collect();
        self.lock().execute("UPDATE notices SET read_at = ?1 WHERE state = 'told' AND read_at IS NULL", [now]).map_err(|e| self.err(e))?;
        Ok(keys)
    }

    /// Marks every told notice of an item read (its card is on screen); returns their keys.
    pub fn mark_read_for_item(&self, item: &str, now: i64) -> Result<Vec<String>, OutboxError> {
        let keys: Vec<String> = self
            .notices_where("item = ?1 AND state = 'told' AND read_at IS NULL ORDER BY seq", [item])?
            .into_iter()
            .map(|n| n.key)
            .collect();
        self.lock()
            .execute("UPDATE notices SET read_at = ?2 WHERE item = ?1 AND state = 'told' AND read_at IS NULL", params![item, now])
            .map_err(|e| self.err(e))?;
        Ok(keys)
    }

    /// Marks a notice read (its item was viewed).
    pub fn mark_read(&self, key: &str, now: i64) -> Result<(), OutboxError> {
        self.lock()
            .execute("UPDATE notices SET read_at = ?2 WHERE key = ?1 AND read_at IS NULL", params![key, now])
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// The banner id of the item's most recent banner, so a new notice replaces it.
    pub fn live_banner(&self, item: &str) -> Result<Option<u32>, OutboxError> {
        self.lock()
            .query_row("SELECT banner_id FROM notices WHERE item = ?1 AND banner_id IS NOT NULL ORDER BY seq DESC LIMIT 1", [item], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))
    }

    // ── cards ────────────────────────────────────────────────────────────────────────────────

    pub fn card(&self, run_id: &str) -> Result<Option<Card>, OutboxError> {
        Ok(self.cards_where("run_id = ?1", [run_id])?.pop())
    }

    /// Cards that ended before `before` (past their week).
    pub fn cards_ended_before(&self, before: i64) -> Result<Vec<Card>, OutboxError> {
        self.cards_where("ended_at < ?1", [before])
    }

    fn cards_where<P: rusqlite::Params>(&self, clause: &str, p: P) -> Result<Vec<Card>, OutboxError> {
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

    pub fn drop_card(&self, run_id: &str) -> Result<(), OutboxError> {
        self.lock().execute("DELETE FROM cards WHERE run_id = ?1", [run_id]).map(drop).map_err(|e| self.err(e))
    }
}

const FOLLOW_COLUMNS: &str =
    "SELECT kind, id, account, cursor, started_at, changed_at, made_here, ended_at, end_reason, title FROM follows";

fn follow_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<FollowRow> {
    let kind: String = r.get(0)?;
    let cursor: i64 = r.get(3)?;
    Ok(FollowRow {
        kind: FollowKind::parse(&kind).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, format!("unknown follow kind {kind:?}").into())
        })?,
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

/// Counts a source's banners since a moment; its `delivery` term is the one of the partial
/// index `notices_shown` (schema 7), word for word, which is what lets SQLite use it.
const SHOWN_SINCE: &str = "SELECT COUNT(*) FROM notices WHERE source = ?1 AND told_at >= ?2 AND delivery IN ('shown', 'coalesced')";

/// How many prepared statements the store's connection keeps (rusqlite keeps 16 by default; the
/// store has about 20 it runs often).
const STATEMENTS_KEPT: usize = 32;

/// The store on its connection, as a write in a group commit sees it (in a savepoint of the
/// batch's transaction): what the follows write there, and what they read to decide it.
pub struct Grouped<'c>(&'c Connection);

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
            .execute(params![kind.as_str(), id, title])
            .map(|n| n > 0)
    }

    /// A Run's end: its notice (unless quiet), its card, the follow ended. Returns whether a
    /// notice became untold (the deliverer has work).
    pub fn record_run_end(&self, run: &crate::cloud::Run, notice: Option<&Notice>, account: &str, now: i64) -> rusqlite::Result<bool> {
        let tx = self.0;
        let outcome = run.outcome().and_then(|o| serde_json::to_value(o).ok()).and_then(|o| o.as_str().map(String::from));
        // The card shows the task with its lines; cleaned like every notice's words.
        let task = crate::notice::text::clean(&run.task, true);
        let receipt = run.receipt.as_ref().map(|r| serde_json::to_string(r).unwrap_or_default());
        let told = match notice {
            Some(n) => insert_notice(tx, n, Some(account), now, "untold")?,
            None => false,
        };
        tx.prepare_cached(
            "INSERT OR IGNORE INTO cards (run_id, task, outcome, receipt, notice_key, ended_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![run.id.as_str(), task, outcome.unwrap_or_default(), receipt, notice.map(|n| n.key.as_str()), now])?;
        let reason = if notice.is_some() { "ended" } else { "cancelled here" };
        tx.prepare_cached(
            "UPDATE follows SET ended_at = ?2, end_reason = ?3, changed_at = ?2 WHERE kind = 'run' AND id = ?1 AND ended_at IS NULL",
        )?
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
            Some(n) => insert_notice(tx, n, Some(account), now, if silent { "silent" } else { "untold" })? && !silent,
            None => false,
        };
        tx.prepare_cached("UPDATE follows SET cursor = MAX(cursor, ?2), changed_at = ?3 WHERE kind = 'handoff' AND id = ?1")?
            .execute(params![id, version as i64, now])?;
        if closes {
            tx.prepare_cached(
                "UPDATE follows SET ended_at = ?2, end_reason = 'closed' WHERE kind = 'handoff' AND id = ?1 AND ended_at IS NULL",
            )?
            .execute(params![id, now])?;
        }
        Ok(told)
    }
}

fn insert_notice(conn: &Connection, n: &Notice, account: Option<&str>, now: i64, state: &str) -> rusqlite::Result<bool> {
    let local = n.local.clone().unwrap_or_default();
    let inserted = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO notices (key, item, source, status, title, body, urgent, account, created_at, state,
                                        cmux_id, subtitle, workspace_id, surface_id, session_id, local_body, host, place)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        )?
        .execute(params![
            n.key,
            n.item,
            n.source.as_str(),
            n.status,
            n.title,
            n.body,
            n.urgent,
            account,
            now,
            state,
            n.local.as_ref().map(|l| l.cmux_id.clone()),
            local.subtitle,
            local.workspace_id,
            local.surface_id,
            n.session_id,
            n.local.as_ref().map(|l| l.body.clone()),
            n.host,
            place_json(local.place.as_ref())
        ])?;
    Ok(inserted == 1)
}

/// SQLite's file beside the database: `-wal` or `-shm` after its name.
fn beside(path: &Path, side: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(side);
    name.into()
}

fn classify(path: &Path, e: rusqlite::Error) -> OutboxError {
    use rusqlite::ErrorCode;
    let path = path.to_path_buf();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => OutboxError::Corrupt { path, detail: e.to_string() },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => OutboxError::Locked { path, detail: e.to_string() },
        _ => OutboxError::Sql { path, source: e },
    }
}

/// Which source a stored notice belongs to.
pub fn source_of(n: &StoredNotice) -> Option<Source> {
    Source::parse(&n.source)
}

#[cfg(test)]
mod tests;
