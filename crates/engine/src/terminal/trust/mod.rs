//! Whose terminal servers the engine speaks to (docs/notices.md §4, "Terminals").
//!
//! A terminal's tool is a client of its server, and a client obeys its server: a tmux server can
//! tell its client to run a shell command or to read or write a file (`load-buffer`,
//! `save-buffer`, from a hook of its own config). A place names its socket, and a place comes
//! from a socket client, which may be an agent in a sandbox or a container that runs as the
//! person, and that can start a genuine tmux with a config of its own. So before any tool is run
//! on a socket (each time, not once for several runs):
//!
//! - tmux's socket must be in the person's own tmux folder (`$TMUX_TMPDIR` or `/tmp`, then
//!   `tmux-UID/`), a folder that is the person's and closed to others (0700), the socket itself
//!   no link; WezTerm's in its folder of the runtime directory (or `~/.local/share/wezterm`);
//!   kitty's wherever kitty was told to listen, an abstract name included;
//! - what answers on it must be the terminal's own server process, run by the person (Linux:
//!   `SO_PEERCRED`; macOS: `LOCAL_PEERPID`): for tmux the very `tmux` program the engine would
//!   run (the same file), for kitty and WezTerm a program of that name;
//! - and that process must be no more confined than the engine: on Linux in the engine's own
//!   pid, mount, user, network and cgroup namespaces, with no `NoNewPrivs` and no seccomp filter
//!   the engine has not (Landlock leaves no mark of its own, but an unprivileged process cannot
//!   use it without `NoNewPrivs`); on macOS not sandboxed (`sandbox_check`).
//!
//! On Linux the socket file is opened once (`O_PATH`, no link followed, through its folder
//! opened the same way), checked, and handed to the tool as that very file (`/proc/self/fd/N`,
//! inherited), so its path is never looked up again between the check and the tool. The tool
//! itself runs with no right to write files (`super::confine`). The checks that need
//! `SO_PEERCRED` and `/proc` are Linux's (`linux.rs`); macOS's are in `other.rs`, and on
//! Windows no terminal socket is spoken to at all.

use std::path::{Path, PathBuf};

#[cfg_attr(target_os = "linux", path = "linux.rs")]
#[cfg_attr(not(target_os = "linux"), path = "other.rs")]
mod platform;

/// Whether `path` is a socket of the person's own, itself and not a link to one: what a
/// compositor's IPC socket (sway's, Hyprland's) must be before it is spoken to.
#[cfg(unix)]
pub fn persons_socket(path: &Path) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket() && m.uid() == platform::uid())
}

/// Windows: no compositor's socket.
#[cfg(not(unix))]
pub fn persons_socket(_: &Path) -> bool {
    false
}

/// A terminal server whose socket a place names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    Tmux,
    Kitty,
    Wezterm,
    /// The ssh client of a forwarded connection (`local::forwarded`), and the ControlMaster a
    /// remote tmux pane is selected through (`terminal::remote`).
    Ssh,
}

impl Server {
    fn name(self) -> &'static str {
        match self {
            Server::Tmux => "tmux",
            Server::Kitty => "kitty",
            Server::Wezterm => "WezTerm",
            Server::Ssh => "ssh",
        }
    }

    /// The program on the PATH a server's process must be the very file of, where the engine
    /// runs that program itself and a copy of the same name would fool the name alone.
    #[cfg(target_os = "linux")]
    fn the_engines_own(self) -> Option<&'static str> {
        match self {
            Server::Tmux => Some("tmux"),
            Server::Ssh => Some("ssh"),
            Server::Kitty | Server::Wezterm => None,
        }
    }

    /// Whether a server process's executable, by its file name, is this terminal's (asked where
    /// `/proc` or `proc_pidpath` tells it: Linux, macOS).
    #[cfg(any(target_os = "linux", target_os = "macos", test))]
    fn runs_as(self, file_name: &str) -> bool {
        match self {
            Server::Tmux => file_name == "tmux",
            Server::Kitty => file_name == "kitty",
            Server::Wezterm => file_name.starts_with("wezterm"),
            Server::Ssh => file_name == "ssh",
        }
    }
}

/// Why a terminal's socket is not spoken to, in words (a log line, a card's note).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Distrusted(pub String);

/// A terminal's socket the engine has checked, as its tool is to reach it: on Linux the socket
/// file is held open and named `/proc/self/fd/N`, the descriptor the tool inherits, so the tool
/// connects to the very file that was checked.
#[derive(Debug)]
pub struct Trusted {
    address: String,
    #[cfg(unix)]
    held: Option<std::os::fd::OwnedFd>,
}

impl Trusted {
    /// A socket reached by its address alone (an abstract name; macOS's socket path).
    #[cfg_attr(windows, allow(dead_code))] // no terminal socket is trusted on Windows
    fn named(address: String) -> Trusted {
        Trusted {
            address,
            #[cfg(unix)]
            held: None,
        }
    }

    /// What the tool is told to connect to (a path, or `@name` for an abstract socket).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The descriptor the tool must inherit for its address to mean the socket checked.
    #[cfg(unix)]
    pub fn held(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.held.as_ref().map(|fd| fd.as_fd())
    }
}

/// The folders a tmux server of this person's keeps its sockets in.
pub fn tmux_folders(tmux_tmpdir: Option<&str>, uid: u32) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = tmux_tmpdir.filter(|d| d.starts_with('/')).map(PathBuf::from).into_iter().collect();
    roots.push(PathBuf::from("/tmp"));
    roots.dedup();
    roots.into_iter().map(|r| r.join(format!("tmux-{uid}"))).collect()
}

/// The folders WezTerm keeps its sockets in: `$XDG_RUNTIME_DIR/wezterm`, else
/// `~/.local/share/wezterm`.
pub fn wezterm_folders(runtime_dir: Option<&str>, home: Option<&str>) -> Vec<PathBuf> {
    let runtime = runtime_dir.filter(|d| d.starts_with('/')).map(|d| Path::new(d).join("wezterm"));
    let data = home.filter(|h| h.starts_with('/')).map(|h| Path::new(h).join(".local/share/wezterm"));
    runtime.into_iter().chain(data).collect()
}

/// Whether tmux's server at `socket` is one the engine may speak to, and how its tool reaches it.
pub fn tmux(socket: &Path) -> Result<Trusted, Distrusted> {
    let folders = tmux_folders(std::env::var("TMUX_TMPDIR").ok().as_deref(), platform::uid());
    platform::socket_in(&folders, socket, Server::Tmux)
}

/// Whether WezTerm's mux server at `socket` is one the engine may speak to, and how its tool
/// reaches it.
pub fn wezterm(socket: &Path) -> Result<Trusted, Distrusted> {
    let folders = wezterm_folders(std::env::var("XDG_RUNTIME_DIR").ok().as_deref(), std::env::var("HOME").ok().as_deref());
    platform::socket_in(&folders, socket, Server::Wezterm)
}

/// Whether the forwarded connection's peer `pid` is the person's own ssh: the very program the
/// engine would run, in the engine's namespaces and no more confined. Any process may call
/// itself `ssh` (`/proc/PID/comm`); only this one is believed about a host and a ControlMaster.
pub fn ssh_client(pid: u32) -> Result<(), Distrusted> {
    platform::program(pid, Server::Ssh)
}

/// Whether `control` is the ControlMaster `cmux-tray ssh` made for the ssh `pid` (in the
/// engine's runtime folder, `ssh-PID`, the person's socket served by the person's ssh), and how a
/// client reaches it. The path is made here from the pid, never read from what a peer says.
pub fn ssh_master(runtime_dir: &Path, control: &Path) -> Result<Trusted, Distrusted> {
    platform::socket_in(&[runtime_dir.to_path_buf()], control, Server::Ssh)
}

/// Whether kitty at `address` (`unix:/path` or `unix:@name`) is one the engine may speak to, and
/// how its tool reaches it (without the `unix:`).
pub fn kitty(address: &str) -> Result<Trusted, Distrusted> {
    match address.strip_prefix("unix:") {
        Some(name) if name.starts_with('@') => platform::abstract_socket(&name[1..], Server::Kitty),
        Some(path) => platform::socket_anywhere(Path::new(path), Server::Kitty),
        None => Err(Distrusted(format!("kitty's address {address:?} is not a Unix socket"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmux_keeps_its_sockets_in_the_persons_folder_of_its_tmpdir_or_of_tmp() {
        assert_eq!(tmux_folders(None, 1000), [PathBuf::from("/tmp/tmux-1000")]);
        assert_eq!(
            tmux_folders(Some("/run/user/1000"), 1000),
            [PathBuf::from("/run/user/1000/tmux-1000"), PathBuf::from("/tmp/tmux-1000")]
        );
        assert_eq!(tmux_folders(Some("relative"), 7), [PathBuf::from("/tmp/tmux-7")], "a relative TMUX_TMPDIR is not tmux's");
        assert_eq!(
            wezterm_folders(Some("/run/user/1000"), Some("/home/ada")),
            [PathBuf::from("/run/user/1000/wezterm"), PathBuf::from("/home/ada/.local/share/wezterm")]
        );
    }

    /// WezTerm's socket named by a place is spoken to only in WezTerm's folder, and only when
    /// WezTerm serves it (WezTerm is not in Debian: a socket this test serves stands for both).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_wezterm_socket_outside_its_folder_or_served_by_another_program_is_refused() {
        let runtime = tempfile::tempdir().unwrap();
        let folder = runtime.path().join("wezterm");
        std::fs::create_dir(&folder).unwrap();
        std::fs::set_permissions(&folder, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        let inside = folder.join("gui-sock-1");
        let _served = std::os::unix::net::UnixListener::bind(&inside).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let outside = elsewhere.path().join("gui-sock-1");
        let _also = std::os::unix::net::UnixListener::bind(&outside).unwrap();
        let folders = wezterm_folders(runtime.path().to_str(), None);
        let e = platform::socket_in(&folders, &outside, Server::Wezterm).unwrap_err().0;
        assert!(e.contains("not in the person's own WezTerm folder"), "{e}");
        let e = platform::socket_in(&folders, &inside, Server::Wezterm).unwrap_err().0;
        assert!(e.contains("not by WezTerm"), "this test's own program serves it: {e}");
    }

    /// A compositor's socket: the person's own socket, never a link to one or another file.
    #[cfg(unix)]
    #[test]
    fn a_compositors_socket_is_the_persons_own_and_no_link() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("sway-ipc.sock");
        let _served = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let link = dir.path().join("link.sock");
        std::os::unix::fs::symlink(&socket, &link).unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(persons_socket(&socket));
        assert!(!persons_socket(&link), "a link");
        assert!(!persons_socket(&file), "not a socket");
        assert!(!persons_socket(&dir.path().join("absent")));
    }

    #[test]
    fn a_server_is_known_by_its_programs_name() {
        assert!(Server::Tmux.runs_as("tmux") && !Server::Tmux.runs_as("python3"));
        assert!(Server::Kitty.runs_as("kitty") && !Server::Kitty.runs_as("kitty-fake.sh"));
        assert!(Server::Wezterm.runs_as("wezterm-mux-server") && Server::Wezterm.runs_as("wezterm-gui"));
    }
}
