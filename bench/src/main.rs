//! `cmux-tray-bench`: the benchmark suite (`scripts/bench` builds and runs it).
//!
//! Each row of the table is a module; every one drives the built binaries against the
//! simulator and a recorder on a private bus, as the e2e tests do, and reads costs from /proc:
//!
//! - [`latency`](suite::latency): row 1, change → banner, and 60 s polling from the same event times.
//! - [`scale`](suite::scale): row 2, 10,000 follows in one daemon, over HTTP/2 (the default) and over HTTP/1.1.
//! - [`app`](suite::app): rows 3 and 5, the tray app idle (memory, wake-ups, the first menu and window after
//!   an hour-like idle) and its start-up.
//! - [`local`](suite::local): row 4, the local socket's requests per second, and `cmux-tray notify` against
//!   `notify-send`.
//! - [`load`](suite::load): row 6, 200 clients posting for a minute while 10,000 follows are held.
//! - [`helper`](suite::helper): what only root may do for a bench run as a person does.
//!
//! `cmux-bench-webview` (`src/bin/`) is row 3's bare WebKitGTK window, the floor under the app's.
//!
//! Figures are medians of repeated runs with their spread, written to `bench-results/` as
//! Markdown and JSON. `--quick` is the CI form: smaller, and it fails when a figure is past its
//! gate (far beyond its goal: a regression, not a missed goal).
//!
//! The suite measures a Linux desktop (/proc, a private D-Bus session, X); built elsewhere, it
//! says so and exits.

#[cfg(target_os = "linux")]
mod suite;

#[cfg(target_os = "linux")]
fn main() -> anyhow::Result<()> {
    suite::main()
}

#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    eprintln!("cmux-tray-bench measures a Linux desktop (/proc, D-Bus); run it on Linux");
    std::process::ExitCode::from(2)
}
