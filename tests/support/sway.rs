//! A headless sway (Wayland) run as a normal user, as it refuses root: its runtime folder holds
//! the Wayland display `wayland-1` and the IPC socket; foot terminals open in it.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::{Home, wait_until};

const LIMIT: Duration = Duration::from_secs(30);

/// The normal user sway runs as (made once, like scripts/bench's).
pub const USER: &str = "cmux-tray-sway";

/// A headless sway: its runtime folder (the Wayland socket and the IPC socket) and the process.
pub struct Sway {
    pub dir: tempfile::TempDir,
    pub ipc: PathBuf,
    sway: Child,
    terminals: Vec<Child>,
}

impl Sway {
    pub fn start() -> Sway {
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
    pub fn foot(&mut self, home: &Home, command: &[&str]) -> u32 {
        let mut args = vec!["--"];
        args.extend_from_slice(command);
        self.terminal(home, "/usr/bin/foot", &args)
    }

    /// A terminal `program` with `args` in sway (a Wayland client), in the home's environment;
    /// its pid, once sway shows its window.
    pub fn terminal(&mut self, home: &Home, program: &str, args: &[&str]) -> u32 {
        let child = home.wayland_client(program, args, self.dir.path(), "wayland-1");
        let pid = child.id();
        self.terminals.push(child);
        wait_until(&format!("{program}'s window in sway"), LIMIT, || self.windows().iter().any(|(p, _)| *p == pid));
        pid
    }

    pub fn swaymsg(&self, args: &[&str]) -> String {
        let out = Command::new("swaymsg").args(args).env("SWAYSOCK", &self.ipc).output().expect("swaymsg runs (package sway)");
        assert!(out.status.success(), "swaymsg {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Every window sway shows: (its pid, whether it has the focus).
    pub fn windows(&self) -> Vec<(u32, bool)> {
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

    pub fn focused(&self) -> Option<u32> {
        self.windows().into_iter().find(|(_, f)| *f).map(|(p, _)| p)
    }

    pub fn focus(&self, pid: u32) {
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
