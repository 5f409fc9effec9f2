//! Group commit: writes that arrive while a commit is under way share the next one.
//!
//! Every commit writes its pages to the WAL and flushes it to the disk (docs/architecture.md
//! "Durable on return"). When 10,000 follows end at once, one commit each is thousands of WAL
//! writes and flushes; one commit for everything that queued meanwhile is a few. Each write runs in its own savepoint, so one that
//! fails is undone alone and the others still commit; each caller returns only once its write
//! is committed (or failed).
//!
//! Whoever holds the connection is the leader: it takes every queued write, runs them in one
//! transaction, commits, and hands each its result. A caller on a thread of its own
//! ([`Group::write`]) leads or waits for a leader on that thread. A caller on the async runtime
//! ([`Group::queue`]) only queues: the first to find no leader starts one ([`Group::lead`]), on
//! one blocking thread, which commits batch after batch until the queue is empty. So 10,000
//! ends at once wait in the queue, not on 10,000 threads (tokio would start 512 of them).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::lock::Locked;
use rusqlite::Connection;

/// A queued write: run it on the connection (or learn that the transaction could not begin),
/// and get back what to tell its caller once the commit is known.
type Job = Box<dyn FnOnce(Result<&Connection, &rusqlite::Error>) -> Finish + Send>;
type Finish = Box<dyn FnOnce(Option<&rusqlite::Error>) + Send>;

#[derive(Default)]
pub(super) struct Group {
    queue: Mutex<Queue>,
    /// How many commits the group made (for the tests).
    commits: AtomicUsize,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    /// A leader started by [`Group::queue`] is committing (or about to).
    leading: bool,
}

impl Group {
    /// Runs `write` in a savepoint of the next commit, and returns once that commit is made.
    pub(super) fn write<T: Send + 'static>(
        &self,
        conn: &Mutex<Connection>,
        write: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> rusqlite::Result<T> {
        self.write_each(conn, [write]).pop().unwrap_or_else(|| Err(lost()))
    }

    /// Runs each of `writes` in a savepoint of its own, in order, in the next commit (one commit
    /// for all: a client's pipelined notices), and returns their results once it is made.
    pub(super) fn write_each<T: Send + 'static, W>(
        &self,
        conn: &Mutex<Connection>,
        writes: impl IntoIterator<Item = W>,
    ) -> Vec<rusqlite::Result<T>>
    where
        W: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let answers: Vec<_> = {
            let mut queue = self.lock_queue();
            writes
                .into_iter()
                .map(|write| {
                    let (tx, rx) = sync_channel::<rusqlite::Result<T>>(1);
                    queue.jobs.push(job(write, move |result| {
                        let _ = tx.send(result);
                    }));
                    rx
                })
                .collect()
        };
        self.commit(conn);
        answers.into_iter().map(|rx| rx.recv().unwrap_or_else(|_| Err(lost()))).collect()
    }

    /// Queues `write` for the next commit; `reply` gets its result once that commit is known.
    /// Returns whether the caller must start a leader ([`Group::lead`]): none is running.
    pub(super) fn queue<T: Send + 'static>(
        &self,
        write: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
        reply: impl FnOnce(rusqlite::Result<T>) + Send + 'static,
    ) -> bool {
        let mut queue = self.lock_queue();
        queue.jobs.push(job(write, reply));
        !std::mem::replace(&mut queue.leading, true)
    }

    /// Queues each of `writes` (with its `reply`) for the next commit, together and in order:
    /// one commit for all, as [`Group::write_each`] makes, without a thread waiting for it.
    /// Returns whether the caller must start a leader ([`Group::lead`]).
    pub(super) fn queue_each<T: Send + 'static, W, R>(&self, writes: impl IntoIterator<Item = (W, R)>) -> bool
    where
        W: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
        R: FnOnce(rusqlite::Result<T>) + Send + 'static,
    {
        let mut queue = self.lock_queue();
        queue.jobs.extend(writes.into_iter().map(|(write, reply)| job(write, reply)));
        !std::mem::replace(&mut queue.leading, true)
    }

    /// Commits what is queued, batch after batch, until nothing is: the leader [`Group::queue`]
    /// asked for.
    pub(super) fn lead(&self, conn: &Mutex<Connection>) {
        loop {
            {
                let mut queue = self.lock_queue();
                if queue.jobs.is_empty() {
                    // Under the queue's lock: a write queued after this starts a new leader.
                    queue.leading = false;
                    return;
                }
            }
            self.commit(conn);
        }
    }

    pub(super) fn commits(&self) -> usize {
        self.commits.load(Ordering::Relaxed)
    }

    /// Commits every write queued by the time the transaction began, in one transaction.
    fn commit(&self, conn: &Mutex<Connection>) {
        // A leader before us took our writes along: no transaction to begin.
        if self.lock_queue().jobs.is_empty() {
            return;
        }
        let (conn, begun) = begin(conn);
        let batch = std::mem::take(&mut self.lock_queue().jobs);
        match begun {
            Ok(()) if batch.is_empty() => {
                let _ = conn.execute_batch("ROLLBACK");
            }
            Ok(()) => {
                tracing::trace!(writes = batch.len(), "one commit");
                run(&conn, batch, &self.commits);
            }
            Err(e) => {
                for job in batch {
                    job(Err(&e))(None);
                }
            }
        }
    }

    fn lock_queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.locked()
    }
}

/// What a caller whose write panicked, or was never run, is told.
pub(super) fn lost() -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
        Some("the write was lost: it panicked, or the store's writer stopped".into()),
    )
}

fn job<T: Send + 'static>(
    write: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    reply: impl FnOnce(rusqlite::Result<T>) + Send + 'static,
) -> Job {
    Box::new(move |conn| {
        let result = match conn {
            Ok(conn) => in_savepoint(conn, write),
            Err(began) => Err(copy(began)),
        };
        Box::new(move |commit_failed| {
            reply(match commit_failed {
                Some(e) => Err(copy(e)),
                None => result,
            });
        })
    })
}

/// Takes the connection with a write transaction begun. While another process holds the
/// database's write lock, the connection is let go between tries: a read on the async runtime
/// never waits behind a commit that waits for someone else. Gives up after `BUSY_TIMEOUT`.
fn begin(conn: &Mutex<Connection>) -> (MutexGuard<'_, Connection>, rusqlite::Result<()>) {
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        let held = conn.locked();
        let _ = held.busy_timeout(Duration::ZERO);
        let begun = control(&held, "BEGIN IMMEDIATE");
        let _ = held.busy_timeout(super::BUSY_TIMEOUT);
        match begun {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && started.elapsed() < super::BUSY_TIMEOUT =>
            {
                drop(held);
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            begun => return (held, begun),
        }
    }
}

/// One transaction for the whole batch, begun; every caller learns the commit's fate.
fn run(conn: &Connection, batch: Vec<Job>, commits: &AtomicUsize) {
    let finishes: Vec<Finish> = batch.into_iter().map(|job| job(Ok(conn))).collect();
    let commit = control(conn, "COMMIT");
    if commit.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    // Counted before anyone hears back: a caller that reads the count after its answer sees it.
    commits.fetch_add(1, Ordering::Relaxed);
    for finish in finishes {
        finish(commit.as_ref().err());
    }
}

/// A write that fails, or panics, is undone alone: the batch's others still commit, and the
/// leader goes on (a panic left unwinding would leave the transaction open for every write after).
fn in_savepoint<T>(conn: &Connection, write: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    control(conn, "SAVEPOINT grouped")?;
    let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| write(conn))).unwrap_or_else(|panic| {
        let why = panic.downcast_ref::<&str>().copied().or(panic.downcast_ref::<String>().map(String::as_str)).unwrap_or("a panic");
        tracing::error!("a store write panicked: {why}");
        Err(lost())
    });
    match written {
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
        while group.lock_queue().jobs.len() < 50 {
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
        assert!(group.lock_queue().jobs.is_empty());
    }

    #[test]
    fn writes_queued_from_the_runtime_share_a_commit_that_one_leader_makes_and_a_panic_fails_alone() {
        let (_dir, conn) = store();
        let group = Arc::new(Group::default());
        let (tx, rx) = std::sync::mpsc::channel();
        // Held, as a commit under way holds it, while 50 writes queue without a thread each.
        let held = conn.lock().unwrap();
        let mut leaders = 0;
        for k in 0..50 {
            let tx = tx.clone();
            let write = move |c: &Connection| {
                assert!(k != 13, "a bug in write {k}");
                c.execute("INSERT INTO t (k) VALUES (?1)", [k])
            };
            if group.queue(write, move |r| tx.send((k, r.is_ok())).unwrap()) {
                leaders += 1;
            }
        }
        assert_eq!(leaders, 1, "only the first write found no leader");
        let leader = {
            let (group, conn) = (group.clone(), conn.clone());
            std::thread::spawn(move || group.lead(&conn))
        };
        drop(held);
        leader.join().expect("the leader survives a write that panics");
        let mut failed: Vec<i32> = rx.iter().take(50).filter(|(_, ok)| !ok).map(|(k, _)| k).collect();
        failed.sort();
        assert_eq!(failed, [13]);
        assert_eq!(group.commits.load(Ordering::Relaxed), 1);
        let rows: i64 = conn.lock().unwrap().query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 49);
        // The leader left when the queue was empty: the next write starts one again.
        assert!(group.queue(|c| c.execute("INSERT INTO t (k) VALUES (100)", []), |_| {}));
    }

    #[test]
    fn writes_given_together_share_one_commit_and_are_answered_in_order() {
        let (_dir, conn) = store();
        let group = Group::default();
        // The middle one repeats the first's key: it fails alone, in its own savepoint.
        let writes = [1, 1, 2].map(|k| move |c: &Connection| c.execute("INSERT INTO t (k) VALUES (?1)", [k]));
        let results = group.write_each(&conn, writes);
        assert_eq!(results.iter().map(Result::is_ok).collect::<Vec<_>>(), [true, false, true]);
        assert_eq!(group.commits(), 1);
        let keys: Vec<i64> = conn
            .lock()
            .unwrap()
            .prepare("SELECT k FROM t ORDER BY k")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(keys, [1, 2]);
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
