//! The delivery policy through the real daemon and the recording notification server: quiet hours and
//! their one summary, a burst made one banner with at most one sound, a pause that survives a
//! restart, and a bad config file that changes nothing.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cmux_cloud_sim::RunChange;
use cmux_tray_e2e::{Cloud, DesktopSession, Home, NOTHING_MORE, wait_until};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(30);

/// "daily HH:MM-HH:MM" (UTC) from ten minutes ago to twenty minutes from now.
fn window_around_now() -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() / 60 % (24 * 60);
    let hm = |m: u64| format!("{:02}:{:02}", m / 60 % 24, m % 60);
    format!("daily {}-{}", hm(now + 24 * 60 - 10), hm(now + 20))
}

fn write_config(home: &Home, text: &str) {
    std::fs::create_dir_all(home.config_file().parent().unwrap()).unwrap();
    std::fs::write(home.config_file(), text).unwrap();
}

fn notice<'a>(status: &'a Value, key_part: &str) -> Option<&'a Value> {
    status["notices"].as_array().unwrap().iter().find(|n| n["key"].as_str().unwrap().contains(key_part))
}

/// Ends a Run the daemon adopted at sign-in, and waits until the engine has decided it.
fn end_and_decide(cloud: &Cloud, home: &Home, run: &str, status: &str) {
    cloud.sim().update_run(run, RunChange::status(status));
    wait_until("the end is decided", LIMIT, || notice(&home.status(), run).is_some_and(|n| n["state"] == "told"));
}

#[test]
fn quiet_hours_hold_the_banner_and_one_summary_follows_them() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    write_config(&home, &format!("[delivery.quiet_hours]\ntime_zone = \"UTC\"\nwindows = [\"{}\"]\n", window_around_now()));
    let run = cloud.sim().create_run(&user.user_id, "Deploy the docs");
    let _daemon = home.daemon(&user.access_token);
    wait_until("the Run followed", LIMIT, || home.status()["follows"].as_array().unwrap().len() == 1);
    end_and_decide(&cloud, &home, &run, "succeeded");
    let status = home.status();
    assert_eq!(notice(&status, &run).unwrap()["delivery"], "quiet hours", "the history has it, and why");
    assert!(desktop.notifications().is_empty(), "{:?}", desktop.notifications());
    // The quiet hours end (switched off here, applied live): exactly one summary banner.
    let out = home.run(&["config", "set", "delivery.quiet_hours.enabled", "false"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("(applied)"));
    wait_until("the summary", LIMIT, || desktop.notifications().len() == 1);
    std::thread::sleep(NOTHING_MORE);
    let n = desktop.notifications();
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0]["summary"], "1 notice while you were away");
    assert_eq!(n[0]["body"], "Deploy the docs");
}

#[test]
fn ten_runs_ending_within_a_second_make_one_banner_and_at_most_one_sound() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let runs: Vec<String> = (0..10).map(|i| cloud.sim().create_run(&user.user_id, &format!("Job {i}"))).collect();
    let _daemon = home.daemon(&user.access_token);
    wait_until("ten follows", LIMIT, || home.status()["follows"].as_array().unwrap().len() == 10);
    for run in &runs {
        cloud.sim().update_run(run, RunChange::status("succeeded"));
        std::thread::sleep(Duration::from_millis(80));
    }
    wait_until("a banner", LIMIT, || !desktop.notifications().is_empty());
    wait_until("all ten decided", LIMIT, || {
        let s = home.status();
        runs.iter().all(|r| notice(&s, r).is_some_and(|n| n["state"] == "told"))
    });
    // Nothing more: a second banner would come within the settle window's cap (docs/notices.md:
    // 2 s after the first notice of a burst), so that long and a margin.
    std::thread::sleep(NOTHING_MORE);
    // The first end came alone and was shown at once (docs/notices.md §3 "Bursts"); the nine
    // that followed became one banner in its place: one banner on screen, one sound.
    let n = desktop.notifications();
    assert_eq!(n.len(), 2, "{n:#?}");
    assert_eq!(n[0]["summary"], "Job 0");
    assert!(n[0]["hints"].get("sound-name").is_some(), "the first rings: {:#?}", n[0]);
    assert_eq!(n[1]["summary"], "10 Runs ended");
    assert_eq!((&n[1]["replaced"], &n[1]["id"]), (&Value::from("id"), &n[0]["id"]), "{:#?}", n[1]);
    assert!(n[1]["hints"].get("sound-name").is_none(), "a burst rings once: {:#?}", n[1]);
    let status = home.status();
    assert!(runs.iter().all(|r| notice(&status, r).unwrap()["delivery"] == "coalesced"));
}

#[test]
fn a_pause_from_the_command_line_survives_a_restart() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let runs: Vec<String> = (0..2).map(|i| cloud.sim().create_run(&user.user_id, &format!("Paused job {i}"))).collect();
    let mut daemon = home.daemon(&user.access_token);
    wait_until("two follows", LIMIT, || home.status()["follows"].as_array().unwrap().len() == 2);
    let out = home.run(&["pause", "1h"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    end_and_decide(&cloud, &home, &runs[0], "succeeded");
    assert!(daemon.terminate().success());
    let _daemon = home.daemon(&user.access_token);
    let status = home.status();
    assert!(status["paused"].is_string(), "still paused after the restart");
    // Typed as well as in words: an end in RFC 3339 about an hour from now.
    let until: jiff::Timestamp = status["pausedUntil"].as_str().expect("pausedUntil").parse().unwrap();
    let left = until.as_second() - jiff::Timestamp::now().as_second();
    assert!((3000..=3600).contains(&left), "{left} s left");
    assert_eq!(status["pausedIndefinitely"], false);
    assert!(home.run(&["pause", "indefinitely"]).status.success());
    let status = home.status();
    assert_eq!(
        (status["pausedUntil"].clone(), status["pausedIndefinitely"].clone()),
        (serde_json::Value::Null, serde_json::Value::Bool(true))
    );
    assert!(home.run(&["pause", "1h30m"]).status.success());
    end_and_decide(&cloud, &home, &runs[1], "failed");
    let status = home.status();
    assert!(runs.iter().all(|r| notice(&status, r).unwrap()["delivery"] == "paused"));
    assert!(desktop.notifications().is_empty());
    assert!(home.run(&["resume"]).status.success());
    wait_until("the summary", LIMIT, || desktop.notifications().len() == 1);
    assert_eq!(desktop.notifications()[0]["summary"], "2 notices while notifications were paused");
}

#[test]
fn a_bad_config_file_names_the_key_and_the_daemon_keeps_its_last_good_settings() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    write_config(&home, &format!("[delivery.quiet_hours]\ntime_zone = \"UTC\"\nwindows = [\"{}\"]\n", window_around_now()));
    let run = cloud.sim().create_run(&user.user_id, "Held by the last good settings");
    let _daemon = home.daemon(&user.access_token);
    wait_until("the Run followed", LIMIT, || home.status()["follows"].as_array().unwrap().len() == 1);
    assert!(home.run(&["status"]).status.success());
    // Wrong type, unknown key, a window at 25:00.
    let bad = "[delivery]\nbanners = \"sometimes\"\nconfetti = true\n[delivery.quiet_hours]\nwindows = [\"mon-fri 25:00-07:00\"]\n";
    write_config(&home, bad);
    let out = home.run(&["config", "set", "delivery.sounds", "off"]);
    assert!(!out.status.success(), "refused: the file has errors of its own? {}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("delivery.banners") && err.contains("sometimes"), "{err}");
    assert_eq!(std::fs::read_to_string(home.config_file()).unwrap(), bad, "the person's file is not rewritten");
    let out = home.run(&["config", "set", "delivery.quiet_hours.windows", "daily 25:00-07:00"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a time of day"));
    // The running engine keeps its last good settings: the Run's end is still held as quiet.
    end_and_decide(&cloud, &home, &run, "succeeded");
    let status = home.status();
    assert_eq!(notice(&status, &run).unwrap()["delivery"], "quiet hours");
    assert!(desktop.notifications().is_empty());
    assert_eq!(std::fs::read_to_string(home.config_file()).unwrap(), bad);
}

/// The pane every notice of `send_burst_with_a_permission_prompt` comes from.
const WS: &str = "D9C269B8-1A2B-4C3D-8E9F-0123456789AB";
const SF: &str = "B9DD280A-0000-0000-0000-000000000001";

/// Claude Code's permission prompt as its hooks reference documents it (the fixture names the page).
fn permission_prompt() -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/cli/tests/fixtures/claude-notification-permission.json"),
    )
    .unwrap()
}

/// Five notices from one pane at once: two `notify`, Claude Code's permission prompt through
/// `hook claude`, two more `notify`; every process started before any is waited for, so they come
/// within the burst window (docs/notices.md §3: a chain goes on while they come < 0.5 s apart).
fn send_burst_with_a_permission_prompt(home: &Home, tag: &str) {
    let notify = |i: usize| {
        let title = format!("{tag} step {i}");
        home.command(&["notify", "--title", &title, "--body", "done", "--workspace", WS, "--surface", SF])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut children = vec![notify(1), notify(2)];
    let mut hook = home
        .command(&["hook", "claude"])
        .env("CMUX_WORKSPACE_ID", WS)
        .env("CMUX_SURFACE_ID", SF)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(hook.stdin.as_mut().unwrap(), permission_prompt().as_bytes()).unwrap();
    drop(hook.stdin.take());
    children.push(hook);
    children.extend([notify(3), notify(4)]);
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
}

/// The local notices `status` lists, once `count` of them are all decided.
fn decided_locals(home: &Home, count: usize) -> Vec<Value> {
    let mut locals = Vec::new();
    wait_until("every notice decided", LIMIT, || {
        let s = home.status();
        locals = s["notices"].as_array().unwrap().iter().filter(|n| n["source"] == "local").cloned().collect();
        locals.len() == count && locals.iter().all(|n| n["state"] == "told")
    });
    locals
}

#[test]
fn a_permission_prompt_among_a_burst_gets_an_urgent_banner_of_its_own() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    send_burst_with_a_permission_prompt(&home, "Deploy");
    let locals = decided_locals(&home, 5);
    std::thread::sleep(NOTHING_MORE);
    let shown = desktop.notifications();
    // docs/local-socket.md, "Needs you": "needs you" follows the title, urgent, never folded in.
    let urgent: Vec<&Value> = shown.iter().filter(|n| n["summary"] == "Claude Code needs you").collect();
    assert_eq!(urgent.len(), 1, "{shown:#?}");
    assert_eq!(urgent[0]["body"], "... — Claude needs your permission to use Bash");
    assert_eq!(urgent[0]["hints"]["urgency"], 2, "the urgency hint (delivery.attention is on by default)");
    // The four others made a burst (more than 4 within 10 s: docs/configuration.md), which
    // neither holds the prompt nor takes its banner's place.
    let bursts: Vec<&Value> = shown.iter().filter(|n| n["summary"].as_str().unwrap().ends_with("notices from your terminals")).collect();
    assert!(!bursts.is_empty(), "the four made a burst: {shown:#?}");
    assert!(bursts.iter().all(|b| !b["body"].as_str().unwrap().contains("needs you")), "{bursts:#?}");
    assert!(shown.iter().filter(|n| n["id"] == urgent[0]["id"]).count() == 1, "nothing took its place: {shown:#?}");
    let prompt = locals.iter().find(|n| n["title"] == "Claude Code needs you").unwrap();
    assert_eq!((&prompt["delivery"], &prompt["urgent"]), (&Value::from("shown"), &Value::from(true)));
    assert!(locals.iter().filter(|n| n["delivery"] == "coalesced").count() >= 2, "{locals:#?}");
}

#[test]
fn a_permission_prompt_breaks_through_quiet_hours_when_asked_and_the_rest_waits() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let quiet =
        format!("[delivery.quiet_hours]\ntime_zone = \"UTC\"\nwindows = [\"{}\"]\nneeds_you_breaks_through = true\n", window_around_now());
    write_config(&home, &quiet);
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    send_burst_with_a_permission_prompt(&home, "Nightly");
    let locals = decided_locals(&home, 5);
    std::thread::sleep(NOTHING_MORE);
    let shown = desktop.notifications();
    assert_eq!(shown.len(), 1, "the prompt alone: {shown:#?}");
    assert_eq!((&shown[0]["summary"], &shown[0]["hints"]["urgency"]), (&Value::from("Claude Code needs you"), &Value::from(2)));
    let held: Vec<&Value> = locals.iter().filter(|n| n["delivery"] == "quiet hours").collect();
    assert_eq!(held.len(), 4, "{locals:#?}");
}
