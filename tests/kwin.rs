//! The focus rule and a click under KDE Plasma on Wayland (where EWMH does not reach): a headless
//! KWin (`kwin_wayland --virtual`) on the test's bus, kitty windows in it (Wayland clients), a
//! tmux pane in one, the real daemon told it is a Plasma Wayland session, and the recording
//! notification server, whose click is the person's. What is active is read back from KWin.
//!
//! The long form (scripts/test-kwin installs KWin, with Qt 5 and KDE Frameworks): `#[ignore]`d here.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::time::Duration;

use cmux_tray_e2e::kwin::{self, Kwin};
use cmux_tray_e2e::tmux::Tmux;
use cmux_tray_e2e::{Cloud, DesktopSession, Home, bin, wait_until};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(30);

/// docs/terminals.md, "Per desktop": under KWin, a notice from a tmux pane in a kitty window that
/// is not the active one is one banner, the same pane in the active window none, and a click
/// activates that kitty window (read back from KWin).
#[test]
#[ignore = "needs KWin (scripts/test-kwin installs it)"]
fn under_kwin_the_focus_rule_holds_and_a_click_activates_the_terminal_window() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let mut kwin = Kwin::start(&desktop);
    let _daemon =
        home.daemon_with("no-token-needed-for-local-notices", &[("XDG_CURRENT_DESKTOP", "KDE"), ("WAYLAND_DISPLAY", kwin::DISPLAY)]);
    let tmux = Tmux::start(&home);
    let sock = tmux.socket.to_str().unwrap().to_string();
    let kitty = ["-o", "linux_display_server=wayland"];
    let terminal = kwin.terminal(&home, "/usr/bin/kitty", &[&kitty[..], &["/usr/bin/tmux", "-S", &sock, "attach", "-t", "work"]].concat());
    wait_until("the client attached", LIMIT, || !tmux.run(&["list-clients"]).is_empty());
    let other = kwin.terminal(&home, "/usr/bin/kitty", &[&kitty[..], &["sleep", "600"]].concat());
    let notify = |title: &str| format!("'{}' notify --title '{title}'", bin("cmux-tray").display());

    // The person looks at the tmux pane, in the active kitty: recorded, no banner.
    kwin.focus(terminal);
    tmux.run(&["send-keys", "-t", "work", &notify("Looked at"), "Enter"]);
    assert_eq!(home.delivery_of("Looked at"), "focused", "KWin said:\n{}", kwin.log());
    // The other kitty is active: one banner.
    kwin.focus(other);
    tmux.run(&["send-keys", "-t", "work", &notify("Tests passed"), "Enter"]);
    assert_eq!(home.delivery_of("Tests passed"), "shown");
    let shown: Vec<Value> = desktop.notifications();
    assert_eq!(shown.len(), 1, "one banner: {shown:?}");
    assert_eq!(shown[0]["summary"], "Tests passed");

    // A click on it: the tmux pane's kitty is the active window, as KWin says.
    desktop.click(shown[0]["id"].as_u64().unwrap());
    let start = std::time::Instant::now();
    while kwin.focused() != Some(terminal) {
        assert!(start.elapsed() < LIMIT, "the terminal's window not active within {LIMIT:?}; KWin said:\n{}", kwin.log());
        std::thread::sleep(Duration::from_millis(100));
    }
}
