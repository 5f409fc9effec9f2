//! Exactly once across crashes: the real daemon is killed with SIGKILL at random moments while
//! Runs and hand-off turns end in the simulator, and restarted each time. Afterwards every end
//! was told (none lost) and none shows twice. Run twice: against the recording notification
//! server (every Notify call and what it replaced, by notice key), and against dunst, a real
//! server, counting the banners a person would see on screen. It prints its counts.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cmux_cloud_sim::state::NewHandoff;
use cmux_cloud_sim::{HandoffChange, RunChange};
use cmux_tray_e2e::{Cloud, Daemon, DesktopSession, Home, wait_until};
use rand::{Rng, SeedableRng};
use serde_json::Value;

const RUNS: usize = 24;
const HANDOFFS: usize = 4;

/// The notice key each Notify call told (the engine sends it as a hint).
fn key_of(n: &Value) -> String {
    n["hints"]["x-cmux-tray-notice"].as_str().unwrap_or("").to_string()
}

/// Whether the engine's store has this notice told (read as `status` would, from the file: the
/// daemon may be down between a kill and its restart).
fn told(home: &Home, key: &str) -> bool {
    let Ok(db) = rusqlite::Connection::open_with_flags(home.database(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY) else { return false };
    let _ = db.busy_timeout(Duration::from_secs(2));
    match db.query_row("SELECT state = 'told' FROM notices WHERE key = ?1", [key], |r| r.get::<_, bool>(0)) {
        Ok(told) => told,
        Err(rusqlite::Error::QueryReturnedNoRows) => false,
        Err(e) => {
            eprintln!("reading {}: {e}", home.database().display());
            false
        }
    }
}

/// How many notices the store holds untold.
fn untold(home: &Home) -> usize {
    let Ok(db) = rusqlite::Connection::open_with_flags(home.database(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY) else {
        return usize::MAX;
    };
    let _ = db.busy_timeout(Duration::from_secs(2));
    db.query_row("SELECT COUNT(*) FROM notices WHERE state = 'untold'", [], |r| r.get::<_, i64>(0)).map_or(usize::MAX, |n| n as usize)
}

#[test]
fn every_end_is_told_exactly_once_across_sigkills_counted_at_the_recording_server() {
    let desktop = DesktopSession::start();
    let (expected, kills) = crash_and_restart(&desktop, "recorder");
    let notifications = desktop.notifications();
    let mut posts: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for n in &notifications {
        posts.entry(key_of(n)).or_default().push(n);
    }
    let lost: Vec<&String> = expected.iter().filter(|k| !posts.contains_key(*k)).collect();
    let unexpected: Vec<&String> = posts.keys().filter(|k| !expected.contains(*k)).collect();
    let once = posts.values().filter(|p| p.len() == 1).count();
    // A crash between the post and its "told" mark posts again at the next launch; the repeat
    // must replace the first banner (same id or same item tag), never show a second one.
    let reposted: Vec<(&String, usize)> = posts.iter().filter(|(_, p)| p.len() > 1).map(|(k, p)| (k, p.len())).collect();
    let twice: Vec<&String> = posts.iter().filter(|(_, p)| p.iter().skip(1).any(|n| n["replaced"].is_null())).map(|(k, _)| k).collect();
    println!(
        "crash test (recorder): {} ends, {kills} SIGKILLs; told once: {once}, re-posted after a crash and replaced: {}, lost: {}, shown twice: {}, told but not an end: {}",
        expected.len(),
        reposted.len(),
        lost.len(),
        twice.len(),
        unexpected.len()
    );
    assert!(lost.is_empty(), "lost: {lost:?}");
    assert!(twice.is_empty(), "shown twice: {twice:?}");
    assert!(unexpected.is_empty(), "told but not an end: {unexpected:?}");
}

#[test]
fn every_end_shows_exactly_once_across_sigkills_on_dunst() {
    let desktop = DesktopSession::start_with_dunst_and_display();
    let (expected, kills) = crash_and_restart(&desktop, "dunst");
    // What a person sees: one banner per Run, one per hand-off (its turns replace each other),
    // none twice. dunst keeps them all on screen (timeout 0) or queued behind its limit.
    let count = |what: &str| desktop.dunstctl(&["count", what]).trim().parse::<usize>().expect("dunstctl count");
    let (displayed, waiting, history) = (count("displayed"), count("waiting"), count("history"));
    println!(
        "crash test (dunst): {} ends, {kills} SIGKILLs; banners on screen {displayed}, queued {waiting}, closed {history}",
        expected.len()
    );
    assert_eq!(history, 0, "no banner was closed: a replacement is in place");
    assert_eq!(displayed + waiting, RUNS + HANDOFFS, "one banner per Run and per hand-off, none twice, none lost");
}

/// Kills and restarts the daemon at random moments while every Run ends and each hand-off goes
/// through two turns; returns the notice keys that must have been told, and how many kills.
fn crash_and_restart(desktop: &DesktopSession, what: &str) -> (BTreeSet<String>, usize) {
    let seed: u64 = std::env::var("CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    println!("crash test ({what}) seed {seed} (CRASH_SEED={seed} repeats it)");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);

    let cloud = Cloud::start();
    let sim = cloud.sim().clone();
    let user = sim.add_user("ada@example.com");
    let home = Arc::new(Home::new(&cloud.origin(), &desktop.address));
    // One banner per end, so each end can be counted at the server (bursts would coalesce).
    std::fs::create_dir_all(home.config_file().parent().unwrap()).unwrap();
    std::fs::write(home.config_file(), "[delivery]\ncoalesce_count = 1000\n").unwrap();

    let runs: Vec<String> = (0..RUNS).map(|i| sim.create_run(&user.user_id, &format!("Run {i}"))).collect();
    let handoffs: Vec<String> = (0..HANDOFFS)
        .map(|i| sim.create_handoff(NewHandoff { owner: user.user_id.clone(), title: Some(format!("Hand-off {i}")), ..Default::default() }))
        .collect();

    // The first launch adopts everything from the lists at sign-in.
    let daemon: Arc<Mutex<Option<Daemon>>> = Arc::new(Mutex::new(Some(home.daemon(&user.access_token))));
    wait_until("all items followed", Duration::from_secs(30), || {
        home.status()["follows"].as_array().unwrap().iter().filter(|f| f["endedAt"].is_null()).count() == RUNS + HANDOFFS
    });

    // Kill and restart at random moments until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let kills = Arc::new(AtomicUsize::new(0));
    let chaos = {
        let (stop, kills, daemon, home) = (stop.clone(), kills.clone(), daemon.clone(), home.clone());
        let token = user.access_token.clone();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed);
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(rng.random_range(150..900)));
                if let Some(mut d) = daemon.lock().unwrap().take() {
                    d.kill();
                    kills.fetch_add(1, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(rng.random_range(0..250)));
                *daemon.lock().unwrap() = Some(home.daemon(&token));
            }
        })
    };

    // The script: every Run ends (some failed, some cancelled elsewhere); each hand-off goes
    // through two turns, each with a needs-you and an end. A hand-off's next step waits until
    // its previous one was told, as a person answering it would.
    let mut expected: BTreeSet<String> = BTreeSet::new();
    // Shuffle Run ends and hand-off steps together, keeping each hand-off's steps in order.
    let mut order: Vec<(usize, usize)> = Vec::new();
    let mut pending_runs: Vec<usize> = (0..RUNS).collect();
    let mut next_step = [0usize; HANDOFFS];
    loop {
        let open: Vec<usize> = (0..HANDOFFS).filter(|&h| next_step[h] < 4).collect();
        if pending_runs.is_empty() && open.is_empty() {
            break;
        }
        if !pending_runs.is_empty() && (open.is_empty() || rng.random_bool(0.6)) {
            let i = rng.random_range(0..pending_runs.len());
            order.push((0, pending_runs.swap_remove(i)));
        } else {
            let h = open[rng.random_range(0..open.len())];
            order.push((1, h * 4 + next_step[h]));
            next_step[h] += 1;
        }
    }
    let mut last_key: BTreeMap<usize, String> = BTreeMap::new();
    for (kind, n) in order {
        if kind == 0 {
            let status = ["succeeded", "failed", "succeeded", "cancelled"][n % 4];
            sim.update_run(&runs[n], RunChange::status(status));
            expected.insert(format!("run:{}", runs[n]));
        } else {
            let (h, step) = (n / 4, n % 4);
            if let Some(prev) = last_key.get(&h) {
                wait_until(&format!("{prev} told before the next step"), Duration::from_secs(60), || told(&home, prev));
            }
            let id = &handoffs[h];
            let (change, key) = match step {
                0 => (HandoffChange::status("needs-you"), format!("handoff:{id}:1:needs-you")),
                1 => (
                    HandoffChange { status: Some("done".into()), summary: Some("First".into()), ..Default::default() },
                    format!("handoff:{id}:1:done"),
                ),
                2 => (
                    HandoffChange { next_turn: true, status: Some("needs-you".into()), ..Default::default() },
                    format!("handoff:{id}:2:needs-you"),
                ),
                _ => (
                    HandoffChange { status: Some("done".into()), summary: Some("Second".into()), close: true, ..Default::default() },
                    format!("handoff:{id}:2:done"),
                ),
            };
            sim.update_handoff(id, change);
            expected.insert(key.clone());
            last_key.insert(h, key);
        }
        std::thread::sleep(Duration::from_millis(rng.random_range(20..300)));
    }

    stop.store(true, Ordering::SeqCst);
    chaos.join().unwrap();
    let kills = kills.load(Ordering::SeqCst);
    wait_until("every end told", Duration::from_secs(90), || expected.iter().all(|k| told(&home, k)));
    // Told is after posted: a re-post still coming would have come before its mark.
    wait_until("nothing untold", Duration::from_secs(30), || untold(&home) == 0);
    assert!(kills >= 5, "the chaos must actually kill: {kills}");
    assert_eq!(expected.len(), RUNS + 4 * HANDOFFS);
    daemon.lock().unwrap().take();
    (expected, kills)
}
