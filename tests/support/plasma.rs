//! KDE Plasma 5.27's shell (plasmashell) on a test's virtual X display and session bus: its
//! notification server is inside the shell, and its banners are X windows of the type
//! `_NET_WM_WINDOW_TYPE_NOTIFICATION`, which the test counts and clicks with a real pointer.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{DesktopSession, wait_until};

/// The shell is on the bus in about 5 s here alone; a busy 2-core machine takes longer.
const LIMIT: Duration = Duration::from_secs(90);

/// What `kactivitymanagerd` is installed as (package kactivitymanagerd, Debian's multiarch path).
const ACTIVITY_MANAGER: &str = "/usr/lib/x86_64-linux-gnu/libexec/kactivitymanagerd";

/// A running plasmashell and the activity manager it needs, each in a process group of its own.
pub struct Plasma {
    pub dir: tempfile::TempDir,
    display: String,
    children: Vec<Child>,
}

impl Plasma {
    /// plasmashell on `desktop`'s display and bus, its banners kept on screen until closed.
    pub fn start(desktop: &DesktopSession) -> Plasma {
        Self::start_with(desktop, true)
    }

    /// plasmashell with its own settings: a popup of normal urgency times out after 5 s.
    pub fn start_with_its_own_popup_timeout(desktop: &DesktopSession) -> Plasma {
        Self::start_with(desktop, false)
    }

    fn start_with(desktop: &DesktopSession, popups_stay: bool) -> Plasma {
        let display = desktop.display.clone().expect("a virtual display for plasmashell");
        let dir = tempfile::Builder::new().prefix("plasma-").tempdir().unwrap();
        for sub in ["home", "config", "data", "cache", "run"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        std::fs::set_permissions(dir.path().join("run"), std::fs::Permissions::from_mode(0o700)).unwrap();
        // Banners stay until closed, as dunst's and mako's do here: Plasma's own popup timeout
        // (5 s) would end a banner while the test still counts it (and Plasma then says
        // `NotificationClosed` reason 1, expired).
        if popups_stay {
            std::fs::write(dir.path().join("config/plasmanotifyrc"), "[Notifications]\nPopupTimeout=3600000\n").unwrap();
        }
        let mut plasma = Plasma { dir, display, children: Vec::new() };
        // plasmashell aborts its shell's load without the activity manager ("kactivitymanagerd
        // is not running"), which the bus would start by activation on a desktop; this one
        // activates nothing.
        let manager = plasma.command(ACTIVITY_MANAGER, &desktop.address, "kactivitymanagerd.log");
        plasma.children.push(manager);
        wait_until("kactivitymanagerd on the bus", LIMIT, || desktop.name_has_owner("org.kde.ActivityManager"));
        let shell = plasma.command("plasmashell", &desktop.address, "plasmashell.log");
        plasma.children.push(shell);
        let start = std::time::Instant::now();
        while !desktop.name_has_owner("org.freedesktop.Notifications") {
            assert!(start.elapsed() < LIMIT, "plasmashell's notification server not up within {LIMIT:?}; it said:\n{}", plasma.log());
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(plasma.banners(), Vec::<String>::new(), "plasmashell shows no banner before the test's");
        plasma
    }

    fn command(&self, program: &str, address: &str, log: &str) -> Child {
        let dir = self.dir.path();
        Command::new(program)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", dir.join("home"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_DATA_HOME", dir.join("data"))
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("XDG_RUNTIME_DIR", dir.join("run"))
            .env("DISPLAY", &self.display)
            .env("QT_QPA_PLATFORM", "xcb")
            .env("DBUS_SESSION_BUS_ADDRESS", address)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join(log)).unwrap())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("{program} starts (packages plasma-desktop, kactivitymanagerd): {e}"))
    }

    /// The banners (notification popups) plasmashell shows on screen now, as X window ids.
    pub fn banners(&self) -> Vec<String> {
        let windows = self.xdotool(&["search", "--onlyvisible", "--class", "plasmashell"]);
        windows.lines().filter(|w| self.is_notification(w)).map(str::to_string).collect()
    }

    fn is_notification(&self, window: &str) -> bool {
        let out = Command::new("xprop")
            .args(["-id", window, "_NET_WM_WINDOW_TYPE"])
            .env("DISPLAY", &self.display)
            .output()
            .expect("xprop runs (package x11-utils)");
        // A popup's types include `_NET_WM_WINDOW_TYPE_NOTIFICATION`; an urgent one's list
        // starts with `_KDE_NET_WM_WINDOW_TYPE_CRITICAL_NOTIFICATION`.
        let text = String::from_utf8_lossy(&out.stdout);
        let types = text.split_once('=').map_or("", |(_, t)| t);
        types.split(',').any(|t| t.trim() == "_NET_WM_WINDOW_TYPE_NOTIFICATION")
    }

    /// A person's click: the pointer moved onto the middle of the newest banner, pressed and
    /// released (the popup's body, which Plasma turns into the default action).
    pub fn click_newest(&self) {
        let banner = self.banners().pop().expect("a banner to click");
        let geometry = self.xdotool(&["getwindowgeometry", "--shell", &banner]);
        let value =
            |key: &str| -> i64 { geometry.lines().find_map(|l| l.strip_prefix(&format!("{key}="))).and_then(|v| v.parse().ok()).unwrap() };
        let (x, y) = (value("X") + value("WIDTH") / 2, value("Y") + value("HEIGHT") / 2);
        self.xdotool(&["mousemove", &x.to_string(), &y.to_string(), "click", "1"]);
    }

    fn xdotool(&self, args: &[&str]) -> String {
        let out = Command::new("xdotool").args(args).env("DISPLAY", &self.display).output().expect("xdotool runs (package xdotool)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What plasmashell wrote to its stderr, for a failed start's message.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("plasmashell.log")).unwrap_or_default()
    }
}

impl Drop for Plasma {
    fn drop(&mut self) {
        // The shell first (it talks to the activity manager), each group whole: plasmashell
        // starts helpers (kioslave5) of its own.
        for child in self.children.iter_mut().rev() {
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
            let _ = child.wait();
            let gone = || !Command::new("kill").args(["-0", "--", &group]).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while !gone() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
        }
    }
}
