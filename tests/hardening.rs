//! Never none, never twice, never leaked: hostile text from an agent, markup, and a missing
//! notification server, through the real daemon, its socket and a notification server on a
//! private bus (the recording server; dunst where a person's count of banners matters).

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
    // The history and the tray read the same cleaned words.
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
    let daemon = home.daemon("no-token-needed-for-local-notices");
    let replies = send(
        &home,
        &[&v2("notification.create", json!({"workspace_id": WS, "surface_id": SF, "title": "Held", "body": "until a server"}))],
    );
    assert!(replies[0].contains("\"ok\":true"), "{replies:?}");
    // A minute without a server: the deliverer tries again every 15 s (four tries and more).
    std::thread::sleep(Duration::from_secs(5));
    let before = open_files(daemon.pid());
    std::thread::sleep(Duration::from_secs(60));
    let after = open_files(daemon.pid());
    assert!(after <= before, "open files grew from {before} to {after} in a minute without a notification server");
    let tries = daemon.log_text().matches("will try again").count();
    assert!(tries >= 4, "the deliverer tried {tries} times in a minute:\n{}", daemon.log_text());
    assert!(home.status()["notices"][0]["state"] == "untold");
    // A server appears: the held banner goes out at once (not at the next 15 s try), once.
    desktop.start_recorder(false);
    let appeared = Instant::now();
    wait_until("the held banner", LIMIT, || desktop.notifications().len() == 1);
    assert!(appeared.elapsed() < Duration::from_secs(5), "the banner waited {:?} for the next try", appeared.elapsed());
    let id = desktop.notifications()[0]["id"].as_u64().unwrap();
    // One click opens the surface once, however many tries went before.
    desktop.click(id);
    wait_until("the surface opened", LIMIT, || std::fs::read_to_string(&opened).is_ok_and(|t| !t.is_empty()));
    // Nothing more: a second opening would come as fast as the first did; wait out the
    // deliverer's retry period as well, in case a stale try reposted the banner.
    std::thread::sleep(Duration::from_secs(16));
    assert_eq!(std::fs::read_to_string(&opened).unwrap().lines().count(), 1, "one click, one opening");
    assert_eq!(desktop.notifications().len(), 1, "{:?}", desktop.notifications());
}
