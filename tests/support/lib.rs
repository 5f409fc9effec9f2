//! Support for the end-to-end suite: the built binaries, a sandboxed home, a private D-Bus
//! session with a recording notification server, and a running `cmux-tray daemon`.
//!
//! Nothing here touches the machine's own session: every test gets its own bus, its own XDG
//! directories and its own simulator port.

// The end-to-end suite drives a Linux desktop: a private D-Bus session, X, Debian's programs.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod faults;
pub mod gnome;
pub mod kwin;
pub mod maps;
pub mod network;
pub mod plasma;
pub mod sshd;
mod store;
pub mod sway;
pub mod tmux;
pub mod webdriver;

/// A binary of this workspace. `cargo test -p cmux-tray-e2e` does not rebuild the binaries of
/// other packages, so the first call builds them (a no-op when they are current): a test never
/// runs a stale daemon. `scripts/test` builds them the same way first and names the folder in
/// `CMUX_TRAY_BIN_DIR`, so no test waits for a build.
pub fn bin(name: &str) -> PathBuf {
    if let Ok(dir) = std::env::var("CMUX_TRAY_BIN_DIR") {
        return Path::new(&dir).join(name);
    }
    static BUILD: std::sync::Once = std::sync::Once::new();
    BUILD.call_once(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            // The same command as scripts/build-bins', so that its build serves.
            .args(["build", "--quiet", "--workspace", "--all-targets"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the binaries failed");
    });
    // target/debug/deps/<test> → target/debug/<name>
    let exe = std::env::current_exe().expect("the test knows where it is");
    let path = exe.parent().and_then(Path::parent).expect("under target/<profile>/deps").join(name);
    assert!(path.exists(), "{} is missing: run scripts/build-bins first", path.display());
    path
}

/// A helper script of this folder (`support/`), or of `CMUX_TRAY_SUPPORT_DIR` when set: the bench
/// runs as a user who may not read a checkout private to root, and `scripts/bench` gives it a copy.
pub fn support_file(name: &str) -> PathBuf {
    match std::env::var_os("CMUX_TRAY_SUPPORT_DIR") {
        Some(dir) => Path::new(&dir).join(name),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("support").join(name),
    }
}

/// Whether the tests save screenshots for people to look at (`CMUX_TRAY_SCREENSHOTS=1`): none
/// by default, as each costs a pause for the page to paint and a capture.
pub fn screenshots_wanted() -> bool {
    std::env::var_os("CMUX_TRAY_SCREENSHOTS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// How long a "nothing more came" check waits: the longest a notice takes to become a banner
/// (docs/notices.md §3: a burst settles for at most 2 s after its first notice), and a margin.
pub const NOTHING_MORE: Duration = Duration::from_millis(2500);

/// Polls `cond` every 20 ms until it holds; panics after `limit` with `what`.
pub fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < limit, "not within {limit:?}: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A shell script that waits for `<dir>/go1`, posts "Turn 1", waits for `go2`, posts "Turn 2",
/// and stays: a terminal's program, told when to speak.
pub fn turns(dir: &Path) -> String {
    let notify = bin("cmux-tray").display().to_string();
    let mut script = String::new();
    for i in 1..=2 {
        let go = dir.join(format!("go{i}"));
        script.push_str(&format!(
            "while [ ! -e '{go}' ]; do sleep 0.05; done; '{notify}' notify --title 'Turn {i}' --body 'from the terminal'; ",
            go = go.display()
        ));
    }
    script.push_str("exec sleep 600");
    script
}

/// Tells the [`turns`] script in `dir` to post "Turn `i`".
pub fn go(dir: &Path, i: u32) {
    std::fs::write(dir.join(format!("go{i}")), "").unwrap();
}

/// A private session bus with the recording notification server on it (and, when asked, a
/// virtual display and a tray host's StatusNotifierWatcher).
pub struct DesktopSession {
    pub dir: tempfile::TempDir,
    pub address: String,
    bus: Child,
    recorder: Option<Child>,
    extras: Vec<Child>,
    /// The tray host's registry (status-notifier-watcher), while one runs.
    tray_host: Option<Child>,
    /// `:N` when a virtual display runs.
    pub display: Option<String>,
}

impl DesktopSession {
    /// A virtual display, a tray host's watcher and a real Secret Service, for the tray app.
    pub fn start_with_keyring_and_display() -> DesktopSession {
        let mut session = DesktopSession::start_with_display();
        session.start_keyring();
        session
    }

    /// The session with a real Secret Service on it too: gnome-keyring-daemon, its `login`
    /// keyring created and unlocked in this session's own folder.
    pub fn start_with_keyring() -> DesktopSession {
        let mut session = DesktopSession::start();
        session.start_keyring();
        session
    }

    /// Stops the Secret Service (gnome-keyring-daemon) on this bus, as at a logout or before it
    /// started at login.
    pub fn stop_keyring(&self) {
        let reply = self.ask_bus("GetConnectionUnixProcessID", "org.freedesktop.secrets");
        let pid = reply.split_whitespace().last().and_then(|p| p.parse::<u32>().ok()).expect("the keyring's pid");
        signal(pid, "TERM");
        wait_until("the Secret Service gone", Duration::from_secs(10), || !self.name_has_owner("org.freedesktop.secrets"));
    }

    /// Starts the Secret Service on this bus (again): gnome-keyring-daemon, its `login` keyring
    /// in this session's own folder, unlocked.
    pub fn start_keyring(&mut self) {
        let session = &*self;
        let home = session.dir.path().join("keyring-home");
        std::fs::create_dir_all(home.join("data")).unwrap();
        let mut child = Command::new("gnome-keyring-daemon")
            .args(["--unlock", "--components=secrets", "--daemonize"])
            .env("DBUS_SESSION_BUS_ADDRESS", &session.address)
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_RUNTIME_DIR", session.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("gnome-keyring-daemon starts (package gnome-keyring)");
        std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"pw").unwrap();
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success());
        wait_until("the Secret Service on the bus", Duration::from_secs(10), || session.name_has_owner("org.freedesktop.secrets"));
    }

    /// The session with a virtual display (Xvfb) and a StatusNotifierWatcher, for the tray app.
    pub fn start_with_display() -> DesktopSession {
        let mut session = DesktopSession::start().with_display();
        session.start_tray_host();
        session
    }

    /// A virtual display and no tray host: what stock GNOME is (nothing serves
    /// `org.kde.StatusNotifierWatcher`); [`Self::start_tray_host`] brings one later.
    pub fn start_with_display_and_no_tray_host() -> DesktopSession {
        DesktopSession::start().with_display()
    }

    /// Starts a tray host's registry on this bus (status-notifier-watcher), as a panel does.
    pub fn start_tray_host(&mut self) {
        assert!(self.tray_host.is_none(), "one tray host a session");
        let watcher = Command::new("status-notifier-watcher")
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("status-notifier-watcher starts (package haskell-status-notifier-item-utils)");
        self.tray_host = Some(watcher);
        wait_until("the StatusNotifierWatcher", Duration::from_secs(10), || self.name_has_owner("org.kde.StatusNotifierWatcher"));
    }

    /// Ends the tray host's registry, as a panel that crashed or an extension turned off.
    pub fn stop_tray_host(&mut self) {
        let mut watcher = self.tray_host.take().expect("a tray host runs");
        let _ = watcher.kill();
        let _ = watcher.wait();
        wait_until("the StatusNotifierWatcher gone", Duration::from_secs(10), || !self.name_has_owner("org.kde.StatusNotifierWatcher"));
    }

    fn with_display(self) -> DesktopSession {
        let mut session = self;
        // Xvfb picks a free display itself and says which (-displayfd): tests side by side never
        // share one, and a display a killed Xvfb left behind is never taken for ours. -noreset:
        // by default the server resets whenever its last client leaves (each xdotool call), and a
        // client connecting during that reset is refused (3 in 300 here), which GTK takes for
        // "no display".
        let mut xvfb = Command::new("Xvfb")
            .args(["-displayfd", "1", "-noreset", "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb starts (package xvfb)");
        let mut line = String::new();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(xvfb.stdout.take().expect("piped")), &mut line);
        match line.trim().parse::<u32>() {
            Ok(n) => {
                session.extras.push(xvfb);
                session.display = Some(format!(":{n}"));
            }
            Err(_) => {
                let _ = xvfb.kill();
                let _ = xvfb.wait();
            }
        }
        assert!(session.display.is_some(), "no virtual display could be started");
        session
    }

    /// Runs `support/sni.py` (a tray host's calls) on this session's bus.
    pub fn sni(&self, args: &[&str]) -> String {
        let out = Command::new("/usr/bin/python3")
            .arg(support_file("sni.py"))
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .unwrap();
        assert!(out.status.success(), "sni.py {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Saves a screenshot of the virtual display to `test-artifacts/NAME.png` (for people to
    /// look at; never committed), when asked for ([`screenshots_wanted`]).
    pub fn screenshot(&self, name: &str) {
        let Some(display) = &self.display else { return };
        if !screenshots_wanted() {
            return;
        }
        // For people to look at, not for an assertion: give a page a moment to paint.
        std::thread::sleep(Duration::from_millis(1500));
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../test-artifacts");
        let _ = std::fs::create_dir_all(&dir);
        let _ = Command::new("import").args(["-window", "root"]).arg(dir.join(format!("{name}.png"))).env("DISPLAY", display).status();
    }

    /// Whether a window with this exact title is mapped on the virtual display.
    pub fn window_titled(&self, title: &str) -> bool {
        self.windows_titled(title) > 0
    }

    /// How many windows with this exact title are mapped on the virtual display.
    pub fn windows_titled(&self, title: &str) -> usize {
        self.window_ids_titled(title).len()
    }

    /// The windows with this exact title mapped on the virtual display.
    fn window_ids_titled(&self, title: &str) -> Vec<u32> {
        let Some(display) = &self.display else { return Vec::new() };
        let out =
            Command::new("xdotool").args(["search", "--onlyvisible", "--name", &format!("^{title}$")]).env("DISPLAY", display).output();
        out.map(|o| String::from_utf8_lossy(&o.stdout).lines().filter_map(|l| l.trim().parse().ok()).collect()).unwrap_or_default()
    }

    /// Whether a name is owned on this session's bus.
    pub fn name_has_owner(&self, name: &str) -> bool {
        self.ask_bus("NameHasOwner", name).contains("boolean true")
    }

    /// `org.freedesktop.DBus.METHOD(name)` on this session's bus; the reply as dbus-send prints it.
    fn ask_bus(&self, method: &str, name: &str) -> String {
        let out = Command::new("dbus-send")
            .args([
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                &format!("org.freedesktop.DBus.{method}"),
                &format!("string:{name}"),
            ])
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `secret-tool lookup service cmux-tray username ACCOUNT`: the stored secret, if any. A
    /// lookup that fails (no Secret Service, a locked keyring) fails the test: it is no "none".
    pub fn keyring_lookup(&self, account: &str) -> Option<String> {
        let out = Command::new("secret-tool")
            .args(["lookup", "service", "cmux-tray", "username", account])
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .expect("secret-tool runs (package libsecret-tools)");
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let err = String::from_utf8_lossy(&out.stderr);
        // secret-tool says nothing and exits 1 when there is no such secret; anything else on
        // stderr is the lookup breaking.
        assert!(err.trim().is_empty(), "secret-tool lookup failed: {err}");
        (out.status.success() && !text.is_empty()).then_some(text)
    }

    pub fn start() -> DesktopSession {
        Self::start_bus(true)
    }

    /// A virtual display, the watcher, and the real dunst as the notification server (instead
    /// of the recorder): `dunstctl` clicks its banners.
    pub fn start_with_dunst_and_display() -> DesktopSession {
        let session = Self::start_bus(false);
        let mut session = session.with_display();
        session.start_tray_host();
        let config = session.dir.path().join("dunstrc");
        // Banners stay until closed (timeout 0); at most 10 on screen, the rest queued, as a
        // desktop shows a few: dunst draws every banner on screen, and with hundreds up (the long
        // crash soak) each Notify took over a second to answer.
        std::fs::write(&config, "[global]\n    timeout = 0\n    follow = none\n    notification_limit = 10\n").unwrap();
        let dunst = Command::new("dunst")
            .arg("-config")
            .arg(&config)
            .env("DBUS_SESSION_BUS_ADDRESS", &session.address)
            .env("DISPLAY", session.display.clone().unwrap())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dunst starts (package dunst)");
        session.extras.push(dunst);
        wait_until("dunst on the bus", Duration::from_secs(10), || session.name_has_owner("org.freedesktop.Notifications"));
        session
    }

    /// A visible tray bar on the virtual display (gtk-sni-tray-standalone, at the top left), so
    /// the tray can be clicked with a real mouse and photographed with its menu open.
    pub fn start_tray_bar(&mut self) {
        let bar = Command::new("gtk-sni-tray-standalone")
            .args(["--top", "--beginning", "--size", "32", "--color", "#24292f"])
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .env("DISPLAY", self.display.clone().expect("a display"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("gtk-sni-tray-standalone starts (package haskell-gtk-sni-tray-utils)");
        self.extras.push(bar);
    }

    /// An EWMH window manager (openbox) on the virtual display: `_NET_ACTIVE_WINDOW` then
    /// follows the focus and is what a click's raise is read back from.
    pub fn start_window_manager(&mut self) {
        let display = self.display.clone().expect("a display");
        let wm = Command::new("openbox")
            .env("DISPLAY", &display)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("openbox starts (package openbox)");
        self.extras.push(wm);
        wait_until("the window manager", Duration::from_secs(10), || self.xprop_root("_NET_SUPPORTING_WM_CHECK").contains("window id"));
    }

    /// `xprop -root NAME` on the virtual display.
    pub fn xprop_root(&self, name: &str) -> String {
        let out = Command::new("xprop").args(["-root", name]).env("DISPLAY", self.display.as_deref().expect("a display")).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The window the window manager says is active (`_NET_ACTIVE_WINDOW`), if any.
    pub fn active_window(&self) -> Option<u32> {
        let text = self.xprop_root("_NET_ACTIVE_WINDOW");
        let hex = text.split("# ").nth(1)?.trim().split(',').next()?.trim().trim_start_matches("0x").to_string();
        u32::from_str_radix(&hex, 16).ok().filter(|w| *w != 0)
    }

    /// Starts a program on the virtual display in this home's environment; it ends with the
    /// session.
    pub fn spawn_on_display(&mut self, home: &Home, program: &str, args: &[&str]) -> u32 {
        let child = home
            .program(Path::new(program), args)
            .env("DISPLAY", self.display.as_deref().expect("a display"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} starts: {e}"));
        let pid = child.id();
        self.extras.push(child);
        pid
    }

    /// The managed top-level window of a process (`xdotool search --pid`), once it is mapped.
    pub fn window_of(&self, pid: u32) -> u32 {
        let mut window = 0;
        wait_until("the program's window", Duration::from_secs(30), || {
            let clients = self.xprop_root("_NET_CLIENT_LIST");
            let found = self.xdotool(&["search", "--onlyvisible", "--pid", &pid.to_string()]);
            window =
                found.lines().filter_map(|l| l.trim().parse::<u32>().ok()).find(|w| clients.contains(&format!("0x{w:x}"))).unwrap_or(0);
            window != 0
        });
        window
    }

    /// Asks the window titled `title` to close, as a window manager does: a `WM_DELETE_WINDOW`
    /// client message (ICCCM §4.2.8).
    pub fn close_window(&self, title: &str) -> Result<(), String> {
        use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt, EventMask};
        let display = self.display.as_deref().ok_or("no display")?;
        let id = *self.window_ids_titled(title).first().ok_or_else(|| format!("no window {title:?}"))?;
        let (conn, _) = x11rb::connect(Some(display)).map_err(|e| format!("{display}: {e}"))?;
        let (protocols, delete) = (maps::atom(&conn, "WM_PROTOCOLS")?, maps::atom(&conn, "WM_DELETE_WINDOW")?);
        let event = ClientMessageEvent::new(32, id, protocols, [delete, x11rb::CURRENT_TIME, 0, 0, 0]);
        conn.send_event(false, id, EventMask::NO_EVENT, event).map_err(|e| e.to_string())?;
        // A round trip before the connection closes, so that the server has handled the event:
        // a connection closed at once lost it now and then.
        conn.get_input_focus().map_err(|e| e.to_string())?.reply().map_err(|e| e.to_string())?;
        Ok(())
    }

    /// `xdotool ARGS` on the virtual display.
    pub fn xdotool(&self, args: &[&str]) -> String {
        let out = Command::new("xdotool").args(args).env("DISPLAY", self.display.as_deref().expect("a display")).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `dunstctl ARGS` on this session's bus.
    pub fn dunstctl(&self, args: &[&str]) -> String {
        let out = Command::new("dunstctl").args(args).env("DBUS_SESSION_BUS_ADDRESS", &self.address).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A private bus with no notification server on it yet (a headless machine, a desktop
    /// still starting); [`Self::start_recorder`] brings one later.
    pub fn start_without_server() -> DesktopSession {
        Self::start_bus(false)
    }

    /// A private bus and a virtual display with no notification server and no tray host: a
    /// test starts a real server of its own on them.
    pub fn start_bare_with_display() -> DesktopSession {
        Self::start_bus(false).with_display()
    }

    /// Keeps `child` (a server a test started on this session) until the session ends.
    pub fn keep(&mut self, child: Child) {
        self.extras.push(child);
    }

    /// Starts the recording notification server on this bus. With `body_markup` it advertises
    /// the `body-markup` capability, as GNOME Shell, KDE and dunst do.
    pub fn start_recorder(&mut self, body_markup: bool) {
        self.start_recorder_with(if body_markup { &["--body-markup"] } else { &[] });
    }

    /// A private bus with the recorder started with `args` (notification-recorder.py's usage:
    /// `--tagless`, `--notify-delay-ms N`, `--body-markup`).
    pub fn start_with_recorder(args: &[&str]) -> DesktopSession {
        let mut session = Self::start_bus(false);
        session.start_recorder_with(args);
        session
    }

    fn start_recorder_with(&mut self, args: &[&str]) {
        assert!(self.recorder.is_none(), "one recorder a session");
        let log = self.dir.path().join("notifications.jsonl");
        let mut command = Command::new("/usr/bin/python3");
        command.arg(support_file("notification-recorder.py")).arg(&log).args(args);
        let child = command
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the notification recorder starts (python3-dbus, python3-gi)");
        self.recorder = Some(child);
        wait_until("the notification server on the bus", Duration::from_secs(10), || self.events().iter().any(|e| e["event"] == "ready"));
    }

    /// A private bus with no notification server, which the normal user `user` may join too:
    /// a program that refuses root (GNOME Shell) serves on it while the daemon runs as root.
    pub fn start_without_server_open_to(user: &str) -> DesktopSession {
        Self::start_bus_with(false, Some(user))
    }

    fn start_bus(recorder: bool) -> DesktopSession {
        Self::start_bus_with(recorder, None)
    }

    fn start_bus_with(recorder: bool, open_to: Option<&str>) -> DesktopSession {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("bus");
        let address = format!("unix:path={}", socket.display());
        // A session bus that starts nothing by activation: what a test has on its bus is what it
        // started (a machine's service files would start a keyring or dunst behind its back).
        let config = dir.path().join("bus.conf");
        let mut text = BUS_CONFIG.to_string();
        if let Some(user) = open_to {
            // The bus admits only its own user unless told; the folder is passable, not listable.
            let policy = "<policy context=\"default\">";
            assert!(text.contains(policy), "the bus config has a default policy");
            text = text.replace(policy, &format!("<policy context=\"default\">\n    <allow user=\"{user}\"/>"));
            std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o711)).unwrap();
        }
        std::fs::write(&config, text).unwrap();
        let bus = Command::new("dbus-daemon")
            .args(["--nofork", "--nopidfile", &format!("--address={address}")])
            .arg(format!("--config-file={}", config.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon starts (package dbus)");
        wait_until("the private bus", Duration::from_secs(10), || socket.exists());
        let log = dir.path().join("notifications.jsonl");
        std::fs::write(&log, "").unwrap();
        let mut session = DesktopSession { dir, address, bus, recorder: None, extras: Vec::new(), tray_host: None, display: None };
        if recorder {
            session.start_recorder(false);
        }
        session
    }

    /// Everything the notification server recorded, in order.
    pub fn events(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.dir.path().join("notifications.jsonl")).unwrap_or_default();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// The `Notify` calls.
    pub fn notifications(&self) -> Vec<Value> {
        self.events().into_iter().filter(|e| e["event"] == "notify").collect()
    }

    /// Clicks a banner's body, as a person would (the server emits `ActionInvoked(id, "default")`).
    pub fn click(&self, id: u64) {
        self.invoke("org.cmuxtray.Recorder.Invoke", id, &[]);
    }

    /// A click as a Wayland desktop's server tells it: `ActivationToken(id, token)`, then the
    /// action (notification spec 1.2).
    pub fn click_with_token(&self, id: u64, token: &str) {
        self.invoke("org.cmuxtray.Recorder.InvokeWithToken", id, &[&format!("string:{token}")]);
    }

    fn invoke(&self, method: &str, id: u64, more: &[&str]) {
        let status = Command::new("dbus-send")
            .args([
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.Notifications",
                "/org/freedesktop/Notifications",
                method,
                &format!("uint32:{id}"),
                "string:default",
            ])
            .args(more)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for DesktopSession {
    fn drop(&mut self) {
        for c in self.extras.iter_mut().chain(self.tray_host.as_mut()) {
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Some(r) = &mut self.recorder {
            let _ = r.kill();
            let _ = r.wait();
        }
        let _ = self.bus.kill();
        let _ = self.bus.wait();
    }
}

/// The tests' session bus: the session bus's rules, and no service directories.
pub const BUS_CONFIG: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#;

/// A sandboxed home: its own XDG directories, the cloud pointed at a simulator.
pub struct Home {
    pub dir: tempfile::TempDir,
    pub env: Vec<(String, String)>,
}

/// The app's programs a test may leave running in its home: a tray that a windows process
/// started (a WebDriver session starts the windows) outlives the session otherwise.
impl Drop for Home {
    fn drop(&mut self) {
        for program in ["cmux-tray-app", "cmux-tray-windows"] {
            for pid in self.pids_of(program) {
                let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            }
        }
    }
}

impl Home {
    /// The delivery `status` gives the notice titled `title`, once it is decided (not "untold").
    pub fn delivery_of(&self, title: &str) -> String {
        let mut delivery = String::new();
        wait_until(&format!("{title:?} decided"), Duration::from_secs(30), || {
            let notices = self.status()["notices"].as_array().cloned().unwrap_or_default();
            delivery = notices.iter().find(|n| n["title"] == title).and_then(|n| n["delivery"].as_str()).unwrap_or("").to_string();
            !delivery.is_empty() && delivery != "untold"
        });
        delivery
    }

    pub fn new(origin: &str, bus_address: &str) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let p = |sub: &str| {
            let path = dir.path().join(sub);
            std::fs::create_dir_all(&path).unwrap();
            #[cfg(unix)]
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
            path.display().to_string()
        };
        let env = vec![
            ("HOME".into(), p("home")),
            ("XDG_CONFIG_HOME".into(), p("config")),
            ("XDG_DATA_HOME".into(), p("data")),
            ("XDG_STATE_HOME".into(), p("state")),
            ("XDG_CACHE_HOME".into(), p("cache")),
            ("XDG_RUNTIME_DIR".into(), p("run")),
            // tmux keeps its servers' sockets in its own folder of this (`tmux-UID/`), where the
            // engine looks for them.
            ("TMUX_TMPDIR".into(), p("tmux")),
            ("DBUS_SESSION_BUS_ADDRESS".into(), bus_address.into()),
            ("CMUX_TRAY_API_URL".into(), origin.into()),
            ("CMUX_TRAY_AUTH_URL".into(), origin.into()),
            ("CMUX_TRAY_LOG".into(), "info,cmux_tray_engine::service=debug,cmux_tray_engine::terminal=debug".into()),
            // A desktop session always has a UTF-8 locale; without any, the webview window never
            // appears (seen under Xvfb with WebKitGTK 2.50).
            ("LANG".into(), "C.UTF-8".into()),
            // xdg-open's generic mode looks up scheme handlers only when a display is named;
            // nothing here draws on it.
            ("DISPLAY".into(), ":99".into()),
        ];
        Home { dir, env }
    }

    pub fn database(&self) -> PathBuf {
        self.dir.path().join("data/cmux-tray/state.sqlite3")
    }

    /// The pids of `program` (a binary's file name) running in this home, not another test's:
    /// tests run side by side.
    pub fn pids_of(&self, program: &str) -> Vec<u32> {
        let data = format!("XDG_DATA_HOME={}", self.dir.path().join("data").display());
        let suffix = format!("/{program}");
        let ours = |pid: &u32| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let first = cmdline.split(|b| *b == 0).next().unwrap_or_default();
            first.ends_with(suffix.as_bytes()) && environ.split(|b| *b == 0).any(|v| v == data.as_bytes())
        };
        let pids = std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok());
        pids.filter(ours).collect()
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("run/cmux-tray/cmux.sock")
    }

    pub fn config_file(&self) -> PathBuf {
        self.dir.path().join("config/cmux-tray/config.toml")
    }

    /// Registers a recorder as the handler of `cmux://` links (the way a desktop would register
    /// cmux), and returns the file each opened link is written to.
    pub fn register_cmux_handler(&self) -> PathBuf {
        let (script, opened) = self.recorder("cmux-link");
        self.register_cmux_script(&script);
        opened
    }

    /// Registers a handler of `cmux://` links that writes its whole environment (`env -0`) to
    /// the returned file: what a program the app starts inherits.
    pub fn register_cmux_env_recorder(&self) -> PathBuf {
        self.register_cmux_script_named("cmux-env-recorder", "env -0 > '{opened}'\n")
    }

    /// Registers a handler of `cmux://` links that runs `body` (a shell script; `{opened}` in it
    /// is replaced by the returned file's path). Returns that file.
    pub fn register_cmux_script_named(&self, name: &str, body: &str) -> PathBuf {
        let root = self.dir.path();
        let (script, opened) = (root.join(format!("{name}.sh")), root.join(format!("{name}-opened.txt")));
        std::fs::write(&script, format!("#!/bin/sh\n{}", body.replace("{opened}", &opened.display().to_string()))).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        self.register_cmux_script(&script);
        opened
    }

    fn register_cmux_script(&self, script: &Path) {
        let root = self.dir.path();
        let apps = root.join("data/applications");
        std::fs::create_dir_all(&apps).unwrap();
        std::fs::write(
            apps.join("cmux-link-recorder.desktop"),
            format!(
                "[Desktop Entry]\nType=Application\nName=cmux link recorder\nExec={} %u\nMimeType=x-scheme-handler/cmux;\nNoDisplay=true\n",
                script.display()
            ),
        )
        .unwrap();
        let mut mime = self.program(Path::new("xdg-mime"), &["default", "cmux-link-recorder.desktop", "x-scheme-handler/cmux"]);
        assert!(mime.status().expect("xdg-mime runs (package xdg-utils)").success());
    }

    /// A browser for this home: xdg-open hands http(s) pages to `$BROWSER`. Returns the value
    /// for `BROWSER` and the file each opened page is written to.
    pub fn browser(&self) -> (PathBuf, PathBuf) {
        self.recorder("browser")
    }

    /// A script that appends its first argument to a file; returns both.
    fn recorder(&self, name: &str) -> (PathBuf, PathBuf) {
        let root = self.dir.path();
        let (script, opened) = (root.join(format!("{name}-recorder.sh")), root.join(format!("{name}-opened.txt")));
        std::fs::write(&script, format!("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n", opened.display())).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        (script, opened)
    }

    /// A `cmux-tray` command in this home.
    pub fn command(&self, args: &[&str]) -> Command {
        self.program(&bin("cmux-tray"), args)
    }

    /// Any program in this home's environment alone (nothing of the test runner's but PATH).
    pub fn program(&self, program: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(program);
        c.args(args).env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// `program` with `args`, a Wayland client of the compositor whose runtime folder and display
    /// these are, in this home's environment. The runtime folder is the compositor's, not the
    /// home's, so the shell is told where the socket is, as `cmux-tray env` tells a person's profile.
    pub fn wayland_client(&self, program: &str, args: &[&str], runtime: &Path, display: &str) -> Child {
        self.program(Path::new(program), args)
            .env("XDG_RUNTIME_DIR", runtime)
            .env("WAYLAND_DISPLAY", display)
            .env_remove("DISPLAY")
            .env("CMUX_SOCKET_PATH", self.socket())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} starts: {e}"))
    }

    /// `cmux-tray-app` on `display`, its stdout in `log` and its stderr beside it (`log.err`).
    pub fn app_command(&self, display: &str, log: &Path) -> Command {
        let mut c = self.program(&bin("cmux-tray-app"), &[]);
        c.env("DISPLAY", display)
            .stdout(std::fs::File::create(log).unwrap())
            .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
            .stdin(Stdio::null());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).stdin(Stdio::null()).output().expect("cmux-tray runs")
    }

    /// `status --json`, parsed.
    pub fn status(&self) -> Value {
        let out = self.run(&["status", "--json"]);
        assert!(out.status.success(), "status failed: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("status prints JSON")
    }

    /// Starts `cmux-tray daemon` with this token, its log in the home's folder.
    pub fn daemon(&self, token: &str) -> Daemon {
        self.daemon_with(token, &[])
    }

    /// `daemon`, with more environment.
    pub fn daemon_with(&self, token: &str, env: &[(&str, &str)]) -> Daemon {
        self.daemon_from(self.command(&["daemon"]), token, env)
    }

    /// `daemon` as `command` starts it (say, inside another program: `unshare`, `faketime`).
    pub fn daemon_from(&self, mut command: Command, token: &str, env: &[(&str, &str)]) -> Daemon {
        let log_path = self.dir.path().join("daemon.log");
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&log_path).unwrap();
        let child = command
            .env("CMUX_TRAY_TOKEN", token)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("the daemon starts");
        let daemon = Daemon { child: Some(child), log: log_path };
        let socket = self.socket();
        wait_until("the daemon's socket", Duration::from_secs(20), || std::os::unix::net::UnixStream::connect(&socket).is_ok());
        daemon
    }
}

/// A running `cmux-tray daemon`.
pub struct Daemon {
    child: Option<Child>,
    pub log: PathBuf,
}

impl Daemon {
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// SIGKILL: a crash, no chance to clean up.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM, and the exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        let mut c = self.child.take().expect("running");
        signal(c.id(), "TERM");
        c.wait().unwrap()
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!("--- daemon log ({}) ---\n{}", self.log.display(), self.log_text());
        }
    }
}

/// A release feed on loopback: `{"version": …}` to every request, as docs/configuration.md
/// ("Updates") describes it.
pub fn serve_release_feed(version: &str) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = asked.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/cmux-tray.json", listener.local_addr().unwrap());
    let body = serde_json::json!({ "version": version }).to_string();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    (url, asked)
}

pub fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill").args([&format!("-{sig}"), &pid.to_string()]).status().unwrap().success();
    assert!(ok, "kill -{sig} {pid}");
}

/// The cloud simulator, served from this test process on its own threads.
pub struct Cloud {
    pub rt: tokio::runtime::Runtime,
    pub running: cmux_cloud_sim::RunningSim,
}

impl Cloud {
    pub fn start() -> Cloud {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let running = rt.block_on(cmux_cloud_sim::start()).expect("the simulator starts");
        Cloud { rt, running }
    }

    pub fn sim(&self) -> &cmux_cloud_sim::Sim {
        &self.running.sim
    }

    pub fn origin(&self) -> String {
        self.running.origin()
    }
}
