//! A connection forwarded over ssh from another machine (`cmux-tray ssh`, or `RemoteForward` in
//! `~/.ssh/config`): its peer is the local `ssh` client, which connects here on the remote
//! agent's behalf. Its notices name the host they came from and the remote place (a tmux pane
//! there) in their subtitle, and their click goes to the local terminal that runs that ssh: the
//! ssh's own environment and ancestors read as a local caller's (`terminal::of_caller`). The
//! remote's own place is never obeyed here: its tmux socket is a path on another machine.
//! docs/terminals.md, "Agents on another machine".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::notice::local::LocalPost;
use crate::place::{Place, RemotePlace};
use crate::terminal;

/// Set by `cmux-tray ssh` on the ssh it runs: the host as the person named it.
pub const HOST_VARIABLE: &str = "CMUX_TRAY_SSH_HOST";

/// The ControlMaster socket `cmux-tray ssh` makes for its session, whose ssh has process id
/// `pid` (`cmux-tray ssh` becomes that ssh): the engine finds it from the peer's pid alone.
pub fn control_path(runtime_dir: &Path, pid: u32) -> PathBuf {
    runtime_dir.join(format!("ssh-{pid}"))
}

/// The forwarded socket's name in the remote user's home (`cmux-tray ssh`, the `~/.ssh/config`
/// block); a client there finds it by itself when no variable names a socket.
pub const FORWARDED_SOCKET: &str = ".cmux-tray.sock";

/// The local ssh at the other end of a connection, and where its session runs here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forwarded {
    /// The remote host, as the person named it (cleaned: letters, digits, `.-_@:[]` only).
    pub host: String,
    /// The local terminal place of the ssh process (its tmux pane, kitty window, X11 window …).
    pub place: Option<Place>,
    /// The session's ControlMaster socket, when `cmux-tray ssh` made one.
    pub control: Option<std::path::PathBuf>,
}

/// The forward behind a connection whose peer process is `pid`, when that peer is the person's
/// own ssh client (`terminal::trust::ssh_client`: the very program the engine would run, in the
/// engine's namespaces, no more confined); `None` for every other peer, and where `/proc` is
/// missing. A process that merely calls itself `ssh` is a local caller, said once in the log.
pub async fn of_peer(pid: Option<u32>) -> Option<Forwarded> {
    let pid = pid?;
    if std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?.trim_end() != "ssh" {
        return None;
    }
    if let Err(why) = terminal::trust::ssh_client(pid) {
        tracing::warn!("a peer named ssh is not taken for a forwarded connection: {why}");
        return None;
    }
    let env = environment_of(pid);
    let named = env.get(HOST_VARIABLE).cloned();
    let host = named.or_else(|| host_of_command_line(&arguments_of(pid))).and_then(|h| clean_host(&h)).unwrap_or_else(|| "ssh".into());
    let place = terminal::of_caller(&env, pid).await;
    // Checked again, with what serves it, each time it is used (`terminal::remote`).
    let control =
        cmux_tray_channel::place::runtime_dir().map(|dir| control_path(&dir, pid)).filter(|p| std::fs::symlink_metadata(p).is_ok());
    Some(Forwarded { host, place, control })
}

impl Forwarded {
    /// Makes a remote agent's notice a notice of this machine's: the click and the focus rule
    /// go to the local terminal running ssh; the host and the remote pane are said in the
    /// subtitle (`devbox (tmux %3) · project`).
    pub fn adopt(&self, post: &mut LocalPost) {
        let remote = post.place.take();
        let origin = match remote.as_ref().and_then(|p| p.tmux.as_ref()) {
            Some(pane) => format!("{} (tmux {})", self.host, pane.pane),
            None => self.host.clone(),
        };
        post.subtitle = if post.subtitle.trim().is_empty() { origin } else { format!("{origin} · {}", post.subtitle) };
        let there = RemotePlace { host: self.host.clone(), tmux: remote.and_then(|p| p.tmux), control: self.control.clone() };
        post.place = Some(Place { remote: Some(Box::new(there)), ..self.place.clone().unwrap_or_default() });
    }
}

/// The host an ssh command line (`ssh`, its options, the host …) connects to.
fn host_of_command_line(args: &[String]) -> Option<String> {
    let words = args.get(1..)?;
    destination(words).map(|at| words[at].clone())
}

/// Where the destination is among ssh's arguments (the program's name not among them): the
/// first word that is neither an option nor an option's value (ssh(1)'s synopsis), `user@` kept.
pub fn destination(args: &[String]) -> Option<usize> {
    // The options of ssh(1) that take a value (`-p 22`, or `-p22` in one word).
    const WITH_VALUE: &str = "BbcDEeFIiJLlmOoPpQRSWw";
    let mut at = 0;
    while let Some(word) = args.get(at) {
        if word == "--" {
            return (at + 1 < args.len()).then_some(at + 1);
        }
        match word.strip_prefix('-') {
            Some(flags) if !flags.is_empty() => {
                // A flag taking a value at the end of the cluster takes the next word.
                if let Some(i) = flags.find(|c| WITH_VALUE.contains(c))
                    && i + 1 == flags.len()
                {
                    at += 1;
                }
            }
            _ => return Some(at),
        }
        at += 1;
    }
    None
}

/// A host name as it may be shown: at most 100 of letters, digits and `.-_@:[]`.
fn clean_host(host: &str) -> Option<String> {
    // Never a leading `-`: the host is an argument of the ssh a click runs (remote.rs), where it
    // would be read as an option (`-E` writes a log to the file the next word names).
    let ok = !host.is_empty()
        && !host.starts_with('-')
        && host.len() <= 100
        && host.chars().all(|c| c.is_ascii_alphanumeric() || ".-_@:[]".contains(c));
    ok.then(|| host.to_string())
}

fn environment_of(pid: u32) -> BTreeMap<String, String> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    raw.split(|b| *b == 0)
        .filter_map(|entry| {
            let entry = std::str::from_utf8(entry).ok()?;
            let (key, value) = entry.split_once('=')?;
            Some((key.to_string(), value.to_string()))
        })
        .collect()
}

fn arguments_of(pid: u32) -> Vec<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    raw.split(|b| *b == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_host_is_the_first_word_no_option_takes() {
        assert_eq!(host_of_command_line(&words("ssh devbox")).as_deref(), Some("devbox"));
        assert_eq!(host_of_command_line(&words("ssh -p 2222 -i key -t ada@devbox tmux")).as_deref(), Some("ada@devbox"));
        assert_eq!(host_of_command_line(&words("ssh -p2222 -vA -oStrictHostKeyChecking=no box")).as_deref(), Some("box"));
        assert_eq!(host_of_command_line(&words("ssh -R /a:/b -- box")).as_deref(), Some("box"));
        assert_eq!(host_of_command_line(&words("ssh -p")), None);
    }

    #[test]
    fn a_host_shows_only_when_it_looks_like_one() {
        assert_eq!(clean_host("ada@[::1]:22").as_deref(), Some("ada@[::1]:22"));
        assert_eq!(clean_host("box\u{1b}[31m"), None);
        assert_eq!(clean_host(""), None);
        assert_eq!(clean_host("-E"), None, "an option, not a host");
    }

    #[test]
    fn a_remote_notice_names_its_host_and_pane_and_goes_to_the_local_terminal() {
        let local = Place { x11: Some(crate::place::X11Window { display: ":1".into(), window: 7 }), ..Default::default() };
        let forwarded = Forwarded { host: "devbox".into(), place: Some(local.clone()), control: None };
        let remote = Place {
            tmux: Some(crate::place::TmuxPane { socket: "/tmp/tmux-1000/default".into(), session: None, window: None, pane: "%3".into() }),
            ..Default::default()
        };
        let mut post = LocalPost { title: "Claude Code".into(), subtitle: "parser".into(), place: Some(remote), ..Default::default() };
        forwarded.adopt(&mut post);
        assert_eq!(post.subtitle, "devbox (tmux %3) · parser");
        let place = post.place.unwrap();
        assert_eq!(place.x11, local.x11, "the click goes to the local terminal");
        assert_eq!(place.remote.as_ref().and_then(|r| r.tmux.as_ref()).map(|t| t.pane.as_str()), Some("%3"));
        let mut bare = LocalPost::default();
        forwarded.adopt(&mut bare);
        assert_eq!(bare.subtitle, "devbox");
    }
}
