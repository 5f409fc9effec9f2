//! The command line as clap reads it: every command, its arguments and their help.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

pub(crate) use crate::hook::Agent;

#[derive(Parser)]
#[command(name = "cmux-tray", version, about = "Native banners when cloud Runs, hand-offs and local agents need you.")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run the engine without a tray or window, until SIGINT or SIGTERM.
    Daemon,
    /// Print the account, the follows and the last notices.
    Status {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Hand a Run or hand-off to the running engine to follow.
    Follow {
        kind: ItemKind,
        /// `run_…` or `ho_…` + 20 hex digits.
        id: String,
        /// As JSON: `{"kind", "id", "following"}`.
        #[arg(long)]
        json: bool,
    },
    /// Cancel a Run through the running engine (its end will not notify).
    Cancel {
        kind: CancelKind,
        id: String,
        /// As JSON: `{"kind", "id", "cancelled"}`.
        #[arg(long)]
        json: bool,
    },
    /// Print the local socket's path.
    SocketPath {
        /// As JSON: `{"socketPath"}`.
        #[arg(long)]
        json: bool,
    },
    /// Print the `export CMUX_SOCKET_PATH=…` line for a shell profile.
    Env,
    /// Read or change a delivery setting (applied live by a running engine).
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Pause banners: a duration (`1h`, `30m`, `1h30m`, `90 minutes`), `tomorrow` (08:00 local) or
    /// `indefinitely`. Notices are still recorded; one summary banner follows the pause.
    Pause {
        /// As one word or several (`90 minutes`, unquoted, is read as `90 minutes`).
        #[arg(required = true, num_args = 1.., value_name = "FOR")]
        until: Vec<String>,
    },
    /// End a pause.
    Resume,
    /// Sign in: shows a code and the page to approve it on (cmux.com's device sign-in); the
    /// account then stays signed in (its refresh token in the system keyring).
    Login {
        /// Read an access token from stdin instead (a service that issues API tokens).
        #[arg(long)]
        token_stdin: bool,
        /// The team to act as (`team_` + 20 hex digits).
        #[arg(long)]
        team: Option<String>,
    },
    /// Sign out: stop following, delete the saved sign-in.
    Logout,
    /// Post a notice to the tray (or to cmux), as `cmux notify` does.
    Notify {
        #[arg(long, default_value = "")]
        title: String,
        #[arg(long, default_value = "")]
        subtitle: String,
        #[arg(long, default_value = "")]
        body: String,
        /// The workspace the notice belongs to (default: CMUX_WORKSPACE_ID).
        #[arg(long)]
        workspace: Option<String>,
        /// The surface (terminal tab) it belongs to (default: CMUX_SURFACE_ID).
        #[arg(long)]
        surface: Option<String>,
        /// The socket to send to (default: resolved from the environment and the config).
        #[arg(long)]
        socket: Option<PathBuf>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
        /// Exit 1 when the notice could not be sent (by default a failed notice never fails).
        #[arg(long)]
        strict: bool,
        /// The sender waits for the person (a permission prompt, a question): an urgent banner
        /// of its own, "needs you" in its title (docs/local-socket.md, "Needs you").
        #[arg(long)]
        needs_you: bool,
    },
    /// Run a command and post one notice when it ends, if it ran longer than a threshold.
    Wrap {
        /// Seconds a command must run before its end is worth a notice (default 10, or
        /// [notify] wrap_threshold).
        #[arg(long, value_parser = threshold_seconds)]
        threshold: Option<f64>,
        /// The cloud session this command shows (an agent's session handed off to the cloud):
        /// reported first, so a click on that session's banner comes back to this terminal.
        #[arg(long, value_name = "SESSION_ID")]
        session: Option<String>,
        /// The command and its arguments, after `--`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        command: Vec<String>,
    },
    /// Tell the tray this terminal shows a cloud session (a hand-off's or a Run's sessionId): a
    /// click on its banner then brings this terminal (tmux pane, kitty window …) forward.
    Attach {
        /// The session id, as the hand-off or the Run's receipt names it.
        session_id: String,
    },
    /// Run your own ssh with this tray's socket forwarded to `~/.cmux-tray.sock` on HOST (0600,
    /// a stale one replaced) and the remote shell told `CMUX_SOCKET_PATH`: agents there reach
    /// this tray, and a click on their notices comes back to this terminal.
    Ssh {
        /// ssh's own options, the host, and a remote command if any (as ssh takes them).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true, value_name = "SSH_ARGS")]
        args: Vec<String>,
    },
    /// Another machine: `remote setup` copies this program there over your ssh (and installs
    /// the agents' hooks there when asked).
    Remote {
        #[command(subcommand)]
        action: RemoteAction,
    },
    /// Print shell completions (bash, zsh, fish) or the man page, made from this command line
    /// (the package ships them; from a build: `cmux-tray generate zsh > ~/.zfunc/_cmux-tray`).
    Generate { what: Generated },
    /// Agent hooks: `claude` (payload on stdin) and `codex` (payload as the last argument) turn
    /// an agent's hook call into a notice and always exit 0; `install` and `uninstall` write the
    /// hook into the agent's own settings file, or take it out.
    Hook {
        #[command(subcommand)]
        action: HookAction,
    },
}

impl Command {
    /// Whether the command was asked for JSON: its failure is then printed as JSON too.
    pub(crate) fn wants_json(&self) -> bool {
        match self {
            Command::Status { json }
            | Command::Follow { json, .. }
            | Command::Cancel { json, .. }
            | Command::SocketPath { json }
            | Command::Notify { json, .. } => *json,
            Command::Config { action: ConfigAction::Get { json, .. } } => *json,
            _ => false,
        }
    }
}

#[derive(Subcommand)]
pub(crate) enum HookAction {
    /// Claude Code's hook: its JSON payload on stdin.
    Claude {
        /// Anything else Claude Code's settings pass: ignored.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        rest: Vec<String>,
    },
    /// Codex's `notify` program: its JSON payload as the last argument (others are ignored).
    Codex {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Write this hook into the agent's settings (Claude Code: ~/.claude/settings.json, its
    /// `Stop` and `Notification` hooks; Codex: ~/.codex/config.toml, `notify`), keeping the rest.
    Install { agent: Agent },
    /// Take out what `hook install` wrote, and nothing else.
    Uninstall { agent: Agent },
}

#[derive(Subcommand)]
pub(crate) enum RemoteAction {
    /// Copy the client to `~/.local/bin/cmux-tray` on HOST over your ssh and check it runs there.
    Setup {
        /// Also install this agent's hook there (`claude`, `codex`; may be given twice).
        #[arg(long = "hook", value_name = "AGENT")]
        hooks: Vec<Agent>,
        /// The program to copy (default: the static client beside this one, which runs on any
        /// Linux server; else this one, which needs this machine's glibc and libdbus-1 there).
        #[arg(long, value_name = "PATH")]
        client: Option<PathBuf>,
        /// ssh's own options and the host.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true, value_name = "SSH_ARGS")]
        args: Vec<String>,
    },
}

#[derive(Subcommand)]
pub(crate) enum ConfigAction {
    /// Print a key's value in force (`delivery.quiet_hours.windows` …); every key without one.
    Get {
        key: Option<String>,
        /// As JSON: an object of each key and its value as the file would hold it.
        #[arg(long)]
        json: bool,
    },
    /// Set a key in the config file (windows: "mon-fri 22:00-07:00; sat,sun 23:00-09:00");
    /// `cloud.api_url`, `cloud.auth_url` and `local.socket_path` too (empty: the default again).
    Set { key: String, value: String },
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Generated {
    Bash,
    Zsh,
    Fish,
    Man,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ItemKind {
    Run,
    Handoff,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum CancelKind {
    Run,
}

/// `--threshold`: seconds from 0 to a day.
pub(crate) fn threshold_seconds(text: &str) -> Result<f64, String> {
    let max = cmux_tray_engine::local::client::MAX_SECONDS;
    match text.trim().parse::<f64>() {
        Ok(s) if (0.0..=max).contains(&s) => Ok(s),
        _ => Err(format!("expected seconds from 0 to {max} (a day), not {text:?}")),
    }
}
