//! Agents on another machine (docs/terminals.md, "Agents on another machine"): Debian's sshd of
//! the test's own on loopback is the remote, with users of its own; `cmux-tray remote setup`
//! puts the client there and `cmux-tray ssh` (the real ssh) forwards the tray's socket. A
//! notice from a tmux pane there reaches the local daemon's banner once, and its click raises
//! the local xterm that runs the ssh and, with the setting on, selects the pane there; the link cut while an agent sends; the socket there is
//! its user's alone.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use cmux_tray_e2e::sshd::{RemoteUser, Sshd};
use cmux_tray_e2e::{Cloud, Daemon, DesktopSession, Home, bin, wait_until};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(30);

/// The notices as `status` lists them, newest first.
fn notices(home: &Home) -> Vec<Value> {
    home.status()["notices"].as_array().cloned().unwrap_or_default()
}

fn titled(home: &Home, title: &str) -> Vec<Value> {
    notices(home).into_iter().filter(|n| n["title"] == title).collect()
}

/// `cmux-tray remote setup` to `user`: the client copied and checked over the real ssh.
fn setup(home: &Home, sshd: &Sshd, user: &RemoteUser) {
    setup_with(home, sshd, user, &[]);
}

/// `remote setup`, with more of its options (`--hook claude`).
fn setup_with(home: &Home, sshd: &Sshd, user: &RemoteUser, more: &[&str]) {
    let mut args = vec!["remote".to_string(), "setup".into()];
    args.extend(more.iter().map(|s| s.to_string()));
    args.extend(sshd.options());
    args.push(user.destination());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = home.run(&args);
    assert!(out.status.success(), "remote setup: {}\n{}", String::from_utf8_lossy(&out.stderr), sshd.log());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("cmux-tray 0.1"),
        "the client ran there: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `cmux-tray ssh [options] user@127.0.0.1 COMMAND…`, in the background, with no terminal.
fn ssh_running(home: &Home, sshd: &Sshd, user: &RemoteUser, command: &[&str]) -> Child {
    let mut args = vec!["ssh".to_string()];
    args.extend(sshd.options());
    args.push(user.destination());
    args.extend(command.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    home.command(&args).stdin(Stdio::null()).stdout(Stdio::null()).spawn().expect("cmux-tray ssh starts")
}

/// The forwarded socket answers for `user` (a `ping` through it reaches the daemon).
fn wait_for_forward(user: &RemoteUser) {
    let ping = format!("printf 'ping\\n' | nc -N -U '{}/.cmux-tray.sock'", user.home.display());
    wait_until("the forward up", LIMIT, || String::from_utf8_lossy(&user.sh(&ping).stdout).contains("PONG"));
}

fn banners(desktop: &DesktopSession, title: &str) -> Vec<Value> {
    desktop.notifications().into_iter().filter(|n| n["summary"] == title).collect()
}

fn activate(desktop: &DesktopSession, window: u32) {
    desktop.xdotool(&["windowactivate", "--sync", &window.to_string()]);
    wait_until("the window active", LIMIT, || desktop.active_window() == Some(window));
}

#[test]
fn a_notice_from_a_remote_tmux_pane_is_one_banner_and_its_click_raises_the_local_xterm_and_selects_the_pane() {
    let mut desktop = DesktopSession::start_with_display();
    desktop.start_window_manager();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    // The person allows a click to select the remote pane (over the ssh's own ControlMaster).
    std::fs::create_dir_all(home.config_file().parent().unwrap()).unwrap();
    std::fs::write(home.config_file(), "[delivery]\nremote_tmux = true\n").unwrap();
    let _daemon: Daemon = home.daemon_with("no-token-needed-for-local-notices", &[("DISPLAY", desktop.display.as_deref().unwrap())]);
    let sshd = Sshd::start();
    let user = RemoteUser::make("cmux-tray-remote1", &sshd);
    // A tmux server an earlier run left there (it outlives its ssh, as a person's does).
    let _ = user.sh("tmux -L agent kill-server");
    setup(&home, &sshd, &user);
    // The remote login starts tmux when its shell was told where the socket is (cmux-tray ssh's
    // RemoteCommand): the agent's pane inherits CMUX_SOCKET_PATH from the session.
    std::fs::write(
        user.home.join(".profile"),
        "[ -n \"$CMUX_SOCKET_PATH\" ] && [ -z \"$TMUX\" ] && exec tmux -L agent -f /dev/null new-session -A -s agent\n",
    )
    .unwrap();
    let mut args = vec!["-e".to_string(), bin("cmux-tray").display().to_string(), "ssh".into()];
    args.extend(sshd.options());
    args.push(user.destination());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let xterm = desktop.spawn_on_display(&home, "/usr/bin/xterm", &args);
    let terminal = desktop.window_of(xterm);
    wait_until("the remote tmux, started by the ssh session", LIMIT, || user.sh("tmux -L agent has-session -t agent").status.success());
    wait_for_forward(&user);
    let exported = user.sh("tmux -L agent show-environment -g CMUX_SOCKET_PATH");
    assert_eq!(
        String::from_utf8_lossy(&exported.stdout).trim(),
        format!("CMUX_SOCKET_PATH={}/.cmux-tray.sock", user.home.display()),
        "the remote shell was told where the socket is"
    );

    // A remote shell with no tmux (the remote place unknown): while the terminal running ssh is
    // the active window, no banner (the local window's rule).
    activate(&desktop, terminal);
    let out = user.sh(&format!("{} notify --title 'Looked at' --body 'tests passed'", user.client()));
    assert!(out.status.success(), "{out:?}");
    wait_until("the first notice decided", LIMIT, || titled(&home, "Looked at").first().is_some_and(|n| n["delivery"].is_string()));
    assert_eq!(titled(&home, "Looked at")[0]["delivery"], "focused");

    // From a pane of the remote tmux's second window while its first is shown there, the
    // terminal running ssh active here: that pane is not looked at, so it is one banner.
    assert!(user.sh("tmux -L agent new-window -t agent:1").status.success());
    let pane = String::from_utf8_lossy(&user.sh("tmux -L agent display -p -t agent:1 '#{pane_id}'").stdout).trim().to_string();
    assert!(user.sh("tmux -L agent select-window -t agent:0").status.success());
    let shown = || String::from_utf8_lossy(&user.sh("tmux -L agent list-clients -F '#{window_index}'").stdout).trim().to_string();
    assert_eq!(shown(), "0");
    let notify = |title: &str| {
        format!("tmux -L agent send-keys -t agent:1 \"{} notify --title '{title}' --body 'tests passed'\" Enter", user.client())
    };
    assert!(user.sh(&notify("Remote turn")).status.success());
    wait_until("the banner", LIMIT, || !banners(&desktop, "Remote turn").is_empty());
    let notice = titled(&home, "Remote turn").remove(0);
    assert_eq!(notice["delivery"], "shown", "{notice}");
    // docs/terminals.md: the subtitle names the host and the remote pane, `devbox (tmux %3)`.
    assert_eq!(notice["subtitle"], format!("{} (tmux {pane})", user.destination()), "{notice}");
    assert_eq!(notice["place"]["x11"]["window"], terminal, "the click's place is the local xterm running ssh: {notice}");
    assert!(notice["place"]["tmux"].is_null(), "the remote's tmux socket is never obeyed here: {notice}");
    assert_eq!(notice["place"]["remote"]["tmux"]["pane"], pane.as_str(), "the remote pane is kept, to be shown: {notice}");

    // The person looks at another window, and clicks the banner.
    let other = desktop.spawn_on_display(&home, "/usr/bin/xterm", &["-e", "sleep", "600"]);
    let other = desktop.window_of(other);
    activate(&desktop, other);
    let id = banners(&desktop, "Remote turn")[0]["id"].as_u64().unwrap();
    desktop.click(id);
    wait_until("the xterm running ssh raised", LIMIT, || desktop.active_window() == Some(terminal));
    wait_until("the remote pane's window selected there", LIMIT, || shown() == "1");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(banners(&desktop, "Remote turn").len(), 1, "one banner");
    assert_eq!(titled(&home, "Remote turn").len(), 1, "one notice");

    // Now the person looks at that very pane there, in the terminal running ssh: no banner
    // (asked of the remote tmux over the same connection).
    assert!(user.sh(&notify("Pane looked at")).status.success());
    wait_until("the notice decided", LIMIT, || titled(&home, "Pane looked at").first().is_some_and(|n| n["delivery"].is_string()));
    assert_eq!(titled(&home, "Pane looked at")[0]["delivery"], "focused");
    assert!(banners(&desktop, "Pane looked at").is_empty());
    let _ = user.sh("tmux -L agent kill-server");
}

#[test]
fn a_notice_sent_while_the_link_is_cut_goes_out_once_it_is_back_or_is_said_undelivered() {
    let desktop = DesktopSession::start_with_recorder(&[]);
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    let sshd = Sshd::start();
    let user = RemoteUser::make("cmux-tray-remote2", &sshd);
    setup(&home, &sshd, &user);
    let mut link = ssh_running(&home, &sshd, &user, &["sleep", "600"]);
    wait_for_forward(&user);

    // The link is cut (the local ssh killed) and the agent sends: its client waits for the link.
    link.kill().unwrap();
    link.wait().unwrap();
    let socket = user.home.join(".cmux-tray.sock");
    let refused = format!("printf 'ping\\n' | nc -N -U '{}'", socket.display());
    wait_until("the link down", LIMIT, || !String::from_utf8_lossy(&user.sh(&refused).stdout).contains("PONG"));
    let agent = user
        .sh_command(&format!("{} notify --title 'While cut' --body 'sent during the cut'", user.client()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    assert!(titled(&home, "While cut").is_empty(), "nothing can arrive while the link is cut");
    let mut link = ssh_running(&home, &sshd, &user, &["sleep", "600"]);
    let out = agent.wait_with_output().unwrap();
    assert!(out.status.success(), "delivered once the link came back: {}", String::from_utf8_lossy(&out.stderr));
    wait_until("its banner", LIMIT, || !banners(&desktop, "While cut").is_empty());
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(titled(&home, "While cut").len(), 1, "saved once");
    assert_eq!(banners(&desktop, "While cut").len(), 1, "told once");

    // Cut again, with a short wait set there: the client says it was not delivered.
    link.kill().unwrap();
    link.wait().unwrap();
    wait_until("the link down", LIMIT, || !String::from_utf8_lossy(&user.sh(&refused).stdout).contains("PONG"));
    let config = user.home.join(".config/cmux-tray");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[notify]\nlink_wait = 2\n").unwrap();
    assert!(std::process::Command::new("chown").args(["-R", &user.name]).arg(user.home.join(".config")).status().unwrap().success());
    let out = user.sh(&format!("{} notify --title 'Never linked'", user.client()));
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(69), "{said}");
    assert!(said.contains("not delivered"), "{said}");
    let mut link = ssh_running(&home, &sshd, &user, &["sleep", "600"]);
    wait_for_forward(&user);
    std::thread::sleep(Duration::from_secs(1));
    assert!(titled(&home, "Never linked").is_empty(), "said undelivered, and never sent later");
    link.kill().unwrap();
    link.wait().unwrap();
}

#[test]
fn the_remote_socket_is_its_users_alone_and_another_remote_user_is_refused() {
    let desktop = DesktopSession::start_with_recorder(&[]);
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    let sshd = Sshd::start();
    let user = RemoteUser::make("cmux-tray-remote3", &sshd);
    let other = RemoteUser::make("cmux-tray-other3", &sshd);
    setup_with(&home, &sshd, &user, &["--hook", "claude"]);
    let mut link = ssh_running(&home, &sshd, &user, &["sleep", "600"]);
    wait_for_forward(&user);

    let socket = user.home.join(".cmux-tray.sock");
    let meta = std::fs::symlink_metadata(&socket).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type()));
    assert_eq!(std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777, 0o600, "created 0600");
    let uid = String::from_utf8_lossy(&user.sh("id -u").stdout).trim().parse::<u32>().unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), uid, "its user's");
    // The home is 0755 (Debian's), so the socket's own mode is what refuses another user.
    let out = other.sh(&format!("printf 'notify From another user\\n' | nc -N -U '{}'", socket.display()));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Permission denied"), "{out:?}");
    // Its own user gets through.
    let out = user.sh(&format!("{} notify --strict --title 'From its user'", user.client()));
    assert!(out.status.success(), "{out:?}");
    wait_until("its user's notice", LIMIT, || titled(&home, "From its user").len() == 1);
    assert!(titled(&home, "From another user").is_empty());

    // Claude Code's hook, installed there by `remote setup --hook claude`, and `wrap` reach the
    // tray the same way, with no D-Bus, keyring or display there.
    let settings = std::fs::read_to_string(user.home.join(".claude/settings.json")).unwrap();
    assert!(settings.contains(&format!("{} hook claude", user.client())), "{settings}");
    let stop = r#"{"hook_event_name":"Stop","session_id":"s1","cwd":"/srv/parser","last_assistant_message":"Parser fixed"}"#;
    let out = user.sh(&format!("printf '%s' '{stop}' | {} hook claude", user.client()));
    assert!(out.status.success(), "{out:?}");
    wait_until("the hook's notice", LIMIT, || titled(&home, "Claude Code").len() == 1);
    let notice = titled(&home, "Claude Code").remove(0);
    assert_eq!(notice["subtitle"], format!("{} · parser", user.destination()), "{notice}");
    let out = user.sh(&format!("{} wrap --threshold 0 -- true", user.client()));
    assert!(out.status.success(), "{out:?}");
    wait_until("wrap's notice", LIMIT, || titled(&home, "Command finished").len() == 1);
    link.kill().unwrap();
    link.wait().unwrap();
}

/// Any program may call itself `ssh`: a copy of python3 named so, with the variable `cmux-tray
/// ssh` sets naming a host, is a local caller. Its notice names no host, and no ControlMaster of
/// its choosing is ever spoken to (docs/terminals.md, "Where it came from").
#[test]
fn a_program_that_only_calls_itself_ssh_is_not_taken_for_a_forward() {
    let desktop = DesktopSession::start_with_recorder(&[]);
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("no-token-needed-for-local-notices");
    let fake = tempfile::tempdir().unwrap();
    let ssh = fake.path().join("ssh");
    std::fs::copy(std::fs::canonicalize("/usr/bin/python3").unwrap(), &ssh).unwrap();
    let send = "import socket,sys; c=socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); \
                c.sendall(b'notify Deploy done|payments|all green\\n'); print(c.recv(99).decode())";
    let out = std::process::Command::new(&ssh)
        .args(["-c", send, home.socket().to_str().unwrap()])
        .env("CMUX_TRAY_SSH_HOST", "prod-db")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("OK"), "{out:?}");
    wait_until("the notice", LIMIT, || titled(&home, "Deploy done").len() == 1);
    let notice = titled(&home, "Deploy done").remove(0);
    assert_eq!(notice["subtitle"], "payments", "no host taken from a program named ssh: {notice}");
}

/// The static client where scripts/remote-client leaves it, beside the tests' own build
/// (`target/x86_64-unknown-linux-musl/release/` beside `target/debug/`; docs/terminals.md).
fn static_client() -> PathBuf {
    let path = bin("cmux-tray").parent().unwrap().join("../x86_64-unknown-linux-musl/release/cmux-tray");
    assert!(path.is_file(), "{} is missing: run scripts/remote-client first", path.display());
    std::fs::canonicalize(path).unwrap()
}

/// `client` copied alone into an empty folder that is the root of its run (a mount namespace of
/// its own, `chroot`): no loader, no library, no `/etc`, no D-Bus, no display, only the tray's
/// socket folder bound in at `/run`. Sends `notify --strict` from there.
fn notify_from_an_empty_root(home: &Home, client: &Path, title: &str) -> std::process::Output {
    let root = tempfile::tempdir().unwrap();
    std::fs::copy(client, root.path().join("cmux-tray")).unwrap();
    std::fs::create_dir(root.path().join("run")).unwrap();
    let socket = home.socket();
    let script = r#"mount --bind "$1" "$2/run" && exec chroot "$2" /cmux-tray notify --strict --title "$3" --body 'from an empty root'"#;
    std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--", "sh", "-c", script, "sh"])
        .arg(socket.parent().unwrap())
        .arg(root.path())
        .arg(title)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", "/")
        .env("CMUX_SOCKET_PATH", Path::new("/run").join(socket.file_name().unwrap()))
        .stdin(Stdio::null())
        .output()
        .expect("unshare runs (util-linux)")
}

/// The remote client needs nothing of the machine it runs on (docs/terminals.md, "The client
/// there"): the static build, alone in an empty root, sends a notice that reaches the tray's
/// banner; the program as built here cannot even start there.
#[test]
#[ignore = "needs the static client: scripts/remote-client builds it (a release build for musl, minutes), then --ignored"]
fn the_static_client_alone_in_an_empty_root_sends_a_notice_that_reaches_the_tray() {
    let client = static_client();
    let desktop = DesktopSession::start_with_recorder(&[]);
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), &desktop.address);
    let _daemon = home.daemon("no-token-needed-for-local-notices");

    let out = notify_from_an_empty_root(&home, &client, "From an empty root");
    assert!(out.status.success(), "the static client ran alone: {out:?}");
    wait_until("its banner", LIMIT, || !banners(&desktop, "From an empty root").is_empty());
    assert_eq!(titled(&home, "From an empty root").len(), 1, "saved once");

    // The same root is empty indeed: the program as built here (glibc, libdbus-1) finds no loader.
    let out = notify_from_an_empty_root(&home, &bin("cmux-tray"), "From the host's build");
    assert!(!out.status.success(), "the dynamic build cannot start in an empty root: {out:?}");
    std::thread::sleep(Duration::from_secs(1));
    assert!(titled(&home, "From the host's build").is_empty());
}

/// `remote setup` copies the static client when there is one, and otherwise this program, saying
/// on stderr what that one needs there (docs/terminals.md, "The client there").
#[test]
#[ignore = "needs the static client: scripts/remote-client builds it (a release build for musl, minutes), then --ignored"]
fn remote_setup_copies_the_static_client_or_says_the_program_it_copies_needs_libraries() {
    let client = static_client();
    let cloud = Cloud::start();
    let home = Home::new(&cloud.origin(), "unix:path=/nonexistent");
    let sshd = Sshd::start();
    let user = RemoteUser::make("cmux-tray-remote4", &sshd);
    let read = |path: &Path| std::fs::read(path).unwrap();

    setup(&home, &sshd, &user);
    assert!(read(Path::new(&user.client())) == read(&client), "the static client is the one copied");

    // This program alone in a folder, with no static client beside it.
    let alone = tempfile::tempdir().unwrap();
    let program = alone.path().join("cmux-tray");
    std::fs::copy(bin("cmux-tray"), &program).unwrap();
    let mut args = vec!["remote".to_string(), "setup".into()];
    args.extend(sshd.options());
    args.push(user.destination());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = home.program(&program, &args).stdin(Stdio::null()).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("no static client") && said.contains("glibc and libdbus-1"), "{said}");
    assert!(read(Path::new(&user.client())) == read(&program), "this program is the one copied");
}
