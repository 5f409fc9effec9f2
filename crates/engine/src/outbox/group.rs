//! Group commit: writes that arrive while a commit is under way share the next one.
//!
//! Every commit writes its pages to the WAL (docs/architecture.md "Durable on return"). When
//! 10,000 follows end at once, one commit each is thousands of WAL writes; one commit for
//! everything that queued meanwhile is a few. Each write runs in its own savepoint, so one that
//! fails is undone alone and the others still commit; each caller returns only once its write
//! is committed (or failed).
//!
//! Whoever holds the connection is the leader: it takes every queued write, runs them in one
//! transaction, commits, and hands each its result. A caller whose write a leader took waits
//! for it on its own channel.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};

use rusqlite::Connection;

/// A queued write: run it on the connection (or learn that the transaction could not begin),
/// and get back what to tell its caller once the commit is known.
type Job = Box<dyn FnOnce(Result<&Connection, &rusqlite::Error>) -> Finish + Send>;
type Finish = Box<dyn FnOnce(Option<&rusqlite::Error>) + Send>;

#[derive(Default)]
pub(super) struct Group {
    queue: Mutex<Vec<Job>>,
    /// How many commits the group made (for the tests, and the trace of batch sizes).
    commits: AtomicUsize,
}

impl Group {
    /// Runs `write` in a savepoint of the next commit, and returns once that commit is made.
    pub(super) fn write<T: Send + 'static>(
        &self,
        conn: &Mutex<Connection>,
        write: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> rusqlite::Result<T> {
        let (tx, rx) = sync_channel::<rusqlite::Result<T>>(1);
        self.lock_queue().push(job(write, tx));
        {
            let conn = conn.lock().unwrap_or_else(|p| p.into_inner());
            // Empty when a leader before us took our write along.
            let batch = std::mem::take(&mut *self.lock_queue());
            if !batch.is_empty() {
                tracing::trace!(writes = batch.len(), "one commit");
                run(&conn, batch);
                self.commits.fetch_add(1, Ordering::Relaxed);
            }
        }
        rx.recv().unwrap_or_else(|_| Err(rusqlite::Error::InvalidQuery))
    }

    fn lock_queue(&self) -> std::sync::MutexGuard<'_, Vec<Job>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn job<T: Send + 'static>(
    write: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    tx: SyncSender<rusqlite::Result<T>>,
) -> Job {
    Box::new(move |conn| {
        let result = match conn {
            Ok(conn) => in_savepoint(conn, write),
            Err(began) => Err(copy(began)),
        };
        Box::new(move |commit_failed| {
            let _ = tx.send(match commit_failed {
                Some(e) => Err(copy(e)),
                None => result,
            });
        })
    })
}

/// One transaction for the whole batch; every caller learns the commit's fate.
fn run(conn: &Connection, batch: Vec<Job>) {
    let finishes: Vec<Finish> = match control(conn, "BEGIN IMMEDIATE") {
        Ok(()) => batch.into_iter().map(|job| job(Ok(conn))).collect(),
        Err(e) => {
            for job in batch {
                job(Err(&e))(None);
            }
            return;
        }
    };
    let commit = control(conn, "COMMIT");
    if commit.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    for finish in finishes {
        finish(commit.as_ref().err());
    }
}

fn in_savepoint<T>(conn: &Connection, write: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    control(conn, "SAVEPOINT grouped")?;
    match write(conn) {
        Ok(v) => control(conn, "RELEASE grouped").map(|()| v),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK TO grouped; RELEASE grouped");
            Err(e)
        }
    }
}

/// A transaction's own statement, prepared once: a burst runs these thousands of times.
fn control(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// The same failure again, for each caller it concerns (rusqlite's error is not `Clone`).
fn copy(e: &rusqlite::Error) -> rusqlite::Error {
    match e {
        rusqlite::Error::SqliteFailure(code, message) => rusqlite::Error::SqliteFailure(*code, message.clone()),
        other => rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR), Some(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Barrier};

    use super::*;

    fn store() -> (tempfile::TempDir, Arc<Mutex<Connection>>) {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("g.db")).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (k INTEGER PRIMARY KEY)").unwrap();
        (dir, Arc::new(Mutex::new(conn)))
    }

    #[test]
    fn writes_queued_during_a_commit_share_the_next_and_a_failing_one_fails_alone() {
        let (_dir, conn) = store();
        let group = Arc::new(Group::default());
        // Hold the connection, as a commit under way does, while 50 writers queue up.
        let held = conn.lock().unwrap();
        let start = Arc::new(Barrier::new(51));
        let writers: Vec<_> = (0..50)
            .map(|i| {
                let (group, conn, start) = (group.clone(), conn.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    // Key 7 twice (writers 7 and 49): whichever the leader runs second fails,
                    // in its own savepoint.
                    let k = if i == 49 { 7 } else { i };
                    group.write(&conn, move |c| c.execute("INSERT INTO t (k) VALUES (?1)", [k]))
                })
            })
            .collect();
        start.wait();
        while group.lock_queue().len() < 50 {
            std::thread::yield_now();
        }
        drop(held);
        let results: Vec<_> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        let failed: Vec<usize> = (0..50).filter(|&i| results[i].is_err()).collect();
        assert!(failed == [7] || failed == [49], "only the duplicate key fails: {failed:?}");
        let conn = conn.lock().unwrap();
        let rows: i64 = conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 49);
        // One leader ran all 50 in one transaction.
        assert_eq!(group.commits.load(Ordering::Relaxed), 1);
        assert!(group.lock_queue().is_empty());
    }

    #[test]
    fn a_write_alone_commits_alone() {
        let (_dir, conn) = store();
        let group = Group::default();
        assert_eq!(group.write(&conn, |c| c.execute("INSERT INTO t (k) VALUES (1)", [])).unwrap(), 1);
        assert!(group.write(&conn, |c| c.execute("INSERT INTO t (k) VALUES (1)", [])).is_err());
        let n: i64 = conn.lock().unwrap().query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
    }
}
