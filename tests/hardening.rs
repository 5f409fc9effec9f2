//! Never none, never twice, never leaked: hostile text from an agent, markup, and a missing
//! notification server, through the real daemon, its socket and a notification server on a
//! private bus (the recording server; dunst where a person's count of banners matters).

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use cmux_tray_e2e::{Cloud, DesktopSession, Home, wait_until};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);
const WS: &str = "D9C269B8-1A2B-4C3D-8E9F-0123456789AB";
const SF: &str = "B9DD280A-0000-0000-0000-000000000001";

/// Sends raw request lines over the daemon's socket, one connection, and returns the replies.
fn send(home: &Home, lines: &[&[u8]]) -> Vec<String> {
    let mut stream = UnixStream::connect(home.socket()).expect("the daemon's socket");
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    lines
        .iter()
        .map(|line| {
            stream.write_all(line).unwrap();
            stream.write_all(b"\n").unwrap();
            let mut reply = String::new();
            reader.read_line(&mut reply).unwrap();
            reply.trim_end().to_string()
        })
        .collect()
}

fn v2(method: &str, params: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"id": "1", "method": method, "params": params})).unwrap()
}

fn words(n: &Value) -> (&str, &str) {
    (n["summary"].as_str().unwrap(), n["body"].as_str().unwrap())
}

#[test]
fn a_notice_with_a_nul_or_escape_in_it_does_not_stop_the_next_banner() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    let replies = send(
        &home,
        &[
            b"notify Dep\0loy|\x1b[31mstaging|is up\x07",
            &v2("notification.create", json!({"title": "Tests\u{0}", "body": "invoice\u{202E}fdp.exe \u{1b}]0;pwned\u{7}"})),
            b"notify Next one|after|them",
        ],
    );
    assert_eq!(replies[0], "OK", "{replies:?}");
    assert!(replies[1].contains("\"ok\":true"), "{replies:?}");
    assert_eq!(replies[2], "OK", "{replies:?}");
    wait_until("three banners", LIMIT, || desktop.notifications().len() == 3);
    let n = desktop.notifications();
    assert_eq!(words(&n[0]), ("Deploy", "[31mstaging — is up"));
    assert_eq!(words(&n[1]), ("Tests", "invoicefdp.exe ]0;pwned"));
    assert_eq!(words(&n[2]), ("Next one", "after — them"));
    // The history, the tray and `status` read the same cleaned words.
    let out = home.run(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Deploy") && !text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
    let status = home.status();
    let titles: Vec<&str> = status["notices"].as_array().unwrap().iter().map(|n| n["title"].as_str().unwrap()).collect();
    assert!(titles.contains(&"Deploy") && titles.contains(&"Tests"), "{titles:?}");
}

#[test]
fn markup_from_an_agent_shows_as_the_text_it_is_on_a_server_that_renders_markup() {
    let hostile = "<b>bold</b> & <a href=\"https://evil.example\">click</a> <img src=\"x\"/> &amp;";
    for body_markup in [true, false] {
        let mut desktop = DesktopSession::start_without_server();
        desktop.start_recorder(body_markup);
        let cloud = Cloud::start();
        let home = Home::new(&cloud.origin(), &desktop.address);
        let _daemon = home.daemon("no-token-needed-for-local-notices");
        let replies = send(&home, &[&v2("notification.create", json!({"title": "<i>Build</i> & co", "body": hostile}))]);
        assert!(replies[0].contains("\"ok\":true"), "{replies:?}");
        wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);
        let n = &desktop.notifications()[0];
        // The title (summary) is never markup in the notification spec: always as sent.
        assert_eq!(n["summary"], "<i>Build</i> & co");
        let expected = if body_markup {
            "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;a href=\"https://evil.example\"&gt;click&lt;/a&gt; &lt;img src=\"x\"/&gt; &amp;amp;"
        } else {
            hostile
        };
        assert_eq!(n["body"], expected, "body-markup advertised: {body_markup}");
    }
}

/// The daemon's open file descriptors.
fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

#[test]
fn without_a_notification_server_nothing_leaks_and_each_held_banner_goes_out_once_when_one_appears() {
    let mut desktop = DesktopSession::start_without_server();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let opened = home.register_cmux_handler();
    // The deliverer tries again every 3 s instead of its 15 s (docs/notices.md), so that the
    // test sees many tries without sleeping minutes.
    let retry = Duration::from_secs(3);
    let daemon = home.daemon_with("no-token-needed-for-local-notices", &[("CMUX_TRAY_DESKTOP_RETRY_MS", "3000")]);
    let replies = send(
        &home,
        &[&v2("notification.create", json!({"workspace_id": WS, "surface_id": SF, "title": "Held", "body": "until a server"}))],
    );
    assert!(replies[0].contains("\"ok\":true"), "{replies:?}");
    // Five retry periods without a server: four tries and more, and no descriptor kept by any.
    std::thread::sleep(Duration::from_secs(1));
    let before = open_files(daemon.pid());
    std::thread::sleep(retry * 5);
    let after = open_files(daemon.pid());
    assert!(after <= before, "open files grew from {before} to {after} over five tries without a notification server");
    let tries = || daemon.log_text().matches("will try again").count();
    assert!(tries() >= 4, "the deliverer tried {} times in five retry periods:\n{}", tries(), daemon.log_text());
    assert!(home.status()["notices"][0]["state"] == "untold");
    // A server appears just after a try: the held banner goes out at once, not at the next try
    // a retry period later, and once.
    let n = tries();
    wait_until("the next try", retry * 2, || tries() > n);
    desktop.start_recorder(false);
    let appeared = Instant::now();
    wait_until("the held banner", LIMIT, || desktop.notifications().len() == 1);
    assert!(appeared.elapsed() < retry / 2, "the banner waited {:?} for the next try", appeared.elapsed());
    let id = desktop.notifications()[0]["id"].as_u64().unwrap();
    // One click opens the surface once, however many tries went before.
    desktop.click(id);
    wait_until("the surface opened", LIMIT, || std::fs::read_to_string(&opened).is_ok_and(|t| !t.is_empty()));
    // Nothing more: a second opening would come as fast as the first did; wait out the
    // deliverer's retry period as well, in case a stale try reposted the banner.
    std::thread::sleep(retry + Duration::from_secs(1));
    assert_eq!(std::fs::read_to_string(&opened).unwrap().lines().count(), 1, "one click, one opening");
    assert_eq!(desktop.notifications().len(), 1, "{:?}", desktop.notifications());
}

/// Every folder and file below `dir`, with its permission bits.
fn modes(dir: &std::path::Path) -> Vec<(std::path::PathBuf, bool, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let meta = std::fs::symlink_metadata(&d).unwrap();
        out.push((d.clone(), true, meta.permissions().mode() & 0o7777));
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                todo.push(entry.path());
            } else {
                out.push((entry.path(), false, meta.permissions().mode() & 0o7777));
            }
        }
    }
    out
}

#[test]
fn every_folder_the_daemon_makes_is_private_and_every_file_in_it() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    // A data folder an older version left readable by others.
    let data = home.dir.path().join("data/cmux-tray");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::set_permissions(&data, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let daemon = home.daemon(&user.access_token);
    let replies = send(&home, &[b"notify Private|ada@example.com|wrapped: deploy --token=..."]);
    assert_eq!(replies[0], "OK");
    wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);
    let out = home.run(&["config", "set", "delivery.sound_cooldown", "5"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    wait_until("the WAL written", LIMIT, || home.database().with_file_name("state.sqlite3-wal").exists());
    let mut seen = 0;
    for folder in ["data/cmux-tray", "config/cmux-tray", "run/cmux-tray"] {
        for (path, is_dir, mode) in modes(&home.dir.path().join(folder)) {
            let want = if is_dir { 0o700 } else { 0o600 };
            assert_eq!(mode, want, "{} is {mode:o}", path.display());
            seen += 1;
        }
    }
    // The folders, the database, its WAL and shared memory, the lock, the config, the socket.
    assert!(seen >= 9, "{seen} paths looked at");
    let log = daemon.log_text();
    assert_eq!(log.matches("was readable by others (755): made it 700").count(), 1, "one line says it:\n{log}");
}

#[test]
fn no_secret_reaches_a_program_the_daemon_starts() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let dumped = home.register_cmux_env_recorder();
    let password = "correct horse battery staple";
    let _daemon = home.daemon_with(&user.access_token, &[("CMUX_SOCKET_PASSWORD", password)]);
    let out = home
        .command(&["notify", "--title", "Opened", "--strict"])
        .env("CMUX_SOCKET_PASSWORD", password)
        .env("CMUX_WORKSPACE_ID", WS)
        .env("CMUX_SURFACE_ID", SF)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);
    desktop.click(desktop.notifications()[0]["id"].as_u64().unwrap());
    wait_until("the opener ran", LIMIT, || std::fs::read(&dumped).is_ok_and(|e| !e.is_empty()));
    let env = String::from_utf8_lossy(&std::fs::read(&dumped).unwrap()).into_owned();
    assert!(env.split('\0').any(|v| v.starts_with("DBUS_SESSION_BUS_ADDRESS=")), "the opener's environment was read: {env:?}");
    for secret in ["CMUX_TRAY_TOKEN", "CMUX_SOCKET_PASSWORD", user.access_token.as_str(), password] {
        assert!(!env.contains(secret), "{secret:?} reached the opener");
    }
}

#[test]
fn a_huge_timeout_or_threshold_is_refused_with_a_clear_error_not_a_panic() {
    let home = Home::new("http://127.0.0.1:9", "unix:path=/nonexistent");
    std::fs::create_dir_all(home.config_file().parent().unwrap()).unwrap();
    std::fs::write(home.config_file(), "[notify]\ntimeout = 1e300\nwrap_threshold = 1e300\n").unwrap();
    let out = home.run(&["notify", "--title", "x"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "a notice never fails its caller: {err}");
    assert!(!err.contains("panicked") && err.contains("notify.timeout") && err.contains("at most 86400 seconds"), "{err}");
    let out = home.run(&["wrap", "--", "sh", "-c", "exit 3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "the command's own code: {err}");
    assert!(!err.contains("panicked") && err.contains("at most 86400 seconds"), "{err}");
    let out = home.run(&["wrap", "--threshold", "1e300", "--", "true"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked") && err.contains("expected seconds from 0 to 86400"), "{err}");
}

#[test]
fn a_request_that_needs_an_account_says_not_signed_in_with_its_own_code() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("");
    let replies = send(&home, &[&v2("cloud.follow", json!({"kind": "run", "id": "run_0123456789abcdef0123"}))]);
    let reply: Value = serde_json::from_str(&replies[0]).unwrap();
    assert_eq!(reply["error"]["code"], "not_signed_in", "{reply}");
    assert!(reply["error"]["message"].as_str().unwrap().contains("not signed in"), "{reply}");
}

#[test]
fn a_stuck_opener_does_not_hold_the_next_click() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    // The handler of cmux:// links hangs for the first surface (a terminal that never answers).
    let stuck_surface = "B9DD280A-0000-0000-0000-00000000000F";
    let opened = home.register_cmux_script_named(
        "stuck-or-record",
        &format!("case \"$1\" in *{stuck_surface}*) sleep 120;; esac\nprintf '%s\\n' \"$1\" >> '{{opened}}'\n"),
    );
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    for (surface, title) in [(stuck_surface, "Stuck"), (SF, "Next")] {
        let replies = send(&home, &[&v2("notification.create", json!({"workspace_id": WS, "surface_id": surface, "title": title}))]);
        assert!(replies[0].contains("\"ok\":true"), "{replies:?}");
    }
    wait_until("two banners", LIMIT, || desktop.notifications().len() == 2);
    let id = |title: &str| desktop.notifications().iter().find(|n| n["summary"] == title).unwrap()["id"].as_u64().unwrap();
    desktop.click(id("Stuck"));
    desktop.click(id("Next"));
    // The next click's surface opens while the first opener still hangs (it would for 120 s).
    let started = Instant::now();
    wait_until("the next surface opened", LIMIT, || std::fs::read_to_string(&opened).is_ok_and(|t| t.contains(SF)));
    assert!(started.elapsed() < Duration::from_secs(20), "it waited {:?}", started.elapsed());
}

#[test]
fn a_banner_the_server_refuses_is_said_in_status_and_the_others_go_out() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    // Tries 1 s apart instead of the engine's 15 s (docs/notices.md), so the test does not wait
    // them out.
    let _daemon = home.daemon_with("no-token-needed-for-local-notices", &[("CMUX_TRAY_DESKTOP_RETRY_MS", "1000")]);
    let replies = send(&home, &[b"notify [refuse] Deploy|staging|is up", b"notify Tests|parser|passed"]);
    assert_eq!(replies, ["OK", "OK"]);
    wait_until("the other banner", LIMIT, || desktop.notifications().iter().any(|n| n["summary"] == "Tests"));
    // docs/notices.md §3: three tries, a retry period apart, then set aside with the server's reason.
    wait_until("set aside", Duration::from_secs(60), || {
        home.status()["notices"].as_array().unwrap().iter().any(|n| n["delivery"] == "not shown")
    });
    let refused = desktop.events().iter().filter(|e| e["event"] == "refused").count();
    assert_eq!(refused, 3, "three tries");
    let out = home.run(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[not shown: ") && text.contains("this banner cannot be shown] [refuse] Deploy"), "{text}");
    assert!(text.contains("problem: A banner could not be shown (\"[refuse] Deploy\")"), "{text}");
    assert_eq!(desktop.notifications().len(), 1, "{:?}", desktop.notifications());
}

/// A click is believed from the notification server's own connection alone: another program on
/// the session bus sending an `ActionInvoked` of the same name opens nothing. A server that says
/// one click twice (GNOME Shell 43 does, docs/notices.md §5) opens its link once.
#[test]
fn a_click_said_by_another_program_opens_nothing_and_one_said_twice_opens_once() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let opened = home.register_cmux_handler();
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    let replies = send(&home, &[&v2("notification.create", json!({"workspace_id": WS, "surface_id": SF, "title": "Built"}))]);
    assert!(replies[0].contains("\"ok\":true"), "{replies:?}");
    wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);
    let id = desktop.notifications()[0]["id"].as_u64().unwrap();
    let forged = std::process::Command::new("dbus-send")
        .args(["--session", "--type=signal", "/org/freedesktop/Notifications", "org.freedesktop.Notifications.ActionInvoked"])
        .args([format!("uint32:{id}"), "string:default".into()])
        .env("DBUS_SESSION_BUS_ADDRESS", &desktop.address)
        .status()
        .unwrap();
    assert!(forged.success());
    std::thread::sleep(cmux_tray_e2e::NOTHING_MORE);
    assert!(!opened.exists(), "a signal from another program opened {:?}", std::fs::read_to_string(&opened));
    desktop.click(id);
    desktop.click(id);
    wait_until("the surface opened", LIMIT, || std::fs::read_to_string(&opened).is_ok_and(|t| t.contains(SF)));
    std::thread::sleep(cmux_tray_e2e::NOTHING_MORE);
    assert_eq!(std::fs::read_to_string(&opened).unwrap().lines().count(), 1, "one click said twice opens once");
}
