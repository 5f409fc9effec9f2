//! The second security read, through the real daemon: what a socket client (an agent, perhaps in
//! a sandbox or a container that runs as the person) can make the engine do.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use cmux_tray_e2e::{Cloud, DesktopSession, Home, NOTHING_MORE, wait_until};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);

/// Sends one request line over the daemon's socket and returns its reply.
fn send(home: &Home, line: &Value) -> String {
    let mut stream = UnixStream::connect(home.socket()).expect("the daemon's socket");
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    stream.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut reply = String::new();
    BufReader::new(stream).read_line(&mut reply).unwrap();
    reply
}

/// A server an agent started to pass for a terminal's: it never answers, and counts the
/// connections that spoke to it (a terminal's tool speaks first: tmux's client says who it is,
/// `kitty @` sends its command), each a time that tool would have obeyed it. A connection that
/// says nothing (the engine asking the kernel who serves the socket) is no such time.
struct FakeServer {
    heard: Arc<AtomicUsize>,
    name: String,
}

impl FakeServer {
    fn at(path: &Path) -> FakeServer {
        FakeServer::serving(UnixListener::bind(path).unwrap(), path.display().to_string())
    }

    fn abstract_named(name: &str) -> FakeServer {
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        FakeServer::serving(UnixListener::bind_addr(&addr).unwrap(), format!("@{name}"))
    }

    fn serving(listener: UnixListener, name: String) -> FakeServer {
        let heard = Arc::new(AtomicUsize::new(0));
        let h = heard.clone();
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let h = h.clone();
                std::thread::spawn(move || {
                    use std::io::Read;
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
                    if conn.read(&mut [0u8; 64]).unwrap_or(0) > 0 {
                        h.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        FakeServer { heard, name }
    }

    fn heard(&self) -> usize {
        self.heard.load(Ordering::Relaxed)
    }
}

fn uid_of(path: &Path) -> u32 {
    std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(path).unwrap())
}

/// The places an agent can name, each a fake server of its own; a banner for each is posted and
/// clicked. Before the fix the engine ran `tmux -S …`, `kitty @ --to …` against every one of them
/// (each was "a socket of the person's"), and a tmux client does what its server says.
#[test]
fn fake_terminal_servers_an_agent_names_are_never_spoken_to() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    let uid = uid_of(home.dir.path());
    // The person's own tmux folder, as tmux makes it (0700): a sandbox that has it bound in can
    // put a socket there.
    let tmux_folder: PathBuf = home.dir.path().join(format!("tmux/tmux-{uid}"));
    std::fs::create_dir_all(&tmux_folder).unwrap();
    std::fs::set_permissions(&tmux_folder, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();

    let outside = FakeServer::at(&elsewhere.path().join("tmux-like.sock"));
    let inside = FakeServer::at(&tmux_folder.join("evil"));
    let linked_to = FakeServer::at(&elsewhere.path().join("target.sock"));
    std::os::unix::fs::symlink(elsewhere.path().join("target.sock"), tmux_folder.join("default")).unwrap();
    let kitty = FakeServer::abstract_named(&format!("cmux-tray-test-kitty-{}", std::process::id()));

    let places = [
        ("outside tmux's folder", json!({"tmux": {"socket": elsewhere.path().join("tmux-like.sock"), "pane": "%1"}})),
        ("in tmux's folder, not tmux", json!({"tmux": {"socket": tmux_folder.join("evil"), "pane": "%1"}})),
        ("a link in tmux's folder", json!({"tmux": {"socket": tmux_folder.join("default"), "pane": "%1"}})),
        ("kitty's abstract name", json!({"kitty": {"socket": format!("unix:{}", kitty.name), "window": 1}})),
    ];
    for (i, (what, place)) in places.iter().enumerate() {
        let title = format!("Fake {i}: {what}");
        let reply = send(&home, &json!({"id": i, "method": "notification.create", "params": {"title": title, "place": place}}));
        assert!(reply.contains("\"ok\":true"), "{what}: {reply}");
        let mut id = 0;
        wait_until(&format!("the banner of {what:?}"), LIMIT, || {
            id = desktop.notifications().iter().find(|n| n["summary"] == title).and_then(|n| n["id"].as_u64()).unwrap_or(0);
            id != 0
        });
        desktop.click(id);
    }
    std::thread::sleep(NOTHING_MORE);
    for fake in [&outside, &inside, &linked_to, &kitty] {
        assert_eq!(fake.heard(), 0, "the engine spoke to the fake server {}", fake.name);
    }
    // Each click says why it went no further.
    let notices = home.status()["notices"].as_array().cloned().unwrap_or_default();
    let notes: Vec<&str> = notices.iter().filter_map(|n| n["revealNote"].as_str()).collect();
    assert!(notes.iter().any(|n| n.contains("not in the person's own tmux folder")), "{notes:#?}");
    assert!(notes.iter().any(|n| n.contains("not tmux") || n.contains("served by")), "{notes:#?}");
    assert!(notes.iter().any(|n| n.contains("a link, or someone else's")), "{notes:#?}");
}

/// A sandbox as an agent's (Codex's on Linux): Landlock, so `NoNewPrivs` set, sharing the
/// engine's pid namespace. Inside it the agent may read the system's folders and write only its
/// own folder, tmux's folder (a socket) and the terminals (`/dev`).
fn under_landlock(command: &mut std::process::Command, writable: &[&Path]) {
    use landlock::{ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, path_beneath_rules};
    use std::os::unix::process::CommandExt;
    let abi = ABI::V5;
    let ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(["/usr", "/bin", "/lib", "/lib64", "/etc", "/proc"], AccessFs::from_read(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules(writable.iter().copied().chain([Path::new("/dev")]), AccessFs::from_all(abi))))
        .expect("a Landlock ruleset");
    let mut ruleset = Some(ruleset);
    // SAFETY: two syscalls (prctl, landlock_restrict_self) in the child on a ruleset made before.
    unsafe {
        command.pre_exec(move || match ruleset.take() {
            Some(r) => r.restrict_self().map(|_| ()).map_err(std::io::Error::other),
            None => Ok(()),
        });
    }
}

/// The first security read's fix stopped fake servers; a genuine tmux is another matter. An
/// agent in a sandbox (Landlock, as Codex's, so `NoNewPrivs`; the engine's pid namespace) starts
/// the real `tmux` on a socket in the person's own tmux folder, with a config of its own whose
/// hooks, on what the focus check and a click ask, save and load buffers: files tmux opens in its
/// *client*, the engine's own. A notice names that pane; its focus is asked, its banner clicked.
/// No file outside the agent's own is written or read, and the card says why the pane is refused.
#[test]
fn a_genuine_tmux_an_agent_started_in_a_sandbox_with_hostile_hooks_is_refused_and_no_file_is_touched() {
    let desktop = DesktopSession::start();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    let uid = uid_of(home.dir.path());
    let tmux_folder: PathBuf = home.dir.path().join(format!("tmux/tmux-{uid}"));
    std::fs::create_dir_all(&tmux_folder).unwrap();
    std::fs::set_permissions(&tmux_folder, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let socket = tmux_folder.join("agent");
    // The person's files, which the sandbox does not let the agent reach.
    let person = tempfile::tempdir().unwrap();
    let secret = person.path().join("secret");
    std::fs::write(&secret, "the person's secret").unwrap();
    let agent = tempfile::tempdir().unwrap();
    let config = agent.path().join("evil.conf");
    let steal = |on: &str| {
        let written = person.path().join(format!("written-on-{on}"));
        format!(
            "set-hook -g after-{on} \"set-buffer -b planted pwned ; save-buffer -b planted {} ; load-buffer -b stolen-on-{on} {}\"\n",
            written.display(),
            secret.display()
        )
    };
    let hooks: String =
        ["list-clients", "list-panes", "select-window", "select-pane", "switch-client"].iter().map(|on| steal(on)).collect();
    // What the server itself tries, inside the sandbox: the sandbox holds.
    let itself = person.path().join("written-by-the-server-itself");
    std::fs::write(&config, format!("{hooks}run-shell \"echo pwned > {}\"\n", itself.display())).unwrap();

    let tmux = |args: &[&str]| {
        let mut all = vec!["-S", socket.to_str().unwrap()];
        all.extend_from_slice(args);
        home.program(Path::new("/usr/bin/tmux"), &all)
    };
    let mut start = tmux(&["-f", config.to_str().unwrap(), "new-session", "-d", "-s", "work"]);
    under_landlock(&mut start, &[agent.path(), &tmux_folder]);
    let out = start.output().expect("tmux runs (package tmux)");
    assert!(out.status.success(), "tmux new-session in the sandbox: {}", String::from_utf8_lossy(&out.stderr));
    let pane = String::from_utf8(tmux(&["display", "-p", "-t", "work", "#{pane_id}"]).output().unwrap().stdout).unwrap();
    let pane = pane.trim();
    assert!(pane.starts_with('%'), "{pane:?}");
    let sandboxed = || -> String {
        let pid = String::from_utf8(tmux(&["display", "-p", "#{pid}"]).output().unwrap().stdout).unwrap();
        std::fs::read_to_string(format!("/proc/{}/status", pid.trim())).unwrap()
    };
    assert!(sandboxed().contains("NoNewPrivs:\t1"), "the server runs in the test's sandbox");

    let title = "From the sandboxed tmux";
    let place = json!({"tmux": {"socket": socket, "pane": pane}});
    let reply = send(&home, &json!({"id": 1, "method": "notification.create", "params": {"title": title, "place": place}}));
    assert!(reply.contains("\"ok\":true"), "{reply}");
    let mut id = 0;
    wait_until("its banner (after the focus check)", LIMIT, || {
        id = desktop.notifications().iter().find(|n| n["summary"] == title).and_then(|n| n["id"].as_u64()).unwrap_or(0);
        id != 0
    });
    desktop.click(id);
    // The click ends either way: refused with a note, or revealed and read.
    let mut notice = Value::Null;
    wait_until("the click's end", LIMIT, || {
        let notices = home.status()["notices"].as_array().cloned().unwrap_or_default();
        notice = notices.into_iter().find(|n| n["title"] == title).unwrap_or_default();
        notice["revealNote"].is_string() || notice["readAt"].is_i64()
    });
    std::thread::sleep(NOTHING_MORE);

    let touched: Vec<String> =
        std::fs::read_dir(person.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(touched, ["secret"], "files written in the person's folder");
    let buffers = String::from_utf8(tmux(&["list-buffers", "-F", "#{buffer_name}: #{buffer_sample}"]).output().unwrap().stdout).unwrap();
    assert!(!buffers.contains("the person's secret"), "the agent's server read the person's file: {buffers}");
    // docs/notices.md §4: refused for being more confined than the engine, and the card says so.
    let note = notice["revealNote"].as_str().unwrap_or_default();
    assert!(note.contains("more confined than the engine (NoNewPrivs set)"), "{notice}");
    let _ = tmux(&["kill-server"]).output();
}
