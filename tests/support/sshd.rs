//! Another machine for the tests: Debian's sshd of the test's own (its config, host key and
//! port, loopback only), and users of their own on it, reached with a key made for the test.
//! The test runs as root (it makes the users); the remote's processes run as those users.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::wait_until;

pub struct Sshd {
    dir: tempfile::TempDir,
    pub port: u16,
    child: Child,
}

/// A user on the remote machine: made once (like tests/sway.rs's), unlocked for key sign-in
/// only, its home 0755 as Debian makes it, so a socket's own mode is what keeps others out.
pub struct RemoteUser {
    pub name: String,
    pub home: PathBuf,
}

impl RemoteUser {
    pub fn make(name: &str, sshd: &Sshd) -> RemoteUser {
        let exists = Command::new("id").args(["-u", name]).output().unwrap().status.success();
        assert!(
            exists || Command::new("useradd").args(["--create-home", "--shell", "/bin/bash", name]).status().unwrap().success(),
            "the user {name}"
        );
        // useradd leaves the password locked ("!"), which sshd refuses even for a key without PAM.
        assert!(Command::new("usermod").args(["-p", "*", name]).status().unwrap().success());
        let home = PathBuf::from(format!("/home/{name}"));
        let ssh = home.join(".ssh");
        let _ = std::fs::remove_dir_all(&ssh);
        std::fs::create_dir_all(&ssh).unwrap();
        std::fs::copy(sshd.dir.path().join("key.pub"), ssh.join("authorized_keys")).unwrap();
        // What an earlier run left: the client, its settings, a socket, the shell's profile.
        for stale in [".local", ".config", ".cmux-tray.sock", ".profile", ".claude", ".codex"] {
            let _ = std::fs::remove_dir_all(home.join(stale));
            let _ = std::fs::remove_file(home.join(stale));
        }
        assert!(Command::new("chown").args(["-R", &format!("{name}:{name}")]).arg(&home).status().unwrap().success());
        std::fs::set_permissions(&home, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        RemoteUser { name: name.into(), home }
    }

    /// `user@127.0.0.1`, the destination as a person types it.
    pub fn destination(&self) -> String {
        format!("{}@127.0.0.1", self.name)
    }

    /// Runs `script` (sh) on the remote as this user, with a login's plain environment.
    pub fn sh(&self, script: &str) -> Output {
        self.sh_command(script).stdin(Stdio::null()).output().unwrap()
    }

    pub fn sh_command(&self, script: &str) -> Command {
        let mut c = Command::new("runuser");
        c.args(["-u", &self.name, "--", "env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"])
            .arg(format!("HOME={}", self.home.display()))
            .arg(format!("USER={}", self.name))
            .args(["sh", "-c", script]);
        c
    }

    /// The client `remote setup` put there.
    pub fn client(&self) -> String {
        self.home.join(".local/bin/cmux-tray").display().to_string()
    }
}

impl Sshd {
    /// sshd on a free loopback port, with a host key and a client key of its own.
    pub fn start() -> Sshd {
        let dir = tempfile::Builder::new().prefix("sshd-").tempdir().unwrap();
        for key in ["host", "key"] {
            let out = Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(dir.path().join(key)).output();
            assert!(out.expect("ssh-keygen runs (package openssh-client)").status.success());
        }
        // sshd's privilege separation folder, which the package's service would make.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let config = dir.path().join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile none\nAuthorizedKeysFile .ssh/authorized_keys\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n",
                host = dir.path().join("host").display()
            ),
        )
        .unwrap();
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-f"])
            .arg(&config)
            .arg("-E")
            .arg(dir.path().join("sshd.log"))
            .stdin(Stdio::null())
            .spawn()
            .expect("sshd starts (package openssh-server)");
        wait_until("sshd listening", Duration::from_secs(10), || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
        Sshd { dir, port, child }
    }

    /// The ssh options that reach this sshd with the test's key, as a person's config would.
    pub fn options(&self) -> Vec<String> {
        let key = self.dir.path().join("key");
        [
            "-i",
            key.to_str().unwrap(),
            "-p",
            &self.port.to_string(),
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "BatchMode=yes",
            "-o",
            "LogLevel=ERROR",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
