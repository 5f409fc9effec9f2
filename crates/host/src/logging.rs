//! The app's log: to stderr and, since a tray app has no terminal, to a file a day in the log
//! directory (a week of them kept). The tray and the windows process write the same files. A
//! panic is logged there too, with its backtrace (a stripped release build's frames are
//! addresses), before the default hook prints it.

use cmux_tray_engine::config::Paths;

/// Returns the guard that flushes the file at exit.
pub fn start() -> Option<tracing_appender::non_blocking::WorkerGuard> {
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
    let file = Paths::from_env().ok().and_then(|p| {
        cmux_tray_engine::private::create_dir(&p.log_dir()).ok()?;
        tracing_appender::rolling::Builder::new()
            .rotation(tracing_appender::rolling::Rotation::DAILY)
            .filename_prefix("cmux-tray")
            .filename_suffix("log")
            .max_log_files(7)
            .build(p.log_dir())
            .ok()
    });
    match file {
        Some(appender) => {
            let (writer, guard) = tracing_appender::non_blocking(appender);
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
