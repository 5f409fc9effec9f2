//! The app's log: to stderr and, since a tray app has no terminal, to a file a day in the log
//! directory (a week of them kept). The tray and the windows process write the same files
//! (`cmux_tray_channel::start::logging`, which the windows program calls itself). A panic is
//! logged there too, with its backtrace (a stripped release build's frames are addresses),
//! before the default hook prints it.

use cmux_tray_engine::config::Paths;

/// Returns the guard that flushes the file at exit.
pub fn start() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    cmux_tray_channel::start::logging(Paths::from_env().ok().map(|p| p.log_dir()), cmux_tray_engine::private::create_dir)
}
