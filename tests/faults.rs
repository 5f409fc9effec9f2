//! The real `cmux-tray daemon` through a network that fails: a fault relay between it and the
//! simulator (support/faults.rs) adds latency with jitter, limits the bandwidth, resets
//! connections in the middle of a body, accepts and never answers, closes slowly, cuts the link;
//! and a name that stops resolving, and a suspend (the wall clock jumps, the connections are
//! gone). After each: nothing lost, nothing told twice, no backoff past 60 s, the follows resume
//! within 5 s of the network coming back, and `status` says "offline" while it is out.
//!
//! The banners are counted at a notification server that honours no stack tag (the recorder's
//! `--tagless`, as GNOME Shell and KDE): every `Notify` call for an item is a banner a person
//! sees, so a second one for the same Run is counted, never hidden as a replacement. Each fault
//! is checked to have happened: the relay's resets and accepted connections, nothing told while
//! the network is out, and the suspended daemon's wall clock moved.
//!
//! Each prints what it saw. The short form runs in CI (out for 60 s); the long form keeps the
//! network out for 5 minutes: `CMUX_TRAY_FAULTS=long cargo test -p cmux-tray-e2e --test faults
//! -- --nocapture` (docs/testing.md).

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use cmux_cloud_sim::RunChange;
use cmux_tray_e2e::faults::{FaultRelay, Toxics};
use cmux_tray_e2e::network::{Front, Nginx, TestCa};
use cmux_tray_e2e::{Cloud, Daemon, DesktopSession, Home, NOTHING_MORE, bin, signal, wait_until};

/// docs/cloud-api.md: no wait between two requests for one item is longer than 60 s.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// The follows resume this soon after the network is back (the bound).
const RESUME_WITHIN: Duration = Duration::from_secs(5);
const LIMIT: Duration = Duration::from_secs(60);

/// How long the network stays out: 60 s in CI, 5 minutes in the long form.
fn out_for() -> Duration {
    match std::env::var("CMUX_TRAY_FAULTS").as_deref() {
        Ok("long") => Duration::from_secs(300),
        _ => Duration::from_secs(60),
    }
}

/// A daemon whose cloud is the simulator behind the fault relay (or behind more, per test).
struct Faulty {
    desktop: DesktopSession,
    cloud: Cloud,
    relay: FaultRelay,
    token: String,
    user_id: String,
    home: Home,
}

impl Faulty {
    /// The relay in front of the simulator itself (h2c on loopback).
    fn new() -> Faulty {
        let cloud = Cloud::start();
        let relay = FaultRelay::start(cloud.running.addr);
        let origin = relay.origin();
        Faulty::around(cloud, relay, &origin, &[])
    }

    fn around(cloud: Cloud, relay: FaultRelay, origin: &str, env: &[(&str, String)]) -> Faulty {
        // No stack tags: a second banner for an item is a second `Notify` call recorded, never a
        // replacement the server made quietly.
        let desktop = DesktopSession::start_with_recorder(&["--tagless"]);
        let user = cloud.sim().add_user("ada@example.com");
        let mut home = Home::new(origin, &desktop.address);
        home.env.extend(env.iter().map(|(k, v)| (k.to_string(), v.clone())));
        // Every end its own banner: what each counts is its own.
        std::fs::create_dir_all(home.config_file().parent().unwrap()).unwrap();
        std::fs::write(home.config_file(), "[delivery]\nschema = 1\ncoalesce_count = 1000\n").unwrap();
        Faulty { desktop, cloud, relay, token: user.access_token, user_id: user.user_id, home }
    }

    fn daemon(&self) -> Daemon {
        self.home.daemon(&self.token)
    }

    fn follow(&self, n: usize, what: &str) -> Vec<String> {
        (0..n)
            .map(|i| {
                let run = self.cloud.sim().create_run(&self.user_id, &format!("{what} {i}"));
                let out = self.home.run(&["follow", "run", &run]);
                assert!(out.status.success(), "follow: {}", String::from_utf8_lossy(&out.stderr));
                run
            })
            .collect()
    }

    fn held(&self, runs: &[String]) -> bool {
        runs.iter().all(|r| self.cloud.sim().held_waits(r) > 0)
    }

    fn end(&self, runs: &[String]) {
        for run in runs {
            self.cloud.sim().update_run(run, RunChange::status("succeeded"));
        }
    }

    /// Every `Notify` call per item (the item key the engine sends as a hint; this server
    /// ignores it): a Run's end is one banner, so any count past 1 is a banner told twice.
    fn posted(&self) -> HashMap<String, usize> {
        let mut posted = HashMap::new();
        for n in self.desktop.notifications() {
            *posted.entry(n["hints"]["x-cmux-tray-item"].as_str().unwrap_or_default().to_string()).or_default() += 1;
        }
        posted
    }

    fn all_told(&self, runs: &[String]) -> bool {
        let posted = self.posted();
        runs.iter().all(|r| posted.contains_key(&format!("run:{r}")))
    }

    /// Whether no banner at all came for any of `runs`.
    fn none_told(&self, runs: &[String]) -> bool {
        let posted = self.posted();
        runs.iter().all(|r| !posted.contains_key(&format!("run:{r}")))
    }

    /// The relay's counts: connections it accepted, connections it reset.
    fn relayed(&self) -> (usize, usize) {
        (self.relay.accepted.load(Ordering::Relaxed), self.relay.resets.load(Ordering::Relaxed))
    }

    fn offline_said(&self) -> Option<String> {
        let status = self.home.status();
        status["problems"]
            .as_array()?
            .iter()
            .filter_map(|p| p["text"].as_str())
            .find(|p| p.starts_with("Offline: the cloud cannot be reached ("))
            .map(String::from)
    }

    /// What the run saw, printed, then checked.
    fn report(&self, fault: &str, daemon: &Daemon, ended: &[String], resumed: Option<Duration>, offline: Option<String>) {
        // A second banner would come within the time a notice takes to become one.
        std::thread::sleep(NOTHING_MORE);
        let posted = self.posted();
        let lost = ended.iter().filter(|r| !posted.contains_key(&format!("run:{r}"))).count();
        let twice = posted.values().filter(|&&n| n > 1).count();
        let longest = longest_backoff(&daemon.log_text());
        let (accepted, resets) = self.relayed();
        println!(
            "{fault}: {} ends, {lost} lost, {twice} told twice ({} Notify calls at a server without stack tags), longest backoff {longest:?}, resumed {}, offline said: {}; the relay accepted {accepted} connections and reset {resets}",
            ended.len(),
            posted.values().sum::<usize>(),
            resumed.map(|d| format!("{:.1} s after the network came back", d.as_secs_f64())).unwrap_or_else(|| "(stayed up)".into()),
            offline.as_deref().unwrap_or("no")
        );
        assert_eq!(lost, 0, "{fault}: ends lost");
        assert_eq!(twice, 0, "{fault}: ends told twice: {posted:?}");
        assert!(longest <= MAX_BACKOFF, "{fault}: a backoff of {longest:?}");
        if let Some(resumed) = resumed {
            assert!(resumed <= RESUME_WITHIN, "{fault}: the follows resumed {resumed:?} after the network came back");
        }
    }
}

/// The longest backoff the daemon chose (its log's `backoff_ms`).
fn longest_backoff(log: &str) -> Duration {
    let ms = log.match_indices("backoff_ms=").filter_map(|(i, m)| {
        let digits: String = log[i + m.len()..].chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u64>().ok()
    });
    Duration::from_millis(ms.max().unwrap_or(0))
}

/// Waits for `cond`, and how long it took.
fn time_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    wait_until(what, limit, &mut cond);
    start.elapsed()
}

/// A fault that stays on while Runs end: every end still told, once. Returns the relay's counts
/// (connections accepted, connections reset) for the caller to check what the fault did.
fn under(toxics: Toxics, fault: &str) -> (usize, usize) {
    let f = Faulty::new();
    f.relay.set(toxics);
    let daemon = f.daemon();
    let runs = f.follow(8, fault);
    wait_until("every wait held", LIMIT, || f.held(&runs));
    f.end(&runs[..4]);
    wait_until("the first four told", LIMIT, || f.all_told(&runs[..4]));
    std::thread::sleep(Duration::from_millis(600));
    f.end(&runs[4..]);
    wait_until("the last four told", LIMIT, || f.all_told(&runs));
    f.report(fault, &daemon, &runs, None, None);
    f.relayed()
}

#[test]
fn latency_with_jitter() {
    let (accepted, resets) = under(
        Toxics { latency: Duration::from_millis(150), jitter: Duration::from_millis(200), ..Default::default() },
        "latency 150 ms + up to 200 ms",
    );
    assert!(accepted >= 1 && resets == 0, "everything went through the relay, nothing reset: {accepted} accepted, {resets} reset");
}

#[test]
fn a_bandwidth_limit() {
    let (accepted, resets) = under(Toxics { bandwidth: 2_000, ..Default::default() }, "2 kB/s towards the engine");
    assert!(accepted >= 1 && resets == 0, "everything went through the relay, nothing reset: {accepted} accepted, {resets} reset");
}

#[test]
fn connections_reset_in_the_middle_of_a_body() {
    // Every connection is reset after 1,500 bytes: its SETTINGS and a few answers, then a cut
    // into the next.
    let (accepted, resets) = under(Toxics { reset_after: Some(1_500), ..Default::default() }, "a reset after 1,500 bytes");
    // The fault happened, and the engine connected anew after each reset (two resets in each
    // run seen: the ends after them come over connections too short-lived to reach 1,500 bytes).
    assert!(resets >= 1, "the relay reset {resets} connections");
    assert!(accepted > resets, "{accepted} connections accepted for {resets} resets: the engine did not come back after one");
}

#[test]
fn a_slow_close() {
    let f = Faulty::new();
    let daemon = f.daemon();
    let runs = f.follow(6, "slow close");
    wait_until("every wait held", LIMIT, || f.held(&runs));
    // The server closes every connection; the engine hears of it 10 s later.
    f.relay.set(Toxics { slow_close: Duration::from_secs(10), ..Default::default() });
    let (before, _) = f.relayed();
    f.relay.close_all();
    f.end(&runs[..3]);
    wait_until("told across the slow close", LIMIT, || f.all_told(&runs[..3]));
    wait_until("the rest held again", LIMIT, || f.held(&runs[3..]));
    f.end(&runs[3..]);
    wait_until("the rest told", LIMIT, || f.all_told(&runs));
    f.report("a close 10 s late", &daemon, &runs, None, None);
    let (after, resets) = f.relayed();
    assert!(after > before, "the engine never connected again after the server closed: {before} accepted before, {after} after");
    assert_eq!(resets, 0, "a slow close resets nothing");
}

/// The network is out for [`out_for`] (the way `go_out` takes it), Runs end meanwhile, then it
/// is back (`come_back`): nothing told while out, offline said, the ends told and the follows
/// held again within 5 s. `accepted_while_out`: how many connections the relay may accept while
/// the network is out (what the fault lets through to it).
fn out_and_back(
    f: &Faulty,
    daemon: &Daemon,
    fault: &str,
    accepted_while_out: std::ops::RangeInclusive<usize>,
    go_out: impl FnOnce(),
    come_back: impl FnOnce(),
) {
    let runs = f.follow(10, fault);
    wait_until("every wait held", LIMIT, || f.held(&runs));
    go_out();
    let (before, _) = f.relayed();
    let out = Instant::now();
    std::thread::sleep(Duration::from_secs(3));
    f.end(&runs[..5]);
    let mut offline = None;
    while out.elapsed() < out_for() {
        if offline.is_none() {
            offline = f.offline_said();
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(f.none_told(&runs[..5]), "{fault}: told while the network was out: {:?}", f.posted());
    let while_out = f.relayed().0 - before;
    println!("{fault}: the relay accepted {while_out} connections while the network was out");
    assert!(accepted_while_out.contains(&while_out), "{fault}: {while_out} connections accepted while out, not {accepted_while_out:?}");
    come_back();
    let resumed = time_until("the ends told and the follows held again", LIMIT, || f.all_told(&runs[..5]) && f.held(&runs[5..]));
    assert!(offline.is_some(), "{fault}: status never said offline while out for {:?}", out_for());
    wait_until("offline no more", LIMIT, || f.offline_said().is_none());
    f.end(&runs[5..]);
    wait_until("the rest told", LIMIT, || f.all_told(&runs));
    f.report(fault, daemon, &runs, Some(resumed), offline);
}

#[test]
fn a_server_that_accepts_and_never_answers() {
    let f = Faulty::new();
    let daemon = f.daemon();
    let fault = format!("accepts and never answers for {} s", out_for().as_secs());
    // Accepted and held: the engine gives up on a silent connection and tries again meanwhile.
    let (silent, back) = (|| f.relay.set(Toxics { silent: true, ..Default::default() }), || f.relay.set(Toxics::default()));
    out_and_back(&f, &daemon, &fault, 1..=usize::MAX, silent, back);
}

#[test]
fn the_link_cut_and_back() {
    let f = Faulty::new();
    let daemon = f.daemon();
    let fault = format!("the link cut for {} s", out_for().as_secs());
    // A cut link accepts nothing (but the one accept the relay may already be waiting in).
    let (cut, mended) = (|| f.relay.set(Toxics { cut: true, ..Default::default() }), || f.relay.set(Toxics::default()));
    out_and_back(&f, &daemon, &fault, 0..=1, cut, mended);
}

/// The cloud's name stops resolving (the daemon's own `/etc/hosts`, in a mount namespace of its
/// own) and the connections there were end; then it resolves again.
#[test]
fn a_name_that_stops_resolving() {
    const NAME: &str = "cloud.cmux.test";
    let cloud = Cloud::start();
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new(dir.path(), &[NAME]);
    let nginx = Nginx::start(dir.path(), cloud.running.addr, &ca, Front::default());
    let relay = FaultRelay::start(std::net::SocketAddr::from(([127, 0, 0, 1], nginx.port)));
    let origin = format!("https://{NAME}:{}", relay.port);
    let f = Faulty::around(cloud, relay, &origin, &[("SSL_CERT_FILE", ca.ca.display().to_string())]);
    let hosts = dir.path().join("hosts");
    let resolves = format!("127.0.0.1 localhost\n127.0.0.1 {NAME}\n");
    std::fs::write(&hosts, &resolves).unwrap();
    let daemon = f.home.daemon_from(in_own_hosts(&f.home, &hosts), &f.token, &[]);
    let fault = format!("the name unresolvable for {} s", out_for().as_secs());
    // No name, no connection: the relay accepts none while out.
    out_and_back(
        &f,
        &daemon,
        &fault,
        0..=0,
        || {
            // Rewritten in place: the daemon's bind mount sees the same file.
            std::fs::write(&hosts, "127.0.0.1 localhost\n").unwrap();
            f.relay.close_all();
        },
        || std::fs::write(&hosts, &resolves).unwrap(),
    );
    assert!(daemon.log_text().contains("the name could not be resolved"), "{}", daemon.log_text());
}

/// `cmux-tray daemon` with `hosts` as its `/etc/hosts`: a user and mount namespace of its own
/// (unprivileged, as the person), the file bound over the system's.
fn in_own_hosts(home: &Home, hosts: &Path) -> std::process::Command {
    let script = format!("mount --bind '{}' /etc/hosts && exec '{}' daemon", hosts.display(), bin("cmux-tray").display());
    home.program(Path::new("unshare"), &["--user", "--map-root-user", "--mount", "sh", "-c", &script])
}

/// A suspend: the machine sleeps (the daemon stopped), the network forgets its connections,
/// and at the wake the wall clock has jumped two hours while the daemon's monotonic clock did
/// not (libfaketime moves the wall clock alone). The dead connections are found by PING and the
/// follows resume within 5 s of the wake.
#[test]
fn a_suspend_and_a_wake() {
    let libfaketime = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("libfaketime (package faketime)");
    let cloud = Cloud::start();
    let relay = FaultRelay::start(cloud.running.addr);
    let clock = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(clock.path(), "+0\n").unwrap();
    let origin = relay.origin();
    let env = [
        ("LD_PRELOAD", libfaketime.to_string()),
        ("FAKETIME_TIMESTAMP_FILE", clock.path().display().to_string()),
        ("FAKETIME_NO_CACHE", "1".to_string()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_string()),
    ];
    let f = Faulty::around(cloud, relay, &origin, &env);
    let daemon = f.daemon();
    // The clock below moves only if libfaketime is in the daemon.
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", daemon.pid())).unwrap();
    assert!(maps.contains("libfaketime"), "libfaketime is not loaded in the daemon (LD_PRELOAD={libfaketime})");
    let runs = f.follow(10, "suspend");
    wait_until("every wait held", LIMIT, || f.held(&runs));
    // Short of the waits' own deadline (25 s), so that PING finds the dead connections; the long
    // form sleeps past it.
    let asleep = match out_for() < Duration::from_secs(300) {
        true => Duration::from_secs(12),
        false => out_for(),
    };
    signal(daemon.pid(), "STOP");
    let (before, _) = f.relayed();
    f.relay.strand_all();
    f.end(&runs[..5]);
    std::thread::sleep(asleep);
    std::fs::write(clock.path(), "+2h\n").unwrap();
    signal(daemon.pid(), "CONT");
    let resumed = time_until("the ends told and the follows held again", LIMIT, || f.all_told(&runs[..5]) && f.held(&runs[5..]));
    f.end(&runs[5..]);
    wait_until("the rest told", LIMIT, || f.all_told(&runs));
    let fault = format!("asleep {} s, the wall clock 2 h on", asleep.as_secs());
    f.report(&fault, &daemon, &runs, Some(resumed), None);
    // The daemon's own wall clock jumped: its log's last line is stamped two hours on.
    let (logged, now) = (last_logged_time(&daemon.log_text()), jiff::Timestamp::now());
    let ahead = logged.map(|t| t.duration_since(now));
    println!(
        "{fault}: the daemon's wall clock {ahead:?} ahead of the test's; the relay accepted {} new connections after the wake",
        f.relayed().0 - before
    );
    assert!(ahead.is_some_and(|a| a >= jiff::SignedDuration::from_mins(110)), "the daemon's clock did not move: {logged:?} at {now}");
    // The stranded connections were given up: the follows came back on new ones.
    assert!(f.relayed().0 > before, "no new connection after the wake");
}

/// The time on the daemon's last log line that starts with one (RFC 3339, the log's own stamp).
fn last_logged_time(log: &str) -> Option<jiff::Timestamp> {
    log.lines().rev().find_map(|l| l.split_whitespace().next()?.parse().ok())
}
