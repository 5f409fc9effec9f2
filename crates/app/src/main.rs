//! cmux-tray's tray process: the engine, the tray item and the app's private channel, with no
//! web engine (docs/architecture.md "Two processes"). The windows are another program,
//! `cmux-tray-windows`, started when one is asked for and ended once its last window is gone; it
//! reaches the engine only through the channel this process serves.
//!
//! - `args`: the command line.
//! - `instance`: one tray per user; a second launch hands its arguments to the first.
//! - `serve`: the channel's server: a second launch's arguments, the windows process's calls.
//! - `pages`: what the pages may ask of the engine, one typed command each.
//! - `windows_process`: the windows process, started on demand and told what to show.
//! - `tray`: the menu and its actions, drawn by a StatusNotifierItem on Linux (ksni) and by
//!   tray-icon on macOS and Windows.
//! - `links`: `cmux-tray://` links, and the scheme's registration.
//! - `crash`: an unexpected stop said at the next start.
//! - `autostart`, `demo`.

// A release build on Windows opens no console window beside the tray.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod args;
mod autostart;
mod crash;
mod demo;
mod instance;
mod links;
mod pages;
mod serve;
mod tray;
mod windows_process;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cmux_tray_channel::{ChannelKey, handover};
use cmux_tray_engine::EngineEvent;
use cmux_tray_engine::config::Paths;
use cmux_tray_host::Host;
use tokio_util::sync::CancellationToken;

/// What the tray, the links and the channel share.
pub struct App {
    pub engine: cmux_tray_engine::Engine,
    pub paths: Paths,
    /// This launch's secret: only a windows process that holds it may attach and call.
    pub key: ChannelKey,
    pub windows: Arc<windows_process::Windows>,
    /// Where work started from the tray's own thread runs (tao's loop is not in the runtime).
    pub runtime: tokio::runtime::Handle,
    quit: CancellationToken,
    restart: AtomicBool,
}

impl App {
    /// Ends the app (the tray's Quit): the windows process ends with the channel.
    pub fn quit(&self) {
        self.quit.cancel();
    }

    /// Quits and starts again with the settings open (cloud origins and the socket apply at start).
    pub fn restart(&self) {
        self.restart.store(true, Ordering::SeqCst);
        self.quit.cancel();
    }

    /// Runs engine work off the caller's thread.
    pub fn spawn(&self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        self.runtime.spawn(work);
    }
}

/// What `start` leaves running, for `stop`.
struct Running {
    app: Arc<App>,
    host: Host,
    instance: instance::Instance,
    serving: serve::Serving,
    crash: crash::Running,
    demo_root: Option<std::path::PathBuf>,
    /// The environment this tray was started with, secrets included: a restart hands it on.
    environment: std::collections::BTreeMap<String, String>,
}

/// Starts the engine and what shows it; `None` when a running tray took the arguments.
async fn start(
    args: &args::Args,
    argv: &[String],
    environment: &std::collections::BTreeMap<String, String>,
    key: ChannelKey,
) -> anyhow::Result<Option<Running>> {
    let (paths, env) = if args.demo { demo::prepare().await? } else { (Paths::from_env()?, environment.clone()) };
    let (instance, listener) = match instance::claim(&paths, argv).await? {
        instance::Claim::First(instance, listener) => (instance, listener),
        instance::Claim::HandedOver => return Ok(None),
    };
    let host = Host::start(&paths, &env, cmux_tray_engine::desktop::Hearing::Clicks).await?;
    let engine = host.engine.clone();
    let app = Arc::new(App {
        engine: engine.clone(),
        windows: Arc::new(windows_process::Windows::new(paths.channel(), key.clone())),
        key,
        paths: paths.clone(),
        runtime: tokio::runtime::Handle::current(),
        quit: CancellationToken::new(),
        restart: AtomicBool::new(false),
    });
    if args.key_on_stdin
        && let Some(starter) = windows_process::starting_windows_process()
    {
        app.windows.started_by(starter);
    }
    let demo_root = args.demo.then(|| paths.data_dir.parent().map(|p| p.to_path_buf())).flatten();
    let crash = crash::start(&app).await;
    let serving = serve::start(app.clone(), listener);
    links::start(&app, &args.links);
    if args.demo {
        demo::after_start(&app);
    }
    if let Some(page) = args.open {
        app.windows.open(&app, page, None);
    }
    // The windows redraw when the engine says something changed; a click on a banner that
    // only the app can answer (a Run's card, the history) opens its window.
    let (for_events, mut events) = (app.clone(), engine.subscribe());
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(EngineEvent::Clicked { notice }) => {
                    windows_process::open_clicked(&for_events, &notice);
                    let _ = for_events.engine.revealed(&notice.key).await;
                }
                Ok(EngineEvent::Changed) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => for_events.windows.changed(),
                Err(_) => return,
            }
        }
    });
    let on_signal = app.clone();
    tokio::spawn(async move {
        cmux_tray_host::stop_requested().await;
        on_signal.quit();
    });
    Ok(Some(Running { app, host, instance, serving, crash, demo_root, environment: environment.clone() }))
}

/// Stops the engine, lets go of the instance, and starts again if asked.
async fn stop(running: Running) {
    let Running { app, host, instance, serving, crash, demo_root, environment } = running;
    app.windows.close();
    serving.stop().await;
    host.stop().await;
    crash.stopped_cleanly();
    drop(instance);
    if let Some(root) = demo_root {
        let _ = std::fs::remove_dir_all(root);
    }
    if app.restart.load(Ordering::SeqCst) {
        // The new tray gets the environment this one was started with; the secrets this process
        // took out of its own (the socket's password, a token) on its standard input.
        let restart = |exe| -> std::io::Result<()> {
            let mut tray = std::process::Command::new(exe)
                .args(["--open", "settings", handover::SECRETS_ON_STDIN])
                .env_clear()
                .envs(handover::without_secrets(&environment))
                .stdin(std::process::Stdio::piped())
                .spawn()?;
            tray.stdin
                .take()
                .map(|mut stdin| std::io::Write::write_all(&mut stdin, handover::secrets_block(&environment).as_bytes()))
                .transpose()?;
            Ok(())
        };
        match std::env::current_exe().and_then(restart) {
            Ok(()) => tracing::info!("restarted"),
            Err(e) => tracing::error!("restarting: {e}"),
        }
    }
}

/// Says why the app cannot start, where a person will see it (the windows program draws the
/// dialog: this process has no toolkit), and exits non-zero.
fn cannot_start(why: &str) -> ! {
    tracing::error!("cannot start: {why}");
    eprintln!("cmux-tray-app: cannot start: {why}");
    if let Some(program) = cmux_tray_channel::program(cmux_tray_channel::Program::Windows) {
        let _ = std::process::Command::new(program).args(["--cannot-start", why]).status();
    }
    std::process::exit(1)
}

fn main() {
    // Before any thread: private files from here on, and no secret in a child's environment
    // (the windows process, the opener). The settings read the secrets from what it returns.
    let mut environment = cmux_tray_engine::private::start();
    // `--help`, `--version` and a bad argument end here, before anything starts.
    let args = <args::Args as clap::Parser>::parse();
    if args.man {
        return match args::man() {
            Ok(()) => {}
            Err(e) => eprintln!("cmux-tray-app: the man page: {e}"),
        };
    }
    let _log = cmux_tray_host::logging::start();
    let argv: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap_or_else(|e| cannot_start(&e.to_string()));
    // The secrets, then the key: read before anything else could take standard input.
    if args.secrets_on_stdin {
        match handover::read_secrets(std::io::stdin().lock()) {
            Ok(secrets) => environment.extend(secrets),
            Err(e) => tracing::warn!("{}: {e}; this tray goes without them", handover::SECRETS_ON_STDIN),
        }
    }
    // A key that cannot be read means a
    // windows process started this tray and will not be able to attach: a new key, said.
    let key = match args.key_on_stdin {
        true => ChannelKey::read_line(std::io::stdin().lock()).unwrap_or_else(|e| {
            tracing::warn!("--key-on-stdin: {e}; the windows will be started by this tray");
            ChannelKey::generate()
        }),
        false => ChannelKey::generate(),
    };
    let running = match runtime.block_on(start(&args, &argv, &environment, key)) {
        Ok(Some(running)) => running,
        Ok(None) => return,
        Err(e) => cannot_start(&format!("{e:#}")),
    };
    // The tests' deliberate crash (a debug build only): the panic, its backtrace in the log, and
    // the next start's notice.
    #[cfg(debug_assertions)]
    if environment.contains_key("CMUX_TRAY_TEST_PANIC") {
        panic!("a deliberate panic (CMUX_TRAY_TEST_PANIC)");
    }
    tray::run(runtime, running.app.clone(), move |runtime| runtime.block_on(stop(running)));
}
