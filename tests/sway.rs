//! The focus rule and a click under sway (Wayland, where EWMH does not reach): a headless sway
//! run as a normal user (it refuses root), foot terminals in it, a tmux pane in one of them, the
//! real daemon given the session's `SWAYSOCK`, and the recording notification server, whose
//! click is the person's. What has the focus is read back from sway (`swaymsg -t get_tree`).

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::path::Path;
use std::time::Duration;

use cmux_tray_e2e::sway::Sway;
use cmux_tray_e2e::tmux::Tmux;
use cmux_tray_e2e::{Cloud, Daemon, DesktopSession, Home, bin, go, turns, wait_until};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(30);
/// A private bus with the recorder, the simulator, a home, a headless sway and the daemon given
/// sway's socket (no token: local notices need none).
fn session() -> (DesktopSession, Cloud, Home, Sway, Daemon) {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let sway = Sway::start();
    let ipc = sway.ipc.to_str().unwrap().to_string();
    let daemon = home.daemon_with("no-token-needed-for-local-notices", &[("SWAYSOCK", &ipc)]);
    (desktop, cloud, home, sway, daemon)
}

/// docs/terminals.md, "Per desktop": under sway, a notice from a tmux pane in a foot window that
/// does not have the focus is one banner, the same pane in the focused window none, and a click
/// focuses that foot window (read back from sway).
#[test]
fn under_sway_the_focus_rule_holds_and_a_click_focuses_the_terminal_window() {
    let (desktop, _cloud, home, mut sway, _daemon) = session();
    let tmux = Tmux::start(&home);
    let sock = tmux.socket.to_str().unwrap().to_string();
    let terminal = sway.foot(&home, &["/usr/bin/tmux", "-S", &sock, "attach", "-t", "work"]);
    wait_until("the client attached", LIMIT, || !tmux.run(&["list-clients"]).is_empty());
    let other = sway.foot(&home, &["sleep", "600"]);
    let notify = |title: &str| format!("'{}' notify --title '{title}'", bin("cmux-tray").display());

    // The person looks at the tmux pane, in the focused foot: recorded, no banner.
    sway.focus(terminal);
    tmux.run(&["send-keys", "-t", "work", &notify("Looked at"), "Enter"]);
    assert_eq!(home.delivery_of("Looked at"), "focused");
    // The other foot has the focus: one banner.
    sway.focus(other);
    tmux.run(&["send-keys", "-t", "work", &notify("Tests passed"), "Enter"]);
    assert_eq!(home.delivery_of("Tests passed"), "shown");
    let shown: Vec<Value> = desktop.notifications();
    assert_eq!(shown.len(), 1, "one banner: {shown:?}");
    assert_eq!(shown[0]["summary"], "Tests passed");

    // A click on it: the tmux foot window has the focus, as sway says.
    desktop.click(shown[0]["id"].as_u64().unwrap());
    wait_until("the terminal's window focused", LIMIT, || sway.focused() == Some(terminal));
}

/// docs/terminals.md, "Per desktop": kitty as a Wayland client of sway. Its window looked at (sway
/// says it has the focus, and kitty's window in it is its active one): a notice from it gets no
/// banner; another window focused: one banner; a click focuses kitty's window again, read back
/// from sway.
#[test]
fn under_sway_kittys_window_is_looked_at_and_a_click_focuses_it() {
    let (desktop, _cloud, home, mut sway, _daemon) = session();
    let dir = home.dir.path().to_path_buf();
    let socket = format!("unix:{}", dir.join("kitty.sock").display());
    let kitty = sway.terminal(
        &home,
        "/usr/bin/kitty",
        &["-o", "linux_display_server=wayland", "-o", "allow_remote_control=yes", "--listen-on", &socket, "sh", "-c", &turns(&dir)],
    );
    let other = sway.foot(&home, &["sleep", "600"]);
    // kitty may map its window before it listens on its socket: wait until remote control answers.
    wait_until("kitty's remote control answering", LIMIT, || {
        home.program(Path::new("/usr/bin/kitty"), &["@", "--to", &socket, "ls"]).output().is_ok_and(|o| o.status.success())
    });

    sway.focus(kitty);
    go(&dir, 1);
    assert_eq!(home.delivery_of("Turn 1"), "focused");
    sway.focus(other);
    go(&dir, 2);
    assert_eq!(home.delivery_of("Turn 2"), "shown");
    let shown: Vec<Value> = desktop.notifications();
    assert_eq!(shown.len(), 1, "one banner: {shown:?}");

    desktop.click(shown[0]["id"].as_u64().unwrap());
    wait_until("kitty's window focused", LIMIT, || sway.focused() == Some(kitty));
}
