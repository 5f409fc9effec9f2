//! Agents on this machine reach the tray: `notify`, `wrap`, `hook`, `env`, through the real
//! daemon's socket, to the recording notification server; and a click opens the reported surface.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::process::Stdio;
use std::time::Duration;

use cmux_tray_e2e::{Cloud, DesktopSession, Home, NOTHING_MORE, wait_until};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(30);
const WS: &str = "D9C269B8-1A2B-4C3D-8E9F-0123456789AB";
const SF: &str = "B9DD280A-0000-0000-0000-000000000001";

fn words(n: &Value) -> (String, String) {
    (n["summary"].as_str().unwrap().to_string(), n["body"].as_str().unwrap().to_string())
}

#[test]
fn wrap_passes_the_exit_code_through_and_posts_the_right_words() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    let cases: [(&str, i32, &str); 3] =
        [("exit 0", 0, "Command finished"), ("exit 1", 1, "Command failed (exit 1)"), ("kill -INT $$", 130, "Command ended by SIGINT")];
    for (i, (script, code, title)) in cases.iter().enumerate() {
        let project = home.dir.path().join("parser");
        std::fs::create_dir_all(&project).unwrap();
        let out = home.command(&["wrap", "--threshold", "0", "--", "sh", "-c", script]).current_dir(&project).output().unwrap();
        assert_eq!(out.status.code(), Some(*code), "{script}: {}", String::from_utf8_lossy(&out.stderr));
        wait_until("the banner", LIMIT, || desktop.notifications().len() == i + 1);
        let (summary, body) = words(&desktop.notifications()[i]);
        assert_eq!(summary, *title);
        // The command as a shell takes it back, its quoting kept.
        assert_eq!(body, format!("parser — sh -c '{script}' · 0 s"));
    }
    // Under the threshold: the exit code, and no notice.
    let out = home.run(&["wrap", "--threshold", "60", "--", "sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(3));
    // The terminal is untouched: stdout and stdin pass through.
    let mut child = home.command(&["wrap", "--threshold", "60", "--", "cat"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"through\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!((out.status.code(), out.stdout.as_slice()), (Some(0), b"through\n".as_slice()));
    std::thread::sleep(NOTHING_MORE);
    assert_eq!(desktop.notifications().len(), 3);
}

#[test]
fn with_no_tray_running_wrap_keeps_the_exit_code_and_says_why() {
    let home = Home::new("http://127.0.0.1:9", "unix:path=/nonexistent");
    let out = home.run(&["wrap", "--threshold", "0", "--", "sh", "-c", "exit 7"]);
    assert_eq!(out.status.code(), Some(7));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("notice not sent") && err.contains("no engine answers"), "{err}");
    let out = home.run(&["wrap", "--", "no-such-command-anywhere"]);
    assert_eq!(out.status.code(), Some(127));
    // A socket the environment names, with nothing behind it: said, the command's code kept.
    let out = home.command(&["wrap", "--threshold", "0", "--", "true"]).env("CMUX_SOCKET_PATH", "/nonexistent/cmux.sock").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/cmux.sock"));
    // `notify` itself says no engine answers with 69, as `follow` does (tests/telling.rs).
}

#[test]
fn a_banner_from_notify_in_a_reported_surface_opens_that_surface_when_clicked() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let opened = home.register_cmux_handler();
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    // As inside a cmux terminal: the ids come from the environment. It runs tmux there too: the
    // pane is recorded, and the cmux link still decides the click.
    let out = home
        .command(&["notify", "--title", "Tests passed", "--subtitle", "parser", "--body", "412 green", "--json"])
        .env("CMUX_WORKSPACE_ID", WS)
        .env("CMUX_SURFACE_ID", SF)
        .env("TMUX", "/tmp/cmux-tray-test-no-server/default,4242,0")
        .env("TMUX_PANE", "%7")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((result["workspaceId"].as_str(), result["surfaceId"].as_str()), (Some(WS), Some(SF)));
    wait_until("the banner", LIMIT, || desktop.notifications().len() == 1);
    let n = &desktop.notifications()[0];
    assert_eq!(words(n), ("Tests passed".into(), "parser — 412 green".into()));
    assert_eq!(home.status()["notices"][0]["place"]["tmux"]["pane"], "%7");
    desktop.click(n["id"].as_u64().unwrap());
    wait_until("the link opened", LIMIT, || std::fs::read_to_string(&opened).is_ok_and(|t| !t.is_empty()));
    assert_eq!(std::fs::read_to_string(&opened).unwrap().trim(), format!("cmux://workspace/{WS}/surface/{SF}"));
    wait_until("marked read once revealed", LIMIT, || home.status()["notices"][0]["readAt"].is_i64());
}

#[test]
fn agent_hooks_post_the_right_notice() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    let claude = |payload: &str| {
        let mut child =
            home.command(&["hook", "claude"]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        std::io::Write::write_all(child.stdin.as_mut().unwrap(), payload.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    };
    claude(
        r#"{"hook_event_name": "Notification", "notification_type": "permission_prompt", "message": "Claude needs your permission to use Bash", "session_id": "abc", "cwd": "/home/ada/parser"}"#,
    );
    claude(
        r#"{"hook_event_name": "Notification", "notification_type": "idle_prompt", "message": "Claude is waiting for your input", "cwd": "/p"}"#,
    );
    claude(r#"{"hook_event_name": "Stop", "session_id": "abc", "cwd": "/home/ada/parser"}"#);
    claude("this is not json"); // never blocks the agent: exit 0
    // An option this version does not know, before the payload Codex appends: ignored.
    let out = home.run(&[
        "hook",
        "codex",
        "--from-a-later-codex",
        r#"{"type": "agent-turn-complete", "turn-id": "7", "cwd": "/work/api", "input-messages": ["fix"], "last-assistant-message": "Fixed the flaky test."}"#,
    ]);
    assert_eq!(out.status.code(), Some(0));
    wait_until("three banners", LIMIT, || desktop.notifications().len() == 3);
    std::thread::sleep(NOTHING_MORE);
    let got: Vec<(String, String)> = desktop.notifications().iter().map(words).collect();
    assert_eq!(
        got,
        [
            ("Claude Code needs you".into(), "parser — Claude needs your permission to use Bash".into()),
            ("Claude Code".into(), "parser — Turn complete".into()),
            ("Codex".into(), "api — Fixed the flaky test.".into()),
        ],
        "the idle reminder is off by default"
    );
}

#[test]
fn env_and_socket_path_say_where_the_socket_is() {
    let home = Home::new("http://127.0.0.1:9", "unix:path=/nonexistent");
    let out = home.run(&["socket-path"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), home.socket().display().to_string());
    let out = home.run(&["socket-path", "--json"]);
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).expect("socket-path --json prints JSON");
    assert_eq!(said, serde_json::json!({"socketPath": home.socket().display().to_string()}));
    // `config get --json`: every key docs/configuration.md names, each with its value.
    let out = home.run(&["config", "get", "--json"]);
    let all: serde_json::Value = serde_json::from_slice(&out.stdout).expect("config get --json prints JSON");
    for key in ["delivery.quiet_hours.windows", "delivery.sound_cooldown", "cloud.api_url", "local.socket_path"] {
        assert!(!all[key].is_null(), "{key} in {all}");
    }
    let out = home.run(&["config", "get", "delivery.sound_cooldown", "--json"]);
    let one: serde_json::Value = serde_json::from_slice(&out.stdout).expect("config get KEY --json prints JSON");
    assert_eq!(one, serde_json::json!({"delivery.sound_cooldown": all["delivery.sound_cooldown"]}));
    let out = home.run(&["env"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("export CMUX_SOCKET_PATH='{}'", home.socket().display()));
}
