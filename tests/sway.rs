//! The focus rule and a click under sway (Wayland, where EWMH does not reach): a headless sway
//! run as a normal user (it refuses root), foot terminals in it, a tmux pane in one of them, the
//! real daemon given the session's `SWAYSOCK`, and the recording notification server, whose
//! click is the person's. What has the focus is read back from sway (`swaymsg -t get_tree`).

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use cmux_tray_e2e::tmux::Tmux;
use cmux_tray_e2e::{Cloud, DesktopSession, Home, bin, wait_until};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(30);
/// The normal user sway runs as (made once, like scripts/bench's).
const USER: &str = "cmux-tray-sway";

/// A headless sway: its runtime folder (the Wayland socket and the IPC socket) and the process.
struct Sway {
    dir: tempfile::TempDir,
    ipc: PathBuf,
    sway: Child,
    terminals: Vec<Child>,
}

impl Sway {
    fn start() -> Sway {
        let made = Command::new("id").args(["-u", USER]).output().unwrap().status.success()
            || Command::new("useradd").args(["--create-home", "--shell", "/usr/sbin/nologin", USER]).status().unwrap().success();
        assert!(made, "the user {USER} for sway");
        let dir = tempfile::Builder::new().prefix("sway-").tempdir().unwrap();
        let conf = dir.path().join("config");
        std::fs::write(&conf, "output HEADLESS-1 resolution 1280x800\n").unwrap();
        assert!(Command::new("chown").args(["-R", USER]).arg(dir.path()).status().unwrap().success());
        let sway = Command::new("runuser")
            .args(["-u", USER, "--", "env", "-i", "PATH=/usr/bin:/bin", &format!("HOME=/home/{USER}")])
            .arg(format!("XDG_RUNTIME_DIR={}", dir.path().display()))
            .args(["WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman", "sway", "-c"])
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sway starts (package sway)");
        let mut ipc = None;
        wait_until("sway's IPC socket and Wayland display", LIMIT, || {
            ipc = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("sway-ipc.")));
            ipc.is_some() && dir.path().join("wayland-1").exists()
        });
        let ipc = ipc.unwrap();
        // The test, the daemon and the terminals run as root: the IPC socket is made theirs, as a
        // person's sway socket is the person's (the engine speaks only to a socket of its user).
        assert!(Command::new("chown").arg("root").arg(&ipc).status().unwrap().success());
        Sway { dir, ipc, sway, terminals: Vec::new() }
    }

    /// A foot terminal in sway running `command`, in the home's environment; its pid.
    fn foot(&mut self, home: &Home, command: &[&str]) -> u32 {
        let mut args = vec!["--"];
        args.extend_from_slice(command);
        let child = home
            .program(Path::new("/usr/bin/foot"), &args)
            .env("XDG_RUNTIME_DIR", self.dir.path())
            .env("WAYLAND_DISPLAY", "wayland-1")
            .env_remove("DISPLAY")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("foot starts (package foot)");
        let pid = child.id();
        self.terminals.push(child);
        wait_until("foot's window in sway", LIMIT, || self.windows().iter().any(|(p, _)| *p == pid));
        pid
    }

    fn swaymsg(&self, args: &[&str]) -> String {
        let out = Command::new("swaymsg").args(args).env("SWAYSOCK", &self.ipc).output().expect("swaymsg runs (package sway)");
        assert!(out.status.success(), "swaymsg {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Every window sway shows: (its pid, whether it has the focus).
    fn windows(&self) -> Vec<(u32, bool)> {
        fn walk(n: &Value, out: &mut Vec<(u32, bool)>) {
            if let Some(pid) = n["pid"].as_u64() {
                out.push((pid as u32, n["focused"].as_bool().unwrap_or(false)));
            }
            for c in ["nodes", "floating_nodes"].iter().filter_map(|k| n[k].as_array()).flatten() {
                walk(c, out);
            }
        }
        let tree: Value = serde_json::from_str(&self.swaymsg(&["-t", "get_tree", "-r"])).unwrap_or(Value::Null);
        let mut out = Vec::new();
        walk(&tree, &mut out);
        out
    }

    fn focused(&self) -> Option<u32> {
        self.windows().into_iter().find(|(_, f)| *f).map(|(p, _)| p)
    }

    fn focus(&self, pid: u32) {
        self.swaymsg(&[&format!("[pid={pid}] focus")]);
        wait_until("the window focused", LIMIT, || self.focused() == Some(pid));
    }
}

impl Drop for Sway {
    fn drop(&mut self) {
        for c in &mut self.terminals {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = Command::new("kill").arg(self.sway.id().to_string()).status();
        let _ = self.sway.wait();
    }
}

/// The delivery of the notice titled `title`, once it is decided.
fn delivery_of(home: &Home, title: &str) -> String {
    let mut delivery = String::new();
    wait_until(&format!("{title:?} decided"), LIMIT, || {
        let notices = home.status()["notices"].as_array().cloned().unwrap_or_default();
        delivery = notices.iter().find(|n| n["title"] == title).and_then(|n| n["delivery"].as_str()).unwrap_or("").to_string();
        !delivery.is_empty() && delivery != "untold"
    });
    delivery
}

/// docs/terminals.md, "Per desktop": under sway, a notice from a tmux pane in a foot window that
/// does not have the focus is one banner, the same pane in the focused window none, and a click
/// focuses that foot window (read back from sway).
#[test]
fn under_sway_the_focus_rule_holds_and_a_click_focuses_the_terminal_window() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let mut sway = Sway::start();
    let ipc = sway.ipc.to_str().unwrap().to_string();
    let _daemon = home.daemon_with("no-token-needed-for-local-notices", &[("SWAYSOCK", &ipc)]);
    let tmux = Tmux::start(&home);
    let sock = tmux.socket.to_str().unwrap().to_string();
    let terminal = sway.foot(&home, &["/usr/bin/tmux", "-S", &sock, "attach", "-t", "work"]);
    wait_until("the client attached", LIMIT, || !tmux.run(&["list-clients"]).is_empty());
    let other = sway.foot(&home, &["sleep", "600"]);
    let notify = |title: &str| format!("'{}' notify --title '{title}'", bin("cmux-tray").display());

    // The person looks at the tmux pane, in the focused foot: recorded, no banner.
    sway.focus(terminal);
    tmux.run(&["send-keys", "-t", "work", &notify("Looked at"), "Enter"]);
    assert_eq!(delivery_of(&home, "Looked at"), "focused");
    // The other foot has the focus: one banner.
    sway.focus(other);
    tmux.run(&["send-keys", "-t", "work", &notify("Tests passed"), "Enter"]);
    assert_eq!(delivery_of(&home, "Tests passed"), "shown");
    let shown: Vec<Value> = desktop.notifications();
    assert_eq!(shown.len(), 1, "one banner: {shown:?}");
    assert_eq!(shown[0]["summary"], "Tests passed");

    // A click on it: the tmux foot window has the focus, as sway says.
    desktop.click(shown[0]["id"].as_u64().unwrap());
    wait_until("the terminal's window focused", LIMIT, || sway.focused() == Some(terminal));
}
