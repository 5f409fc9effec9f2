//! A small WebDriver client for the app's windows: tauri-driver in front of WebKitWebDriver,
//! spoken to over loopback HTTP with curl (a few calls; no client library needed for that).

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::{Home, bin, wait_until};

pub struct WebDriver {
    port: u16,
    driver: Child,
    pub session: String,
}

impl WebDriver {
    /// Starts tauri-driver and a session on the app with `args`, in `home`'s environment.
    pub fn start(home: &Home, display: &str, args: &[&str], extra_env: &[(&str, &str)]) -> WebDriver {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let native = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let (port_arg, native_arg) = (port.to_string(), native.to_string());
        let mut cmd = home.program(
            std::path::Path::new("tauri-driver"),
            &["--port", &port_arg, "--native-port", &native_arg, "--native-driver", "/usr/bin/WebKitWebDriver"],
        );
        cmd.env("DISPLAY", display); // the virtual display, over the home's placeholder
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        let driver = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("tauri-driver runs (cargo install tauri-driver)");
        wait_until("tauri-driver listening", Duration::from_secs(20), || TcpStream::connect(("127.0.0.1", port)).is_ok());
        let mut wd = WebDriver { port, driver, session: String::new() };
        let caps = json!({"capabilities": {"alwaysMatch": {"tauri:options": {
            "application": bin("cmux-tray-windows").display().to_string(),
            "args": args,
        }}}});
        // tauri-driver listens before WebKitWebDriver behind it does: a session asked too early
        // gets no answer, so it is asked again (seen under load, side by side with other tests).
        let mut created = Value::Null;
        wait_until("a WebDriver session", Duration::from_secs(30), || {
            created = wd.call("POST", "/session", Some(caps.clone()));
            created["value"]["sessionId"].is_string()
        });
        wd.session = created["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no session: {created}")).to_string();
        wd
    }

    /// One WebDriver command; returns the JSON answer (curl speaks the HTTP).
    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("http://127.0.0.1:{}{path}", self.port);
        let mut cmd = Command::new("curl");
        cmd.args(["-s", "-m", "60", "-X", method, "-H", "Content-Type: application/json", &url]);
        // The body goes through stdin: a script (axe-core is 600 KB) is longer than an argument may be.
        if body.is_some() {
            cmd.args(["--data-binary", "@-"]).stdin(Stdio::piped());
        }
        cmd.stdout(Stdio::piped());
        let mut child = cmd.spawn().expect("curl runs (package curl)");
        if let Some(body) = body {
            use std::io::Write;
            let _ = child.stdin.take().expect("piped").write_all(body.to_string().as_bytes());
        }
        let out = child.wait_with_output().expect("curl answers");
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    }

    pub fn session_path(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.session)
    }

    /// The element matching a CSS selector, waiting for it to appear.
    pub fn find(&self, css: &str) -> String {
        let mut id = String::new();
        wait_until(&format!("element {css}"), Duration::from_secs(30), || {
            let r = self.call("POST", &self.session_path("/element"), Some(json!({"using": "css selector", "value": css})));
            match r["value"].as_object().and_then(|o| o.values().next()).and_then(Value::as_str) {
                Some(e) if r["value"].get("error").is_none() => {
                    id = e.to_string();
                    true
                }
                _ => false,
            }
        });
        id
    }

    /// Whether an element matches a CSS selector now (no waiting).
    pub fn exists(&self, css: &str) -> bool {
        let r = self.call("POST", &self.session_path("/element"), Some(json!({"using": "css selector", "value": css})));
        r["value"].get("error").is_none() && r["value"].as_object().is_some_and(|o| !o.is_empty())
    }

    /// Clicks what matches `css` until `shown` matches too. A page that redraws can replace the
    /// element between finding and clicking it (a stale reference, which no person's click meets).
    pub fn click_until_shown(&self, css: &str, shown: &str) {
        wait_until(&format!("{shown} after a click on {css}"), Duration::from_secs(30), || {
            let element = self.find(css);
            self.click(&element);
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_secs(2) {
                if self.exists(shown) {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            false
        });
    }

    pub fn text(&self, element: &str) -> String {
        self.call("GET", &self.session_path(&format!("/element/{element}/text")), None)["value"].as_str().unwrap_or("").to_string()
    }

    pub fn property(&self, element: &str, name: &str) -> Value {
        self.call("GET", &self.session_path(&format!("/element/{element}/property/{name}")), None)["value"].clone()
    }

    pub fn type_into(&self, element: &str, text: &str) {
        self.call("POST", &self.session_path(&format!("/element/{element}/clear")), Some(json!({})));
        self.call("POST", &self.session_path(&format!("/element/{element}/value")), Some(json!({"text": text})));
    }

    pub fn click(&self, element: &str) {
        self.call("POST", &self.session_path(&format!("/element/{element}/click")), Some(json!({})));
    }

    /// Runs `script` in the page as an async WebDriver script: it calls `done(value)` (its last
    /// argument) when finished; returns that value.
    pub fn run_async(&self, script: &str) -> Value {
        let body = json!({"script": format!("const done = arguments[arguments.length - 1];\n{script}"), "args": []});
        self.call("POST", &self.session_path("/execute/async"), Some(body))["value"].clone()
    }

    /// Runs `script` in the page and returns what it returns (`arguments` are `args`).
    pub fn run(&self, script: &str, args: Value) -> Value {
        self.call("POST", &self.session_path("/execute/sync"), Some(json!({"script": script, "args": args})))["value"].clone()
    }

    /// Types `text` into an element without clearing it first (WebDriver key codes allowed, e.g.
    /// `\u{E004}` for Tab).
    pub fn keys(&self, element: &str, text: &str) {
        self.call("POST", &self.session_path(&format!("/element/{element}/value")), Some(json!({"text": text})));
    }

    /// Keys pressed on whatever has the focus, as a keyboard does: each `(key, shift)` is pressed
    /// and released, with Shift held around it when asked (WebDriver key codes: `\u{E004}` Tab,
    /// `\u{E007}` Enter).
    pub fn press(&self, keys: &[(&str, bool)]) {
        const SHIFT: &str = "\u{E008}";
        let mut actions = Vec::new();
        for (key, shift) in keys {
            if *shift {
                actions.push(json!({"type": "keyDown", "value": SHIFT}));
            }
            actions.push(json!({"type": "keyDown", "value": key}));
            actions.push(json!({"type": "keyUp", "value": key}));
            if *shift {
                actions.push(json!({"type": "keyUp", "value": SHIFT}));
            }
        }
        let body = json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]});
        self.call("POST", &self.session_path("/actions"), Some(body));
    }

    /// Takes the driver to the window titled `title`, waiting for it to exist.
    pub fn switch_to(&self, title: &str) {
        wait_until(&format!("the window {title:?}"), Duration::from_secs(30), || {
            self.handles().into_iter().any(|h| {
                self.call("POST", &self.session_path("/window"), Some(json!({"handle": h})));
                self.call("GET", &self.session_path("/title"), None)["value"] == title
            })
        });
    }

    /// The current window's page as a PNG, written to `test-artifacts/<name>.png` for people to
    /// look at (not an assertion).
    pub fn screenshot(&self, name: &str) {
        if !crate::screenshots_wanted() {
            return;
        }
        use base64::Engine as _;
        // What was drawn last: two frames let the page paint what its script just built.
        self.run_async("requestAnimationFrame(() => requestAnimationFrame(() => done(1)));");
        let shot = self.call("GET", &self.session_path("/screenshot"), None);
        let Some(data) = shot["value"].as_str() else { return };
        let Ok(png) = base64::engine::general_purpose::STANDARD.decode(data) else { return };
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../test-artifacts");
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join(format!("{name}.png")), png);
    }

    pub fn handles(&self) -> Vec<String> {
        let r = self.call("GET", &self.session_path("/window/handles"), None);
        r["value"].as_array().map(|a| a.iter().filter_map(|h| h.as_str().map(String::from)).collect()).unwrap_or_default()
    }
}

impl Drop for WebDriver {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            self.call("DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
