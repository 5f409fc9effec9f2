//! A crash copy: the daemon's database, its WAL and its shared-memory index are copied at random
//! moments while Runs end, as a process crash leaves them. The daemon is stopped (SIGSTOP) for
//! the copy so that the three files are of one instant, perhaps with a commit half written, and
//! then goes on. Each copy must open (SQLite's integrity check), and a daemon started on it
//! tells what was untold then, and never a notice the copy holds as told.
//!
//! The copy is read through the page cache, which holds every write the daemon made: it is what
//! a crash of the process (or a kill) leaves, not a power cut, which also loses what the kernel
//! had not written to the disk. tests/powercut.rs cuts the power of a VM for that.
//!
//! The short form runs in `scripts/test`; `scripts/proofs` runs the long one (CMUX_TRAY_PROOFS=long).

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cmux_cloud_sim::RunChange;
use cmux_tray_e2e::{Cloud, DesktopSession, Home, signal, wait_until};
use rand::{Rng, SeedableRng};

/// Runs that end, and the cuts made while they do.
fn scale() -> (usize, usize) {
    if std::env::var("CMUX_TRAY_PROOFS").as_deref() == Ok("long") { (300, 50) } else { (30, 3) }
}

/// The files SQLite keeps for the store: the database, its write-ahead log, its index of it.
const SUFFIXES: [&str; 3] = ["", "-wal", "-shm"];

fn copy_store(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::set_permissions(to.parent().unwrap(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    for suffix in SUFFIXES {
        let source = PathBuf::from(format!("{}{suffix}", from.display()));
        if source.exists() {
            std::fs::copy(&source, format!("{}{suffix}", to.display())).unwrap();
        }
    }
}

/// The integrity check's answer and the keys told, read from a copy of a copy (opening one may
/// recover its WAL into it; the daemon gets the untouched one).
fn read_copy(cut: &Path) -> (String, BTreeSet<String>) {
    let probe = tempfile::tempdir().unwrap();
    let db = probe.path().join("state.sqlite3");
    copy_store(cut, &db);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap_or_else(|e| format!("{e}"));
    let mut told = BTreeSet::new();
    let mut stmt = conn.prepare("SELECT key FROM notices WHERE state = 'told'").unwrap();
    for key in stmt.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        told.insert(key.unwrap());
    }
    (check, told)
}

#[test]
fn a_store_copied_at_a_crash_opens_and_tells_nothing_twice() {
    let (runs_n, cuts_n) = scale();
    let seed: u64 = std::env::var("CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    println!("crash copy seed {seed} (CRASH_SEED={seed} repeats it)");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);

    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let sim = cloud.sim().clone();
    let user = sim.add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    // One banner per end (bursts would coalesce), here and in the homes of the copies.
    let config = "[delivery]\ncoalesce_count = 1000\n";
    std::fs::create_dir_all(home.config_file().parent().unwrap()).unwrap();
    std::fs::write(home.config_file(), config).unwrap();
    let runs: Vec<String> = (0..runs_n).map(|i| sim.create_run(&user.user_id, &format!("Run {i}"))).collect();
    let daemon = home.daemon(&user.access_token);
    // Followed: a wait held at the simulator for each (`status` lists at most 200 follows).
    wait_until("all Runs followed", Duration::from_secs(60), || runs.iter().all(|id| sim.held_waits(id) > 0));

    // The Runs end in a random order at a random pace; the cuts fall at random ends.
    let cuts_dir = tempfile::tempdir().unwrap();
    let mut order: Vec<usize> = (0..runs_n).collect();
    let mut cut_at: BTreeSet<usize> = BTreeSet::new();
    while cut_at.len() < cuts_n {
        cut_at.insert(rng.random_range(0..runs_n));
    }
    let mut cuts = Vec::new();
    for step in 0..runs_n {
        let i = order.swap_remove(rng.random_range(0..order.len()));
        sim.update_run(&runs[i], RunChange::status(["succeeded", "failed"][i % 2]));
        if cut_at.contains(&step) {
            // Somewhere after the end: while it settles, is saved, posted or marked told.
            std::thread::sleep(Duration::from_millis(rng.random_range(0..1200)));
            signal(daemon.pid(), "STOP");
            let cut = cuts_dir.path().join(format!("cut-{step}/state.sqlite3"));
            copy_store(&home.database(), &cut);
            signal(daemon.pid(), "CONT");
            cuts.push(cut);
        }
        std::thread::sleep(Duration::from_millis(rng.random_range(50..700)));
    }
    let ended: BTreeSet<String> = runs.iter().map(|r| format!("run:{r}")).collect();
    drop(daemon);

    // Each copy, as the crash left it: it opens, and a daemon on it tells the rest once.
    let (mut told_in_copies, mut told_again, mut lost) = (0, Vec::new(), Vec::new());
    for cut in &cuts {
        let (check, told) = read_copy(cut);
        assert_eq!(check, "ok", "the copy {} does not pass SQLite's integrity check", cut.display());
        told_in_copies += told.len();
        let after = DesktopSession::start();
        let home = Home::new(&cloud.origin(), &after.address);
        std::fs::create_dir_all(home.config_file().parent().unwrap()).unwrap();
        std::fs::write(home.config_file(), config).unwrap();
        copy_store(cut, &home.database());
        let daemon = home.daemon(&user.access_token);
        wait_until("every end told after the cut", Duration::from_secs(60), || ended.iter().all(|k| home.notice_told(k)));
        drop(daemon);
        let posted: Vec<String> =
            after.notifications().iter().map(|n| n["hints"]["x-cmux-tray-notice"].as_str().unwrap_or("").to_string()).collect();
        told_again.extend(posted.iter().filter(|k| told.contains(*k)).cloned());
        lost.extend(ended.iter().filter(|k| !told.contains(*k) && !posted.contains(k)).cloned());
    }
    println!(
        "crash copy: {} copies while {runs_n} Runs ended; every copy opened (integrity ok); told in the copies {told_in_copies}; told again after the copy {}; lost {}",
        cuts.len(),
        told_again.len(),
        lost.len()
    );
    assert!(told_again.is_empty(), "told again after a crash: {told_again:?}");
    assert!(lost.is_empty(), "never told after a crash: {lost:?}");
}
