//! The real `cmux-tray daemon` on the networks people have: behind a company's CONNECT proxy
//! that alone resolves the cloud's name, through nginx from Debian as a cloud's HTTP/2 front
//! (TLS with a test CA the engine trusts through `SSL_CERT_FILE`) that allows few streams and
//! closes connections with GOAWAY, and against a loopback server that speaks HTTP/1.1 only.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use cmux_cloud_sim::RunChange;
use cmux_tray_e2e::network::{ConnectProxy, Front, Listen, Nginx, TestCa};
use cmux_tray_e2e::{Cloud, DesktopSession, Home, NOTHING_MORE, wait_until};

const LIMIT: Duration = Duration::from_secs(30);
/// A name no resolver knows but the proxy's table.
const CLOUD_NAME: &str = "cloud.cmux.invalid";

/// A desktop, the simulator behind nginx, and a test CA.
struct World {
    desktop: DesktopSession,
    cloud: Cloud,
    token: String,
    user_id: String,
    dir: tempfile::TempDir,
    ca: TestCa,
}

impl World {
    fn new() -> World {
        let desktop = DesktopSession::start();
        let cloud = Cloud::start();
        let user = cloud.sim().add_user("ada@example.com");
        let dir = tempfile::tempdir().unwrap();
        let ca = TestCa::new(dir.path(), &[CLOUD_NAME]);
        World { desktop, cloud, token: user.access_token, user_id: user.user_id, dir, ca }
    }

    fn nginx(&self, front: Front) -> Nginx {
        Nginx::start(self.dir.path(), self.cloud.running.addr, &self.ca, front)
    }

    /// A home whose cloud is `origin`, trusting the test CA, with more environment.
    fn home(&self, origin: &str, env: &[(&str, &str)]) -> Home {
        let mut home = Home::new(origin, &self.desktop.address);
        home.env.push(("SSL_CERT_FILE".into(), self.ca.ca.display().to_string()));
        home.env.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        home
    }

    fn follow(&self, home: &Home, title: &str) -> String {
        let run = self.cloud.sim().create_run(&self.user_id, title);
        let out = home.run(&["follow", "run", &run]);
        assert!(out.status.success(), "follow {run}: {}", String::from_utf8_lossy(&out.stderr));
        run
    }
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

#[test]
fn behind_a_companys_proxy_a_runs_end_is_told_once_and_every_connection_goes_through_it() {
    let world = World::new();
    let nginx = world.nginx(Front::default());
    let proxy = ConnectProxy::start(&[(CLOUD_NAME, loopback(nginx.port))], None);
    let origin = format!("https://{CLOUD_NAME}:{}", nginx.port);
    let home = world.home(&origin, &[("HTTPS_PROXY", &proxy.url()), ("NO_PROXY", "localhost,127.0.0.1")]);
    let _daemon = home.daemon(&world.token);

    let run = world.follow(&home, "Behind the proxy");
    wait_until("the Run's wait held at the cloud", LIMIT, || world.cloud.sim().held_waits(&run) > 0);
    world.cloud.sim().update_run(&run, RunChange::status("succeeded"));
    wait_until("the Run's banner", LIMIT, || !world.desktop.notifications().is_empty());
    std::thread::sleep(NOTHING_MORE);
    let told = world.desktop.notifications();
    assert_eq!(told.len(), 1, "one banner: {told:#?}");
    assert_eq!(told[0]["summary"], "Behind the proxy");

    let status = home.status();
    assert_eq!(status["network"], format!("through {} (HTTPS_PROXY)", proxy.url()), "status names the proxy");
    assert!(status["problems"].as_array().unwrap().is_empty(), "{status:#}");
    // The name resolves at the proxy alone, and every connection nginx served was a tunnel.
    let tunnels = proxy.log();
    assert!(!tunnels.is_empty());
    assert!(tunnels.iter().all(|t| *t == format!("tunnel {CLOUD_NAME}:{}", nginx.port)), "{tunnels:?}");
    let served = nginx.connections();
    assert!(served.len() <= tunnels.len(), "nginx served {} connections, the proxy tunnelled {}", served.len(), tunnels.len());
    assert_http2_alone(&nginx);
}

/// docs/configuration.md: the release feed is asked "through the same proxy" as the cloud. Its
/// name resolves at the proxy alone, so a feed asked straight is never asked at all.
#[test]
fn the_release_feed_is_asked_through_the_companys_proxy_too() {
    const FEED_NAME: &str = "releases.cmux.invalid";
    let world = World::new();
    let nginx = world.nginx(Front::default());
    let proxy = ConnectProxy::start(&[(CLOUD_NAME, loopback(nginx.port)), (FEED_NAME, loopback(nginx.port))], None);
    let origin = format!("https://{CLOUD_NAME}:{}", nginx.port);
    let home = world.home(&origin, &[("HTTPS_PROXY", &proxy.url()), ("NO_PROXY", "localhost,127.0.0.1")]);
    let feed = format!("https://{FEED_NAME}:{}/cmux-tray/release.json", nginx.port);
    let set = home.run(&["config", "set", "updates.feed", &feed]);
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    let _daemon = home.daemon(&world.token);
    let asked = format!("tunnel {FEED_NAME}:{}", nginx.port);
    wait_until("the feed asked through the proxy", LIMIT, || proxy.log().contains(&asked));
}

/// Every request nginx served came over HTTP/2 (its `$server_protocol`), as ALPN should settle.
fn assert_http2_alone(nginx: &Nginx) {
    let protocols = nginx.protocols();
    println!("nginx served: {protocols:?}");
    assert!(protocols.get("HTTP/2.0").is_some_and(|&n| n > 0), "no request over HTTP/2: {protocols:?}");
    assert_eq!(protocols.len(), 1, "a request over something else than HTTP/2: {protocols:?}");
}

/// The GOAWAY frames the daemon received (h2 logs every frame it reads at debug level, which
/// [`FRAMES_LOGGED`] turns on).
fn goaways_received(log: &str) -> usize {
    log.lines().filter(|l| l.contains("frame=GoAway")).count()
}

/// The daemon's log filter with every HTTP/2 frame it receives.
const FRAMES_LOGGED: &str = "info,cmux_tray_engine::service=debug,h2::codec::framed_read=debug";

#[test]
fn a_proxy_that_refuses_is_said_in_words_at_once_and_its_password_never_shows() {
    let world = World::new();
    let nginx = world.nginx(Front::default());
    let origin = format!("https://{CLOUD_NAME}:{}", nginx.port);

    // 407: the proxy wants a password the URL does not give.
    let strict = ConnectProxy::start(&[(CLOUD_NAME, loopback(nginx.port))], Some("alice:s3cret"));
    let home = world.home(&origin, &[("HTTPS_PROXY", &strict.url())]);
    let mut daemon = home.daemon(&world.token);
    let started = Instant::now();
    let problem =
        || home.status()["problems"].as_array().unwrap().iter().filter_map(|p| p["text"].as_str().map(String::from)).collect::<Vec<_>>();
    wait_until("the proxy's refusal in the status", LIMIT, || problem().iter().any(|p| p.contains("407")));
    let said = problem().join("\n");
    assert!(said.starts_with("Offline: the cloud cannot be reached ("), "{said}");
    assert!(said.contains(&format!("the proxy {} asks for a user name and password (407", strict.url())), "{said}");
    assert!(started.elapsed() < Duration::from_secs(10), "said at once, not after the backoff: {:?}", started.elapsed());
    // A follow asked meanwhile is told why, not left hanging.
    let run = world.cloud.sim().create_run(&world.user_id, "Through the strict proxy");
    let asked = Instant::now();
    let out = home.run(&["follow", "run", &run]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not signed in yet") && err.contains("407"), "{err}");
    assert!(asked.elapsed() < Duration::from_secs(5), "answered at once: {:?}", asked.elapsed());
    daemon.terminate();

    // With the password in its URL the same proxy passes, and the password shows nowhere.
    let with_password = format!("http://alice:s3cret@127.0.0.1:{}", strict.port);
    let home = world.home(&origin, &[("HTTPS_PROXY", &with_password)]);
    let daemon = home.daemon(&world.token);
    let run = world.follow(&home, "Through the strict proxy");
    wait_until("held", LIMIT, || world.cloud.sim().held_waits(&run) > 0);
    world.cloud.sim().update_run(&run, RunChange::status("failed"));
    wait_until("the Run's banner", LIMIT, || world.desktop.notifications().len() == 1);
    let status = home.run(&["status"]);
    let shown = format!("{}{}{}", String::from_utf8_lossy(&status.stdout), daemon.log_text(), String::from_utf8_lossy(&status.stderr));
    assert!(shown.contains(&format!("through {} (HTTPS_PROXY)", strict.url())), "{shown}");
    assert!(!shown.contains("s3cret"), "the proxy's password was shown: {shown}");

    // 502: a proxy that cannot resolve the cloud's name.
    let lost = ConnectProxy::start(&[], None);
    let home = world.home(&origin, &[("HTTPS_PROXY", &lost.url())]);
    let _daemon = home.daemon(&world.token);
    wait_until("the 502 in the status", LIMIT, || problem_of(&home).iter().any(|p| p.contains("502")));
    let said = problem_of(&home).join("\n");
    assert!(said.contains(&format!("refused a tunnel to {CLOUD_NAME}:{}: 502 Bad Gateway", nginx.port)), "{said}");
}

fn problem_of(home: &Home) -> Vec<String> {
    home.status()["problems"].as_array().unwrap().iter().filter_map(|p| p["text"].as_str().map(String::from)).collect()
}

/// nginx allowing 16 streams a connection and closing each after 20 requests (GOAWAY): 60
/// follows ended one by one each get their banner within a second of the end, and none starves.
#[test]
fn through_nginx_with_16_streams_and_frequent_goaway_every_end_is_told_within_a_second() {
    const FOLLOWS: usize = 60;
    let world = World::new();
    let nginx = world.nginx(Front { listen: Listen::TlsH2, streams: 16, requests: 20 });
    let origin = format!("https://localhost:{}", nginx.port);
    let home = world.home(&origin, &[("CMUX_TRAY_LOG", FRAMES_LOGGED)]);
    // Each end its own banner: no burst is grouped (docs/notices.md §3), so each is timed alone.
    std::fs::create_dir_all(home.config_file().parent().unwrap()).unwrap();
    std::fs::write(home.config_file(), "[delivery]\nschema = 1\ncoalesce_count = 1000\n").unwrap();
    let daemon = home.daemon(&world.token);

    let runs: Vec<String> = (0..FOLLOWS).map(|i| world.follow(&home, &format!("Run {i}"))).collect();
    let starving = |from: usize| runs[from..].iter().filter(|r| world.cloud.sim().held_waits(r) == 0).count();
    // Figures first, the verdict after: a failing run still prints what it saw.
    let held_in = Instant::now();
    let all_held = within(Duration::from_secs(15), || starving(0) == 0);
    let (held_after, starving_at_start) = (held_in.elapsed(), starving(0));

    let mut latencies = Vec::new();
    let mut starving_midway = 0;
    for (i, run) in runs.iter().enumerate() {
        // A chain ends when 0.5 s pass without a notice: each end is the first of its own.
        std::thread::sleep(Duration::from_millis(600));
        let ended = Instant::now();
        world.cloud.sim().update_run(run, RunChange::status("succeeded"));
        within(LIMIT, || world.desktop.notifications().len() > i);
        latencies.push(ended.elapsed());
        if i == FOLLOWS / 2 {
            // A follow between two waits (asked again after its hold) is not starving; one whose
            // wait is missing for seconds is.
            within(Duration::from_secs(3), || starving(i + 1) == 0);
            starving_midway = starving(i + 1);
        }
    }
    latencies.sort();
    let (p50, p95, worst) = (latencies[FOLLOWS / 2], latencies[FOLLOWS * 95 / 100], latencies[FOLLOWS - 1]);
    let connections = nginx.connections();
    println!(
        "{FOLLOWS} follows: all held after {held_after:?} ({starving_at_start} without a wait), {starving_midway} without a wait midway; \
         end -> banner p50 {p50:?}, p95 {p95:?}, worst {worst:?}; nginx served {} connections, at most {} requests on one",
        connections.len(),
        connections.values().max().unwrap_or(&0)
    );
    assert!(all_held && starving_midway == 0, "follows starved: {starving_at_start} at the start, {starving_midway} midway");
    assert!(worst < Duration::from_secs(1), "an end took {worst:?} to become a banner (p95 {p95:?})");
    assert_eq!(world.desktop.notifications().len(), FOLLOWS, "one banner an end");
    assert!(connections.len() > 4, "nginx closed connections after 20 requests: {connections:?}");
    assert_http2_alone(&nginx);
    // Each connection nginx ended after its 20 requests sent a GOAWAY, and the daemon read it.
    let sent = nginx.goaways_sent();
    let received = goaways_received(&daemon.log_text());
    println!("nginx sent at least {sent} GOAWAYs (connections at 20 requests); the daemon received {received}");
    assert!(sent > 0, "nginx ended no connection at its 20 requests: {connections:?}");
    assert!(received >= sent, "nginx sent at least {sent} GOAWAYs, the daemon received {received}");
}

/// Polls `cond` every 20 ms for up to `limit`; whether it came to hold.
fn within(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while !cond() {
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// A local development server of the cloud that speaks HTTP/1.1 only: the waits fall back to
/// HTTP/1.1, the log says so, and an end is told.
#[test]
fn a_loopback_server_that_speaks_http_1_1_only_is_followed_over_http_1_1() {
    let world = World::new();
    let nginx = world.nginx(Front { listen: Listen::Http1, ..Front::default() });
    let home = world.home(&format!("http://127.0.0.1:{}", nginx.port), &[]);
    let daemon = home.daemon(&world.token);
    let run = world.follow(&home, "On a development server");
    wait_until("the Run's wait held at the cloud", LIMIT, || world.cloud.sim().held_waits(&run) > 0);
    world.cloud.sim().update_run(&run, RunChange::status("succeeded"));
    wait_until("the Run's banner", LIMIT, || world.desktop.notifications().len() == 1);
    assert!(daemon.log_text().contains("does not speak HTTP/2: the waits go over HTTP/1.1"), "{}", daemon.log_text());
    assert!(home.status()["problems"].as_array().unwrap().is_empty());
    // Every request over HTTP/1.1; nginx logs the engine's HTTP/2 preface, which it refused
    // (how the engine learns the server's protocol), with no protocol ("-").
    let protocols = nginx.protocols();
    assert!(protocols.get("HTTP/1.1").is_some_and(|&n| n > 0), "served over: {protocols:?}");
    assert!(protocols.keys().all(|p| p == "HTTP/1.1" || p == "-"), "served over: {protocols:?}");
}
