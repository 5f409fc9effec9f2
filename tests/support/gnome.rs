//! GNOME Shell 43 headless (Wayland, a virtual monitor) as a normal user, as it refuses root, on a
//! test's session bus, with its notification service and a test extension
//! (`support/gnome-shell-extension`) that says what the shell's message tray holds and clicks a
//! banner with a virtual pointer: the shell answers no `Eval`, so nothing else can look inside.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{BUS_CONFIG, DesktopSession, support_file, wait_until};

/// The shell starts in some seconds alone; on a busy 2-core machine it takes longer.
const LIMIT: Duration = Duration::from_secs(90);

/// The normal user GNOME Shell runs as (made once, as sway's).
pub const USER: &str = "cmux-tray-gnome";

const EXTENSION: &str = "cmux-tray-test@cmux-tray.test";
const TEST_NAME: &str = "org.cmuxtray.GnomeShellTest";

/// A running GNOME Shell and its notification service, each its own process group.
pub struct GnomeShell {
    pub dir: tempfile::TempDir,
    address: String,
    shell: Child,
    notifications: Option<Child>,
}

impl GnomeShell {
    /// The user for [`DesktopSession::start_without_server_open_to`], made if missing.
    pub fn user() -> &'static str {
        let made = Command::new("id").args(["-u", USER]).output().unwrap().status.success()
            || Command::new("useradd").args(["--create-home", "--shell", "/usr/sbin/nologin", USER]).status().unwrap().success();
        assert!(made, "the user {USER} for GNOME Shell");
        USER
    }

    /// GNOME Shell on `desktop`'s bus (one opened to [`Self::user`]), the test extension on, and
    /// `org.freedesktop.Notifications` served by the shell's own service.
    pub fn start(desktop: &DesktopSession) -> GnomeShell {
        let user = Self::user();
        let dir = tempfile::Builder::new().prefix("gnome-shell-").tempdir().unwrap();
        let home = dir.path().join("home");
        let extension = home.join(".local/share/gnome-shell/extensions").join(EXTENSION);
        std::fs::create_dir_all(&extension).unwrap();
        for file in ["metadata.json", "extension.js"] {
            std::fs::copy(support_file(&format!("gnome-shell-extension/{file}")), extension.join(file)).unwrap();
        }
        // The shell's one notice of its own, "Screen Lock disabled" (no GDM here), is shown once
        // per home unless this file says it was (main.js, _handleLockScreenWarning).
        std::fs::write(home.join(".local/share/gnome-shell/lock-warning-shown"), "").unwrap();
        // GSettings from a key file: no dconf service on a private bus to write through.
        let settings = home.join(".config/glib-2.0/settings");
        std::fs::create_dir_all(&settings).unwrap();
        std::fs::write(settings.join("keyfile"), format!("[org/gnome/shell]\nenabled-extensions=['{EXTENSION}']\n")).unwrap();
        // gnome-shell dies at start without a system bus (loginManager.js): a private one, bare.
        std::fs::write(dir.path().join("system-bus.conf"), BUS_CONFIG).unwrap();
        std::fs::create_dir(dir.path().join("run")).unwrap();
        std::fs::set_permissions(dir.path().join("run"), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        assert!(Command::new("chown").args(["-R", user]).arg(dir.path()).status().unwrap().success());

        let address = desktop.address.clone();
        let shell = as_user(dir.path(), &address)
            .arg("dbus-run-session")
            .arg(format!("--config-file={}", dir.path().join("system-bus.conf").display()))
            .args(["--", "sh", "-c"])
            .arg(format!(
                "export DBUS_SYSTEM_BUS_ADDRESS=\"$DBUS_SESSION_BUS_ADDRESS\" DBUS_SESSION_BUS_ADDRESS='{address}'; \
                 exec gnome-shell --headless --wayland --no-x11 --virtual-monitor 1280x800"
            ))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("gnome-shell.log")).unwrap())
            .spawn()
            .expect("gnome-shell starts (package gnome-shell)");
        let mut gnome = GnomeShell { dir, address, shell, notifications: None };
        let start = std::time::Instant::now();
        while !desktop.name_has_owner(TEST_NAME) {
            assert!(start.elapsed() < LIMIT, "GNOME Shell not up with the test extension within {LIMIT:?}; it said:\n{}", gnome.log());
            std::thread::sleep(Duration::from_millis(100));
        }
        // What the shell's D-Bus activation would start (this bus activates nothing).
        let notifications = as_user(gnome.dir.path(), &gnome.address)
            .args(["gjs", "/usr/share/gnome-shell/org.gnome.Shell.Notifications"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("gjs starts (package gjs)");
        gnome.notifications = Some(notifications);
        wait_until("GNOME Shell's notification service on the bus", LIMIT, || desktop.name_has_owner("org.freedesktop.Notifications"));
        assert_eq!(gnome.notifications(), Some(Vec::new()), "GNOME Shell holds no notification before the test's");
        gnome
    }

    /// The notifications the shell's message tray holds ("source: title"); `None` when the shell
    /// does not answer (it has died).
    pub fn notifications(&self) -> Option<Vec<String>> {
        let out = self.call("List")?;
        // gdbus prints `(['a: b', 'c: d'],)` or `(@as [],)`; titles here hold no quote.
        Some(out.split('\'').skip(1).step_by(2).map(str::to_string).collect())
    }

    /// The title of the banner the shell shows on screen now, if any.
    pub fn banner(&self) -> Option<String> {
        let out = self.call("Banner")?;
        out.split('\'').nth(1).map(str::to_string).filter(|t| !t.is_empty())
    }

    /// A click on the newest notification: a virtual pointer's press and release on its banner
    /// when that shows, else the call that click makes. Which one it was.
    pub fn click_newest(&self) -> String {
        let out = self.call("ClickNewest").expect("GNOME Shell answers the click");
        out.split('\'').nth(1).unwrap_or("").to_string()
    }

    fn call(&self, method: &str) -> Option<String> {
        let out = Command::new("gdbus")
            .args(["call", "--session", "--dest", TEST_NAME, "--object-path", "/org/cmuxtray/GnomeShellTest", "--method"])
            .arg(format!("{TEST_NAME}.{method}"))
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .expect("gdbus runs (package libglib2.0-bin)");
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// What gnome-shell wrote to its stderr, for a failed start's message.
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("gnome-shell.log")).unwrap_or_default()
    }
}

/// `runuser` to the GNOME user with a clean environment in `dir`, in a process group of its own
/// so that the whole tree (dbus-run-session, its bus, the shell) ends together.
fn as_user(dir: &Path, address: &str) -> Command {
    let mut command = Command::new("runuser");
    command
        .args(["-u", USER, "--", "env", "-i", "PATH=/usr/bin:/bin", "GSETTINGS_BACKEND=keyfile"])
        .arg(format!("HOME={}", dir.join("home").display()))
        .arg(format!("XDG_RUNTIME_DIR={}", dir.join("run").display()))
        .arg(format!("DBUS_SESSION_BUS_ADDRESS={address}"))
        .stdin(Stdio::null())
        .process_group(0);
    command
}

impl Drop for GnomeShell {
    fn drop(&mut self) {
        for child in self.notifications.iter_mut().chain(Some(&mut self.shell)) {
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
            let _ = child.wait();
            // runuser ends before the shell does: the test ends once the whole group has.
            let gone = || !Command::new("kill").args(["-0", "--", &group]).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while !gone() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}
