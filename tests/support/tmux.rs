//! A private tmux server in a test's home, started detached: its socket in the home's tmux
//! folder (`$TMUX_TMPDIR/tmux-UID/work`), where a person's tmux keeps it. Killed when dropped.

use std::path::{Path, PathBuf};

use crate::Home;

pub struct Tmux<'a> {
    home: &'a Home,
    pub socket: PathBuf,
}

impl<'a> Tmux<'a> {
    /// The server with one session, `work`, 120 by 40.
    pub fn start(home: &'a Home) -> Tmux<'a> {
        let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(home.dir.path()).unwrap());
        let tmux = Tmux { home, socket: home.dir.path().join(format!("tmux/tmux-{uid}/work")) };
        let out = home
            .program(
                Path::new("/usr/bin/tmux"),
                &["-L", "work", "-f", "/dev/null", "new-session", "-d", "-s", "work", "-x", "120", "-y", "40"],
            )
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux new-session: {}", String::from_utf8_lossy(&out.stderr));
        assert!(tmux.socket.exists(), "tmux's socket is {}", tmux.socket.display());
        tmux
    }

    /// A tmux command against this server; what it printed.
    pub fn run(&self, args: &[&str]) -> String {
        let mut all = vec!["-S", self.socket.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = self.home.program(Path::new("/usr/bin/tmux"), &all).output().expect("tmux runs (package tmux)");
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// What the attached client shows: "window.pane".
    pub fn shown(&self) -> String {
        self.run(&["list-clients", "-F", "#{window_index}.#{pane_index}"])
    }
}

impl Drop for Tmux<'_> {
    fn drop(&mut self) {
        let _ = self.home.program(Path::new("/usr/bin/tmux"), &["-S", self.socket.to_str().unwrap(), "kill-server"]).output();
    }
}
