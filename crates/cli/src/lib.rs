//! The `cmux-tray` command line. A thin shell over the engine: parse, load settings, call.
//!
//! `daemon` runs the engine headless; `status` reads the store (running engine or not);
//! `follow` and `cancel` hand work to the running engine over the local socket; `notify`, `wrap`
//! and `hook` post notices to it the way cmux's own clients do; `env` and `socket-path` say where
//! it is.

mod hook;
mod notify;
mod process;
mod wrap;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::json;

use cmux_tray_engine::cloud::{HandoffId, RunId};
use cmux_tray_engine::config::Paths;
use cmux_tray_engine::local::client::NotifyConfig;
use cmux_tray_engine::store::Store;
use cmux_tray_engine::{EngineError, Status, local};

#[derive(Parser)]
#[command(name = "cmux-tray", version, about = "Native banners when cloud Runs, hand-offs and local agents need you.")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    },
    /// Cancel a Run through the running engine (its end will not notify).
    Cancel { kind: CancelKind, id: String },
    /// Print the local socket's path.
    SocketPath,
    /// Print the `export CMUX_SOCKET_PATH=…` line for a shell profile.
    Env,
    /// Read or change a delivery setting (applied live by a running engine).
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Pause banners: `1h`, `30m`, `tomorrow` (08:00 local) or `indefinitely`. Notices are still
    /// recorded; one summary banner follows the pause.
    Pause { until: String },
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
    /// Print shell completions (bash, zsh, fish) or the man page, made from this command line
    /// (the package ships them; from a build: `cmux-tray generate zsh > ~/.zfunc/_cmux-tray`).
    Generate { what: Generated },
    /// Turn an agent's hook call into a notice: `claude` (payload on stdin) or `codex` (payload
    /// as the argument).
    Hook {
        agent: Agent,
        /// Codex passes its payload as one JSON argument.
        payload: Option<String>,
    },
}

#[derive(Subcommand)]
enum ConfigAction {
    /// Print a key's value in force (`delivery.quiet_hours.windows` …); every key without one.
    Get { key: Option<String> },
    /// Set a key in the config file (windows: "mon-fri 22:00-07:00; sat,sun 23:00-09:00");
    /// `cloud.api_url`, `cloud.auth_url` and `local.socket_path` too (empty: the default again).
    Set { key: String, value: String },
}

#[derive(Clone, Copy, ValueEnum)]
enum Generated {
    Bash,
    Zsh,
    Fish,
    Man,
}

#[derive(Clone, Copy, ValueEnum)]
enum Agent {
    Claude,
    Codex,
}

#[derive(Clone, Copy, ValueEnum)]
enum ItemKind {
    Run,
    Handoff,
}

#[derive(Clone, Copy, ValueEnum)]
enum CancelKind {
    Run,
}

/// Runs the command line; the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // `wrap` must hand back the command's own exit code, whatever it is.
    // `wrap` runs the person's own command in the person's own environment and umask, untouched.
    if let Command::Wrap { .. } = cli.command {
        return wrap_main(cli);
    }
    if let Command::Generate { what } = cli.command {
        return generate(what);
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
    let result = runtime.block_on(run(cli));
    // A question left to a hung program (an X server that never answers) does not hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(200));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cmux-tray: {e:#}");
            match e.downcast_ref::<CannotStart>() {
                Some(_) => ExitCode::from(EXIT_CANNOT_START),
                None => ExitCode::FAILURE,
            }
        }
    }
}

/// The daemon's exit when it cannot start until the person does something (EX_CONFIG): a store
/// it cannot read, a config file it refuses, another engine already running. The user service
/// is not restarted on it (`RestartPreventExitStatus=78`): starting again would fail again.
pub const EXIT_CANNOT_START: u8 = 78;

/// Why the daemon could not start, where starting again would not help.
#[derive(Debug, thiserror::Error)]
#[error("cannot start: {0:#}")]
struct CannotStart(anyhow::Error);

async fn run(cli: Cli) -> anyhow::Result<()> {
    let paths = Paths::from_env()?;
    match cli.command {
        Command::Daemon => daemon(&paths).await,
        Command::Status { json } => status(&paths, json).await,
        Command::Follow { kind, id } => {
            let kind = match kind {
                ItemKind::Run => RunId::parse(&id).map(|_| "run")?,
                ItemKind::Handoff => HandoffId::parse(&id).map(|_| "handoff")?,
            };
            engine_request(&paths, "cloud.follow", json!({"kind": kind, "id": id})).await?;
            println!("following {id}");
            Ok(())
        }
        Command::Cancel { kind: CancelKind::Run, id } => {
            RunId::parse(&id)?;
            engine_request(&paths, "cloud.cancel", json!({"id": id})).await?;
            println!("cancelled {id}");
            Ok(())
        }
        Command::SocketPath => {
            println!("{}", paths.socket().display());
            Ok(())
        }
        Command::Env => {
            let path = paths.socket().display().to_string();
            println!("export CMUX_SOCKET_PATH='{}'", path.replace('\'', "'\\''"));
            Ok(())
        }
        Command::Notify { title, subtitle, body, workspace, surface, socket, json, strict } => {
            let overrides = notify::Overrides { socket, workspace, surface };
            let post = notify::Post { title, subtitle, body };
            match notify::send(&paths, &notify::Caller::new(environment()), &overrides, &post).await {
                Ok(result) => {
                    if json {
                        println!("{result}");
                    }
                    Ok(())
                }
                Err(why) if strict => bail!("notice not sent: {why}"),
                Err(why) => {
                    eprintln!("cmux-tray notify: notice not sent: {why}");
                    Ok(())
                }
            }
        }
        Command::Config { action } => config(&paths, action).await,
        Command::Pause { until } => {
            let until = pause_until(&until)?;
            let params = json!({"until": until.map(|t| t.to_string())});
            engine_request(&paths, "delivery.pause", params).await?;
            match until {
                Some(t) => println!("banners paused until {}", t.to_zoned(jiff::tz::TimeZone::system()).strftime("%a %H:%M")),
                None => println!("banners paused until you resume (cmux-tray resume)"),
            }
            Ok(())
        }
        Command::Login { token_stdin, team } => login(&paths, token_stdin, team).await,
        Command::Logout => {
            engine_request(&paths, "account.sign_out", json!({})).await?;
            println!("signed out; the saved sign-in was deleted");
            Ok(())
        }
        Command::Resume => {
            engine_request(&paths, "delivery.resume", json!({})).await?;
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
        Command::Hook { agent, payload } => {
            hook_main(&paths, agent, payload).await;
            Ok(())
        }
        Command::Wrap { .. } => unreachable!("wrap runs from wrap_main"),
        Command::Generate { .. } => unreachable!("generate runs before the runtime"),
    }
}

async fn config(paths: &Paths, action: ConfigAction) -> anyhow::Result<()> {
    use cmux_tray_engine::config;
    use cmux_tray_engine::policy::settings as delivery;
    match action {
        ConfigAction::Get { key: Some(key) } => {
            println!("{}", config::get_in_file(&paths.config_file, &key).map_err(|e| anyhow::anyhow!(e))?);
            Ok(())
        }
        ConfigAction::Get { key: None } => {
            let keys = delivery::keys().chain(config::EDITABLE.iter().map(|(k, _)| *k));
            for k in keys {
                println!("{k} = {}", config::get_in_file(&paths.config_file, k).map_err(|e| anyhow::anyhow!(e))?);
            }
            Ok(())
        }
        ConfigAction::Set { key, value } => {
            config::set_in_file(&paths.config_file, &key, &value).map_err(|e| anyhow::anyhow!(e))?;
            if !key.starts_with("delivery.") {
                println!("{key} = {value} (applies when cmux-tray starts again)");
                return Ok(());
            }
            // Applied live when an engine runs; otherwise at its next start.
            match engine_request_within(paths, "settings.reload", json!({}), Duration::from_secs(5)).await {
                Ok(r) if r["reloaded"] == json!(false) => eprintln!("cmux-tray: {}", r["problem"].as_str().unwrap_or("not applied")),
                Ok(_) => println!("{key} = {value} (applied)"),
                Err(_) => println!("{key} = {value} (applies when cmux-tray starts)"),
            }
            Ok(())
        }
    }
}

/// `1h`, `90m`, `tomorrow` (08:00 local), `indefinitely`.
fn pause_until(text: &str) -> anyhow::Result<Option<jiff::Timestamp>> {
    let t = text.trim().to_ascii_lowercase();
    let now = jiff::Zoned::now();
    let span = |n: &str, unit: &str| -> anyhow::Result<jiff::Timestamp> {
        let n: i64 = n.parse().with_context(|| format!("pause {text:?}: expected a number before {unit}"))?;
        anyhow::ensure!(n > 0, "pause {text:?}: expected a positive duration");
        let d = if unit == "h" { jiff::SignedDuration::from_hours(n) } else { jiff::SignedDuration::from_mins(n) };
        Ok(now.timestamp().checked_add(d)?)
    };
    Ok(Some(match t.as_str() {
        "indefinitely" | "forever" | "until-resumed" => return Ok(None),
        "tomorrow" => cmux_tray_engine::policy::tomorrow_morning(&now).context("no tomorrow morning in this time zone")?,
        _ if t.ends_with('h') => span(&t[..t.len() - 1], "h")?,
        _ if t.ends_with('m') => span(&t[..t.len() - 1], "m")?,
        _ => bail!("pause {text:?}: expected 1h, 30m, tomorrow or indefinitely"),
    }))
}

/// The `[notify]` table; a bad one is reported and read as empty (a hook or a wrapped command
/// must not fail on it; the daemon reports a bad config file loudly).
fn notify_config(paths: &Paths) -> NotifyConfig {
    NotifyConfig::load(&paths.config_file).unwrap_or_else(|e| {
        eprintln!("cmux-tray: {e}");
        NotifyConfig::default()
    })
}

async fn hook_main(paths: &Paths, agent: Agent, payload: Option<String>) {
    let text = match (agent, payload) {
        (Agent::Codex, Some(p)) => p,
        (Agent::Codex, None) => {
            eprintln!("cmux-tray hook codex: no payload argument");
            return;
        }
        (Agent::Claude, _) => {
            let mut s = String::new();
            if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
                eprintln!("cmux-tray hook claude: reading stdin: {e}");
                return;
            }
            s
        }
    };
    let payload: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("cmux-tray hook: the payload is not JSON ({e})");
            return;
        }
    };
    let idle = notify_config(paths).idle_reminders.unwrap_or(false);
    let post = match agent {
        Agent::Claude => hook::claude(&payload, idle),
        Agent::Codex => hook::codex(&payload),
    };
    let caller = notify::Caller::new(environment());
    if let Some(session) = hook::session_of(&payload)
        && let Err(why) = notify::attach(paths, &caller, &session).await
    {
        tracing::debug!("cmux-tray hook: session not reported: {why}");
    }
    if let Some(post) = post
        && let Err(why) = notify::send(paths, &caller, &notify::Overrides::default(), &post).await
    {
        eprintln!("cmux-tray hook: notice not sent: {why}");
    }
}

/// `--threshold`: seconds from 0 to a day.
fn threshold_seconds(text: &str) -> Result<f64, String> {
    let max = cmux_tray_engine::local::client::MAX_SECONDS;
    match text.trim().parse::<f64>() {
        Ok(s) if (0.0..=max).contains(&s) => Ok(s),
        _ => Err(format!("expected seconds from 0 to {max} (a day), not {text:?}")),
    }
}

/// Completions and the man page, from the clap definition itself (clap_complete, clap_mangen).
fn generate(what: Generated) -> ExitCode {
    use clap::CommandFactory;
    let mut command = Cli::command();
    let mut out = std::io::stdout().lock();
    let shell = match what {
        Generated::Bash => clap_complete::Shell::Bash,
        Generated::Zsh => clap_complete::Shell::Zsh,
        Generated::Fish => clap_complete::Shell::Fish,
        Generated::Man => {
            return match clap_mangen::Man::new(command).render(&mut out) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("cmux-tray generate man: {e}");
                    ExitCode::FAILURE
                }
            };
        }
    };
    clap_complete::generate(shell, &mut command, "cmux-tray", &mut out);
    ExitCode::SUCCESS
}

fn wrap_main(cli: Cli) -> ExitCode {
    let Command::Wrap { threshold, session, command } = cli.command else { unreachable!() };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cmux-tray wrap: cannot start: {e}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(async {
        let paths = Paths::from_env().ok();
        let threshold = threshold
            .or_else(|| paths.as_ref().and_then(|p| notify_config(p).wrap_threshold))
            .filter(|t: &f64| t.is_finite() && *t >= 0.0)
            .unwrap_or(10.0);
        let caller = notify::Caller::new(environment());
        if let (Some(session), Some(paths)) = (&session, &paths)
            && let Err(why) = notify::attach(paths, &caller, session).await
        {
            eprintln!("cmux-tray wrap: session not reported: {why}");
        }
        let finished = wrap::run(&command, Duration::from_secs_f64(threshold)).await;
        if let (Some(post), Some(paths)) = (&finished.post, &paths)
            && let Err(why) = notify::send(paths, &caller, &notify::Overrides::default(), post).await
        {
            eprintln!("cmux-tray wrap: notice not sent: {why}");
        }
        finished.code
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    ExitCode::from(code.clamp(0, 255) as u8)
}

async fn engine_request(paths: &Paths, method: &str, params: serde_json::Value) -> anyhow::Result<serde_json::Value> {
    engine_request_within(paths, method, params, Duration::from_secs(30)).await
}

async fn engine_request_within(
    paths: &Paths,
    method: &str,
    params: serde_json::Value,
    within: Duration,
) -> anyhow::Result<serde_json::Value> {
    let password = environment().remove("CMUX_SOCKET_PASSWORD").filter(|p| !p.is_empty());
    local::request(&paths.socket(), method, params, password.as_deref(), within)
        .await
        .map_err(|e| anyhow::anyhow!("{e} (is `cmux-tray daemon` or the tray running?)"))
}

async fn login(paths: &Paths, token_stdin: bool, team: Option<String>) -> anyhow::Result<()> {
    if token_stdin {
        let mut token = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut token)?;
        let token = token.trim();
        anyhow::ensure!(!token.is_empty(), "no token on stdin");
        let me = engine_request(paths, "account.sign_in_token", json!({"access_token": token, "team": team})).await?;
        println!("signed in as {}", me["email"].as_str().unwrap_or("?"));
        return Ok(());
    }
    let start = engine_request(paths, "account.device_start", json!({})).await?;
    let url = start["verificationUrl"].as_str().unwrap_or_default();
    println!("To sign in, open {url}");
    println!("and confirm the code {}", start["userCode"].as_str().unwrap_or_default());
    // Opening the page is a courtesy; the line above is what counts.
    let page = url.to_string();
    tokio::spawn(async move {
        if let Err(e) = cmux_tray_engine::reveal::open_sign_in_page(&page).await {
            tracing::debug!("opening the sign-in page: {e}");
        }
    });
    let within = Duration::from_secs(start["expiresInSeconds"].as_u64().unwrap_or(900) + 30);
    let me = engine_request_within(paths, "account.device_wait", json!({"team": team}), within).await?;
    println!("signed in as {}", me["email"].as_str().unwrap_or("?"));
    Ok(())
}

/// The environment as the process was started with it (secrets included), read once by
/// `private::start` before they were taken out of the process's own.
static ENVIRONMENT: std::sync::OnceLock<BTreeMap<String, String>> = std::sync::OnceLock::new();

fn environment() -> BTreeMap<String, String> {
    ENVIRONMENT.get().cloned().unwrap_or_else(|| std::env::vars().collect())
}

async fn daemon(paths: &Paths) -> anyhow::Result<()> {
    let host = match cmux_tray_host::Host::start(paths, &environment(), cmux_tray_engine::desktop::Hearing::Nothing).await {
        Ok(host) => host,
        Err(e) if !is_passing(&e) => {
            // Said once where the person looks: a banner, when a notification server is up.
            let banner = cmux_tray_engine::desktop::Banner {
                item: "app:cannot-start".into(),
                notice_key: "app:cannot-start".into(),
                title: "cmux-tray cannot start".into(),
                body: cmux_tray_engine::text::clean(&format!("{e:#}"), false),
                urgent: false,
                sound: false,
                replaces: None,
            };
            let desktop = cmux_tray_engine::desktop::system("cmux-tray", cmux_tray_engine::desktop::Hearing::Nothing);
            if let Err(why) = tokio::time::timeout(Duration::from_secs(5), desktop.post(&banner))
                .await
                .unwrap_or(Err(cmux_tray_engine::desktop::DesktopError::Unavailable("no answer within 5 s".into())))
            {
                tracing::info!("the reason could not be shown as a banner: {why}");
            }
            return Err(CannotStart(e).into());
        }
        Err(e) => return Err(e),
    };
    process::stop_requested().await;
    tracing::info!("stopping");
    host.stop().await;
    Ok(())
}

/// Whether a failed start may pass by itself (a folder not made yet, a bus still starting), as
/// opposed to one the person must act on: the store unreadable or from a newer version, the
/// config file refused, another engine running.
fn is_passing(e: &anyhow::Error) -> bool {
    use cmux_tray_engine::store::StoreError;
    // The engine's error wraps the store's transparently: it is looked for under both.
    let store = e.chain().find_map(|c| match c.downcast_ref::<EngineError>() {
        Some(EngineError::Store(o)) => Some(o),
        _ => c.downcast_ref::<StoreError>(),
    });
    let refused_store = matches!(store, Some(StoreError::Corrupt { .. } | StoreError::TooNew { .. } | StoreError::Locked { .. }));
    let config = e.chain().any(|c| c.downcast_ref::<cmux_tray_engine::config::ConfigError>().is_some());
    let taken = e.chain().any(|c| c.downcast_ref::<cmux_tray_host::AlreadyRunning>().is_some());
    !(refused_store || config || taken)
}

async fn status(paths: &Paths, as_json: bool) -> anyhow::Result<()> {
    let db: PathBuf = paths.database();
    let running = local::endpoint::is_live(&paths.socket());
    // The running engine knows more (its problems, where the sign-in is kept); else the store.
    let live = if running { engine_request_within(paths, "tray.status", json!({}), Duration::from_secs(5)).await.ok() } else { None };
    let status: Status = match live.and_then(|v| serde_json::from_value(v).ok()) {
        Some(s) => s,
        None if db.exists() => Status::read(&Store::open_read_only(&db)?, Vec::new())?,
        None => Status::default(),
    };
    if as_json {
        let mut v = serde_json::to_value(&status)?;
        v["engineRunning"] = json!(running);
        v["database"] = json!(db.display().to_string());
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    // Text from the cloud or an agent never reaches the terminal as escape sequences (a row
    // stored by an older version was not cleaned when it was made).
    let t = |s: &str| cmux_tray_engine::text::clean(s, false);
    println!("engine: {}", if running { "running" } else { "not running" });
    if let Some(network) = &status.network {
        println!("cloud reached: {network}");
    }
    if let Some(kept) = &status.sign_in_kept_in {
        println!("sign-in kept in: {}", t(kept));
    }
    for p in &status.problems {
        println!("problem: {}", t(p));
    }
    if let Some(p) = &status.paused {
        println!("banners paused: {p}");
    }
    match &status.account {
        Some(a) => println!("account: {}{}", t(&a.email), a.problem.as_deref().map(|p| format!(" — {}", t(p))).unwrap_or_default()),
        None => println!("account: not signed in"),
    }
    let active: Vec<_> = status.follows.iter().filter(|f| f.ended_at.is_none()).collect();
    println!("following: {}", active.len());
    for f in active {
        println!("  {} {}{}", f.kind.as_str(), t(&f.id), f.title.as_deref().map(|n| format!(" — {}", t(n))).unwrap_or_default());
    }
    println!("last notices:");
    for n in &status.notices {
        let why = n.failure.as_deref().map(|f| format!(": {}", t(f))).unwrap_or_default();
        println!("  [{}{why}] {} — {}", n.delivery.map_or(n.state.as_str(), |r| r.as_str()), t(&n.title), t(&n.body));
    }
    Ok(())
}
