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
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::Duration;

use rusqlite::Connection;

/// How long after a write the checkpoint runs: the writes of a burst share one.
const AFTER: Duration = Duration::from_millis(100);

/// The handle the store's connection holds; the thread ends when it is dropped.
pub(super) struct Checkpointer {
    wrote: SyncSender<()>,
}

impl Checkpointer {
    /// Starts the thread on its own connection to `path` (already in WAL mode).
    pub(super) fn start(path: &Path) -> Result<Checkpointer, String> {
        let conn = Connection::open(path).map_err(|e| e.to_string())?;
        conn.busy_timeout(super::BUSY_TIMEOUT).map_err(|e| e.to_string())?;
        let (wrote, rx) = sync_channel(1);
        std::thread::Builder::new()
            .name("outbox-checkpoint".into())
            .spawn(move || run(&conn, &rx))
            .map_err(|e| format!("starting the checkpoint thread: {e}"))?;
        Ok(Checkpointer { wrote })
    }

    /// Takes over `conn`'s checkpoints: SQLite's own (inside a commit) off, and each commit
    /// signals this thread (`try_send` never blocks; one pending signal covers any number).
    pub(super) fn watch(&self, conn: &Connection) -> rusqlite::Result<()> {
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let signal = self.wrote.clone();
        conn.commit_hook(Some(move || {
            let _ = signal.try_send(());
            false
        }));
        Ok(())
    }
}

fn run(conn: &Connection, wrote: &Receiver<()>) {
    while wrote.recv().is_ok() {
        std::thread::sleep(AFTER);
        // Signals that came while sleeping are covered by this checkpoint.
        while wrote.try_recv().is_ok() {}
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
