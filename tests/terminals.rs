//! A click takes the person back to the terminal a notice came from, and nothing shows for the
//! pane they are looking at (docs/notices.md §4 "Terminals"): Debian's tmux, kitty and xterm on
//! a virtual display under an EWMH window manager (openbox), the real daemon (or app), and the
//! recording notification server, whose click is the person's.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::time::Duration;

use cmux_tray_e2e::tmux::Tmux;
use cmux_tray_e2e::{Cloud, Daemon, DesktopSession, Home, bin, go, turns, wait_until};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(30);

/// A display with a window manager, the recorder on the bus, and a home.
fn desktop() -> (DesktopSession, Cloud, Home) {
    let mut desktop = DesktopSession::start_with_display();
    desktop.start_window_manager();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    (desktop, cloud, home)
}

/// The daemon, seeing the display (it asks the window manager what is focused, and raises).
fn daemon(desktop: &DesktopSession, home: &Home) -> Daemon {
    home.daemon_with("no-token-needed-for-local-notices", &[("DISPLAY", desktop.display.as_deref().unwrap())])
}

/// The notices as `status` lists them, newest first.
fn notices(home: &Home) -> Vec<Value> {
    home.status()["notices"].as_array().cloned().unwrap_or_default()
}

/// The banner titled `title`, once the server has it.
fn banner(desktop: &DesktopSession, title: &str) -> u64 {
    let mut id = 0;
    wait_until(&format!("the banner {title:?}"), LIMIT, || {
        id = desktop.notifications().iter().find(|n| n["summary"] == title).and_then(|n| n["id"].as_u64()).unwrap_or(0);
        id != 0
    });
    id
}

/// tmux in an xterm, windows 0 and 1, window 1 split into panes 1.0 and 1.1; a second xterm to
/// look at instead. Returns the tmux xterm's window and the other one.
fn tmux_in_xterm(desktop: &mut DesktopSession, home: &Home, tmux: &Tmux) -> (u32, u32) {
    tmux.run(&["new-window", "-t", "work:1"]);
    tmux.run(&["split-window", "-t", "work:1"]);
    let sock = tmux.socket.to_str().unwrap();
    let attached = desktop.spawn_on_display(home, "/usr/bin/xterm", &["-e", "/usr/bin/tmux", "-S", sock, "attach", "-t", "work"]);
    let terminal = desktop.window_of(attached);
    wait_until("the client attached", LIMIT, || !tmux.run(&["list-clients"]).is_empty());
    let other = desktop.spawn_on_display(home, "/usr/bin/xterm", &["-e", "sleep", "600"]);
    let other = desktop.window_of(other);
    (terminal, other)
}

fn activate(desktop: &DesktopSession, window: u32) {
    desktop.xdotool(&["windowactivate", "--sync", &window.to_string()]);
    wait_until("the window active", LIMIT, || desktop.active_window() == Some(window));
}

#[test]
fn a_click_on_a_banner_from_a_tmux_pane_selects_its_window_and_pane_and_raises_its_terminal() {
    let (mut desktop, _cloud, home) = desktop();
    let _daemon = daemon(&desktop, &home);
    let tmux = Tmux::start(&home);
    let (terminal, other) = tmux_in_xterm(&mut desktop, &home, &tmux);
    // The person moved to window 0 and is looking at another window; pane 1.1 finishes.
    tmux.run(&["select-window", "-t", "work:0"]);
    activate(&desktop, other);
    let notify = format!("'{}' notify --title 'Tests passed' --body '412 green'", bin("cmux-tray").display());
    tmux.run(&["send-keys", "-t", "work:1.1", &notify, "Enter"]);
    let id = banner(&desktop, "Tests passed");
    let place = &notices(&home)[0]["place"]["tmux"];
    assert_eq!(place["pane"], tmux.run(&["display", "-p", "-t", "work:1.1", "#{pane_id}"]), "{place}");
    assert_eq!(place["window"], tmux.run(&["display", "-p", "-t", "work:1", "#{window_id}"]), "{place}");
    assert_eq!(tmux.shown(), "0.0");

    desktop.click(id);
    wait_until("window 1 and pane 1.1 current", LIMIT, || tmux.shown() == "1.1");
    assert_eq!(tmux.run(&["display", "-p", "-t", "work", "#{window_index}.#{pane_index}"]), "1.1");
    wait_until("its terminal raised", LIMIT, || desktop.active_window() == Some(terminal));
    wait_until("read once revealed", LIMIT, || notices(&home)[0]["readAt"].is_i64());
}

#[test]
fn the_focus_rule_no_banner_for_the_pane_being_looked_at_and_one_when_another_window_has_the_focus() {
    let (mut desktop, _cloud, home) = desktop();
    let _daemon = daemon(&desktop, &home);
    let tmux = Tmux::start(&home);
    let (terminal, other) = tmux_in_xterm(&mut desktop, &home, &tmux);
    // The person looks at pane 1.1 in the focused xterm: its notice is recorded, with no banner.
    tmux.run(&["select-window", "-t", "work:1"]);
    tmux.run(&["select-pane", "-t", "work:1.1"]);
    activate(&desktop, terminal);
    let notify = |title: &str| format!("'{}' notify --title '{title}'", bin("cmux-tray").display());
    tmux.run(&["send-keys", "-t", "work:1.1", &notify("Looked at"), "Enter"]);
    assert_eq!(home.delivery_of("Looked at"), "focused");
    // The same pane, while another window has the focus: a banner.
    activate(&desktop, other);
    tmux.run(&["send-keys", "-t", "work:1.1", &notify("Not looked at"), "Enter"]);
    banner(&desktop, "Not looked at");
    assert_eq!(home.delivery_of("Not looked at"), "shown");
    // Another pane of the focused terminal's window is not the one being looked at.
    activate(&desktop, terminal);
    tmux.run(&["send-keys", "-t", "work:1.0", &notify("Next pane"), "Enter"]);
    banner(&desktop, "Next pane");
    let titles: Vec<String> = desktop.notifications().iter().map(|n| n["summary"].as_str().unwrap().to_string()).collect();
    assert_eq!(titles, ["Not looked at", "Next pane"]);
}

#[test]
fn a_click_on_a_banner_from_kittys_second_window_focuses_it_through_kittys_remote_control() {
    let (mut desktop, _cloud, home) = desktop();
    let _daemon = daemon(&desktop, &home);
    let socket = format!("unix:{}", home.dir.path().join("kitty.sock").display());
    let kitty = desktop.spawn_on_display(&home, "/usr/bin/kitty", &["-o", "allow_remote_control=yes", "--listen-on", &socket]);
    let kitty_at = |args: &[&str]| -> String {
        let mut all = vec!["@", "--to", socket.as_str()];
        all.extend_from_slice(args);
        let out = home.program(Path::new("/usr/bin/kitty"), &all).output().unwrap();
        assert!(out.status.success(), "kitty @ {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let window = desktop.window_of(kitty);
    // kitty may map its window before it listens on its socket: wait until remote control answers.
    wait_until("kitty's remote control answering", LIMIT, || {
        home.program(Path::new("/usr/bin/kitty"), &["@", "--to", &socket, "ls"]).output().is_ok_and(|o| o.status.success())
    });
    let dir = home.dir.path().to_path_buf();
    let second: u64 = kitty_at(&["launch", "--type=window", "sh", "-c", &turns(&dir)]).parse().expect("launch prints the window id");
    let focused = || -> Vec<u64> {
        let ls: Value = serde_json::from_str(&kitty_at(&["ls"])).unwrap();
        ls[0]["tabs"][0]["windows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["is_focused"] == true)
            .filter_map(|w| w["id"].as_u64())
            .collect()
    };
    // The person is in the first window; the second speaks.
    kitty_at(&["focus-window", "--match", &format!("id:{}", second - 1)]);
    wait_until("the first window focused", LIMIT, || focused() == [second - 1]);
    activate(&desktop, window);
    go(&dir, 1);
    let id = banner(&desktop, "Turn 1");
    let place = &notices(&home)[0]["place"];
    assert_eq!((place["kitty"]["window"].as_u64(), place["kitty"]["socket"].as_str()), (Some(second), Some(socket.as_str())), "{place}");
    assert_eq!(place["x11"]["window"].as_u64(), Some(window as u64), "kitty's X window, found from WINDOWID: {place}");

    desktop.click(id);
    wait_until("the second window focused", LIMIT, || focused() == [second]);
    wait_until("read once revealed", LIMIT, || notices(&home)[0]["readAt"].is_i64());
    // Now it is looked at: its next notice gets no banner.
    go(&dir, 2);
    assert_eq!(home.delivery_of("Turn 2"), "focused");
}

#[test]
fn a_click_on_a_banner_from_an_xterm_makes_its_window_the_active_one() {
    let (mut desktop, _cloud, home) = desktop();
    let _daemon = daemon(&desktop, &home);
    let dir = home.dir.path().to_path_buf();
    let speaking = desktop.spawn_on_display(&home, "/usr/bin/xterm", &["-e", "sh", "-c", &turns(&dir)]);
    let speaking = desktop.window_of(speaking);
    let other = desktop.spawn_on_display(&home, "/usr/bin/xterm", &["-e", "sleep", "600"]);
    let other = desktop.window_of(other);
    activate(&desktop, other);
    go(&dir, 1);
    let id = banner(&desktop, "Turn 1");
    assert_eq!(notices(&home)[0]["place"]["x11"]["window"].as_u64(), Some(speaking as u64));

    desktop.click(id);
    wait_until("_NET_ACTIVE_WINDOW is the xterm that spoke", LIMIT, || desktop.active_window() == Some(speaking));
    // Looked at now: its next notice is recorded without a banner.
    go(&dir, 2);
    assert_eq!(home.delivery_of("Turn 2"), "focused");
    assert_eq!(desktop.notifications().len(), 1);
}

#[test]
fn a_click_on_a_banner_whose_pane_is_gone_opens_its_card_which_says_so() {
    let (mut desktop, _cloud, home) = desktop();
    let log = home.dir.path().join("app.log");
    let mut app = home.app_command(desktop.display.as_deref().unwrap(), &log).spawn().expect("the app starts");
    wait_until("the app's socket", LIMIT, || std::os::unix::net::UnixStream::connect(home.socket()).is_ok());
    let tmux = Tmux::start(&home);
    let (_, other) = tmux_in_xterm(&mut desktop, &home, &tmux);
    tmux.run(&["select-window", "-t", "work:0"]);
    activate(&desktop, other);
    let notify = format!("'{}' notify --title 'Build finished' --body 'in pane 1.1'", bin("cmux-tray").display());
    tmux.run(&["send-keys", "-t", "work:1.1", &notify, "Enter"]);
    let id = banner(&desktop, "Build finished");
    let pane = notices(&home)[0]["place"]["tmux"]["pane"].as_str().unwrap().to_string();
    // The person closed the pane since.
    tmux.run(&["kill-pane", "-t", &pane]);

    desktop.click(id);
    wait_until("the history window with the notice's card", LIMIT, || desktop.window_titled("cmux-tray — History"));
    let note = notices(&home)[0]["revealNote"].as_str().unwrap_or("").to_string();
    assert!(note.starts_with(&format!("tmux pane {pane} is gone")), "{note}");
    assert_eq!(tmux.shown(), "0.0", "nothing else was switched to");
    wait_until("read once its card was shown", LIMIT, || notices(&home)[0]["readAt"].is_i64());
    desktop.screenshot("gone-pane-card");
    let _ = app.kill();
    let _ = app.wait();
}

#[test]
fn a_click_on_a_handoffs_banner_comes_back_to_the_tmux_pane_whose_agent_reported_its_session() {
    let (mut desktop, cloud, home) = desktop();
    let user = cloud.sim().add_user("ada@example.com");
    // The agent's session, which the hand-off carries to the cloud as its sessionId.
    let session = "4f1c2a9e-5d7b-4e0a-9c1d-2b3e4f5a6b7c";
    let handoff = cloud.sim().create_handoff(cmux_cloud_sim::state::NewHandoff {
        owner: user.user_id.clone(),
        title: Some("Refactor the parser".into()),
        session_id: Some(session.into()),
        ..Default::default()
    });
    let _daemon = home.daemon_with(&user.access_token, &[("DISPLAY", desktop.display.as_deref().unwrap())]);
    assert!(home.run(&["follow", "handoff", &handoff]).status.success());
    let tmux = Tmux::start(&home);
    let (terminal, other) = tmux_in_xterm(&mut desktop, &home, &tmux);
    // Claude Code's hook runs in pane 1.1 (its Stop payload names the session); the person
    // then moves to window 0 and to another window.
    let payload = format!(r#"{{"hook_event_name": "Stop", "session_id": "{session}", "cwd": "/home/ada/parser"}}"#);
    let hook = format!("echo '{payload}' | '{}' hook claude", bin("cmux-tray").display());
    tmux.run(&["send-keys", "-t", "work:1.1", &hook, "Enter"]);
    banner(&desktop, "Claude Code");
    tmux.run(&["select-window", "-t", "work:0"]);
    activate(&desktop, other);

    cloud.sim().update_handoff(&handoff, cmux_cloud_sim::state::HandoffChange::status("done"));
    let id = banner(&desktop, "Refactor the parser");
    desktop.click(id);
    wait_until("window 1 and pane 1.1 current", LIMIT, || tmux.shown() == "1.1");
    wait_until("its terminal raised", LIMIT, || desktop.active_window() == Some(terminal));
}

#[test]
fn the_activation_token_sent_with_a_click_reaches_what_the_click_starts() {
    let (desktop, _cloud, home) = desktop();
    let dumped = home.register_cmux_env_recorder();
    let _daemon = daemon(&desktop, &home);
    let out = home
        .command(&["notify", "--title", "From cmux", "--strict"])
        .env("CMUX_WORKSPACE_ID", "D9C269B8-1A2B-4C3D-8E9F-0123456789AB")
        .env("CMUX_SURFACE_ID", "B9DD280A-0000-0000-0000-000000000001")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id = banner(&desktop, "From cmux");
    desktop.click_with_token(id, "wayland-token_0123:abc");
    wait_until("the opener ran", LIMIT, || std::fs::read(&dumped).is_ok_and(|e| !e.is_empty()));
    let env = String::from_utf8_lossy(&std::fs::read(&dumped).unwrap()).into_owned();
    assert!(env.split('\0').any(|v| v == "XDG_ACTIVATION_TOKEN=wayland-token_0123:abc"), "{env:?}");
    // The daemon runs with no Wayland display: an X11 session, whose programs read the token as
    // a startup id (docs/notices.md §3).
    assert!(env.split('\0').any(|v| v == "DESKTOP_STARTUP_ID=wayland-token_0123:abc"), "{env:?}");
}

#[test]
fn an_x_server_that_never_answers_does_not_hold_notify_and_its_notice_still_goes_out() {
    let (desktop, _cloud, home) = desktop();
    let _daemon = daemon(&desktop, &home);
    // A display whose socket takes the connection and then says nothing, ever.
    let n = (500..900)
        .find(|n| !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() && !Path::new(&format!("/tmp/.X{n}-lock")).exists())
        .unwrap();
    let socket = PathBuf::from(format!("/tmp/.X11-unix/X{n}"));
    let _hung = std::os::unix::net::UnixListener::bind(&socket).expect("a display socket");
    struct Gone(PathBuf);
    impl Drop for Gone {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _gone = Gone(socket);
    let started = std::time::Instant::now();
    let out = home
        .command(&["notify", "--title", "Hung display", "--strict"])
        .env("DISPLAY", format!(":{n}"))
        .env("WINDOWID", "4194317")
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The X question is given up after 2 s (docs/notices.md §4 "Terminals"); then the notice goes.
    assert!(took < Duration::from_secs(10), "notify took {took:?}");
    banner(&desktop, "Hung display");
    assert!(notices(&home)[0]["place"].is_null(), "no place could be read: {}", notices(&home)[0]);
}
