//! Linux: the socket opened once without following links (through its folder, opened the same
//! way), then its server's process through `SO_PEERCRED` and `/proc`: its user, its namespaces,
//! how confined it is, its executable. The tool is handed the very file checked.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{SocketAddr, UnixStream};
use std::path::{Component, Path};

use rustix::fs::{FileType, Mode, OFlags};

use super::{Distrusted, Server, Trusted};

pub fn uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The socket `path` in one of `folders` (a folder of the person's, closed to others; the
/// socket no link), served by `server`'s process of the person's.
pub fn socket_in(folders: &[std::path::PathBuf], path: &Path, server: Server) -> Result<Trusted, Distrusted> {
    let said = |why: String| Distrusted(format!("{}'s socket {}: {why}", server.name(), path.display()));
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else { return Err(said("not a socket's path".into())) };
    if !path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_))) || !folders.iter().any(|f| f == folder) {
        let allowed: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
        return Err(said(format!("not in the person's own {} folder ({})", server.name(), allowed.join(" or "))));
    }
    let dir = rustix::fs::open(folder, OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| said(format!("its folder cannot be opened as a folder of its own ({e})")))?;
    let st = rustix::fs::fstat(&dir).map_err(|e| said(e.to_string()))?;
    if st.st_uid != uid() || st.st_mode & 0o077 != 0 {
        return Err(said(format!("its folder is not the person's alone (owner {}, mode {:o})", st.st_uid, st.st_mode & 0o777)));
    }
    // Opened through the folder just checked, never through its path again.
    let sock = rustix::fs::openat(&dir, name, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| said(format!("gone ({e})")))?;
    held(sock, server).map_err(said)
}

/// A socket anywhere (kitty's `listen_on`): a socket of the person's, no link, served by
/// `server`'s process of the person's.
pub fn socket_anywhere(path: &Path, server: Server) -> Result<Trusted, Distrusted> {
    let said = |why: String| Distrusted(format!("{}'s socket {}: {why}", server.name(), path.display()));
    let sock = rustix::fs::open(path, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| said(format!("gone ({e})")))?;
    held(sock, server).map_err(said)
}

/// An abstract socket (`@name`): it has no owner, so only its server process tells. It has no
/// file either: the tool is given its name.
pub fn abstract_socket(name: &str, server: Server) -> Result<Trusted, Distrusted> {
    let said = |why: String| Distrusted(format!("{}'s socket @{name}: {why}", server.name()));
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).map_err(|e| said(e.to_string()))?;
    let stream = UnixStream::connect_addr(&addr).map_err(|e| said(format!("nothing answers ({e})")))?;
    served_by(&stream, server).map_err(said)?;
    Ok(Trusted::named(format!("@{name}")))
}

/// The socket file `sock` (opened `O_PATH`, no link followed): a socket of the person's, served
/// as [`served_by`] requires, reached through its descriptor and handed on as that descriptor.
fn held(sock: OwnedFd, server: Server) -> Result<Trusted, String> {
    let st = rustix::fs::fstat(&sock).map_err(|e| e.to_string())?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Socket || st.st_uid != uid() {
        return Err("not a socket of the person's (a link, or someone else's)".into());
    }
    let address = format!("/proc/self/fd/{}", sock.as_raw_fd());
    let stream = UnixStream::connect(&address).map_err(|e| format!("nothing answers ({e})"))?;
    served_by(&stream, server)?;
    Ok(Trusted { address, held: Some(sock) })
}

/// The namespaces a server must share with the engine (`/proc/PID/ns/` file, the words said):
/// one of another is a sandbox's or a container's, whose files are not the person's view.
const NAMESPACES: [(&str, &str); 5] = [("pid", "pid"), ("mnt", "mount"), ("user", "user"), ("net", "network"), ("cgroup", "cgroup")];

/// Whether the process at the other end is `server`'s, run by the person, in the engine's own
/// namespaces, no more confined than the engine, from the program the engine itself would run
/// (tmux) or one of its name.
fn served_by(stream: &UnixStream, server: Server) -> Result<(), String> {
    let (pid, peer_uid) = peer(stream).map_err(|e| format!("its server cannot be asked who it is ({e})"))?;
    process_is(pid, peer_uid, server)
}

/// Whether the process `pid` (a connection's peer, run by the person: the local socket takes no
/// other) is `server`'s program, as [`served_by`] asks of a server.
pub fn program(pid: u32, server: Server) -> Result<(), Distrusted> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| Distrusted(format!("process {pid}: not a process id")))?;
    process_is(pid, uid(), server).map_err(|why| Distrusted(format!("process {pid}: {why}")))
}

fn process_is(pid: libc::pid_t, peer_uid: u32, server: Server) -> Result<(), String> {
    if peer_uid != uid() {
        return Err(format!("served by another user (uid {peer_uid})"));
    }
    // A process of a pid namespace the engine cannot see (a sandbox's, a container's) shows as pid 0.
    if pid <= 0 {
        return Err("served from another pid namespace (a sandbox or a container)".into());
    }
    for (file, words) in NAMESPACES {
        let ns = |of: &str| std::fs::metadata(format!("/proc/{of}/ns/{file}")).map(|m| (m.dev(), m.ino())).ok();
        let theirs = ns(&pid.to_string());
        if theirs.is_none() || theirs != ns("self") {
            return Err(format!("served from another {words} namespace (a sandbox or a container)"));
        }
    }
    let status = |of: &str| std::fs::read_to_string(format!("/proc/{of}/status")).map(|s| Confinement::read(&s));
    let theirs = status(&pid.to_string()).map_err(|e| format!("its server's status cannot be read ({e})"))?;
    let ours = status("self").map_err(|e| format!("the engine's own status cannot be read ({e})"))?;
    if let Some(more) = theirs.beyond(ours) {
        return Err(format!("served by a process more confined than the engine ({more}): a sandbox's"));
    }
    let exe = std::fs::metadata(format!("/proc/{pid}/exe")).map_err(|e| format!("its server's program cannot be read ({e})"))?;
    let path = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
    let file = path.file_name().map(|f| f.to_string_lossy().trim_end_matches(" (deleted)").to_string()).unwrap_or_default();
    if !server.runs_as(&file) {
        return Err(format!("served by {}, not by {}", path.display(), server.name()));
    }
    if let Some(program) = server.the_engines_own() {
        // The very program the engine runs: a copy of the same name is not it.
        let ours = crate::terminal::process::on_path(program).and_then(|p| std::fs::metadata(p).ok()).map(|m| (m.dev(), m.ino()));
        if ours != Some((exe.dev(), exe.ino())) {
            return Err(format!("served by {}, which is not the {program} this engine runs", path.display()));
        }
    }
    Ok(())
}

/// The peer's pid and uid as the kernel gives them (`SO_PEERCRED`): pid 0 for a process of a pid
/// namespace this one cannot see, which rustix's credential type cannot hold.
fn peer(stream: &UnixStream) -> std::io::Result<(libc::pid_t, u32)> {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let size = std::mem::size_of::<libc::ucred>();
    let mut len = size as libc::socklen_t;
    // SAFETY: `cred` is a `ucred` of `len` bytes, the very struct SO_PEERCRED writes, and the
    // socket stays open through the call.
    let r = unsafe { libc::getsockopt(stream.as_raw_fd(), libc::SOL_SOCKET, libc::SO_PEERCRED, (&raw mut cred).cast(), &mut len) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if len as usize != size {
        return Err(std::io::Error::other(format!("SO_PEERCRED gave {len} bytes, not {size}")));
    }
    Ok((cred.pid, cred.uid))
}

/// How confined a process is, as `/proc/PID/status` says: `NoNewPrivs` (which an unprivileged
/// process must set to use Landlock or seccomp), its seccomp mode and how many filters it has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Confinement {
    no_new_privs: u64,
    seccomp: u64,
    seccomp_filters: u64,
}

impl Confinement {
    /// Read from a status file; a field the kernel does not have counts as 0.
    fn read(status: &str) -> Confinement {
        let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().parse().ok()).unwrap_or(0);
        Confinement { no_new_privs: field("NoNewPrivs"), seccomp: field("Seccomp"), seccomp_filters: field("Seccomp_filters") }
    }

    /// What this process has that `engine` has not, in words; `None` when nothing.
    fn beyond(self, engine: Confinement) -> Option<String> {
        if self.no_new_privs > engine.no_new_privs {
            Some("NoNewPrivs set".into())
        } else if self.seccomp > engine.seccomp {
            Some(format!("seccomp mode {}, the engine's {}", self.seccomp, engine.seccomp))
        } else if self.seccomp_filters > engine.seccomp_filters {
            Some(format!("{} seccomp filters, the engine's {}", self.seccomp_filters, engine.seccomp_filters))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_with_no_new_privs_or_a_seccomp_filter_the_engine_lacks_is_more_confined() {
        let plain = Confinement::read("Name:\ttmux\nNoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n");
        let sandboxed = Confinement::read("NoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n");
        assert_eq!(plain, Confinement::default());
        assert_eq!(sandboxed, Confinement { no_new_privs: 1, seccomp: 2, seccomp_filters: 1 });
        assert_eq!(plain.beyond(plain), None);
        assert_eq!(sandboxed.beyond(plain).as_deref(), Some("NoNewPrivs set"));
        assert_eq!(plain.beyond(sandboxed), None, "a server less confined than the engine is no sandbox's");
        let filtered = Confinement { no_new_privs: 1, seccomp: 2, seccomp_filters: 2 };
        assert_eq!(filtered.beyond(sandboxed).as_deref(), Some("2 seccomp filters, the engine's 1"));
        assert_eq!(Confinement::read("NoNewPrivs:\t1\n"), Confinement { no_new_privs: 1, ..Confinement::default() }, "an older kernel");
    }

    /// A server started by `wrapper` (a sandbox or a container of the test's making) on a socket
    /// in WezTerm's folder: refused, saying why. A program of another name serves it, but that
    /// is asked last: what refuses it here is the wrapper.
    #[test]
    fn a_server_in_a_namespace_of_its_own_or_more_confined_than_the_engine_is_refused() {
        let cases: [(&[&str], &str); 6] = [
            (&["unshare", "--pid", "--fork", "--kill-child"], "another pid namespace"),
            (&["unshare", "--mount"], "another mount namespace"),
            (&["unshare", "--user", "--map-root-user"], "another user namespace"),
            (&["unshare", "--net"], "another network namespace"),
            (&["unshare", "--cgroup"], "another cgroup namespace"),
            (&["setpriv", "--no-new-privs"], "more confined than the engine (NoNewPrivs set)"),
        ];
        for (wrapper, refused) in cases {
            let runtime = tempfile::tempdir().unwrap();
            let folder = runtime.path().join("wezterm");
            std::fs::create_dir(&folder).unwrap();
            std::fs::set_permissions(&folder, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
            let socket = folder.join("gui-sock-1");
            let serve = "import socket, sys, time\ns = socket.socket(socket.AF_UNIX)\ns.bind(sys.argv[1])\ns.listen()\ntime.sleep(30)";
            let mut server = std::process::Command::new(wrapper[0])
                .args(&wrapper[1..])
                .args(["/usr/bin/python3", "-c", serve])
                .arg(&socket)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("{wrapper:?} (util-linux) runs: {e}"));
            let started = std::time::Instant::now();
            while UnixStream::connect(&socket).is_err() {
                assert!(started.elapsed() < std::time::Duration::from_secs(10), "{wrapper:?}: the server never listened (as root?)");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let folders = super::super::wezterm_folders(runtime.path().to_str(), None);
            let said = socket_in(&folders, &socket, Server::Wezterm).map(|_| ()).unwrap_err().0;
            let _ = server.kill();
            let _ = server.wait();
            assert!(said.contains(refused), "{wrapper:?}: {said}");
        }
    }

    /// The socket checked is the socket the tool reaches: swapped for another between the check
    /// and the run (a folder shared with a container), the tool still speaks to the real tmux.
    #[tokio::test]
    async fn the_tool_reaches_the_very_socket_checked_even_when_its_path_is_swapped() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::set_permissions(folder.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        let socket = folder.path().join("work");
        let tmux = |args: &[&str]| std::process::Command::new("tmux").arg("-S").arg(&socket).args(args).output().expect("tmux runs");
        assert!(tmux(&["-f", "/dev/null", "new-session", "-d", "-s", "checked"]).status.success());
        let trusted = socket_in(&[folder.path().to_path_buf()], &socket, Server::Tmux).expect("the real tmux is trusted");
        // The swap: the checked socket moved away, another listening at its path.
        std::fs::rename(&socket, folder.path().join("moved")).unwrap();
        let swapped_in = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        swapped_in.set_nonblocking(true).unwrap();
        let sessions = crate::terminal::process::run(
            "tmux",
            &["-S", trusted.address(), "list-sessions", "-F", "#{session_name}"],
            &[],
            Some(&trusted),
        )
        .await;
        let _ = std::process::Command::new("tmux").arg("-S").arg(folder.path().join("moved")).arg("kill-server").output();
        assert_eq!(sessions.unwrap().trim(), "checked");
        assert!(swapped_in.accept().is_err(), "the socket swapped in was reached");
    }

    /// Run by the test below inside a pid namespace of its own, where the test's process (the
    /// server) cannot be seen: it prints what the engine makes of its server.
    #[test]
    #[ignore = "a helper: run inside a new pid namespace by a_server_whose_pid_the_engine_cannot_see_…"]
    fn helper_asks_who_serves_from_inside_a_new_pid_namespace() {
        let Ok(path) = std::env::var("CMUX_TRAY_TEST_PEER_SOCKET") else { return };
        let stream = UnixStream::connect(path).unwrap();
        let (pid, _) = peer(&stream).unwrap();
        println!("pid {pid}: {}", served_by(&stream, Server::Tmux).unwrap_err());
    }

    /// `SO_PEERCRED` gives pid 0 for a server of a pid namespace the engine cannot see: read as the
    /// kernel gives it (no type that cannot hold 0), and refused for it.
    #[test]
    fn a_server_whose_pid_the_engine_cannot_see_is_read_as_pid_0_and_refused() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("outer.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let out = std::process::Command::new("unshare")
            .args(["--pid", "--fork", "--user", "--map-root-user"])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "terminal::trust::platform::tests::helper_asks_who_serves_from_inside_a_new_pid_namespace"])
            .args(["--ignored", "--nocapture", "--test-threads=1"])
            .env("CMUX_TRAY_TEST_PEER_SOCKET", &socket)
            .output()
            .expect("unshare (util-linux) runs");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
        assert!(said.contains("pid 0: served from another pid namespace"), "{said}");
    }

    /// A forwarded connection's peer is believed to be ssh only when it runs the very ssh the
    /// engine would run: a copy of another program named `ssh` is refused, the real one taken.
    #[test]
    fn only_the_persons_own_ssh_is_taken_for_ssh() {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("ssh");
        std::fs::copy("/bin/sleep", &copy).unwrap();
        let mut fake = std::process::Command::new(&copy).arg("30").spawn().unwrap();
        let e = program(fake.id(), Server::Ssh).unwrap_err().0;
        assert!(e.contains("which is not the ssh this engine runs"), "{e}");
        fake.kill().unwrap();
        fake.wait().unwrap();

        let real = crate::terminal::process::on_path("ssh").expect("ssh installed (scripts/setup)");
        let mut ssh = std::process::Command::new(real)
            .args(["-o", "ProxyCommand=sleep 30", "-o", "BatchMode=yes", "-F", "/dev/null", "nowhere.invalid"])
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let took = program(ssh.id(), Server::Ssh);
        ssh.kill().unwrap();
        ssh.wait().unwrap();
        took.unwrap();
    }
}
