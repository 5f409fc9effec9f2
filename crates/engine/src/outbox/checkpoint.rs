//! Checkpoints off the path of a write.
//!
//! SQLite's own checkpoint runs inside whichever commit crosses 1,000 pages of WAL: that caller
//! (a notice from the socket, a follow's end) then waits while 4 MB are copied into the
//! database and synced, which was most of the local socket's slowest round trips
//! (docs/architecture.md "Durable on return"). So the store turns that off and this thread,
//! with a connection of its own, checkpoints a moment after writes came (`PASSIVE`: it never
//! blocks a writer or a reader). It sleeps while nothing is written, so an idle app wakes for
//! nothing.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

/// How long after a write the checkpoint runs: the writes of a burst share one.
const AFTER: Duration = Duration::from_millis(100);

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
        self.state.lock().unwrap_or_else(|p| p.into_inner())
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
            .name("outbox-checkpoint".into())
            .spawn(move || run(&conn, &theirs))
            .map_err(|e| format!("starting the checkpoint thread: {e}"))?;
        Ok(Checkpointer { shared, thread: Some(thread) })
    }

    /// Takes over `conn`'s checkpoints: SQLite's own (inside a commit) off, and each commit
    /// tells this thread.
    pub(super) fn watch(&self, conn: &Connection) -> rusqlite::Result<()> {
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
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
    loop {
        let state = shared.lock();
        let state = shared.changed.wait_while(state, |s| !s.wrote && !s.closing).unwrap_or_else(|p| p.into_inner());
        // Wait out AFTER so that a burst's commits share one checkpoint. Closing cuts it short:
        // the connection's close then checkpoints, if it is the last.
        let (mut state, _) = shared.changed.wait_timeout_while(state, AFTER, |s| !s.closing).unwrap_or_else(|p| p.into_inner());
        if state.closing {
            return;
        }
        state.wrote = false;
        drop(state);
        match conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))) {
            Ok((frames, copied)) => tracing::trace!(frames, copied, "checkpoint"),
            Err(e) => tracing::info!("checkpointing the state database: {e}"),
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
