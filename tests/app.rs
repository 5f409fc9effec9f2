//! The tray app, built and run for real under a virtual display and a private D-Bus session:
//! its tray read and clicked over D-Bus as a tray host does it (com.canonical.dbusmenu
//! GetLayout / Event, org.kde.StatusNotifierItem Activate), its windows made on demand.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::process::{Child, Stdio};
use std::time::Duration;

use cmux_cloud_sim::state::NewHandoff;
use cmux_cloud_sim::{HandoffChange, RunChange};
use cmux_tray_e2e::{Cloud, DesktopSession, Home, NOTHING_MORE, bin, signal, wait_until};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(60);

struct App {
    child: Child,
    log: std::path::PathBuf,
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- app log ---\n{}", std::fs::read_to_string(&self.log).unwrap_or_default());
        }
    }
}

fn start_app(home: &Home, desktop: &DesktopSession, token: &str) -> App {
    start_app_with(home, desktop, token, &[])
}

fn start_app_with(home: &Home, desktop: &DesktopSession, token: &str, args: &[&str]) -> App {
    start_app_env(home, desktop, token, args, &[])
}

fn start_app_env(home: &Home, desktop: &DesktopSession, token: &str, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> App {
    let log = home.dir.path().join("app.log");
    let out = std::fs::File::create(&log).unwrap();
    let child = home
        .program(&bin("cmux-tray-app"), args)
        .env("DISPLAY", desktop.display.as_deref().unwrap())
        .env("CMUX_TRAY_TOKEN", token)
        .envs(env.iter().copied())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .stdin(Stdio::null())
        .spawn()
        .expect("the app starts");
    App { child, log }
}

/// A simulator with Ada's account on it, and a home pointed at it and at `desktop`'s bus.
fn ada(desktop: DesktopSession) -> (DesktopSession, Cloud, cmux_cloud_sim::SimUser, Home) {
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    (desktop, cloud, user, home)
}

/// The menu's items, flattened: (id, label, enabled).
fn menu(desktop: &DesktopSession, item: &str) -> Vec<(i64, String, bool)> {
    fn walk(n: &Value, out: &mut Vec<(i64, String, bool)>) {
        if let Some(label) = n["props"]["label"].as_str() {
            out.push((n["id"].as_i64().unwrap(), label.to_string(), n["props"]["enabled"].as_bool().unwrap_or(true)));
        }
        for c in n["children"].as_array().unwrap() {
            walk(c, out);
        }
    }
    let layout: Value = serde_json::from_str(&desktop.sni(&["layout", item])).unwrap();
    let mut out = Vec::new();
    walk(&layout, &mut out);
    out
}

/// Whether the menu's account line is this account's ("ada@example.com — Personal").
fn signed_in_as(labels: &[String], email: &str) -> bool {
    labels.iter().any(|l| l == email || l.starts_with(&format!("{email} — ")))
}

fn labels(desktop: &DesktopSession, item: &str) -> Vec<String> {
    menu(desktop, item).into_iter().map(|(_, l, _)| l).collect()
}

fn click(desktop: &DesktopSession, item: &str, label: &str) {
    let id = menu(desktop, item).into_iter().find(|(_, l, _)| l == label).unwrap_or_else(|| panic!("no menu item {label:?}")).0;
    desktop.sni(&["click", item, &id.to_string()]);
}

#[test]
fn the_tray_is_read_and_clicked_over_dbus_and_a_left_click_opens_the_history() {
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_display());
    let platform = cloud.sim().add_team(&user.user_id, "Platform");
    let run = cloud.sim().create_run(&user.user_id, "Fix the flaky login test");
    let mut app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);
    wait_until("the account and the adopted Run in the menu", LIMIT, || {
        let l = labels(&desktop, &item);
        signed_in_as(&l, "ada@example.com") && l.contains(&"Following (1)".to_string())
    });
    // The app's own folders are private, and so are its log files (they name the account).
    let logs = home.dir.path().join("state/cmux-tray/logs");
    wait_until("a log file", LIMIT, || std::fs::read_dir(&logs).is_ok_and(|mut d| d.next().is_some()));
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for dir in [logs.parent().unwrap(), logs.as_path(), &home.dir.path().join("data/cmux-tray")] {
        assert_eq!(mode(dir), 0o700, "{}", dir.display());
        for file in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()) {
            assert_eq!(mode(&file), 0o600, "{}", file.display());
        }
    }
    // Followed by name: the Run's task.
    wait_until("the Run by name", LIMIT, || labels(&desktop, &item).contains(&"Fix the flaky login test".to_string()));
    for expected in ["Mark all read", "Pause notifications", "For 1 hour", "Until tomorrow", "Settings…", "Quit"] {
        assert!(labels(&desktop, &item).contains(&expected.to_string()), "{expected}");
    }
    // The account line names the team in use; the account's teams are chosen right there.
    assert!(labels(&desktop, &item).contains(&"ada@example.com — Personal".to_string()), "{:?}", labels(&desktop, &item));
    click(&desktop, &item, "   Platform");
    wait_until("the team chosen from the tray", LIMIT, || labels(&desktop, &item).contains(&"ada@example.com — Platform".to_string()));
    assert!(labels(&desktop, &item).contains(&"✓ Platform".to_string()));
    assert_eq!(home.status()["account"]["team"], platform.as_str());
    // No Secret Service in this session: the tray says where the sign-in is kept, in a short
    // line of its own (docs/configuration.md's words), the library's error left to the log.
    assert!(
        labels(&desktop, &item).contains(&"Sign-in kept in a private file: no keyring found".to_string()),
        "{:?}",
        labels(&desktop, &item)
    );

    // The Run ends: a banner, and the menu shows it unread.
    cloud.sim().update_run(&run, RunChange::status("succeeded"));
    wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);
    wait_until("unread in the menu", LIMIT, || labels(&desktop, &item).iter().any(|l| l == "● Fix the flaky login test — Run finished"));
    let props: Value = serde_json::from_str(&desktop.sni(&["props", &item])).unwrap();
    assert_eq!(props["Status"], "NeedsAttention");
    desktop.screenshot("tray-unread");

    // Mark all read: the unread mark goes, and so does the banner.
    click(&desktop, &item, "Mark all read");
    wait_until("read in the menu", LIMIT, || labels(&desktop, &item).iter().any(|l| l == "   Fix the flaky login test — Run finished"));
    wait_until("the banner withdrawn", LIMIT, || desktop.events().iter().any(|e| e["event"] == "close"));

    // Pause for an hour from the menu.
    click(&desktop, &item, "For 1 hour");
    wait_until("paused", LIMIT, || labels(&desktop, &item).iter().any(|l| l.starts_with("Notifications paused (")));
    assert!(labels(&desktop, &item).contains(&"Resume".to_string()));
    assert!(home.status()["paused"].is_string());

    // A left click opens the history window; a second one does not open another.
    desktop.sni(&["activate", &item]);
    wait_until("the history window", LIMIT, || desktop.window_titled("cmux-tray — History"));
    desktop.sni(&["activate", &item]);
    // A second window would be mapped within the time the first one took; wait that and more.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(desktop.windows_titled("cmux-tray — History"), 1, "the second click opened no other window");
    desktop.screenshot("history-window");
    click(&desktop, &item, "Settings…");
    wait_until("the settings window", LIMIT, || desktop.window_titled("cmux-tray — Settings"));
    desktop.screenshot("settings-window");

    // Quit ends the app cleanly.
    click(&desktop, &item, "Quit");
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = app.child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < LIMIT, "the app did not quit");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    assert!(!home.socket().exists(), "the socket is removed at quit");
    wait_until("the windows ended with the tray", LIMIT, || home.pids_of("cmux-tray-windows").is_empty());
}

#[test]
fn version_and_help_print_and_exit_with_no_tray_started() {
    let (desktop, _cloud, _user, home) = ada(DesktopSession::start_with_display());
    for (arg, expected) in [("--version", format!("cmux-tray-app {}", env!("CARGO_PKG_VERSION"))), ("--help", "--open <PAGE>".to_string())]
    {
        let out = home.program(&bin("cmux-tray-app"), &[arg]).env("DISPLAY", desktop.display.as_deref().unwrap()).output().unwrap();
        assert!(out.status.success(), "{arg}: {out:?}");
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(printed.contains(&expected), "{arg}: {printed}");
    }
    let bad = home.program(&bin("cmux-tray-app"), &["--open", "about"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2), "a bad argument is refused");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("possible values: history, settings, signin"));
    let items: Vec<String> = serde_json::from_str(&desktop.sni(&["items"])).unwrap();
    assert!(items.is_empty(), "no tray was started: {items:?}");
    assert!(home.pids_of("cmux-tray-app").is_empty());
    assert!(!home.dir.path().join("run/cmux-tray/app.sock").exists());
}

#[test]
fn a_crash_leaves_its_backtrace_in_the_log_and_the_next_start_says_so_once() {
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let mut crashed = start_app_env(&home, &desktop, &user.access_token, &[], &[("CMUX_TRAY_TEST_PANIC", "1".as_ref())]);
    let status = {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = crashed.child.try_wait().unwrap() {
                break status;
            }
            assert!(start.elapsed() < LIMIT, "the deliberate panic did not end the app");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    assert!(!status.success(), "{status:?}");
    let logs = home.dir.path().join("state/cmux-tray/logs");
    let log: String = std::fs::read_dir(&logs).unwrap().map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect();
    assert!(log.contains("panicked") && log.contains("a deliberate panic (CMUX_TRAY_TEST_PANIC)"), "{log}");
    // The frame of the panic, by its file (how a frame's function is named varies with the build).
    assert!(log.contains("stack backtrace:") && log.contains("crates/app/src/main.rs:"), "the backtrace is in the log: {log}");
    drop(crashed);

    // The next start says it, once, with where the log is.
    let app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);
    let stopped = |desktop: &DesktopSession| {
        desktop.notifications().into_iter().filter(|n| n["summary"] == "cmux-tray stopped unexpectedly").collect::<Vec<_>>()
    };
    wait_until("the notice of the crash", LIMIT, || stopped(&desktop).len() == 1);
    let body = stopped(&desktop)[0]["body"].as_str().unwrap_or_default().to_string();
    assert!(body.contains(&logs.display().to_string()), "{body}");
    // About names the version, the licence and the same log folder.
    let about = labels(&desktop, &item);
    for expected in
        [format!("cmux-tray {}", env!("CARGO_PKG_VERSION")), "Licence: MIT OR Apache-2.0".into(), format!("Logs: {}", logs.display())]
    {
        assert!(about.contains(&expected), "{expected} in {about:?}");
    }

    // Quit is a clean stop: the start after it says nothing.
    click(&desktop, &item, "Quit");
    let mut app = app;
    wait_until("quit", LIMIT, || app.child.try_wait().unwrap().is_some());
    let _again = start_app(&home, &desktop, &user.access_token);
    let _ = tray_item(&desktop);
    std::thread::sleep(NOTHING_MORE);
    assert_eq!(stopped(&desktop).len(), 1, "a clean stop is not said");
}

/// Waits for the app's tray item on the watcher and returns its name.
fn tray_item(desktop: &DesktopSession) -> String {
    let mut item = String::new();
    wait_until("the tray registered with the watcher", LIMIT, || {
        let items: Vec<String> = serde_json::from_str(&desktop.sni(&["items"])).unwrap();
        item = items.first().cloned().unwrap_or_default();
        !item.is_empty()
    });
    item
}

/// Waits, at most `limit`, for the app's tray item on the watcher.
fn tray_item_within(desktop: &DesktopSession, limit: Duration) -> String {
    let mut item = String::new();
    wait_until("the tray registered with the watcher", limit, || {
        let items: Vec<String> = serde_json::from_str(&desktop.sni(&["items"])).unwrap_or_default();
        item = items.first().cloned().unwrap_or_default();
        !item.is_empty()
    });
    item
}

/// Stock GNOME hosts no tray icons: nothing serves `org.kde.StatusNotifierWatcher`. The app says
/// so once in a banner (its words: docs/notices.md, "The app's own notices") and, signed out,
/// opens the sign-in window, the menu's "Sign in…" being out of reach. A tray host that comes
/// later shows the icon without a restart, and the banner is taken away; one that restarts
/// (GNOME Shell on X11, a panel's crash) shows it again each time with nothing said; one that
/// goes away for good is said once more.
#[test]
fn with_no_tray_host_a_banner_says_so_the_sign_in_window_opens_and_a_host_that_comes_shows_the_icon() {
    let (mut desktop, _cloud, _user, home) = ada(DesktopSession::start_with_display_and_no_tray_host());
    let _app = start_app(&home, &desktop, "");
    let said = |desktop: &DesktopSession| {
        desktop
            .notifications()
            .into_iter()
            .filter(|n| n["summary"] == "cmux-tray has no icon: this desktop shows no tray icons")
            .collect::<Vec<_>>()
    };
    wait_until("the banner that says no tray host runs", LIMIT, || said(&desktop).len() == 1);
    let banner = said(&desktop).remove(0);
    let body = banner["body"].as_str().unwrap_or_default();
    for words in
        ["It keeps working.", "gnome-shell-extension-appindicator", "gnome-extensions enable appindicatorsupport@rgcjonas.gmail.com"]
    {
        assert!(body.contains(words), "{words:?} in {body:?}");
    }
    wait_until("the sign-in window", LIMIT, || desktop.window_titled("cmux-tray — Sign in"));
    desktop.screenshot("no-tray-host");
    std::thread::sleep(NOTHING_MORE);
    assert_eq!(said(&desktop).len(), 1, "said once");

    // A tray host comes (the extension turned on): the icon shows, with no restart, within the
    // 10 s the issue measured, and the banner that said otherwise is taken away.
    desktop.start_tray_host();
    let item = tray_item_within(&desktop, Duration::from_secs(10));
    assert!(labels(&desktop, &item).contains(&"Sign in…".to_string()), "{:?}", labels(&desktop, &item));
    let id = banner["id"].as_u64().unwrap();
    wait_until("the banner taken away", LIMIT, || desktop.events().iter().any(|e| e["event"] == "close" && e["id"] == id));

    // The host restarts, again and again: each new one lists the icon within 10 s, nothing said.
    for round in 0..8 {
        desktop.stop_tray_host();
        desktop.start_tray_host();
        let start = std::time::Instant::now();
        tray_item_within(&desktop, Duration::from_secs(10));
        eprintln!("round {round}: the icon registered again after {:?}", start.elapsed());
    }
    assert_eq!(said(&desktop).len(), 1, "a host that came back at once is not said");

    // Gone for good: said once more.
    desktop.stop_tray_host();
    wait_until("the second banner", LIMIT, || said(&desktop).len() == 2);
    std::thread::sleep(NOTHING_MORE);
    assert_eq!(said(&desktop).len(), 2, "said once");
}

#[test]
fn sign_in_from_the_tray_stays_signed_in_through_the_keyring_and_sign_out_removes_it() {
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_keyring_and_display());
    let (browser, pages) = home.browser();
    let app = start_app_env(&home, &desktop, "", &[], &[("BROWSER", browser.as_os_str())]);
    let item = tray_item(&desktop);
    wait_until("Sign in… in the menu", LIMIT, || labels(&desktop, &item).contains(&"Sign in…".to_string()));

    // Sign in… opens the sign-in window, which starts the device flow, shows the code and opens
    // the page to approve it in the browser.
    click(&desktop, &item, "Sign in…");
    wait_until("the sign-in window", LIMIT, || desktop.window_titled("cmux-tray — Sign in"));
    wait_until("a code to approve", LIMIT, || cloud.sim().last_user_code().is_some());
    let code = cloud.sim().last_user_code().unwrap();
    wait_until("the browser opened", LIMIT, || std::fs::read_to_string(&pages).is_ok_and(|t| !t.is_empty()));
    assert_eq!(std::fs::read_to_string(&pages).unwrap().trim(), format!("{}/vault/cli-auth?code={code}", cloud.origin()));
    desktop.screenshot("sign-in-window");
    assert!(cloud.sim().approve_device(&cloud.sim().last_user_code().unwrap(), &user.user_id));
    wait_until("signed in, in the menu", LIMIT, || signed_in_as(&labels(&desktop, &item), "ada@example.com"));
    let secret = desktop.keyring_lookup(&user.user_id).expect("the refresh token is in the Secret Service");
    let kept: serde_json::Value = serde_json::from_str(&secret).expect("the kept sign-in is JSON (docs/configuration.md)");
    assert!(kept["refresh_token"].as_str().is_some_and(|t| t.starts_with("rt_")), "{kept}");
    assert_eq!(kept["origins"]["auth"], cloud.origin(), "kept with the cloud it came from");
    assert!(!labels(&desktop, &item).iter().any(|l| l.starts_with("Sign-in kept in a")), "the keyring is used: nothing to say");

    // Restarted: signed in again from the keyring, no token given.
    drop(app);
    let _ = std::fs::remove_file(home.socket());
    let app = start_app(&home, &desktop, "");
    let item = tray_item(&desktop);
    wait_until("signed in again after the restart", LIMIT, || signed_in_as(&labels(&desktop, &item), "ada@example.com"));

    // Sign out: the secret is deleted, the menu offers a sign-in again.
    click(&desktop, &item, "Sign out");
    wait_until("signed out", LIMIT, || labels(&desktop, &item).contains(&"Sign in…".to_string()));
    assert_eq!(desktop.keyring_lookup(&user.user_id), None);
    drop(app);
}

#[test]
fn a_refused_refresh_shows_sign_in_again_in_the_tray() {
    let desktop = DesktopSession::start_with_keyring_and_display();
    let cloud = Cloud::start();
    cloud.sim().set_access_ttl(Some(3600));
    let user = cloud.sim().add_user("ada@example.com");
    let run = cloud.sim().create_run(&user.user_id, "Keeps running");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _app = start_app(&home, &desktop, "");
    let item = tray_item(&desktop);
    click(&desktop, &item, "Sign in…");
    wait_until("a code to approve", LIMIT, || cloud.sim().last_user_code().is_some());
    assert!(cloud.sim().approve_device(&cloud.sim().last_user_code().unwrap(), &user.user_id));
    wait_until("following the Run", LIMIT, || labels(&desktop, &item).contains(&"Following (1)".to_string()));
    // The device is revoked on cmux.com: the next wait is refused, and so is the refresh.
    cloud.sim().revoke_user_tokens(&user.user_id);
    wait_until("sign in again, in the menu", LIMIT, || labels(&desktop, &item).contains(&"Sign in again (ada@example.com)".to_string()));
    let props: Value = serde_json::from_str(&desktop.sni(&["props", &item])).unwrap();
    assert_eq!(props["Status"], "NeedsAttention");
    wait_until("one banner says so", LIMIT, || desktop.notifications().iter().any(|n| n["summary"] == "cmux-tray: sign in again"));
    assert_eq!(desktop.keyring_lookup(&user.user_id), None, "the refused refresh token is not kept");
    let _ = run;
}

#[test]
fn a_problem_is_one_short_line_in_the_menu_with_the_librarys_words_behind_it() {
    let desktop = DesktopSession::start_with_display();
    // Nothing listens on port 9 of loopback: the cloud cannot be reached.
    let home = Home::new("http://127.0.0.1:9", &desktop.address);
    let _app = start_app(&home, &desktop, "a-token");
    let item = tray_item(&desktop);
    wait_until("offline, in the menu", LIMIT, || labels(&desktop, &item).contains(&"⚠ Offline: the cloud cannot be reached".to_string()));
    let all = labels(&desktop, &item);
    let why = all.iter().find(|l| l.starts_with("Why: ")).unwrap_or_else(|| panic!("a Why line behind it: {all:?}"));
    assert!(why.contains("127.0.0.1:9") || why.to_lowercase().contains("connect"), "{why}");
    // The whole story stays in status.
    let whole: Vec<String> =
        home.status()["problems"].as_array().unwrap().iter().filter_map(|p| p["text"].as_str().map(String::from)).collect();
    assert!(whole.iter().any(|p| p.starts_with("Offline: the cloud cannot be reached (")), "{whole:?}");
    // No line of the menu runs wider than a menu should (the longest "Why" is cut).
    let longest = all.iter().map(|l| l.chars().count()).max().unwrap_or_default();
    assert!(longest <= 170, "a menu line of {longest} characters: {all:?}");
}

#[test]
fn a_newer_version_in_the_release_feed_is_said_in_the_menu_and_status() {
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let (feed, _) = cmux_tray_e2e::serve_release_feed("9.9.9");
    let set = home.run(&["config", "set", "updates.feed", &feed]);
    assert!(set.status.success(), "{set:?}");
    let _app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);
    wait_until("the update line", LIMIT, || labels(&desktop, &item).contains(&"Version 9.9.9 is available".to_string()));
    assert_eq!(home.status()["updateAvailable"], "9.9.9");
    // The feed must be https (or on loopback): anything else is refused where it is set.
    let refused = home.run(&["config", "set", "updates.feed", "http://releases.example.com/cmux-tray.json"]);
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("updates.feed"), "{refused:?}");
}

/// In a German session the tray's menu, its banners and the update line speak German
/// (docs/languages.md); `[general] language` speaks English there all the same.
#[test]
fn in_a_german_session_the_tray_and_its_banners_speak_german_unless_the_setting_says_otherwise() {
    let german = std::ffi::OsStr::new("de_DE.UTF-8");
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_display());
    let (feed, _) = cmux_tray_e2e::serve_release_feed("9.9.9");
    assert!(home.run(&["config", "set", "updates.feed", &feed]).status.success());
    let run = cloud.sim().create_run(&user.user_id, "Fix the flaky login test");
    let app = start_app_env(&home, &desktop, &user.access_token, &[], &[("LANG", german)]);
    let item = tray_item(&desktop);
    wait_until("the Run followed, in German", LIMIT, || labels(&desktop, &item).contains(&"Verfolgt (1)".to_string()));
    let said = labels(&desktop, &item);
    for expected in
        ["Alle als gelesen markieren", "Benachrichtigungen pausieren", "Für 1 Stunde", "Einstellungen…", "Über cmux-tray", "Beenden"]
    {
        assert!(said.contains(&expected.to_string()), "{expected}: {said:?}");
    }
    wait_until("the update line", LIMIT, || labels(&desktop, &item).contains(&"Version 9.9.9 ist verfügbar".to_string()));
    cloud.sim().update_run(&run, RunChange::status("succeeded"));
    wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);
    assert_eq!(desktop.notifications()[0]["body"], "Run abgeschlossen");
    wait_until("unread, in German", LIMIT, || labels(&desktop, &item).contains(&"Letzte Meldungen (1 ungelesen)".to_string()));
    drop(app);
    wait_until("the first tray gone from the watcher", LIMIT, || {
        !serde_json::from_str::<Vec<String>>(&desktop.sni(&["items"])).unwrap().contains(&item)
    });

    // The setting wins over the session's language, from the next start.
    assert!(home.run(&["config", "set", "general.language", "en"]).status.success());
    let _app = start_app_env(&home, &desktop, &user.access_token, &[], &[("LANG", german)]);
    let item = tray_item(&desktop);
    wait_until("the menu in English", LIMIT, || labels(&desktop, &item).contains(&"Settings…".to_string()));
    assert!(labels(&desktop, &item).contains(&"Quit".to_string()), "{:?}", labels(&desktop, &item));
}

#[test]
fn a_feed_that_offers_this_version_says_nothing() {
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let (feed, asked) = cmux_tray_e2e::serve_release_feed(env!("CARGO_PKG_VERSION"));
    assert!(home.run(&["config", "set", "updates.feed", &feed]).status.success());
    let _app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);
    wait_until("the feed asked", LIMIT, || asked.load(std::sync::atomic::Ordering::SeqCst) >= 1);
    // Its answer redraws the menu at once when it says something: as long as a notice takes, and more.
    std::thread::sleep(NOTHING_MORE);
    assert!(!labels(&desktop, &item).iter().any(|l| l.ends_with(" is available")), "{:?}", labels(&desktop, &item));
    assert!(home.status()["updateAvailable"].is_null());
}

#[test]
fn the_demo_shows_the_whole_loop_within_a_minute_without_an_account() {
    let desktop = DesktopSession::start_with_display();
    let home = Home::new("http://127.0.0.1:9", &desktop.address);
    let _app = start_app_with(&home, &desktop, "", &["--demo"]);
    let item = tray_item(&desktop);
    wait_until("the history window", LIMIT, || desktop.window_titled("cmux-tray — History"));
    let expected = [
        ("Fix the flaky login test", "Run finished"),
        ("Refactor the parser", "Needs you"),
        ("Tests passed", "parser — 412 passed in 38 s (cmux-tray wrap -- cargo test)"),
        ("Refactor the parser", "Done — Pushed to parser-refactor; 3 files changed."),
        ("Upgrade the build to the new toolchain", "Run failed"),
    ];
    wait_until("the whole story as banners", LIMIT, || desktop.notifications().len() >= expected.len());
    let got: Vec<(String, String)> = desktop
        .notifications()
        .iter()
        .map(|n| (n["summary"].as_str().unwrap().to_string(), n["body"].as_str().unwrap().to_string()))
        .collect();
    for (title, body) in expected {
        assert!(got.iter().any(|(t, b)| t == title && b == body), "{title} / {body} in {got:?}");
    }
    assert!(signed_in_as(&labels(&desktop, &item), "demo@example.com"));
    desktop.screenshot("demo-history");
    // The person's own state was not touched.
    assert!(!home.database().exists());
}

#[test]
fn a_click_on_a_runs_banner_opens_its_card_and_marks_it_read() {
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_display());
    let run = cloud.sim().create_run(&user.user_id, "Ship the release notes");
    let _app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);
    wait_until("following", LIMIT, || labels(&desktop, &item).contains(&"Following (1)".to_string()));
    cloud.sim().update_run(&run, RunChange::status("succeeded"));
    wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);
    let banner = desktop.notifications()[0]["id"].as_u64().unwrap();
    desktop.click(banner);
    wait_until("the Run's card in the history window", LIMIT, || desktop.window_titled("cmux-tray — History"));
    wait_until("read once shown", LIMIT, || labels(&desktop, &item).iter().any(|l| l == "   Ship the release notes — Run finished"));
    wait_until("the banner withdrawn", LIMIT, || desktop.events().iter().any(|e| e["event"] == "close" && e["id"] == banner));
    desktop.screenshot("run-card");
}

#[test]
fn a_banner_clicked_while_the_history_is_open_takes_that_window_to_its_card() {
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_display());
    let handoff = cloud.sim().create_handoff(NewHandoff {
        owner: user.user_id.clone(),
        title: Some("Tidy the changelog".into()),
        ..Default::default()
    });
    let _app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);
    wait_until("following", LIMIT, || labels(&desktop, &item).contains(&"Following (1)".to_string()));
    desktop.sni(&["activate", &item]);
    wait_until("the history window", LIMIT, || desktop.window_titled("cmux-tray — History"));
    let windows = home.pids_of("cmux-tray-windows");
    let needs_you = |summary: &str| HandoffChange { status: Some("needs-you".into()), summary: Some(summary.into()), ..Default::default() };
    let notices = || -> Vec<Value> {
        home.status()["notices"].as_array().unwrap().iter().filter(|n| n["item"] == format!("handoff:{handoff}")).cloned().collect()
    };
    // One notice per (hand-off, turn, status): docs/notices.md §1.
    let turn = |seq: u64| move |n: &Value| n["seq"] == seq && n["status"] == "needs-you";
    let told = |seq: u64| notices().into_iter().find(|n| turn(seq)(n) && n["state"] == "told");
    cloud.sim().update_handoff(&handoff, needs_you("Which branch?"));
    wait_until("the first turn told", LIMIT, || told(1).is_some());
    // Past the half second that would chain the next turn to this one (docs/notices.md §3).
    std::thread::sleep(Duration::from_millis(600));
    cloud.sim().update_handoff(&handoff, HandoffChange { next_turn: true, ..Default::default() });
    cloud.sim().update_handoff(&handoff, needs_you("Which remote?"));
    wait_until("the second turn told with a banner", LIMIT, || told(2).is_some_and(|n| n["bannerId"].is_u64()));
    let banners = desktop.notifications().len();
    desktop.click(told(2).unwrap()["bannerId"].as_u64().unwrap());
    // The click marks its own notice read; only the card on screen, looked at, marks the first
    // turn's too (docs/notices.md, "The app's own window as focus").
    wait_until("the first turn read once the open window shows the card", LIMIT, || told(1).is_some_and(|n| n["readAt"].is_i64()));
    // … and what comes while it is shown is told without a banner.
    cloud.sim().update_handoff(&handoff, HandoffChange { next_turn: true, ..Default::default() });
    cloud.sim().update_handoff(&handoff, needs_you("Which tag?"));
    wait_until("the third turn decided", LIMIT, || told(3).is_some());
    let third = told(3).unwrap();
    assert_eq!(third["delivery"], "focused", "{third}");
    assert_eq!(desktop.notifications().len(), banners, "no banner for what is on screen");
    assert_eq!(home.pids_of("cmux-tray-windows"), windows, "the same windows process");
    assert_eq!(desktop.windows_titled("cmux-tray — History"), 1, "one history window");
}

#[test]
fn a_second_launch_with_a_link_reaches_the_first_instance_and_starts_no_second_tray() {
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_display());
    let mut app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);
    wait_until("signed in", LIMIT, || signed_in_as(&labels(&desktop, &item), "ada@example.com"));
    // Made after sign-in, so only the link can make the app follow it.
    let run = cloud.sim().create_run(&user.user_id, "Handed over by a link");
    let link = format!("cmux-tray://follow/run/{run}");
    let status =
        home.program(std::path::Path::new("xdg-open"), &[&link]).env("DISPLAY", desktop.display.as_deref().unwrap()).status().unwrap();
    assert!(status.success(), "xdg-open found the registered handler");
    wait_until("the first instance follows the Run", LIMIT, || labels(&desktop, &item).contains(&"Following (1)".to_string()));
    let items: Vec<String> = serde_json::from_str(&desktop.sni(&["items"])).unwrap();
    assert_eq!(items.len(), 1, "no second tray: {items:?}");
    assert!(app.child.try_wait().unwrap().is_none(), "the first instance runs on");
    // A bad link changes nothing and starts nothing.
    let status = home
        .program(&bin("cmux-tray-app"), &["cmux-tray://follow/run/run_../../etc"])
        .env("DISPLAY", desktop.display.as_deref().unwrap())
        .status()
        .unwrap();
    assert!(status.success(), "the second launch hands over and exits");
    std::thread::sleep(NOTHING_MORE);
    assert_eq!(labels(&desktop, &item).iter().filter(|l| l.starts_with("Following (")).collect::<Vec<_>>(), ["Following (1)"]);
    assert!(home.pids_of("cmux-tray-windows").is_empty(), "a follow link opens no window");
    // A link to a notice that is gone opens the history, in the windows process the tray starts.
    let status = home
        .program(std::path::Path::new("xdg-open"), &["cmux-tray://open/run:run_0123456789abcdef0123:succeeded"])
        .env("DISPLAY", desktop.display.as_deref().unwrap())
        .status()
        .unwrap();
    assert!(status.success());
    wait_until("the history window", LIMIT, || desktop.window_titled("cmux-tray — History"));
    assert_eq!(home.pids_of("cmux-tray-windows").len(), 1);
    assert!(app.child.try_wait().unwrap().is_none(), "the first instance runs on");
}

/// The app's WebKit children: web processes and the network process.
fn web_processes(app_pid: u32) -> usize {
    web_process_ids(app_pid).len()
}

/// Their pids.
fn web_process_ids(app_pid: u32) -> Vec<String> {
    let out = std::process::Command::new("pgrep").args(["-P", &app_pid.to_string(), "-f", "WebKit(Web|Network)Process"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect()
}

/// The pid of the tray running in this home.
fn app_pid(home: &Home) -> u32 {
    let found = home.pids_of("cmux-tray-app");
    assert_eq!(found.len(), 1, "one tray runs in this home: {found:?}");
    found[0]
}

/// The pid of the windows process running in this home, once there is one.
fn windows_pid(home: &Home) -> u32 {
    let mut found = Vec::new();
    wait_until("a windows process", LIMIT, || {
        found = home.pids_of("cmux-tray-windows");
        !found.is_empty()
    });
    assert_eq!(found.len(), 1, "one windows process runs in this home: {found:?}");
    found[0]
}

#[test]
fn the_settings_window_keeps_what_is_set_and_leaves_only_the_tray_when_closed() {
    use cmux_tray_e2e::webdriver::WebDriver;
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let wd =
        WebDriver::start(&home, desktop.display.as_deref().unwrap(), &["--open", "settings"], &[("CMUX_TRAY_TOKEN", &user.access_token)]);
    // A quiet-hours window, drawn with the editor, is saved as it is made.
    wd.click(&wd.find("#add-window"));
    let said = wd.find("#windows-said");
    wait_until("saved", LIMIT, || wd.text(&said) == "Quiet hours saved");
    let config = std::fs::read_to_string(home.config_file()).unwrap();
    assert!(config.contains("mon-fri 22:00-07:00"), "{config}");
    // A bad value is refused beside its field with the key named, and the file keeps the good one.
    let cooldown = wd.find(r#"[id="delivery.sound_cooldown"]"#);
    wd.type_into(&cooldown, "-5");
    wd.call("POST", &wd.session_path(&format!("/element/{cooldown}/value")), Some(serde_json::json!({"text": "\u{E004}"})));
    let row = wd.find("#cooldown-row .said");
    wait_until("refused", LIMIT, || wd.text(&row).contains("delivery.sound_cooldown"));
    assert_eq!(std::fs::read_to_string(home.config_file()).unwrap(), config);
    // Open at login: an autostart entry that starts the tray alone.
    let message = wd.find("#open-at-login-said");
    wd.click(&wd.find("#open-at-login"));
    wait_until("open at login answered", LIMIT, || wd.text(&message).contains("Open at login"));
    let said = wd.text(&message);
    assert!(said.contains("Open at login on"), "{said}");
    // Where XDG_CONFIG_HOME says (the home's config/), as every XDG session reads it.
    let autostart = home.dir.path().join("config/autostart/cmux-tray.desktop");
    let entry = std::fs::read_to_string(&autostart).unwrap();
    assert!(entry.contains(&format!("Exec={} --hidden\n", bin("cmux-tray-app").display())), "{entry}");
    assert!(!home.dir.path().join("home/.config/autostart").exists());
    // Off again: the entry is gone.
    wd.click(&wd.find("#open-at-login"));
    wait_until("open at login off", LIMIT, || wd.text(&message).contains("Open at login off"));
    assert!(!autostart.exists());
    desktop.screenshot("settings-saved");

    // Closed: the window, its process and its web processes are gone; the tray stays.
    let (pid, windows) = (app_pid(&home), windows_pid(&home));
    assert!(web_processes(windows) >= 1);
    assert_eq!(web_processes(pid), 0, "no web process is the tray's");
    // Closed from the window itself, as a person's close is (a WebDriver close would end the
    // automated app with its last window).
    wd.call(
        "POST",
        &wd.session_path("/execute/sync"),
        Some(serde_json::json!({"script": "window.__TAURI__.window.getCurrentWindow().close(); return 1;", "args": []})),
    );
    wait_until("the window closed", LIMIT, || !desktop.window_titled("cmux-tray — Settings"));
    wait_until("no windows process left", LIMIT, || home.pids_of("cmux-tray-windows").is_empty());
    // A process whose command line is gone is still exiting: its children are handed on a moment
    // later (seen in CI), so their end is waited for, not read at once.
    wait_until("the web processes ended with their process", LIMIT, || web_processes(windows) == 0);
    assert_eq!(app_pid(&home), pid, "the app lives on in the tray");
    let item = tray_item(&desktop);

    // Reopened from the tray: a new windows process, with WebKit's processes (WebDriver's
    // session ended with the first, so the new page is looked at in the screenshot, and what it
    // shows is in the file it reads).
    click(&desktop, &item, "Settings…");
    wait_until("the settings window again", LIMIT, || desktop.window_titled("cmux-tray — Settings"));
    let again = windows_pid(&home);
    assert_ne!(again, windows);
    wait_until("a web process and a network process again", LIMIT, || web_processes(again) >= 2);
    assert!(std::fs::read_to_string(home.config_file()).unwrap().contains("mon-fri 22:00-07:00"));
    desktop.screenshot("settings-reopened");
}

#[test]
fn a_banner_shown_by_dunst_and_clicked_opens_the_terminal_it_came_from() {
    let desktop = DesktopSession::start_with_dunst_and_display();
    let home = Home::new("http://127.0.0.1:9", &desktop.address);
    let opened = home.register_cmux_handler();
    let _app = start_app(&home, &desktop, "");
    let _item = tray_item(&desktop);
    let ws = "D9C269B8-1A2B-4C3D-8E9F-0123456789AB";
    let sf = "B9DD280A-0000-0000-0000-000000000001";
    let out = home
        .command(&["notify", "--title", "Tests passed", "--body", "412 green"])
        .env("CMUX_WORKSPACE_ID", ws)
        .env("CMUX_SURFACE_ID", sf)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    wait_until("dunst shows the banner", LIMIT, || desktop.dunstctl(&["count", "displayed"]).trim() == "1");
    desktop.screenshot("dunst-banner");
    desktop.dunstctl(&["action", "0"]);
    wait_until("the link opened", LIMIT, || std::fs::read_to_string(&opened).is_ok_and(|t| !t.is_empty()));
    assert_eq!(std::fs::read_to_string(&opened).unwrap().trim(), format!("cmux://workspace/{ws}/surface/{sf}"));
}

#[test]
fn the_cards_window_shows_a_runs_outcome_and_receipt_and_a_handoffs_turns() {
    use cmux_tray_e2e::webdriver::WebDriver;
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_display());
    let run = cloud.sim().create_run(&user.user_id, "Ship the release notes\nAlso tag v1.4.");
    let handoff = cloud.sim().create_handoff(NewHandoff {
        owner: user.user_id.clone(),
        title: Some("Refactor the parser".into()),
        ..Default::default()
    });
    let wd =
        WebDriver::start(&home, desktop.display.as_deref().unwrap(), &["--open", "history"], &[("CMUX_TRAY_TOKEN", &user.access_token)]);
    // Both are adopted at sign-in and listed by name.
    let follows = wd.find("#follows");
    // The history page may read the history, and nothing of the settings: a command it does not
    // use is refused by its window's capability (a page that was made to call it would be too).
    let call = |command: &str, args: &str| {
        wd.run_async(&format!(
            "window.__TAURI__.core.invoke({command:?}, {args}).then(() => done(\"allowed\"), (e) => done(\"refused: \" + e));"
        ))
    };
    assert_eq!(call("history_view", r#"{"filter": {}}"#), "allowed");
    let refused = call("set_setting", r#"{"key": "cloud.api_url", "value": "https://evil.example"}"#);
    assert!(refused.as_str().is_some_and(|r| r.starts_with("refused: ") && r.contains("not allowed")), "{refused}");
    assert!(!home.config_file().exists(), "nothing was written");
    let refused = call("sign_in_with_token", r#"{"token": "x"}"#);
    assert!(refused.as_str().is_some_and(|r| r.starts_with("refused: ")), "{refused}");
    wait_until("both followed, by name", LIMIT, || {
        let t = wd.text(&follows);
        t.contains("Ship the release notes") && t.contains("Refactor the parser")
    });

    // The Run ends with a receipt; a click on its line in the history opens its card.
    cloud.sim().update_run(
        &run,
        RunChange {
            status: Some("succeeded".into()),
            receipt: Some(serde_json::json!({"summary": "Release notes merged in #212", "url": "https://github.com/acme/app/pull/212"})),
            ..Default::default()
        },
    );
    wait_until("the Run's notice in the history", LIMIT, || wd.text(&wd.find("#notices")).contains("Ship the release notes"));
    wd.click_until_shown(&format!(r#"button[data-key^="run:{run}"]"#), "#run-card");
    let card = wd.find("#run-card");
    wait_until("the card's receipt", LIMIT, || wd.text(&card).contains("Release notes merged in #212"));
    let text = wd.text(&card);
    assert!(text.contains("Ship the release notes") && text.contains("Also tag v1.4."), "the task: {text}");
    assert!(text.contains("Outcome: finished"), "the outcome: {text}");
    assert!(text.contains("https://github.com/acme/app/pull/212"), "the receipt's link: {text}");
    desktop.screenshot("run-card-webdriver");

    // The hand-off takes two turns; its card lists them.
    cloud.sim().update_handoff(
        &handoff,
        HandoffChange { status: Some("needs-you".into()), summary: Some("Which branch should I push to?".into()), ..Default::default() },
    );
    wait_until("the first turn's notice", LIMIT, || desktop.notifications().iter().any(|n| n["body"] == "Needs you"));
    cloud.sim().update_handoff(&handoff, HandoffChange { next_turn: true, ..Default::default() });
    cloud.sim().update_handoff(
        &handoff,
        HandoffChange { status: Some("done".into()), summary: Some("Pushed to parser-refactor.".into()), ..Default::default() },
    );
    wait_until("the second turn's notice", LIMIT, || {
        desktop.notifications().iter().any(|n| n["body"].as_str().is_some_and(|b| b.starts_with("Done")))
    });
    wd.click_until_shown(&format!(r#"button[data-item="handoff:{handoff}"]"#), "#handoff-card");
    let card = wd.find("#handoff-card");
    wait_until("both turns on the card", LIMIT, || {
        let t = wd.text(&card);
        t.contains("Needs you") && t.contains("Done — Pushed to parser-refactor.")
    });
    assert!(wd.text(&card).contains("Refactor the parser"));
    desktop.screenshot("handoff-card");

    // The card on screen is looked at: its turns are read, and the next turn shows no banner.
    let handoff_notices = || -> Vec<Value> {
        home.status()["notices"].as_array().unwrap().iter().filter(|n| n["item"] == format!("handoff:{handoff}")).cloned().collect()
    };
    wait_until("its turns marked read", LIMIT, || handoff_notices().iter().all(|n| n["readAt"].is_i64()));
    let banners = desktop.notifications().len();
    cloud.sim().update_handoff(&handoff, HandoffChange { next_turn: true, ..Default::default() });
    cloud.sim().update_handoff(
        &handoff,
        HandoffChange { status: Some("done".into()), summary: Some("Tagged v1.4.".into()), ..Default::default() },
    );
    wait_until("the third turn decided", LIMIT, || {
        handoff_notices().iter().any(|n| n["body"] == "Done — Tagged v1.4." && n["state"] == "told")
    });
    let third = handoff_notices().into_iter().find(|n| n["body"] == "Done — Tagged v1.4.").unwrap();
    assert_eq!(third["delivery"], "focused", "{third}");
    assert_eq!(desktop.notifications().len(), banners, "no banner for what is on screen");
}

#[test]
fn the_settings_window_chooses_the_team_and_sets_the_cloud_origins_for_the_next_start() {
    use cmux_tray_e2e::webdriver::WebDriver;
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_display());
    let platform = cloud.sim().add_team(&user.user_id, "Platform");
    let run = cloud.sim().create_run(&user.user_id, "Keeps going across the team switch");
    let wd =
        WebDriver::start(&home, desktop.display.as_deref().unwrap(), &["--open", "settings"], &[("CMUX_TRAY_TOKEN", &user.access_token)]);
    let account = wd.find("#account");
    wait_until("signed in", LIMIT, || wd.text(&account) == "Signed in as ada@example.com");
    let team = wd.find("#team");
    wait_until("the account's teams", LIMIT, || wd.text(&team).contains("Platform"));
    assert!(wd.text(&team).contains("Personal (personal)"));

    // Choosing the team: from then on every request says so.
    wd.call(
        "POST",
        &wd.session_path("/execute/sync"),
        Some(serde_json::json!({"script": "const s = document.getElementById('team'); s.value = arguments[0]; s.dispatchEvent(new Event('change')); return 1;", "args": [platform]})),
    );
    let message = wd.find("#team-said");
    wait_until("the team chosen", LIMIT, || wd.text(&message).contains("Team Platform chosen"));
    cloud.sim().clear_requests();
    wait_until("the Run asked for on the team's behalf", LIMIT, || {
        cloud.sim().requests().iter().any(|r| r.path.contains(&run) && r.header("x-cmux-team") == Some(platform.as_str()))
    });
    assert_eq!(home.status()["account"]["team"], platform.as_str());

    // The cloud origin for staging: refused when not https, kept when it is, applied at the next start.
    // Under "Advanced", folded until opened; a field applies when left (or on Enter).
    wd.click(&wd.find(".advanced summary"));
    let api = wd.find(r#"[id="cloud.api_url"]"#);
    let said = wd.find(r#"[id="cloud.api_url"] + .said"#);
    let enter = |text: &str| {
        wd.type_into(&api, text);
        wd.call("POST", &wd.session_path(&format!("/element/{api}/value")), Some(serde_json::json!({"text": "\u{E007}"})));
    };
    enter("http://cloud-api-staging.cmux.dev");
    wait_until("refused", LIMIT, || wd.text(&said).contains("cloud.api_url") && wd.text(&said).contains("https"));
    assert!(!std::fs::read_to_string(home.config_file()).unwrap_or_default().contains("staging"));
    enter("https://cloud-api-staging.cmux.dev");
    wait_until("saved", LIMIT, || wd.text(&said).contains("Saved; applies when cmux-tray restarts"));
    let config = std::fs::read_to_string(home.config_file()).unwrap();
    assert!(config.contains("api_url = \"https://cloud-api-staging.cmux.dev\""), "{config}");
    assert!(wd.property(&wd.find("#restart"), "hidden") == false, "a restart is offered");
    let socket = wd.find(r#"[id="in-force-local.socket_path"]"#);
    assert_eq!(wd.text(&socket), format!("In use now: {}", home.socket().display()));
    desktop.screenshot("settings-account-and-cloud");
}

/// A closed window is kept hidden for docs/architecture.md's while ("Two processes": 20 s), so
/// that one opened again within it is shown by the same windows process, with no new web
/// engine; once the while is over, the process and its web processes end.
#[test]
fn a_closed_window_is_kept_a_while_shown_again_by_the_same_process_and_then_ends() {
    const KEPT: Duration = Duration::from_secs(20);
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);
    let history = "cmux-tray — History";
    desktop.sni(&["activate", &item]);
    wait_until("the history window", LIMIT, || desktop.window_titled(history));
    let windows = windows_pid(&home);
    let web = web_process_ids(windows);
    assert!(!web.is_empty(), "the history's web processes");

    // Closed as a window manager closes it: gone from the screen, its process kept.
    desktop.close_window(history).unwrap();
    wait_until("the window closed", LIMIT, || !desktop.window_titled(history));
    std::thread::sleep(KEPT / 2);
    assert!(!desktop.window_titled(history), "the closed window stays hidden");
    assert_eq!(home.pids_of("cmux-tray-windows"), vec![windows], "the closed window's process is kept for its while");
    assert_eq!(web_process_ids(windows), web, "and its web processes");

    // Opened again within the while: the same process and web engine show it, once its page
    // loaded (not after the wait for a page that does not load).
    desktop.sni(&["activate", &item]);
    wait_until("the history window again", LIMIT, || desktop.window_titled(history));
    assert_eq!(windows_pid(&home), windows, "shown again by the kept process");
    assert_eq!(web_process_ids(windows), web, "with the same web processes");
    // Its while began again at its next close: still kept past the first close's while.
    desktop.close_window(history).unwrap();
    let closed = std::time::Instant::now();
    wait_until("the window closed again", LIMIT, || !desktop.window_titled(history));
    std::thread::sleep(KEPT / 2);
    assert!(!desktop.window_titled(history), "the closed window stays hidden");
    assert_eq!(home.pids_of("cmux-tray-windows"), vec![windows], "kept for the while after the second close");
    let log = std::fs::read_to_string(&app.log).unwrap();
    assert!(!log.contains("shown anyway"), "a window was shown before its page loaded: {log}");

    // Its while over: the process and its web processes end, and the tray lives on.
    wait_until("the windows process ended after its while", KEPT + LIMIT, || home.pids_of("cmux-tray-windows").is_empty());
    assert!(closed.elapsed() >= KEPT - Duration::from_secs(1), "ended {:?} after its close, before its while", closed.elapsed());
    wait_until("its web processes ended", LIMIT, || web_processes(windows) == 0);
    assert_eq!(home.pids_of("cmux-tray-app").len(), 1, "the tray lives on");
}

#[test]
fn the_windows_process_killed_leaves_the_tray_following_and_posting_and_a_window_opens_again() {
    let (desktop, cloud, user, home) = ada(DesktopSession::start_with_display());
    let run = cloud.sim().create_run(&user.user_id, "Outlives the windows");
    let _app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);
    wait_until("the Run followed", LIMIT, || labels(&desktop, &item).contains(&"Outlives the windows".to_string()));
    let tray = app_pid(&home);
    desktop.sni(&["activate", &item]);
    wait_until("the history window", LIMIT, || desktop.window_titled("cmux-tray — History"));
    let windows = windows_pid(&home);
    let web: Vec<String> = {
        let out = std::process::Command::new("pgrep").args(["-P", &windows.to_string()]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect()
    };
    assert!(!web.is_empty(), "the history's web processes are the windows process's children");

    // A crash of the windows process (and, with it, of its web processes).
    signal(windows, "KILL");
    for pid in &web {
        let _ = std::process::Command::new("kill").args(["-KILL", pid]).status();
    }
    wait_until("the window gone", LIMIT, || !desktop.window_titled("cmux-tray — History"));
    assert_eq!(app_pid(&home), tray, "the tray lives on");

    // The tray still follows, posts and redraws.
    cloud.sim().update_run(&run, RunChange::status("succeeded"));
    wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);
    wait_until("unread in the menu", LIMIT, || labels(&desktop, &item).iter().any(|l| l == "● Outlives the windows — Run finished"));

    // The next click opens a window again, in a new windows process.
    click(&desktop, &item, "Settings…");
    wait_until("the settings window", LIMIT, || desktop.window_titled("cmux-tray — Settings"));
    assert_ne!(windows_pid(&home), windows);
}

/// The next windows process started in `home` other than `not`, stopped (SIGSTOP) before it
/// could attach: it has no socket open yet, neither its display nor the tray's channel.
fn stopped_before_it_attached(home: &Home, not: &[u32]) -> u32 {
    let mut found = None;
    wait_until("a windows process started", LIMIT, || {
        found = home.pids_of("cmux-tray-windows").into_iter().find(|pid| !not.contains(pid));
        found.is_some()
    });
    let pid = found.unwrap();
    signal(pid, "STOP");
    let sockets = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy().starts_with("socket:"))
        .count();
    assert_eq!(sockets, 0, "stopped too late to be a start that never attached: it had {sockets} socket(s) open");
    pid
}

/// The history asked for (a left click) while the next windows process (other than `not`) is
/// stopped before it attached; then that process killed. Returns its pid.
fn history_asked_while_a_start_dies(desktop: &DesktopSession, home: &Home, item: &str, not: &[u32]) -> u32 {
    let pid = stopped_before_it_attached(home, not);
    desktop.sni(&["activate", item]);
    signal(pid, "KILL");
    pid
}

#[test]
fn a_windows_process_gone_before_it_attached_holds_back_no_window_asked_for_meanwhile() {
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let _app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);

    // The settings asked for; the history asked for while its process starts, which then ends
    // without having attached.
    click(&desktop, &item, "Settings…");
    let first = history_asked_while_a_start_dies(&desktop, &home, &item, &[]);

    wait_until("the history window, from a second windows process", LIMIT, || desktop.window_titled("cmux-tray — History"));
    assert!(!desktop.window_titled("cmux-tray — Settings"), "the stopped process showed nothing");
    assert_ne!(windows_pid(&home), first);
}

#[test]
fn a_windows_process_that_keeps_ending_before_it_attaches_is_started_again_once() {
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let _app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);

    click(&desktop, &item, "Settings…");
    let first = history_asked_while_a_start_dies(&desktop, &home, &item, &[]);
    // Started again for the history; it too ends unattached, with a window asked for meanwhile.
    history_asked_while_a_start_dies(&desktop, &home, &item, &[first]);

    std::thread::sleep(NOTHING_MORE);
    assert_eq!(home.pids_of("cmux-tray-windows"), Vec::<u32>::new(), "no third start for a second start that ended unattached");
    // The next window asked for starts one, and it shows.
    desktop.sni(&["activate", &item]);
    wait_until("the history window, from a third windows process", LIMIT, || desktop.window_titled("cmux-tray — History"));
}

#[test]
fn the_tray_in_a_visible_tray_bar_opens_its_menu_on_a_real_click() {
    let mut desktop = DesktopSession::start_with_display();
    desktop.start_tray_bar();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let run = cloud.sim().create_run(&user.user_id, "Fix the flaky login test");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let mut app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);
    wait_until("the Run by name", LIMIT, || labels(&desktop, &item).contains(&"Fix the flaky login test".to_string()));
    cloud.sim().update_run(&run, RunChange::status("succeeded"));
    wait_until("unread in the menu", LIMIT, || labels(&desktop, &item).iter().any(|l| l.starts_with("● ")));
    // Visible windows, and their geometry (x, y, width, height).
    let ids = || desktop.xdotool(&["search", "--onlyvisible", "--name", ""]).lines().map(String::from).collect::<Vec<_>>();
    let geometry = |w: &str| -> Vec<i64> {
        let text = desktop.xdotool(&["getwindowgeometry", "--shell", w]);
        ["X", "Y", "WIDTH", "HEIGHT"]
            .iter()
            .map(|k| text.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).and_then(|v| v.parse().ok()).unwrap_or(-1))
            .collect()
    };
    // A real right click on the icon (the bar puts it at the top left); the menu is the new
    // window on screen (GTK maps small helper windows off it too).
    let open_menu = || -> Vec<i64> {
        let shown = ids();
        let mut menu = Vec::new();
        let mut clicked: Option<std::time::Instant> = None;
        // Settled: the same place and size twice in a row (GTK sizes and places it after mapping).
        wait_until("the menu open", LIMIT, || {
            let seen = ids().into_iter().filter(|w| !shown.contains(w)).map(|w| geometry(&w)).find(|g| g[0] >= 0 && g[2] > 50);
            // The bar may draw the icon a while after the item registered (on a fresh machine
            // its first start builds caches): a click that opened nothing in 3 s is made again.
            if seen.is_none() && clicked.is_none_or(|at| at.elapsed() > Duration::from_secs(3)) {
                desktop.xdotool(&["mousemove", "16", "16", "click", "3"]);
                clicked = Some(std::time::Instant::now());
            }
            let settled = seen.as_ref().is_some_and(|g| *g == menu);
            menu = seen.unwrap_or_default();
            std::thread::sleep(Duration::from_millis(100));
            settled
        });
        menu
    };
    let menu_shown = || ids().into_iter().map(|w| geometry(&w)).any(|g| g[0] >= 0 && g[1] >= 32 && g[2] > 50 && g[3] > 100);

    open_menu();
    desktop.screenshot("tray-menu-open");
    desktop.xdotool(&["key", "Escape"]);
    wait_until("the menu closed", LIMIT, || !menu_shown());

    // A real left click opens the history (the tray's Activate, which appindicator never had).
    desktop.xdotool(&["mousemove", "16", "16", "click", "1"]);
    wait_until("the history window", LIMIT, || desktop.window_titled("cmux-tray — History"));
    // No window manager places it: it opened over the bar; move it aside.
    desktop.xdotool(&["search", "--onlyvisible", "--name", "^cmux-tray — History$", "windowmove", "--sync", "600", "100"]);

    // A real click on the menu's last item, Quit, ends the app.
    let menu = open_menu();
    let (x, y, h) = (menu[0], menu[1], menu[3]);
    desktop.xdotool(&["mousemove", &(x + 40).to_string(), &(y + h - 14).to_string()]);
    std::thread::sleep(Duration::from_millis(300)); // hovered, as a hand would, before the click
    desktop.xdotool(&["click", "1"]);
    wait_until("quit from the menu", LIMIT, || app.child.try_wait().unwrap().is_some());
}

#[test]
fn the_app_says_why_it_cannot_start_in_the_terminal_and_a_dialog_and_exits_non_zero() {
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    // Another engine already runs for this user's data (the headless daemon).
    let _daemon = home.daemon(&user.access_token);
    let log = home.dir.path().join("app-cannot-start.log");
    let mut child = home.app_command(desktop.display.as_deref().unwrap(), &log).spawn().unwrap();
    let said = || std::fs::read_to_string(log.with_extension("err")).unwrap_or_default();
    let start = std::time::Instant::now();
    while !desktop.window_titled("cmux-tray") {
        assert!(start.elapsed() < LIMIT, "no dialog within {LIMIT:?}; the app said:\n{}", said());
        std::thread::sleep(Duration::from_millis(50));
    }
    desktop.screenshot("cannot-start-dialog");
    let err = std::fs::read_to_string(log.with_extension("err")).unwrap();
    assert!(err.contains("cannot start: another cmux-tray engine is running"), "{err}");
    // The person clicks Close (the dialog's bottom row, as the screenshot shows): the app ends,
    // with a failure code.
    let window = desktop.xdotool(&["search", "--onlyvisible", "--name", "^cmux-tray$"]);
    let geometry = desktop.xdotool(&["getwindowgeometry", "--shell", window.lines().next().unwrap()]);
    let value = |k: &str| -> i64 { geometry.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).unwrap().trim().parse().unwrap() };
    let (x, y) = (value("X") + value("WIDTH") / 2, value("Y") + value("HEIGHT") - 16);
    desktop.xdotool(&["mousemove", &x.to_string(), &y.to_string(), "click", "1"]);
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < LIMIT, "the app did not end after its dialog closed");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(1));
}

#[test]
fn without_a_desktop_session_each_program_says_what_it_needs_and_exits() {
    let home = Home::new("http://127.0.0.1:9", "unix:path=/nonexistent");
    // The tray: no D-Bus session bus to show the tray on (an ssh session).
    let out = home.program(&bin("cmux-tray-app"), &["--hidden"]).env_remove("DISPLAY").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("no desktop session to show the tray in") && said.contains("`cmux-tray daemon` runs the engine without a tray"),
        "{said}"
    );
    assert!(!said.contains("panicked"), "{said}");
    // The windows: no display to draw on.
    let out = home.program(&bin("cmux-tray-windows"), &["--open", "history"]).env_remove("DISPLAY").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("no display to draw a window on") && !said.contains("panicked"), "{said}");
    assert!(home.pids_of("cmux-tray-app").is_empty() && home.pids_of("cmux-tray-windows").is_empty());
}

#[test]
fn the_idle_tray_maps_no_web_engine_no_toolkit_and_no_opengl_and_passes_no_switch_on() {
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let dumped = home.register_cmux_env_recorder();
    let _app = start_app(&home, &desktop, &user.access_token);
    let _item = tray_item(&desktop);
    let pid = app_pid(&home);
    // The registered tray is the engine and D-Bus alone: no WebKit, GTK, GDK or Mesa mapped.
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let heavy = ["libwebkit2gtk", "libjavascriptcoregtk", "libgtk-3", "libgdk-3", "libsoup", "_dri.so", "libLLVM", "libGLX_mesa"];
    let mapped: Vec<&str> = maps.lines().filter(|l| heavy.iter().any(|h| l.contains(h))).collect();
    assert!(mapped.is_empty(), "mapped in the idle tray: {mapped:?}");
    assert!(maps.contains("cmux-tray-app"), "the maps read are the tray's");
    // The windows process's switch (GDK_GL=disable, its own) never reaches a program the tray
    // starts on the person's behalf.
    let out = home
        .command(&["notify", "--title", "Opened"])
        .env("CMUX_WORKSPACE_ID", "D9C269B8-1A2B-4C3D-8E9F-0123456789AB")
        .env("CMUX_SURFACE_ID", "B9DD280A-0000-0000-0000-000000000001")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    wait_until("the banner", LIMIT, || desktop.notifications().iter().any(|n| n["summary"] == "Opened"));
    let id = desktop.notifications().iter().find(|n| n["summary"] == "Opened").unwrap()["id"].as_u64().unwrap();
    desktop.click(id);
    wait_until("the opener ran", LIMIT, || std::fs::read(&dumped).is_ok_and(|e| !e.is_empty()));
    let env = String::from_utf8_lossy(&std::fs::read(&dumped).unwrap()).into_owned();
    assert!(env.split('\0').any(|v| v.starts_with("DISPLAY=")), "the opener's environment was read");
    assert!(!env.contains("GDK_GL"), "GDK_GL reached the opener: {env:?}");
}

/// One line to the local socket at `path` and the line it answers.
fn socket_answer(path: &std::path::Path, line: &str) -> Option<String> {
    use std::io::{BufRead, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(path).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream.write_all(format!("{line}\n").as_bytes()).ok()?;
    let mut answer = String::new();
    std::io::BufReader::new(stream).read_line(&mut answer).ok()?;
    Some(answer.trim_end().to_string())
}

/// A program of the person's that is not the tray's windows (it cannot read the keyring, say)
/// asks the tray, over its channel, to send the sign-in elsewhere and restart: refused.
#[test]
fn a_program_that_is_not_the_trays_windows_cannot_change_a_setting_or_restart_the_tray() {
    use std::io::{BufRead, Write};
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let _app = start_app(&home, &desktop, &user.access_token);
    let _item = tray_item(&desktop);
    let tray = app_pid(&home);
    let channel = home.dir.path().join("run/cmux-tray/app.sock");
    let ask = |lines: &[&str]| -> Vec<String> {
        let mut stream = std::os::unix::net::UnixStream::connect(&channel).expect("the tray serves its channel");
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        for line in lines {
            // The tray closes a connection it refused: what is sent after that may find it gone.
            let _ = stream.write_all(format!("{line}\n").as_bytes());
        }
        std::io::BufReader::new(stream).lines().map_while(Result::ok).collect()
    };
    let answers = ask(&[
        r#"{"type":"call","id":1,"command":"set_setting","args":{"key":"cloud.auth_url","value":"https://elsewhere.example"}}"#,
        r#"{"type":"call","id":2,"command":"restart","args":{}}"#,
    ]);
    assert_eq!(answers.len(), 1, "one refusal, then the channel closed: {answers:?}");
    let refused: Value = serde_json::from_str(&answers[0]).unwrap();
    assert_eq!(refused["id"], 1);
    assert!(refused["error"].as_str().is_some_and(|e| e.contains("refused")), "{refused}");
    // A key made up is no key either.
    let key = "0".repeat(64);
    let attach = format!(r#"{{"type":"attach","page":"settings","query":null,"key":"{key}"}}"#);
    let answers = ask(&[&attach, r#"{"type":"call","id":3,"command":"restart","args":{}}"#]);
    assert_eq!(answers, vec![r#"{"type":"attached","chosen":false}"#.to_string()], "taken as a launch, then let go");
    std::thread::sleep(NOTHING_MORE);
    assert!(!std::fs::read_to_string(home.config_file()).unwrap_or_default().contains("elsewhere"), "the setting was changed");
    assert_eq!(home.pids_of("cmux-tray-app"), vec![tray], "the tray was restarted");
    // A launch is still handed over: the page is shown by the tray's own windows.
    wait_until("the settings window the launch asked for", LIMIT, || desktop.window_titled("cmux-tray — Settings"));
}

/// Settings → Restart: the new tray serves the local socket with the password the first had
/// (docs/local-socket.md: `auth` answers "OK: Authenticated" in password mode alone), and
/// neither the tray the windows started nor the restarted one holds a secret in its
/// environment (docs/architecture.md "Two processes": handed on standard input).
#[test]
fn a_restart_from_the_settings_keeps_the_sockets_password() {
    use cmux_tray_e2e::webdriver::WebDriver;
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let password = "correct horse battery staple";
    let wd = WebDriver::start(
        &home,
        desktop.display.as_deref().unwrap(),
        &["--open", "settings"],
        &[("CMUX_TRAY_TOKEN", &user.access_token), ("CMUX_SOCKET_PASSWORD", password)],
    );
    let auth = format!("auth {password}");
    wait_until("the socket in password mode", LIMIT, || socket_answer(&home.socket(), &auth).as_deref() == Some("OK: Authenticated"));
    let first = app_pid(&home);
    let holds_no_secret = |pid: u32| {
        let environ = String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/environ")).unwrap()).into_owned();
        for secret in ["CMUX_TRAY_TOKEN", "CMUX_SOCKET_PASSWORD", user.access_token.as_str(), password] {
            assert!(!environ.contains(secret), "{secret} in the environment of the tray {pid}");
        }
    };
    holds_no_secret(first);
    wd.run("window.__TAURI__.core.invoke('restart'); return 1;", serde_json::json!([]));
    let mut restarted = None;
    wait_until("the tray restarted", LIMIT, || {
        restarted = home.pids_of("cmux-tray-app").into_iter().find(|pid| *pid != first);
        restarted.is_some()
    });
    wait_until("the restarted tray's socket", LIMIT, || socket_answer(&home.socket(), "ping").is_some());
    assert_eq!(socket_answer(&home.socket(), &auth).as_deref(), Some("OK: Authenticated"), "the restarted tray dropped the password");
    holds_no_secret(restarted.unwrap());
    // The token came along too: the restarted tray is signed in with it.
    wait_until("signed in with the token", LIMIT, || !home.status()["account"].is_null() && home.status()["account"]["problem"].is_null());
}

/// A program that knows a key, even the tray's very own (given on its standard input by that
/// program, as a windows process starting the tray gives it), is not the tray's windows: the key
/// counts only from the process it was handed to.
#[test]
fn a_key_shown_by_a_process_that_is_not_the_trays_windows_lets_it_do_nothing() {
    use std::io::{BufRead, Write};
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let key = "5".repeat(64);
    let log = home.dir.path().join("app.log");
    let mut child = home
        .program(&bin("cmux-tray-app"), &["--hidden", "--key-on-stdin"])
        .env("DISPLAY", desktop.display.as_deref().unwrap())
        .env("CMUX_TRAY_TOKEN", &user.access_token)
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
        .spawn()
        .expect("the app starts");
    child.stdin.take().unwrap().write_all(format!("{key}\n").as_bytes()).unwrap();
    let _app = App { child, log };
    let _item = tray_item(&desktop);
    let channel = home.dir.path().join("run/cmux-tray/app.sock");
    let mut stream = std::os::unix::net::UnixStream::connect(&channel).expect("the tray serves its channel");
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let attach = format!(r#"{{"type":"attach","page":"settings","query":null,"key":"{key}"}}"#);
    for line in [
        attach.as_str(),
        r#"{"type":"call","id":1,"command":"set_setting","args":{"key":"cloud.auth_url","value":"https://elsewhere.example"}}"#,
    ] {
        let _ = stream.write_all(format!("{line}\n").as_bytes());
    }
    let answers: Vec<String> = std::io::BufReader::new(stream).lines().map_while(Result::ok).collect();
    assert_eq!(answers, vec![r#"{"type":"attached","chosen":false}"#.to_string()], "taken as a launch, then let go");
    std::thread::sleep(NOTHING_MORE);
    assert!(!std::fs::read_to_string(home.config_file()).unwrap_or_default().contains("elsewhere"), "the setting was changed");
}

/// The windows program links what it draws with and the channel, not the engine (issue 44;
/// docs/architecture.md, the crates' table): no SQLite, HTTP/2, D-Bus, keyring, Fluent or ICU4X
/// dates. Each crate leaves its sources' paths in a binary that links it (panics' locations,
/// debug lines), and SQLite its file header's words.
#[test]
fn the_windows_program_links_no_engine() {
    let program = std::fs::read(bin("cmux-tray-windows")).expect("the windows program is built");
    let found: Vec<&str> =
        ["SQLite format 3", "rusqlite-", "/h2-0.", "/zbus-", "/keyring-", "/fluent-bundle-", "/icu_datetime-", "crates/engine/src"]
            .into_iter()
            .filter(|mark| program.windows(mark.len()).any(|w| w == mark.as_bytes()))
            .collect();
    assert!(found.is_empty(), "the windows program links the engine's crates: {found:?}");
}

/// The environment of this home's windows process, once it runs.
fn windows_environment(home: &Home) -> (u32, Vec<String>) {
    let mut pids = Vec::new();
    wait_until("the windows process", LIMIT, || {
        pids = home.pids_of("cmux-tray-windows");
        !pids.is_empty()
    });
    let environ = std::fs::read(format!("/proc/{}/environ", pids[0])).unwrap();
    (pids[0], environ.split(|b| *b == 0).map(|v| String::from_utf8_lossy(v).into_owned()).collect())
}

/// Where no accessibility bus runs, a window starts none (docs/architecture.md "Two processes":
/// GTK's bridge off, WebKit given no bus and its question for one answered with a socket that is
/// not there); once one runs (a desktop's at login, a screen reader's), the windows speak to it.
#[test]
fn a_window_starts_no_accessibility_bus_and_speaks_to_one_that_runs() {
    let (desktop, _cloud, user, home) = ada(DesktopSession::start_with_display());
    let _app = start_app(&home, &desktop, &user.access_token);
    let item = tray_item(&desktop);
    assert!(!desktop.name_has_owner("org.a11y.Bus"));
    desktop.sni(&["activate", &item]);
    wait_until("the history window", LIMIT, || desktop.window_titled("cmux-tray — History"));
    let (pid, env) = windows_environment(&home);
    for told in ["NO_AT_BRIDGE=1", "WEBKIT_A11Y_BUS_ADDRESS=", "AT_SPI_BUS_ADDRESS=unix:path=/dev/null"] {
        assert!(env.iter().any(|v| v == told), "{told} not in the windows' environment: {env:?}");
    }
    signal(pid, "TERM");
    wait_until("the windows process ended", LIMIT, || home.pids_of("cmux-tray-windows").is_empty());

    // An accessibility bus comes (as a screen reader starts one): the next window speaks to it.
    let mut bus = std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import dbus, time; b = dbus.SessionBus(); b.request_name('org.a11y.Bus'); time.sleep(600)"])
        .env("DBUS_SESSION_BUS_ADDRESS", &desktop.address)
        .spawn()
        .expect("python3-dbus runs");
    wait_until("the accessibility bus's name", LIMIT, || desktop.name_has_owner("org.a11y.Bus"));
    desktop.sni(&["activate", &item]);
    let (_, env) = windows_environment(&home);
    let _ = bus.kill();
    let _ = bus.wait();
    assert!(!env.iter().any(|v| v.starts_with("NO_AT_BRIDGE") || v.starts_with("AT_SPI_BUS_ADDRESS")), "{env:?}");
}
