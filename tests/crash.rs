//! Exactly once across crashes: the real daemon is killed with SIGKILL at random moments while
//! Runs and hand-off turns end in the simulator, and restarted each time. Afterwards every end
//! was told (none lost) and none shows twice where the server can prevent it; where it cannot (a
//! server that replaces only by id), the second banners stay within the odds docs/notices.md §2
//! measured, or the soak fails. Run twice: against
//! the recording notification server made to act as GNOME Shell's does (no stack tags, a banner
//! replaced only by its id) and to answer `Notify` 300 ms after showing the banner, so that many
//! kills land between "posted" and "told"; and against dunst, a real server, counting the banners
//! a person would see on screen. Each prints its counts.
//!
//! The short form runs in `scripts/test`; `scripts/proofs` runs the long one (CMUX_TRAY_PROOFS=long:
//! at least 500 kills while 200 Runs and 200 hand-off turns end; docs/notices.md gives its figures).

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cmux_cloud_sim::state::NewHandoff;
use cmux_cloud_sim::{HandoffChange, RunChange};
use cmux_tray_e2e::{Cloud, Daemon, DesktopSession, Home, wait_until};
use rand::{Rng, SeedableRng};
use serde_json::Value;

/// How much a run does: Runs that end, hand-offs that go through two turns each (a needs-you and
/// a done in each), the kills at least, the life given to each daemon and the pause between two
/// events (ms). A daemon needs a life longer than a burst's settle (up to 2 s, docs/notices.md
/// "Bursts") to tell a backlog of hundreds: killed sooner every time, it never would.
struct Scale {
    runs: usize,
    handoffs: usize,
    kills: usize,
    life: std::ops::Range<u64>,
    between_events: std::ops::Range<u64>,
}

impl Scale {
    fn now() -> Scale {
        if std::env::var("CMUX_TRAY_PROOFS").as_deref() == Ok("long") {
            Scale { runs: 200, handoffs: 100, kills: 500, life: 500..3000, between_events: 400..2400 }
        } else {
            // A life of at least 400 ms: on a loaded machine a daemon needs about that to start,
            // sign in again and post, and shorter lives alone would never let it tell anything.
            Scale { runs: 24, handoffs: 4, kills: 5, life: 400..1500, between_events: 20..300 }
        }
    }
}

/// How long the slow server takes to answer `Notify`, after the banner is on screen.
const NOTIFY_DELAY_MS: u64 = 300;

/// The measured odds that a kill falling between a banner shown and its mark shows it a second
/// time at a server without stack tags: the higher of the two long soaks of docs/notices.md §2
/// (61 of 340, 18 %; 47 of 345, 13.6 %).
const TWICE_PER_KILL_IN_WINDOW: f64 = 0.18;

/// The most second banners `kills` in the window may show at those odds: the binomial mean and
/// three standard deviations (a run past it repeats more often than docs/notices.md says).
fn most_twice(kills: usize) -> usize {
    let (n, p) = (kills as f64, TWICE_PER_KILL_IN_WINDOW);
    (n * p + 3.0 * (n * p * (1.0 - p)).sqrt()).floor() as usize
}

/// The notice key each Notify call told (the engine sends it as a hint).
fn key_of(n: &Value) -> String {
    n["hints"]["x-cmux-tray-notice"].as_str().unwrap_or("").to_string()
}

/// The last `n` lines the daemons logged (every life appends to one file).
fn log_tail(home: &Home, n: usize) -> String {
    let text = std::fs::read_to_string(home.dir.path().join("daemon.log")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[test]
fn every_end_is_told_across_sigkills_at_a_tagless_slow_server_and_none_twice_where_tags_replace() {
    let scale = Scale::now();
    let desktop = DesktopSession::start_with_recorder(&["--tagless", "--notify-delay-ms", &NOTIFY_DELAY_MS.to_string()]);
    let chaos = crash_and_restart(&desktop, "tagless, slow Notify", &scale);
    let notifications = desktop.notifications();
    let mut posts: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for n in &notifications {
        posts.entry(key_of(n)).or_default().push(n);
    }
    let expected = &chaos.expected;
    let lost: Vec<&String> = expected.iter().filter(|k| !posts.contains_key(*k)).collect();
    let unexpected: Vec<&String> = posts.keys().filter(|k| !expected.contains(*k)).collect();
    let once = posts.values().filter(|p| p.len() == 1).count();
    // A crash between the post and its "told" mark posts again at the next launch. This server
    // replaces only by id, and the id of a banner whose answer never came is unknown: there the
    // repeat is a second banner. A server that honours the item's stack tag (dunst) replaces it.
    let reposted: Vec<&String> = posts.iter().filter(|(_, p)| p.len() > 1).map(|(k, _)| k).collect();
    let twice: Vec<&String> = posts.iter().filter(|(_, p)| p.iter().skip(1).any(|n| n["replaced"].is_null())).map(|(k, _)| k).collect();
    let tag = |n: &Value| n["hints"]["x-dunst-stack-tag"].as_str().unwrap_or("").to_string();
    let twice_with_tags: Vec<&String> =
        posts.iter().filter(|(_, p)| p.iter().skip(1).any(|n| n["replaced"].is_null() && tag(n) != tag(p[0]))).map(|(k, _)| k).collect();
    // Kills that fell while a banner was shown and its answer not yet back, or its mark not yet
    // saved (a second after the answer): the only moments a repeat may come from.
    let window = NOTIFY_DELAY_MS as f64 / 1000.0 + 1.0;
    let in_window = |k: f64| notifications.iter().any(|n| n["at"].as_f64().is_some_and(|at| at <= k && k <= at + window));
    let kills_in_window = chaos.kills.iter().filter(|k| in_window(**k)).count();
    let unexplained: Vec<&String> = twice
        .iter()
        .copied()
        .filter(|k| {
            let first = posts[*k][0]["at"].as_f64().unwrap_or(0.0);
            !chaos.kills.iter().any(|kill| first <= *kill && *kill <= first + window)
        })
        .collect();
    println!(
        "crash test (tagless, slow Notify): {} ends, {} SIGKILLs ({kills_in_window} while a banner was shown and not yet told); told once: {once}, re-posted: {}, lost: {}, shown twice here: {} ({:.2} % of kills, {:.1} % of kills in that window), shown twice at a server with stack tags: {}, told but not an end: {}",
        expected.len(),
        chaos.kills.len(),
        reposted.len(),
        lost.len(),
        twice.len(),
        twice.len() as f64 * 100.0 / chaos.kills.len().max(1) as f64,
        twice.len() as f64 * 100.0 / kills_in_window.max(1) as f64,
        twice_with_tags.len(),
        unexpected.len()
    );
    assert!(lost.is_empty(), "lost: {lost:?}");
    assert!(unexpected.is_empty(), "told but not an end: {unexpected:?}");
    assert!(twice_with_tags.is_empty(), "a repeat a server with stack tags would show twice: {twice_with_tags:?}");
    // Where a second banner cannot be avoided (docs/notices.md §2), it stays at the odds measured.
    let most = most_twice(kills_in_window);
    println!(
        "crash test (tagless, slow Notify): {} shown twice, at most {most} allowed for {kills_in_window} kills in the window",
        twice.len()
    );
    assert!(
        twice.len() <= most,
        "{} shown twice for {kills_in_window} kills in the window: more than the {:.0} % measured allows ({most})",
        twice.len(),
        TWICE_PER_KILL_IN_WINDOW * 100.0
    );
    assert!(unexplained.is_empty(), "shown twice with no kill while its first banner was being told: {unexplained:?}");
}

#[test]
fn every_end_shows_exactly_once_across_sigkills_on_dunst() {
    let scale = Scale::now();
    let desktop = DesktopSession::start_with_dunst_and_display();
    let chaos = crash_and_restart(&desktop, "dunst", &scale);
    // What a person sees: one banner per Run, one per hand-off (its turns replace each other),
    // none twice. dunst keeps them all on screen (timeout 0) or queued behind its limit.
    let count = |what: &str| desktop.dunstctl(&["count", what]).trim().parse::<usize>().expect("dunstctl count");
    let (displayed, waiting, history) = (count("displayed"), count("waiting"), count("history"));
    println!(
        "crash test (dunst): {} ends, {} SIGKILLs; banners on screen {displayed}, queued {waiting}, closed {history}",
        chaos.expected.len(),
        chaos.kills.len()
    );
    assert_eq!(history, 0, "no banner was closed: a replacement is in place");
    assert_eq!(displayed + waiting, scale.runs + scale.handoffs, "one banner per Run and per hand-off, none twice, none lost");
}

/// What a chaos run did: the notice keys that must have been told, and when each kill fell
/// (seconds since the epoch, as the recorder stamps its events).
struct Chaos {
    expected: BTreeSet<String>,
    kills: Vec<f64>,
}

fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Kills and restarts the daemon at random moments while every Run ends and each hand-off goes
/// through two turns, and on until `scale.kills` kills.
fn crash_and_restart(desktop: &DesktopSession, what: &str, scale: &Scale) -> Chaos {
    let (runs_n, handoffs_n) = (scale.runs, scale.handoffs);
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

    let runs: Vec<String> = (0..runs_n).map(|i| sim.create_run(&user.user_id, &format!("Run {i}"))).collect();
    let handoffs: Vec<String> = (0..handoffs_n)
        .map(|i| sim.create_handoff(NewHandoff { owner: user.user_id.clone(), title: Some(format!("Hand-off {i}")), ..Default::default() }))
        .collect();

    // The first launch adopts everything from the lists at sign-in.
    let daemon: Arc<Mutex<Option<Daemon>>> = Arc::new(Mutex::new(Some(home.daemon(&user.access_token))));
    // Followed: a wait held at the simulator for each (`status` lists at most 200 follows).
    wait_until("all items followed", Duration::from_secs(60), || runs.iter().chain(&handoffs).all(|id| sim.held_waits(id) > 0));

    // Kill and restart at random moments until the script is done and enough kills fell.
    let stop = Arc::new(AtomicBool::new(false));
    let kills: Arc<Mutex<Vec<f64>>> = Arc::default();
    let chaos = {
        let (stop, kills, daemon, home) = (stop.clone(), kills.clone(), daemon.clone(), home.clone());
        let token = user.access_token.clone();
        let (least, life) = (scale.kills, scale.life.clone());
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed);
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) || kills.lock().unwrap().len() < least {
                std::thread::sleep(Duration::from_millis(rng.random_range(life.clone())));
                if let Some(mut d) = daemon.lock().unwrap().take() {
                    d.kill();
                    kills.lock().unwrap().push(unix_now());
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
    let mut pending_runs: Vec<usize> = (0..runs_n).collect();
    let mut next_step = vec![0usize; handoffs_n];
    loop {
        let open: Vec<usize> = (0..handoffs_n).filter(|&h| next_step[h] < 4).collect();
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
                let limit = Duration::from_secs(if scale.kills > 100 { 180 } else { 60 });
                let start = std::time::Instant::now();
                while !home.notice_told(prev) {
                    assert!(
                        start.elapsed() < limit,
                        "{prev} not told within {limit:?} ({}); the daemons' log ends:\n{}",
                        home.notice_row(prev),
                        log_tail(&home, 40)
                    );
                    std::thread::sleep(Duration::from_millis(50));
                }
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
        std::thread::sleep(Duration::from_millis(rng.random_range(scale.between_events.clone())));
    }

    stop.store(true, Ordering::SeqCst);
    chaos.join().unwrap();
    let kills = std::mem::take(&mut *kills.lock().unwrap());
    wait_until("every end told", Duration::from_secs(120), || expected.iter().all(|k| home.notice_told(k)));
    // Told is after posted: a re-post still coming would have come before its mark.
    wait_until("nothing untold", Duration::from_secs(30), || home.untold_notices() == Some(0));
    assert!(kills.len() >= scale.kills, "the chaos must actually kill: {}", kills.len());
    assert_eq!(expected.len(), runs_n + 4 * handoffs_n);
    daemon.lock().unwrap().take();
    Chaos { expected, kills }
}
