//! Signing in from the command line and staying signed in through a real Secret Service
//! (gnome-keyring-daemon on the test's own bus); the visible file fallback without one.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::process::Stdio;
use std::time::Duration;

use cmux_tray_e2e::{Cloud, Daemon, DesktopSession, Home, wait_until};

const LIMIT: Duration = Duration::from_secs(30);

/// `cmux-tray login`, approved in the "browser" (the simulator's control API) meanwhile.
fn login(home: &Home, cloud: &Cloud, user_id: &str) {
    let before = cloud.sim().last_user_code();
    let child = home.command(&["login"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_until("a code to approve", LIMIT, || cloud.sim().last_user_code() != before);
    assert!(cloud.sim().approve_device(&cloud.sim().last_user_code().unwrap(), user_id));
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("confirm the code") && said.contains("signed in as ada@example.com"), "{said}");
}

#[test]
fn login_keeps_the_account_in_the_keyring_across_a_restart_and_logout_deletes_it() {
    let desktop = DesktopSession::start_with_keyring();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let mut daemon = home.daemon("");
    login(&home, &cloud, &user.user_id);
    let secret = desktop.keyring_lookup(&user.user_id).expect("the refresh token is in the Secret Service");
    let kept: serde_json::Value = serde_json::from_str(&secret).expect("the kept sign-in is JSON (docs/configuration.md)");
    assert!(kept["refresh_token"].as_str().is_some_and(|t| t.starts_with("rt_")), "a refresh token, not an access token: {kept}");
    assert_eq!(kept["origins"], serde_json::json!({"auth": cloud.origin(), "api": cloud.origin()}), "kept with the cloud it came from");
    let status = home.status();
    assert_eq!(status["account"]["email"], "ada@example.com");
    assert_eq!(status["signInKeptIn"], "the system keyring");
    assert!(!std::fs::read_dir(home.dir.path().join("data/cmux-tray")).unwrap().any(|e| e.unwrap().file_name() == "secrets.json"));

    // Restarted with no token given: signed in again from the keyring, following again.
    let run = cloud.sim().create_run(&user.user_id, "Across the restart");
    assert!(home.run(&["follow", "run", &run]).status.success());
    assert!(daemon.terminate().success());
    let _daemon = home.daemon("");
    wait_until("signed in again", LIMIT, || home.status()["engineRunning"] == true && home.status()["account"]["problem"].is_null());
    cloud.sim().update_run(&run, cmux_cloud_sim::RunChange::status("succeeded"));
    wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);

    // Sign-out deletes the secret.
    let out = home.run(&["logout"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(desktop.keyring_lookup(&user.user_id), None);
    assert!(home.status()["account"].is_null());
}

#[test]
fn without_a_keyring_the_file_fallback_is_used_and_said() {
    let desktop = DesktopSession::start(); // no Secret Service on this bus
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("");
    login(&home, &cloud, &user.user_id);
    let kept = home.status()["signInKeptIn"].as_str().unwrap().to_string();
    assert!(kept.contains("secrets.json") && kept.contains("readable by you alone") && kept.contains("no keyring"), "{kept}");
    let file = home.dir.path().join("data/cmux-tray/secrets.json");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    let out = home.run(&["status"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("readable by you alone"));
}

#[test]
fn a_pasted_token_signs_in_and_is_never_written() {
    let desktop = DesktopSession::start_with_keyring();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("");
    let mut child = home.command(&["login", "--token-stdin"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), user.access_token.as_bytes()).unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("signed in as ada@example.com"));
    assert_eq!(desktop.keyring_lookup(&user.user_id), None, "an access token given directly is kept nowhere");
    let grep = std::process::Command::new("grep").args(["-rl", &user.access_token]).arg(home.dir.path()).output().unwrap();
    assert!(grep.stdout.is_empty(), "found in {}", String::from_utf8_lossy(&grep.stdout));
}

/// Ada signed in once (kept in the keyring), and the daemon stopped.
fn signed_in_once() -> (DesktopSession, Cloud, cmux_cloud_sim::SimUser, Home) {
    let desktop = DesktopSession::start_with_keyring();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let mut daemon = home.daemon("");
    login(&home, &cloud, &user.user_id);
    assert!(daemon.terminate().success());
    (desktop, cloud, user, home)
}

/// How long the daemon waits for the keyring at start before saying it still asks (5 s unless
/// set, docs/configuration.md), shortened so that these tests do not sleep 5 s out.
const KEYRING_PROBE_MS: u64 = 1_000;

/// … and at her next login the daemon starts before the Secret Service is there.
fn next_login_before_the_keyring() -> (DesktopSession, Cloud, cmux_cloud_sim::SimUser, Home, Daemon) {
    let (desktop, cloud, user, home) = signed_in_once();
    desktop.stop_keyring();
    let daemon = home.daemon_with("", &[("CMUX_TRAY_KEYRING_PROBE_MS", &KEYRING_PROBE_MS.to_string())]);
    (desktop, cloud, user, home, daemon)
}

#[test]
fn a_keyring_that_answers_late_still_restores_the_sign_in_and_a_follow_asked_meanwhile_waits_for_it() {
    let (mut desktop, cloud, user, home, _daemon) = next_login_before_the_keyring();
    let run = cloud.sim().create_run(&user.user_id, "Asked right after start");
    let follow = home.command(&["follow", "run", &run]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // It answers twice the probe later (past the probe).
    std::thread::sleep(Duration::from_millis(2 * KEYRING_PROBE_MS));
    desktop.start_keyring();
    let out = follow.wait_with_output().unwrap();
    assert!(out.status.success(), "the follow waited for the sign-in: {}", String::from_utf8_lossy(&out.stderr));
    let status = home.status();
    assert_eq!(status["signInKeptIn"], "the system keyring", "{status}");
    assert!(status["account"]["problem"].is_null(), "{status}");
    cloud.sim().update_run(&run, cmux_cloud_sim::RunChange::status("succeeded"));
    wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);
}

#[test]
fn a_saved_sign_in_that_cannot_be_found_reads_sign_in_again_never_signed_in() {
    let (desktop, cloud, user, home) = signed_in_once();
    // The keyring lost it (another tool cleared it).
    let cleared = std::process::Command::new("secret-tool")
        .args(["clear", "service", "cmux-tray", "username", &user.user_id])
        .env("DBUS_SESSION_BUS_ADDRESS", &desktop.address)
        .status()
        .unwrap();
    assert!(cleared.success());
    let _daemon = home.daemon("");
    wait_until("sign in again", LIMIT, || home.status()["account"]["problem"]["kind"] == "not-found");
    let out = home.run(&["follow", "run", &cloud.sim().create_run(&user.user_id, "x")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("not signed in"), "{err}");
}

/// A program of the person's rewrites the settings to send the sign-in elsewhere (any program
/// may write the config file): the kept refresh token goes nowhere but the cloud it came from.
#[test]
fn a_kept_sign_in_is_never_sent_to_an_origin_the_settings_name_later() {
    let (_desktop, _cloud, _user, home) = signed_in_once();
    let elsewhere = Cloud::start();
    let _daemon = home.daemon_with("", &[("CMUX_TRAY_AUTH_URL", &elsewhere.origin())]);
    wait_until("sign in again", LIMIT, || home.status()["account"]["problem"]["kind"] == "other-cloud");
    let problem = home.status()["account"]["problem"].clone();
    assert!(problem["here"].as_str().unwrap().contains(&elsewhere.origin()), "the problem names where the settings point: {problem}");
    let asked: Vec<String> = elsewhere.sim().requests().iter().map(|r| r.path.clone()).collect();
    assert!(asked.is_empty(), "the other origin was asked: {asked:?}");
}

#[test]
fn signing_out_right_after_start_deletes_the_saved_sign_in_and_stays_signed_out() {
    let (mut desktop, _cloud, user, home, daemon) = next_login_before_the_keyring();
    // Signed out while the saved sign-in is still being restored (the keyring answers late).
    let logout = home.command(&["logout"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(2 * KEYRING_PROBE_MS));
    desktop.start_keyring();
    let out = logout.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The restore has ended one way or the other …
    wait_until("the restore ended", LIMIT, || {
        let log = daemon.log_text();
        log.contains("nothing to follow") || log.contains("signed in again with the saved sign-in")
    });
    // … and the person is signed out, the secret gone.
    assert!(home.status()["account"].is_null(), "{}", home.status());
    assert_eq!(desktop.keyring_lookup(&user.user_id), None);
}
