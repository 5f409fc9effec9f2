//! What the command line tells a person when something is wrong: why no banner showed (no
//! notification server), and errors that name the real cause, each with its exit code
//! (docs/configuration.md "Exit status", README "When no banner shows").

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::time::Duration;

use cmux_tray_e2e::{Cloud, DesktopSession, Home, wait_until};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn with_no_notification_server_status_names_it_and_each_untold_notice_says_why() {
    let desktop = DesktopSession::start_without_server();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon_with("no-token-needed-for-local-notices", &[("CMUX_TRAY_DESKTOP_RETRY_MS", "200")]);
    let out = home.run(&["notify", "--title", "Deploy", "--body", "staging is up"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    wait_until("status names the missing server", LIMIT, || home.status()["heldBy"] == json!(["no notification server"]));
    let status = home.status();
    let problems = status["problems"].as_array().unwrap();
    assert!(
        problems.iter().any(|p| p["kind"] == "no-server" && p["text"].as_str().unwrap().starts_with("No notification server answers")),
        "{problems:?}"
    );
    let notice = &status["notices"][0];
    assert_eq!((&notice["state"], &notice["why"]), (&json!("untold"), &json!("untold: waiting, no notification server")));
    let text = stdout(&home.run(&["status"]));
    assert!(text.contains("banners held back by: no notification server"), "{text}");
    assert!(text.contains("[untold: waiting, no notification server] Deploy — staging is up"), "{text}");
}

#[test]
fn notify_with_no_engine_says_where_it_looked_and_exits_69() {
    let home = Home::new("http://127.0.0.1:9", "unix:path=/nonexistent");
    let out = home.run(&["notify", "--title", "x"]);
    assert_eq!(out.status.code(), Some(69), "{}", stderr(&out));
    let err = stderr(&out);
    let own = home.socket().display().to_string();
    assert!(err.contains("no engine answers") && err.contains(&own) && err.contains("start the tray, or `cmux-tray daemon`"), "{err}");
    // A socket the environment names, with nothing behind it: the same, naming that socket.
    let out = home.command(&["notify", "--title", "x"]).env("CMUX_SOCKET_PATH", "/nonexistent/cmux.sock").output().unwrap();
    assert_eq!(out.status.code(), Some(69));
    assert!(stderr(&out).contains("/nonexistent/cmux.sock: no cmux-tray engine answers there"), "{}", stderr(&out));
    // Turned off by the person: said, and no failure.
    std::fs::create_dir_all(home.config_file().parent().unwrap()).unwrap();
    std::fs::write(home.config_file(), "[notify]\nenabled = false\n").unwrap();
    let out = home.run(&["notify", "--title", "x"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("notifications are off ([notify] enabled = false)"), "{}", stderr(&out));
}

#[test]
fn json_commands_print_a_json_error_on_failure() {
    let home = Home::new("http://127.0.0.1:9", "unix:path=/nonexistent");
    let run = "run_0123456789abcdef0123";
    for (args, code) in [
        (vec!["follow", "run", run, "--json"], 69),
        (vec!["cancel", "run", run, "--json"], 69),
        (vec!["notify", "--title", "x", "--json"], 69),
        (vec!["follow", "run", "run_nothex", "--json"], 1),
        (vec!["config", "get", "delivery.confetti", "--json"], 1),
    ] {
        let out = home.run(&args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        let said: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", stdout(&out)));
        assert_eq!(said["exitCode"], code, "{args:?}");
        assert!(!said["error"].as_str().unwrap().is_empty(), "{args:?}: {said}");
    }
}

#[test]
fn config_get_json_gives_numbers_and_booleans() {
    let home = Home::new("http://127.0.0.1:9", "unix:path=/nonexistent");
    let all: Value = serde_json::from_str(&stdout(&home.run(&["config", "get", "--json"]))).unwrap();
    // docs/configuration.md's defaults: sound_cooldown 10 (seconds), coalesce_count 4, history_days 30.
    assert_eq!(all["delivery.sound_cooldown"], json!(10));
    assert_eq!(all["delivery.coalesce_count"], json!(4));
    assert_eq!(all["delivery.history_days"], json!(30));
    assert_eq!(all["delivery.banners"], json!(true));
    assert!(all["delivery.quiet_hours.windows"].is_array(), "{all}");
    assert!(all["cloud.api_url"].is_string(), "{all}");
}

#[test]
fn status_says_a_token_from_the_environment_is_kept_in_memory() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon(&user.access_token);
    wait_until("signed in", LIMIT, || home.status()["account"]["email"] == "ada@example.com");
    let text = stdout(&home.run(&["status"]));
    assert!(text.contains("sign-in kept in: memory only (an access token given directly, such as CMUX_TRAY_TOKEN"), "{text}");
}

#[test]
fn follow_of_an_id_the_cloud_does_not_know_says_so() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let user = cloud.sim().add_user("ada@example.com");
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon(&user.access_token);
    wait_until("signed in", LIMIT, || home.status()["account"]["email"] == "ada@example.com");
    let unknown = "run_00000000000000000000";
    let out = home.run(&["follow", "run", unknown]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("the cloud knows no run_00000000000000000000 for this account (it answered 404): not followed"),
        "{}",
        stderr(&out)
    );
    let known = cloud.sim().create_run(&user.user_id, "Deploy the docs");
    let out = home.run(&["follow", "run", &known]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), format!("following {known}"));
}

/// README's walkthrough as written: `cmux-sim --user …` prints the `export` lines, pasted into
/// the shell that starts the daemon; then docs/configuration.md's `pause 90 minutes`, unquoted,
/// and `status` saying the same end in local time.
#[test]
fn the_docs_walkthrough_and_pause_examples_run_as_written() {
    use std::io::BufRead;
    let desktop = DesktopSession::start();
    let mut sim = std::process::Command::new(cmux_tray_e2e::bin("cmux-sim"))
        .args(["--user", "you@example.com", "--addr", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut printed = Vec::new();
    for line in std::io::BufReader::new(sim.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let last = line.starts_with("export CMUX_TRAY_TOKEN=");
        printed.push(line);
        if last {
            break;
        }
    }
    let exports: Vec<&String> = printed.iter().filter(|l| l.starts_with("export ")).collect();
    assert_eq!(exports.len(), 2, "{printed:?}");
    let origin = printed.iter().find_map(|l| l.strip_prefix("origin ")).unwrap().to_string();
    let home = Home::new(&origin, &desktop.address);
    // Pasted as printed; the token the harness would give is not the one that signs in.
    let script = format!("{}\n{}\nexec \"$0\" daemon", exports[0], exports[1]);
    let command = home.program(std::path::Path::new("/bin/sh"), &["-c", &script, cmux_tray_e2e::bin("cmux-tray").to_str().unwrap()]);
    let _daemon = home.daemon_from(command, "not-the-walkthroughs-token", &[("CMUX_TRAY_API_URL", "http://127.0.0.1:9")]);
    wait_until("signed in from the pasted lines", LIMIT, || home.status()["account"]["email"] == "you@example.com");
    let out = home.run(&["pause", "90", "minutes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stdout(&out);
    let until = said.trim().strip_prefix("banners paused until ").unwrap_or_else(|| panic!("{said}")).to_string();
    let status = stdout(&home.run(&["status"]));
    assert!(status.contains(&format!("banners paused until {until}")), "pause said {until:?}; status:\n{status}");
    let _ = sim.kill();
    let _ = sim.wait();
}

/// `hook install` writes into the agent's own settings, beside what a person already has there,
/// once however often it runs; `hook uninstall` gives the file back as it was.
#[test]
fn hook_install_and_uninstall_keep_the_other_hooks() {
    let home = Home::new("http://127.0.0.1:9", "unix:path=/nonexistent");
    let claude = home.dir.path().join("home/.claude/settings.json");
    std::fs::create_dir_all(claude.parent().unwrap()).unwrap();
    let theirs = json!({"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}});
    std::fs::write(&claude, theirs.to_string()).unwrap();
    for _ in 0..2 {
        let out = home.run(&["hook", "install", "claude"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let installed: Value = serde_json::from_str(&std::fs::read_to_string(&claude).unwrap()).unwrap();
    // This program by its full path (the agent's PATH may not hold it).
    let ours = |v: &Value| v.as_str().is_some_and(|c| c.starts_with('/') && c.ends_with("/cmux-tray hook claude"));
    assert_eq!(installed["hooks"]["Stop"][0]["hooks"][0]["command"], "say done");
    assert_eq!(installed["hooks"]["Stop"].as_array().unwrap().len(), 2, "once: {installed}");
    assert!(ours(&installed["hooks"]["Stop"][1]["hooks"][0]["command"]), "{installed}");
    assert!(ours(&installed["hooks"]["Notification"][0]["hooks"][0]["command"]), "{installed}");
    assert_eq!(home.run(&["hook", "uninstall", "claude"]).status.code(), Some(0));
    assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(&claude).unwrap()).unwrap(), theirs);
    // Codex: another notify program is never replaced; ours comes and goes.
    let codex = home.dir.path().join("home/.codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::fs::write(&codex, "model = \"gpt-5\"\nnotify = [\"notify-send\", \"Codex\"]\n").unwrap();
    let out = home.run(&["hook", "install", "codex"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("notify is set to another program"), "{}", stderr(&out));
    std::fs::write(&codex, "# mine\nmodel = \"gpt-5\"\n").unwrap();
    assert_eq!(home.run(&["hook", "install", "codex"]).status.code(), Some(0));
    let text = std::fs::read_to_string(&codex).unwrap();
    assert!(text.starts_with("# mine\nmodel = \"gpt-5\"\n") && text.contains("\"hook\", \"codex\"]"), "{text}");
    assert_eq!(home.run(&["hook", "uninstall", "codex"]).status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), "# mine\nmodel = \"gpt-5\"\n");
}
