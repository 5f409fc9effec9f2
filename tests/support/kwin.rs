//! A headless KWin (KDE Plasma's compositor on Wayland, `kwin_wayland --virtual`) on the test's
//! session bus, with kitty windows in it. What is active is read back from KWin itself: a script
//! of the test's prints it, and KWin writes a script's `print` to its log (`js: …`), a way apart
//! from the engine's (`callDBus` back to the engine).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::{DesktopSession, Home, wait_until};

const LIMIT: Duration = Duration::from_secs(30);

/// The Wayland display KWin makes in its runtime folder.
pub const DISPLAY: &str = "wayland-kw";

pub struct Kwin {
    pub dir: tempfile::TempDir,
    address: String,
    kwin: Child,
    terminals: Vec<Child>,
    asked: AtomicU32,
}

impl Kwin {
    /// KWin on `desktop`'s bus, its Wayland display in a folder of its own.
    pub fn start(desktop: &DesktopSession) -> Kwin {
        let dir = tempfile::Builder::new().prefix("kwin-").tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        // Debian's kwin_wayland carries a file capability (CAP_SYS_NICE) that a container without
        // it in its bounding set cannot grant, so its exec fails: a copy carries none.
        let program = dir.path().join("kwin_wayland");
        std::fs::copy("/usr/bin/kwin_wayland", &program).expect("kwin_wayland is installed (package kwin-wayland; scripts/test-kwin)");
        let kwin = Command::new(&program)
            .args(["--virtual", "--no-lockscreen", "--socket", DISPLAY, "--width", "1280", "--height", "800"])
            .current_dir(dir.path())
            .env("XDG_RUNTIME_DIR", dir.path())
            .env("DBUS_SESSION_BUS_ADDRESS", &desktop.address)
            .env("QT_QPA_PLATFORM", "wayland")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("kwin.log")).unwrap())
            .spawn()
            .expect("kwin_wayland starts");
        let kwin = Kwin { dir, address: desktop.address.clone(), kwin, terminals: Vec::new(), asked: AtomicU32::new(0) };
        wait_until("KWin on the bus with its Wayland display", LIMIT, || {
            desktop.name_has_owner("org.kde.KWin") && kwin.dir.path().join(DISPLAY).exists()
        });
        kwin
    }

    /// What KWin said on its standard error.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("kwin.log")).unwrap_or_default()
    }

    /// A terminal `program` with `args` in KWin (a Wayland client), in the home's environment;
    /// its pid, once KWin shows its window.
    pub fn terminal(&mut self, home: &Home, program: &str, args: &[&str]) -> u32 {
        let child = home.wayland_client(program, args, self.dir.path(), DISPLAY);
        let pid = child.id();
        self.terminals.push(child);
        wait_until(&format!("{program}'s window in KWin"), LIMIT, || self.windows().iter().any(|(p, _)| *p == pid));
        pid
    }

    /// Runs `body` as a KWin script and returns what it printed after `said:`.
    fn script(&self, body: &str) -> String {
        let n = self.asked.fetch_add(1, Ordering::SeqCst);
        let mark = format!("cmux-test-{n}:");
        let file: PathBuf = self.dir.path().join(format!("test-{n}.js"));
        std::fs::write(&file, body.replace("said:", &mark)).unwrap();
        let name = format!("cmux-test-{n}");
        let loaded = self.call(
            "/Scripting",
            "org.kde.kwin.Scripting.loadScript",
            &[&format!("string:{}", file.display()), &format!("string:{name}")],
        );
        let id =
            loaded.split_whitespace().skip_while(|w| *w != "int32").nth(1).expect("loadScript answers the script's number").to_string();
        self.call(&format!("/{id}"), "org.kde.kwin.Script.run", &[]);
        let mut said = None;
        wait_until("KWin runs the test's script", LIMIT, || {
            said = self.log().lines().find_map(|l| l.split_once(&mark).map(|(_, rest)| rest.to_string()));
            said.is_some()
        });
        self.call("/Scripting", "org.kde.kwin.Scripting.unloadScript", &[&format!("string:{name}")]);
        said.unwrap()
    }

    fn call(&self, path: &str, method: &str, args: &[&str]) -> String {
        let out = Command::new("dbus-send")
            .args(["--session", "--print-reply", "--dest=org.kde.KWin", path, method])
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .expect("dbus-send runs (package dbus)");
        assert!(out.status.success(), "{method}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Every window KWin shows: (its pid, whether it is the active one).
    pub fn windows(&self) -> Vec<(u32, bool)> {
        let said = self.script(
            "var l = workspace.clientList(); var a = workspace.activeClient; var o = [];\n\
             for (var i = 0; i < l.length; i++) { o.push([l[i].pid, l[i] === a]); }\n\
             print('said:' + JSON.stringify(o));\n",
        );
        serde_json::from_str(&said).unwrap_or_else(|e| panic!("the test's script printed {said:?}: {e}"))
    }

    pub fn focused(&self) -> Option<u32> {
        self.windows().into_iter().find(|(_, f)| *f).map(|(p, _)| p)
    }

    /// Makes the window of `pid` the active one, as a person's click on it would.
    pub fn focus(&self, pid: u32) {
        self.script(&format!(
            "var l = workspace.clientList(); for (var i = 0; i < l.length; i++) {{ if (l[i].pid === {pid}) workspace.activeClient = l[i]; }}\n\
             print('said:done');\n"
        ));
        wait_until("the window active", LIMIT, || self.focused() == Some(pid));
    }
}

impl Drop for Kwin {
    fn drop(&mut self) {
        for c in &mut self.terminals {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = self.kwin.kill();
        let _ = self.kwin.wait();
    }
}
