//! Checkpoints off the path of a write.
//!
//! SQLite's own checkpoint runs inside whichever commit crosses 1,000 pages of WAL: that caller
//! (a notice from the socket, a follow's end) then waits while 4 MB are copied into the
//! database and synced, which was most of the local socket's slowest round trips
//! (docs/architecture.md "Durable on return"). So the store leaves that to long WALs (below)
//! and this thread, with a connection of its own, checkpoints a moment after writes came
//! (`PASSIVE`: it never blocks a writer or a reader). It sleeps while nothing is written, so an
//! idle app wakes for nothing.
//!
//! SQLite starts the WAL over only at a write that finds it wholly checkpointed, which a
//! `PASSIVE` checkpoint beside a writer that never pauses never leaves: under such a stream the
//! WAL grew without end (2.3 GB in 10 s of row 4's benchmark), cut back only once the stream
//! stopped. So the writer keeps SQLite's own checkpoint from `RESTART_AT` frames on: by then
//! this thread has copied all but the last moment's frames, the writer copies those, and its
//! next write starts the WAL over, in file space already there. (A `RESTART` from this thread
//! instead waited for a writer that never paused: the WAL still reached 70 MiB.) A WAL a burst
//! left long is cut to nothing once writes stopped for `QUIET`.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::lock::Locked;
use rusqlite::Connection;

/// How long after a write the checkpoint runs: the writes of a burst share one.
const AFTER: Duration = Duration::from_millis(100);
/// The WAL's length in frames (pages of 4 KiB) from which the writer checkpoints what this
/// thread has not yet, so that its next write starts the WAL over: 16 MiB, a few hundred
/// notices, so a writer does it rarely.
const RESTART_AT: i64 = 4_096;
/// The WAL file kept when it starts over (`journal_size_limit`): twice `RESTART_AT`'s 16 MiB, so
/// a long burst writes into file space it already has.
pub(super) const KEPT_WAL_BYTES: i64 = 2 * RESTART_AT * 4_096;
/// A WAL this long (4 MiB) after a checkpoint is cut to nothing once writes stop for `QUIET`.
const CUT_PAST: i64 = 1_024;
const QUIET: Duration = Duration::from_secs(1);

/// The handle the store holds. Dropping it ends the thread and closes its connection before
/// the drop returns, so a store that is gone holds no file open (and the last connection to
/// close folds the WAL into the database file).
pub(super) struct Checkpointer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// What the commits and the store tell the thread.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// A commit came since the last checkpoint began.
    wrote: bool,
    closing: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.locked()
    }

    /// Wakes the thread for the first commit only: the rest of a burst waits with it.
    fn wrote(&self) {
        let mut state = self.lock();
        if !state.wrote {
            state.wrote = true;
            self.changed.notify_one();
        }
    }
}

impl Checkpointer {
    /// Starts the thread on its own connection to `path` (already in WAL mode).
    pub(super) fn start(path: &Path) -> Result<Checkpointer, String> {
        let conn = Connection::open(path).map_err(|e| e.to_string())?;
        conn.busy_timeout(super::BUSY_TIMEOUT).map_err(|e| e.to_string())?;
        let shared = Arc::new(Shared::default());
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name("store-checkpoint".into())
            .spawn(move || run(&conn, &theirs))
            .map_err(|e| format!("starting the checkpoint thread: {e}"))?;
        Ok(Checkpointer { shared, thread: Some(thread) })
    }

    /// Takes over `conn`'s checkpoints: SQLite's own (inside a commit) only from `RESTART_AT`,
    /// and each commit tells this thread.
    pub(super) fn watch(&self, conn: &Connection) -> rusqlite::Result<()> {
        conn.pragma_update(None, "wal_autocheckpoint", RESTART_AT)?;
        let shared = self.shared.clone();
        conn.commit_hook(Some(move || {
            shared.wrote();
            false
        }));
        Ok(())
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.changed.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(conn: &Connection, shared: &Shared) {
    // The last checkpoint left a WAL of CUT_PAST frames or more: cut it when writes stop.
    let mut long = false;
    loop {
        let state = shared.lock();
        let waiting = |s: &mut State| !s.wrote && !s.closing;
        let state = if long {
            shared.changed.wait_timeout_while(state, QUIET, waiting).unwrap_or_else(|p| p.into_inner()).0
        } else {
            shared.changed.wait_while(state, waiting).unwrap_or_else(|p| p.into_inner())
        };
        if state.closing {
            return;
        }
        if !state.wrote {
            drop(state);
            checkpoint(conn, "TRUNCATE");
            long = false;
            continue;
        }
        // Wait out AFTER so that a burst's commits share one checkpoint. Closing cuts it short:
        // the connection's close then checkpoints, if it is the last.
        let (mut state, _) = shared.changed.wait_timeout_while(state, AFTER, |s| !s.closing).unwrap_or_else(|p| p.into_inner());
        if state.closing {
            return;
        }
        state.wrote = false;
        drop(state);
        long = checkpoint(conn, "PASSIVE") >= CUT_PAST;
    }
}

/// Runs one checkpoint in `mode`; the WAL's length in frames then (0 when it failed).
fn checkpoint(conn: &Connection, mode: &str) -> i64 {
    match conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))) {
        Ok((frames, copied)) => {
            tracing::trace!(mode, frames, copied, "checkpoint");
            frames
        }
        Err(e) => {
            tracing::info!(mode, "checkpointing the state database: {e}");
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WAL database with 2,000 pages written, past the 1,000 at which SQLite would have
    /// checkpointed inside the writer; `checkpointer`: the one watching its commits, if any.
    fn write_pages(path: &Path, checkpointer: Option<&Checkpointer>) -> Connection {
        let writer = Connection::open(path).unwrap();
        writer.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (v BLOB)").unwrap();
        if let Some(checkpointer) = checkpointer {
            checkpointer.watch(&writer).unwrap();
        }
        for _ in 0..2_000 {
            writer.execute("INSERT INTO t VALUES (zeroblob(4000))", []).unwrap();
        }
        writer
    }

    fn database_bytes(path: &Path) -> u64 {
        std::fs::metadata(path).unwrap().len()
    }

    fn wal_bytes(path: &Path) -> u64 {
        std::fs::metadata(path.with_extension("db-wal")).map(|m| m.len()).unwrap_or(0)
    }

    #[test]
    fn a_writer_that_never_pauses_keeps_the_wal_bounded_and_a_long_wal_is_cut_when_writes_stop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let checkpointer = Checkpointer::start(&path).unwrap();
        let writer = Connection::open(&path).unwrap();
        // The store's own settings: held back by the thread's TRUNCATE, the writer waits
        // (BUSY_TIMEOUT); a WAL started over keeps KEPT_WAL_BYTES.
        writer.busy_timeout(super::super::BUSY_TIMEOUT).unwrap();
        writer.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (v BLOB)").unwrap();
        writer.pragma_update(None, "journal_size_limit", KEPT_WAL_BYTES).unwrap();
        checkpointer.watch(&writer).unwrap();
        // 25,000 pages, about 100 MiB through the WAL, with no pause a checkpoint could finish in.
        let mut longest = 0;
        for _ in 0..25_000 {
            writer.execute("INSERT INTO t VALUES (zeroblob(4000))", []).unwrap();
            longest = longest.max(wal_bytes(&path));
        }
        let mib = |b: u64| b as f64 / 1_048_576.0;
        assert!(longest < 48 << 20, "the WAL grew to {:.1} MiB while 100 MiB went through it", mib(longest));
        assert!(longest > 16 << 20, "the WAL reached {:.1} MiB, under the length that starts it over", mib(longest));

        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while wal_bytes(&path) > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(AFTER);
        }
        assert_eq!(wal_bytes(&path), 0, "the WAL is cut to nothing once writes stopped");
        let rows: i64 = writer.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 25_000);
    }

    #[test]
    fn writes_reach_the_database_file_through_the_thread_and_not_without_it() {
        let dir = tempfile::tempdir().unwrap();
        // Without the thread (and with SQLite's own checkpoint off) the pages stay in the WAL.
        let alone = dir.path().join("alone.db");
        let _w = write_pages(&alone, None);
        std::thread::sleep(AFTER * 3);
        assert!(database_bytes(&alone) < 100_000, "nothing checkpointed: {} bytes", database_bytes(&alone));

        let path = dir.path().join("c.db");
        let checkpointer = Checkpointer::start(&path).unwrap();
        let _w = write_pages(&path, Some(&checkpointer));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while database_bytes(&path) < 2_000 * 4_000 && std::time::Instant::now() < deadline {
            std::thread::sleep(AFTER);
        }
        assert!(database_bytes(&path) >= 2_000 * 4_000, "checkpointed into the file: {} bytes", database_bytes(&path));
    }
}
