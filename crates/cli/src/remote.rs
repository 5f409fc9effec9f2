//! Agents on another machine: `cmux-tray ssh` runs the person's own ssh with this tray's socket
//! forwarded to `~/.cmux-tray.sock` there (0600, a stale one replaced), the remote shell told
//! where it is; `cmux-tray remote setup` puts the remote client there (the static build, else
//! this program) and, when asked, the agents' hooks. No change to the remote's sshd, no
//! credentials of ours: every connection is the person's own `ssh`. docs/terminals.md, "Agents
//! on another machine".

use std::path::PathBuf;

use anyhow::{Context, bail};

use cmux_tray_engine::config::Paths;
use cmux_tray_engine::local::forwarded::{self, FORWARDED_SOCKET, HOST_VARIABLE};
use cmux_tray_engine::private;

use crate::args::Agent;

/// Where the remote client is put, under the remote home (on most PATHs, `hook install` names it whole).
const REMOTE_PROGRAM: &str = ".local/bin/cmux-tray";

/// The person's ssh command line, split at its destination.
struct SshLine {
    /// The options before the destination, and the destination.
    to_host: Vec<String>,
    host: String,
    /// A remote command after the destination (none: a login shell).
    command: Vec<String>,
}

impl SshLine {
    fn parse(args: &[String]) -> anyhow::Result<SshLine> {
        let at = forwarded::destination(args).context("no host given: cmux-tray ssh [ssh options] HOST [COMMAND]")?;
        Ok(SshLine { to_host: args[..=at].to_vec(), host: args[at].clone(), command: args[at + 1..].to_vec() })
    }
}

/// `cmux-tray ssh [ssh options] HOST [COMMAND]`: the person's ssh, with the socket forwarded.
/// Returns only when ssh could not be started (on Unix this process becomes the ssh).
pub(crate) async fn ssh(paths: &Paths, args: Vec<String>) -> anyhow::Result<()> {
    let line = SshLine::parse(&args)?;
    let home = remote_home(&line).await?;
    let remote_socket = format!("{home}/{FORWARDED_SOCKET}");
    let local_socket = paths.socket();
    if !cmux_tray_engine::local::endpoint::is_live(&local_socket) {
        eprintln!(
            "cmux-tray ssh: no tray answers at {} yet: a notice sent on {} waits for one at most [notify] link_wait there (start the tray, or `cmux-tray daemon`)",
            local_socket.display(),
            line.host
        );
    }
    let local =
        local_socket.to_str().filter(|s| !s.contains(':')).context("the local socket's path holds a ':' (ssh's -R cannot name it)")?;
    // The session is a ControlMaster of its own, so a click can select the remote pane over
    // this very connection (`delivery.remote_tmux`); it ends with the session.
    private::create_dir(&paths.runtime_dir).with_context(|| format!("the folder {}", paths.runtime_dir.display()))?;
    // This process becomes the ssh: the tray finds the master from that ssh's pid.
    let control = forwarded::control_path(&paths.runtime_dir, std::process::id());
    let mut command = private::person_command("ssh");
    command
        .env(HOST_VARIABLE, &line.host)
        .args(["-o", "StreamLocalBindMask=0177", "-o", "StreamLocalBindUnlink=yes"])
        .args(["-o", "ControlMaster=auto", "-o", "ControlPersist=no", "-o"])
        .arg(format!("ControlPath={}", control.display()))
        .arg("-R")
        .arg(format!("{remote_socket}:{local}"));
    if line.command.is_empty() {
        // The login shell, told where the socket is: any shell runs `exec env … "$SHELL" -l`.
        command.arg("-t").arg("-o").arg(format!("RemoteCommand=exec env CMUX_SOCKET_PATH='{remote_socket}' \"$SHELL\" -l"));
    }
    command.args(&args);
    run_in_place(command)
}

#[cfg(unix)]
fn run_in_place(mut command: tokio::process::Command) -> anyhow::Result<()> {
    let error = std::os::unix::process::CommandExt::exec(command.as_std_mut());
    Err(anyhow::Error::new(error).context("cannot run ssh"))
}

#[cfg(not(unix))]
fn run_in_place(_command: tokio::process::Command) -> anyhow::Result<()> {
    bail!("cmux-tray ssh forwards a Unix socket: not on this system (its socket is a named pipe)")
}

/// `cmux-tray remote setup [--hook AGENT]… [--client PATH] [ssh options] HOST`: copies the
/// client (the static one when there is one) over the person's ssh to `~/.local/bin/cmux-tray`
/// there, checks it runs, installs the hooks asked for.
pub(crate) async fn setup(hooks: Vec<Agent>, client: Option<PathBuf>, args: Vec<String>) -> anyhow::Result<()> {
    let line = SshLine::parse(&args)?;
    if !line.command.is_empty() {
        bail!("remote setup takes no remote command after the host ({:?})", line.command.join(" "));
    }
    let client = match client {
        Some(named) => named,
        None => chosen_client(&std::env::current_exe().context("where this program is")?),
    };
    let binary = std::fs::File::open(&client).with_context(|| format!("the client to copy, {}", client.display()))?;
    let size = binary.metadata().map(|m| m.len()).unwrap_or(0);
    let mut script = format!(
        "set -e; umask 077; mkdir -p \"$HOME/.local/bin\"; p=\"$HOME/{REMOTE_PROGRAM}\"; cat > \"$p.part\"; chmod 755 \"$p.part\"; \
         mv -f \"$p.part\" \"$p\"; \"$p\" --version; "
    );
    for agent in &hooks {
        let name = match agent {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        };
        script.push_str(&format!("\"$p\" hook install {name}; "));
    }
    let status = private::person_command("ssh")
        .args(&line.to_host)
        // sh whatever the login shell is (fish, csh); the script holds no single quote.
        .arg(format!("exec sh -c '{script}'"))
        .stdin(std::process::Stdio::from(binary))
        .status()
        .await
        .context("cannot run ssh")?;
    if !status.success() {
        bail!("the copy to {} failed (ssh exited {status}); what it said is above", line.host);
    }
    println!("{} ({size} bytes) is {}:~/{REMOTE_PROGRAM}; connect with: cmux-tray ssh {}", client.display(), line.host, args.join(" "));
    Ok(())
}

/// Where the static client lies beside this program: an installed package's (`/usr/bin/cmux-tray`
/// → `/usr/lib/cmux-tray/remote/`), a checkout's (`target/<profile>/` → scripts/remote-client's).
const STATIC_CLIENTS: [&str; 2] = ["../lib/cmux-tray/remote/cmux-tray", "../x86_64-unknown-linux-musl/release/cmux-tray"];

/// The client to copy when none is named: the static build, which runs on any Linux server; else
/// this program, said on stderr to need the libraries it was built with.
fn chosen_client(this: &std::path::Path) -> PathBuf {
    // The static build itself is the remote client (scripts/remote-client builds it for musl).
    if cfg!(target_env = "musl") {
        return this.to_path_buf();
    }
    let beside = this.parent().unwrap_or(std::path::Path::new("/"));
    if let Some(found) = STATIC_CLIENTS.iter().map(|p| beside.join(p)).find(|p| p.is_file()) {
        // Said as the person would find it (`/usr/lib/…`, not `/usr/bin/../lib/…`).
        return std::fs::canonicalize(&found).unwrap_or(found);
    }
    eprintln!(
        "cmux-tray remote setup: no static client beside {} (scripts/remote-client builds one): copying this program, \
         which needs glibc and libdbus-1 as new as this machine's there; --client PATH names another",
        this.display()
    );
    this.to_path_buf()
}

/// Readies the remote end over one ssh connection of its own, before the session: removes the
/// socket an earlier connection left (sshd replaces it only when its own config says
/// `StreamLocalBindUnlink yes`, which is the remote's to set, not ours) and says the remote home
/// (sshd binds from `/`, so the forward's path must be absolute).
async fn remote_home(line: &SshLine) -> anyhow::Result<String> {
    let output = private::person_command("ssh")
        .args(&line.to_host)
        .arg(format!("exec sh -c 'rm -f \"$HOME/{FORWARDED_SOCKET}\" && echo \"$HOME\"'"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .context("cannot run ssh")?
        .wait_with_output()
        .await
        .context("ssh")?;
    if !output.status.success() {
        bail!("could not ready {} for the forward (ssh exited {}); what it said is above", line.host, output.status);
    }
    checked_home(String::from_utf8_lossy(&output.stdout).lines().last().unwrap_or_default())
}

/// A remote home that can be named in ssh's `-R` and in a shell's single quotes.
fn checked_home(home: &str) -> anyhow::Result<String> {
    if !home.starts_with('/') || home.contains([':', '%', '\'', '\n', '\0']) || home.len() > 500 {
        bail!(
            "the remote home folder {home:?} cannot hold the socket (not an absolute path, or it holds ':', '%' or a quote: ssh reads them in -R and RemoteCommand)"
        );
    }
    Ok(home.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_ssh_line_splits_at_its_host() {
        let line = SshLine::parse(&words("-p 2222 -A ada@devbox tmux attach")).unwrap();
        assert_eq!(
            (line.to_host.join(" "), line.host.as_str(), line.command.join(" ")),
            ("-p 2222 -A ada@devbox".into(), "ada@devbox", "tmux attach".into())
        );
        assert!(SshLine::parse(&words("-p 2222")).is_err(), "no host");
    }

    /// The places docs/terminals.md ("The client there") names, beside an installed program and a checkout's.
    #[test]
    fn the_static_client_is_found_beside_an_installed_program_and_a_checkouts() {
        let root = std::env::temp_dir().join(format!("cmux-tray-remote-client-{}", std::process::id()));
        let put = |path: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"").unwrap();
            path
        };
        let (installed, built) = (put("usr/bin/cmux-tray"), put("target/debug/cmux-tray"));
        assert_eq!(chosen_client(&installed), installed, "none there: this program");
        let packaged = put("usr/lib/cmux-tray/remote/cmux-tray");
        let script = put("target/x86_64-unknown-linux-musl/release/cmux-tray");
        let same = |a: PathBuf, b: &PathBuf| std::fs::canonicalize(a).unwrap() == std::fs::canonicalize(b).unwrap();
        assert!(same(chosen_client(&installed), &packaged));
        assert!(same(chosen_client(&built), &script));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_home_ssh_would_read_otherwise_is_refused() {
        assert_eq!(checked_home("/home/ada/").unwrap(), "/home/ada");
        for bad in ["home/ada", "/home/a:b", "/home/%h", "/home/o'neil"] {
            assert!(checked_home(bad).is_err(), "{bad}");
        }
    }
}
