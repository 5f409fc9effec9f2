//! The real `cmux-tray` binary: `daemon`, `follow`, `cancel` and `status`, against the simulator
//! and the recording notification server on a private D-Bus session.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::time::Duration;

use cmux_cloud_sim::{HandoffChange, RunChange};
use cmux_tray_e2e::{Cloud, DesktopSession, Home, wait_until};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(30);

fn told(status: &Value, key: &str) -> bool {
    status["notices"].as_array().unwrap().iter().any(|n| n["key"] == key && n["state"] == "told")
}

#[test]
fn follow_and_cancel_through_the_daemon_reach_a_real_notification_server() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon(&user.access_token);

    let run = cloud.sim().create_run(&user.user_id, "Fix the flaky login test\nwith details");
    let out = home.run(&["follow", "run", &run, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).expect("follow --json prints JSON");
    assert_eq!((&said["kind"], &said["id"], &said["following"]), (&"run".into(), &run.as_str().into(), &true.into()));
    assert!(said["answered"].is_boolean(), "whether the cloud answered within the wait: {said}");
    cloud.sim().update_run(&run, RunChange::status("succeeded"));
    wait_until("the Run's banner", LIMIT, || !desktop.notifications().is_empty());
    let n = &desktop.notifications()[0];
    assert_eq!(n["summary"], "Fix the flaky login test");
    assert_eq!(n["body"], "Run finished");
    assert_eq!(n["app"], "cmux-tray");
    assert_eq!(n["actions"], serde_json::json!(["default", "Open"]), "a body click is reported");
    assert_eq!(n["hints"]["x-dunst-stack-tag"], format!("run:{run}"));

    // A hand-off handed over from here: its needs-you asks for attention.
    let ho = cloud.sim().create_handoff(cmux_cloud_sim::state::NewHandoff {
        owner: user.user_id.clone(),
        title: Some("Refactor the parser".into()),
        ..Default::default()
    });
    assert!(home.run(&["follow", "handoff", &ho]).status.success());
    cloud.sim().update_handoff(&ho, HandoffChange::status("needs-you"));
    wait_until("the hand-off's banner", LIMIT, || desktop.notifications().len() == 2);
    let n = &desktop.notifications()[1];
    assert_eq!((n["summary"].as_str(), n["body"].as_str()), (Some("Refactor the parser"), Some("Needs you")));
    assert_eq!(n["hints"]["urgency"], 2);

    // Cancelled through the daemon: the end tells nothing.
    let mine = cloud.sim().create_run(&user.user_id, "Cancel me");
    let out = home.run(&["cancel", "run", &mine, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cancel --json prints JSON");
    assert_eq!(said, serde_json::json!({"kind": "run", "id": mine, "cancelled": true}));
    wait_until("the cancelled Run's follow ends", LIMIT, || {
        home.status()["follows"].as_array().unwrap().iter().any(|f| f["id"] == mine.as_str() && f["endReason"] == "cancelled here")
    });
    assert_eq!(desktop.notifications().len(), 2);

    let status = home.status();
    assert_eq!(status["engineRunning"], true);
    assert_eq!(status["account"]["email"], "ada@example.com");
    assert!(told(&status, &format!("run:{run}")), "{status:#}");
    assert!(told(&status, &format!("handoff:{ho}:1:needs-you")), "{status:#}");
    let following: Vec<&str> =
        status["follows"].as_array().unwrap().iter().filter(|f| f["endedAt"].is_null()).map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(following, [ho.as_str()]);

    // Bad ids are refused before anything is sent.
    let out = home.run(&["follow", "run", "run_../../etc"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("20 lowercase hex digits"));
}

#[test]
fn the_daemon_stops_cleanly_on_sigterm_and_a_relaunch_resumes() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let mut daemon = home.daemon(&user.access_token);
    let run = cloud.sim().create_run(&user.user_id, "Across a restart");
    assert!(home.run(&["follow", "run", &run]).status.success());
    let status = daemon.terminate();
    assert!(status.success(), "exit {status:?}: {}", daemon.log_text());
    assert!(!home.socket().exists(), "the socket file is removed");
    assert_eq!(home.status()["engineRunning"], false);
    cloud.sim().update_run(&run, RunChange::status("failed"));
    let _daemon = home.daemon(&user.access_token);
    wait_until("told after the relaunch", LIMIT, || desktop.notifications().len() == 1);
    assert_eq!(desktop.notifications()[0]["body"], "Run failed");
}

#[test]
fn a_second_engine_for_the_same_data_is_refused() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _first = home.daemon(&user.access_token);
    let out = home.command(&["daemon"]).env("CMUX_TRAY_TOKEN", &user.access_token).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another cmux-tray engine is running"), "{err}");
    assert!(home.socket().exists(), "the first engine's socket was not taken");
}

#[test]
fn a_corrupt_database_is_named_and_left_untouched() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    std::fs::create_dir_all(home.database().parent().unwrap()).unwrap();
    let garbage = b"not a database; the user's data all the same\n".repeat(64);
    std::fs::write(home.database(), &garbage).unwrap();
    let out = home.command(&["daemon"]).env("CMUX_TRAY_TOKEN", &user.access_token).output().unwrap();
    // 78: the user service is not restarted for ever on it (packaging/cmux-tray.service).
    assert_eq!(out.status.code(), Some(78), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&home.database().display().to_string()), "{err}");
    assert!(err.contains("not readable as a database"), "{err}");
    assert_eq!(std::fs::read(home.database()).unwrap(), garbage, "left untouched");
    // Told once where the person looks.
    let told = desktop.notifications();
    assert_eq!(told.len(), 1, "{told:#?}");
    assert_eq!(told[0]["summary"], "cmux-tray cannot start");
    assert!(told[0]["body"].as_str().unwrap().contains("not readable as a database"), "{told:#?}");
    let out = home.run(&["status"]);
    assert!(!out.status.success(), "status says so too");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not readable as a database"));
}

/// The user service restarts a daemon that failed for a passing reason, but not one that cannot
/// start until the person acts (exit 78), and never more than 5 times a minute.
#[test]
fn the_user_service_does_not_restart_a_daemon_that_cannot_start() {
    let unit = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/cmux-tray.service")).unwrap();
    let lines: Vec<&str> = unit.lines().map(str::trim).collect();
    for line in ["Restart=on-failure", "RestartPreventExitStatus=78", "StartLimitIntervalSec=60", "StartLimitBurst=5"] {
        assert!(lines.contains(&line), "{line} missing from the unit:\n{unit}");
    }
}

#[test]
fn a_bad_config_file_names_the_key_and_is_not_rewritten() {
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), "unix:path=/nonexistent");
    std::fs::create_dir_all(home.config_file().parent().unwrap()).unwrap();
    let text = "[cloud]\nteam = \"the marketing team\"\n";
    std::fs::write(home.config_file(), text).unwrap();
    let out = home.command(&["daemon"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cloud.team") && err.contains("the marketing team") && err.contains("config.toml"), "{err}");
    assert_eq!(std::fs::read_to_string(home.config_file()).unwrap(), text);
}

#[test]
fn status_works_without_a_running_engine_and_without_any_state() {
    let home = Home::new("http://127.0.0.1:9", "unix:path=/nonexistent");
    let status = home.status();
    assert_eq!(status["engineRunning"], false);
    assert!(status["account"].is_null());
    assert_eq!(status["pausedUntil"], serde_json::Value::Null);
    assert_eq!(status["pausedIndefinitely"], false);
    // A command that needs the engine says so, with its own exit code (the man page's EXIT
    // STATUS: 69).
    for args in [&["follow", "run", "run_0123456789abcdef0123"][..], &["pause", "1h"], &["resume"]] {
        let out = home.run(args);
        assert_eq!(out.status.code(), Some(69), "{args:?}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("start the tray, or `cmux-tray daemon`"), "{out:?}");
    }
    // Any other failure is 1.
    let out = home.run(&["follow", "run", "run_../../etc"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn a_click_on_a_handoff_made_here_that_no_tab_shows_opens_a_workspace_on_its_host() {
    use cmux_cloud_sim::state::NewHandoff;
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let opened = home.register_cmux_handler();
    let _daemon = home.daemon(&user.access_token);
    wait_until("signed in", LIMIT, || home.status()["account"]["email"] == "ada@example.com");
    // Handed over from this machine (so made here), on a host no terminal here has reported.
    let ho = cloud.sim().create_handoff(NewHandoff {
        owner: user.user_id.clone(),
        title: Some("Refactor the parser".into()),
        session_id: Some("sess-42".into()),
        host: Some("devbox.example.com".into()),
        ..Default::default()
    });
    assert!(home.run(&["follow", "handoff", &ho]).status.success());
    cloud.sim().update_handoff(
        &ho,
        HandoffChange { status: Some("needs-you".into()), summary: Some("Which branch?".into()), ..Default::default() },
    );
    wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);
    desktop.click(desktop.notifications()[0]["id"].as_u64().unwrap());
    wait_until("the link opened", LIMIT, || std::fs::read_to_string(&opened).is_ok_and(|t| !t.is_empty()));
    assert_eq!(std::fs::read_to_string(&opened).unwrap().trim(), "cmux://ssh?host=devbox.example.com&title=Refactor%20the%20parser");
    wait_until("marked read once opened", LIMIT, || home.status()["notices"][0]["readAt"].is_i64());
}
