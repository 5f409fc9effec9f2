//! What each of the app's programs does first, before any other thread exists: its files
//! private from their first byte (umask 077: SQLite's WAL, the log, WebKit's caches), no secret
//! left in its environment for a child to inherit, and its log (engine's `private` says why;
//! docs/architecture.md "Private files, no secret in a child").

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use tracing_appender::non_blocking::NonBlockingBuilder;

/// Variables that hold a secret: read once at start, never inherited by a child.
pub const SECRET_VARS: &[&str] = &["CMUX_TRAY_TOKEN", "CMUX_SOCKET_PASSWORD"];

/// The umask the process was started with (restored for the person's own programs).
static PERSON_UMASK: AtomicU32 = AtomicU32::new(0o022);

/// Variables this process set for itself alone at start (a library's switch, not the person's
/// choice), kept out of the person's programs.
static OWN_VARS: OnceLock<Vec<&'static str>> = OnceLock::new();

/// Call first in `main`, before any other thread exists. Returns the environment as it was
/// (secrets included, for the settings), having set the umask to 077 and removed
/// [`SECRET_VARS`] from the process's own environment, so no child (the opener, `xdg-mime`,
/// the web processes) inherits them.
pub fn start() -> BTreeMap<String, String> {
    start_with(&[])
}

/// [`start`], and `own` set for this process alone: each variable the person did not set
/// already is set here, and taken out again for the programs started on their behalf (the
/// engine's `private::person_command`).
pub fn start_with(own: &[(&'static str, &'static str)]) -> BTreeMap<String, String> {
    PERSON_UMASK.store(private_umask(), Ordering::Relaxed);
    let env: BTreeMap<String, String> =
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
    for var in SECRET_VARS {
        // SAFETY: called first in main, before any other thread exists that could read the
        // environment at the same time (the one condition of `remove_var` and `set_var`).
        unsafe { std::env::remove_var(var) };
    }
    let mut set = Vec::new();
    for (var, value) in own {
        if !env.contains_key(*var) {
            // SAFETY: as above.
            unsafe { std::env::set_var(var, value) };
            set.push(*var);
        }
    }
    let _ = OWN_VARS.set(set);
    env
}

/// The umask the person started this process with.
pub fn person_umask() -> u32 {
    PERSON_UMASK.load(Ordering::Relaxed)
}

/// The variables [`start_with`] set for this process alone.
pub fn own_vars() -> &'static [&'static str] {
    OWN_VARS.get().map(Vec::as_slice).unwrap_or_default()
}

/// Sets the process's umask to 077 and returns the one it had.
// `mode_t` is 16 bits on macOS, 32 on Linux: kept as u32 on every platform.
#[cfg(unix)]
#[allow(clippy::useless_conversion)]
fn private_umask() -> u32 {
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077)).bits().into()
}

/// Windows has no umask: the profile's folders are the person's by their inherited ACL.
#[cfg(windows)]
fn private_umask() -> u32 {
    0
}

/// Lines the log's writer thread may have waiting; more are dropped (never blocks a caller).
/// tracing-appender's default, 128,000, is a queue allocated whole at start: 4 MiB resident in
/// every process, a fifth of the idle tray (docs/benchmarks.md, row 3). A tray logs a few lines
/// a minute.
pub const LOG_QUEUE: usize = 1024;

/// The log: to standard error, and to a file a day in `log_dir` (a week kept; the folder made by
/// `prepare`, private), at `CMUX_TRAY_LOG`'s level (`info` else). A panic is logged with its
/// backtrace. Keep the guard for as long as the process runs: dropping it flushes the file.
pub fn logging(
    log_dir: Option<std::path::PathBuf>,
    prepare: impl FnOnce(&std::path::Path) -> std::io::Result<()>,
) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let backtrace = std::backtrace::Backtrace::force_capture();
        tracing::error!("panicked: {info}\nstack backtrace:\n{backtrace}");
        default(info);
    }));
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = || tracing_subscriber::EnvFilter::try_from_env("CMUX_TRAY_LOG").unwrap_or_else(|_| "info".into());
    let stderr = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let file = log_dir.and_then(|dir| {
        prepare(&dir).ok()?;
        tracing_appender::rolling::Builder::new()
            .rotation(tracing_appender::rolling::Rotation::DAILY)
            .filename_prefix("cmux-tray")
            .filename_suffix("log")
            .max_log_files(7)
            .build(dir)
            .ok()
    });
    match file {
        Some(appender) => {
            let (writer, guard) = NonBlockingBuilder::default().buffered_lines_limit(LOG_QUEUE).finish(appender);
            let file_layer = tracing_subscriber::fmt::layer().with_ansi(false).with_writer(writer);
            tracing_subscriber::registry().with(filter()).with(stderr).with(file_layer).init();
            Some(guard)
        }
        None => {
            tracing_subscriber::registry().with(filter()).with(stderr).init();
            None
        }
    }
}

/// Makes `dir` and its missing parents, each 0700 on Unix (a program without the engine's
/// `private::create_dir`, which also tightens a looser one: the tray does at its start).
pub fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}
