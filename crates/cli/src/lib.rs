//! The `cmux-tray` command line. A thin shell over the engine: parse, load settings, call.
//!
//! - `args`: every command as clap reads it; `lib.rs` runs the one asked for.
//! - `daemon`: the engine headless; `status`: what it does, from the engine or its store.
//! - `config`, `login`, `generate`: the settings file, signing in, completions and the man page.
//! - `notify`, `wrap`, `hook`: notices posted the way cmux's own clients post them;
//!   `hook_install`: the hooks written into the agents' own settings files, and taken out.
//! - `process`: the platform's signals and terminal (one file per platform).
//! - `remote`: `ssh` (the person's ssh with the socket forwarded) and `remote setup`.
//!
//! `follow`, `cancel`, `pause`, `resume`, `logout` and `attach` are one request to the running
//! engine over the local socket each; `env` and `socket-path` say where it is.

mod args;
mod config;
mod daemon;
mod generate;
mod hook;
mod hook_install;
mod login;
mod notify;
mod process;
mod remote;
mod show_status;
mod wrap;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use clap::Parser;
use serde_json::json;

use cmux_tray_engine::cloud::{HandoffId, RunId};
use cmux_tray_engine::config::Paths;
use cmux_tray_engine::local;
use cmux_tray_engine::local::client::NotifyConfig;
use cmux_tray_engine::local::requests::{self, MethodRequest};
use cmux_tray_engine::store::FollowKind;

pub use daemon::EXIT_CANNOT_START;

use args::{CancelKind, Cli, Command, HookAction, ItemKind, RemoteAction};
use daemon::CannotStart;

/// Runs the command line; the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // `wrap` must hand back the command's own exit code, whatever it is.
    // `wrap` runs the person's own command in the person's own environment and umask, untouched.
    if let Command::Wrap { .. } = cli.command {
        return wrap::wrap_main(cli);
    }
    if let Command::Generate { what } = cli.command {
        return generate::generate(what);
    }
    // Before any thread: private files from here on, and no secret in a child's environment.
    let _ = ENVIRONMENT.set(cmux_tray_engine::private::start());
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("CMUX_TRAY_LOG").unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        // Colours for a terminal only: a log file or a journal gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    // One thread: the daemon waits far more than it works, and the store's commits, the keyring
    // and X11 run on blocking threads. Two workers waking each other for every answer cost a
    // fifth more CPU while 10,000 follows are held (docs/architecture.md, "One runtime thread").
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cmux-tray: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let json = cli.command.wants_json();
    let result = runtime.block_on(run(cli));
    // A question left to a hung program (an X server that never answers) does not hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(200));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cmux-tray: {e:#}");
            let code = if e.downcast_ref::<CannotStart>().is_some() {
                EXIT_CANNOT_START
            } else if e.downcast_ref::<NoEngine>().is_some() {
                EXIT_NO_ENGINE
            } else {
                1
            };
            // A script that asked for JSON reads JSON on failure too (docs/configuration.md).
            if json {
                println!("{}", json!({"error": format!("{e:#}"), "exitCode": code}));
            }
            ExitCode::from(code)
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let paths = Paths::from_env()?;
    match cli.command {
        Command::Daemon => daemon::daemon(&paths).await,
        Command::Status { json } => show_status::status(&paths, json).await,
        Command::Follow { kind, id, json } => {
            let (kind, follow) = match kind {
                ItemKind::Run => (FollowKind::Run, requests::Follow::Run(RunId::parse(&id)?)),
                ItemKind::Handoff => (FollowKind::Handoff, requests::Follow::Handoff(HandoffId::parse(&id)?)),
            };
            send(&paths, &follow).await?;
            let answered = first_answer(&paths, &id).await?;
            say(json, json!({"kind": kind, "id": id, "following": true, "answered": answered}), || format!("following {id}"))
        }
        Command::Cancel { kind: CancelKind::Run, id, json } => {
            send(&paths, &requests::Cancel { run: RunId::parse(&id)? }).await?;
            say(json, json!({"kind": "run", "id": id, "cancelled": true}), || format!("cancelled {id}"))
        }
        Command::SocketPath { json } => {
            let path = paths.socket().display().to_string();
            say(json, json!({"socketPath": path}), || path.clone())
        }
        Command::Env => {
            let path = paths.socket().display().to_string();
            println!("export CMUX_SOCKET_PATH='{}'", path.replace('\'', "'\\''"));
            Ok(())
        }
        Command::Notify { title, subtitle, body, workspace, surface, socket, json, strict, needs_you } => {
            let overrides = notify::Overrides { socket, workspace, surface };
            let post = notify::Post { title, subtitle, body, needs_you };
            match notify::send(&paths, &notify::Caller::new(environment()), &overrides, &post).await {
                Ok(created) => {
                    // The socket's answer in cmux's own casing, said in this command line's.
                    if json {
                        println!("{}", json!({"id": created.id, "workspaceId": created.workspace_id, "surfaceId": created.surface_id}));
                    }
                    Ok(())
                }
                Err(notify::NotSent::NoEngine(why)) => Err(anyhow::Error::new(NoEngine(format!("notice not sent: {why}")))),
                Err(why) if strict => bail!("notice not sent: {why}"),
                Err(why) => {
                    eprintln!("cmux-tray notify: notice not sent: {why}");
                    Ok(())
                }
            }
        }
        Command::Config { action } => config::config(&paths, action).await,
        Command::Pause { until } => {
            let until = config::pause_until(&until.join(" "))?;
            send(&paths, &requests::Pause { until }).await?;
            match until {
                Some(t) => println!("banners paused until {}", config::in_local_time(t)),
                None => println!("banners paused until you resume (cmux-tray resume)"),
            }
            Ok(())
        }
        Command::Login { token_stdin, team } => login::login(&paths, token_stdin, team).await,
        Command::Logout => {
            send(&paths, &requests::SignOut).await?;
            println!("signed out; the saved sign-in was deleted");
            Ok(())
        }
        Command::Resume => {
            send(&paths, &requests::Resume).await?;
            println!("banners resumed");
            Ok(())
        }
        Command::Attach { session_id } => {
            notify::attach(&paths, &notify::Caller::new(environment()), &session_id)
                .await
                .map_err(|why| anyhow::anyhow!("the session was not reported: {why}"))?;
            println!("a click on session {session_id}'s banners comes back to this terminal");
            Ok(())
        }
        Command::Hook { action: HookAction::Claude { .. } } => {
            hook::hook_main(&paths, hook::Agent::Claude, Vec::new()).await;
            Ok(())
        }
        Command::Hook { action: HookAction::Codex { args } } => {
            hook::hook_main(&paths, hook::Agent::Codex, args).await;
            Ok(())
        }
        Command::Hook { action: HookAction::Install { agent } } => hook_install::install(agent, &environment()),
        Command::Hook { action: HookAction::Uninstall { agent } } => hook_install::uninstall(agent, &environment()),
        Command::Ssh { args } => remote::ssh(&paths, args).await,
        Command::Remote { action: RemoteAction::Setup { hooks, client, args } } => remote::setup(hooks, client, args).await,
        Command::Wrap { .. } => unreachable!("wrap runs from wrap_main"),
        Command::Generate { .. } => unreachable!("generate runs before the runtime"),
    }
}

/// The `[notify]` table; a bad one is reported and read as empty (a hook or a wrapped command
/// must not fail on it; the daemon reports a bad config file loudly).
pub(crate) fn notify_config(paths: &Paths) -> NotifyConfig {
    NotifyConfig::load(&paths.config_file).unwrap_or_else(|e| {
        eprintln!("cmux-tray: {e}");
        NotifyConfig::default()
    })
}

/// Sends a request to the running engine and returns its answer (30 s at the most).
pub(crate) async fn send<R: MethodRequest>(paths: &Paths, request: &R) -> anyhow::Result<serde_json::Value> {
    send_within(paths, request, Duration::from_secs(30)).await
}

pub(crate) async fn send_within<R: MethodRequest>(paths: &Paths, request: &R, within: Duration) -> anyhow::Result<serde_json::Value> {
    let password = environment().remove("CMUX_SOCKET_PASSWORD").filter(|p| !p.is_empty());
    local::request(&paths.socket(), request, password.as_deref(), within).await.map_err(|e| match e {
        local::RequestError::NoEngine { .. } => anyhow::Error::new(NoEngine(e.to_string())),
        other => anyhow::anyhow!("{other}"),
    })
}

/// After `follow`: waits a moment for the cloud's first answer about `id`, so an id the cloud does
/// not know is said here rather than ending the follow silently. `Ok(false)`: no answer yet.
async fn first_answer(paths: &Paths, id: &str) -> anyhow::Result<bool> {
    let deadline = tokio::time::Instant::now() + FIRST_ANSWER;
    loop {
        let status: cmux_tray_engine::Status = serde_json::from_value(send(paths, &requests::GetStatus).await?)?;
        if let Some(row) = status.follows.iter().find(|f| f.id == id) {
            match (&row.ended_at, &row.end_reason, &row.title) {
                (Some(_), Some(why), _) if why.starts_with("gone") => {
                    let code = why.trim_start_matches("gone (").trim_end_matches(')');
                    bail!("the cloud knows no {id} for this account (it answered {code}): not followed")
                }
                (Some(_), _, _) => return Ok(true),
                // A Run's task, or a hand-off's version: a snapshot came.
                (None, _, title) if title.is_some() || row.cursor > 0 => return Ok(true),
                _ => {}
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How long `follow` waits for the cloud's first answer about what it follows.
const FIRST_ANSWER: Duration = Duration::from_secs(3);

/// Prints what a command did: `value` as one line of JSON with `--json`, else `text`.
fn say(json: bool, value: serde_json::Value, text: impl FnOnce() -> String) -> anyhow::Result<()> {
    if json {
        println!("{value}");
    } else {
        println!("{}", text());
    }
    Ok(())
}

/// A command that needs the running engine found none: its own exit code, so a script can tell
/// "start cmux-tray first" from a refusal (sysexits' EX_UNAVAILABLE).
pub const EXIT_NO_ENGINE: u8 = 69;

#[derive(Debug, thiserror::Error)]
#[error("{0} (start the tray, or `cmux-tray daemon`)")]
struct NoEngine(String);

/// The environment as the process was started with it (secrets included), read once by
/// `private::start` before they were taken out of the process's own.
static ENVIRONMENT: std::sync::OnceLock<BTreeMap<String, String>> = std::sync::OnceLock::new();

pub(crate) fn environment() -> BTreeMap<String, String> {
    ENVIRONMENT.get().cloned().unwrap_or_else(|| std::env::vars().collect())
}
