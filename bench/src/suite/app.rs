//! Rows 3 and 5: the tray app, release build, on a virtual display with a tray host's watcher
//! and a real Secret Service. Start-up: exec → the tray item registered with the watcher, cold
//! (page cache dropped, when this user may) and warm. Idle: 60 s after start with 100 follows,
//! RSS and PSS of the app and of every child, wake-ups per second (context switches, from /proc)
//! beside the long-polls' own answers; then with the history window open, and after it closed.

use std::process::Child;
use std::time::{Duration, Instant};

use cmux_tray_e2e::{DesktopSession, Home};

use crate::suite::procfs;
use crate::suite::stats::{Figure, Goal};

const HISTORY: &str = "cmux-tray — History";

pub fn run(quick: bool, idle: bool, startup: bool, figures: &mut Vec<Figure>, notes: &mut Vec<String>) -> anyhow::Result<()> {
    let desktop = DesktopSession::start_with_keyring_and_display();
    let display = desktop.display.clone().expect("a display");
    let cloud = cmux_tray_e2e::Cloud::start();
    let user = cloud.sim().add_user("bench@example.com");
    for i in 0..50 {
        cloud.sim().create_run(&user.user_id, &format!("Idle run {i}"));
        cloud.sim().create_handoff(cmux_cloud_sim::state::NewHandoff {
            owner: user.user_id.clone(),
            title: Some(format!("Idle hand-off {i}")),
            ..Default::default()
        });
    }
    let home = Home::new(&cloud.origin(), &desktop.address);
    let watcher = cloud.rt.block_on(Watcher::connect(&desktop.address))?;
    let start_app = |n: usize| -> anyhow::Result<(Child, f64)> {
        let log = home.dir.path().join(format!("app-{n}.log"));
        let mut command = home.app_command(&display, &log);
        command.arg("--hidden").env("CMUX_TRAY_TOKEN", &user.access_token);
        let start = Instant::now();
        let child = command.spawn()?;
        loop {
            if cloud.rt.block_on(watcher.items())? > 0 {
                return Ok((child, start.elapsed().as_secs_f64() * 1000.0));
            }
            anyhow::ensure!(start.elapsed() < Duration::from_secs(30), "no tray item after 30 s (see {})", log.display());
            std::thread::sleep(Duration::from_millis(2));
        }
    };
    let stop = |mut child: Child| -> anyhow::Result<()> {
        cmux_tray_e2e::signal(child.id(), "TERM");
        child.wait()?;
        let gone = Instant::now();
        while cloud.rt.block_on(watcher.items())? > 0 && gone.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    };

    if startup {
        let repeats = if quick { 3 } else { 7 };
        // Cold: nothing of the app in the page cache (needs root; said so when not).
        let mut cold = Vec::new();
        for n in 0..repeats.min(3) {
            if std::fs::write("/proc/sys/vm/drop_caches", "3").is_err() {
                break;
            }
            let (child, ms) = start_app(100 + n)?;
            stop(child)?;
            cold.push(ms);
        }
        if cold.is_empty() {
            notes.push("row 5: cold start-up not measured (the page cache can be dropped only by root)".into());
        } else {
            figures.push(Figure::of(
                5,
                "start-up, cold (exec → tray item registered)",
                "ms",
                &cold,
                None,
                "page cache dropped before each run",
            ));
        }
        let mut warm = Vec::new();
        for n in 1..=repeats {
            let (child, ms) = start_app(n)?;
            warm.push(ms);
            stop(child)?;
        }
        figures.push(Figure::of(
            5,
            "start-up, warm (exec → tray item registered)",
            "ms",
            &warm,
            Goal::at_most(300.0, 1500.0),
            "release app, --hidden, 100 follows restored, the watcher's RegisteredStatusNotifierItems polled every 2 ms",
        ));
    }
    if !idle {
        return Ok(());
    }
    // Each round a fresh app: idle, then the history opened and closed.
    let rounds = if quick { 1 } else { 3 };
    let settle = Duration::from_secs(if quick { 15 } else { 60 });
    let window = Duration::from_secs(if quick { 10 } else { 30 });
    let mut r: Vec<Idle> = Vec::new();
    for round in 0..rounds {
        let mut child = start_app(200 + round)?.0;
        let pid = child.id();
        std::thread::sleep(settle);
        let log = home.dir.path().join(format!("app-{}.log", 200 + round));
        anyhow::ensure!(child.try_wait()?.is_none(), "the app exited while idle: {}", std::fs::read_to_string(&log).unwrap_or_default());
        let (rss, pss, children) = family(pid);
        let breakdown = procfs::rss_by_mapping(pid);
        // Wake-ups, beside the answers the long-polls themselves bring.
        let requests0 = cloud.sim().requests().len();
        let switches0 = procfs::context_switches(pid);
        let faults0 = procfs::major_faults(pid);
        std::thread::sleep(window);
        let wakeups = procfs::context_switches(pid).saturating_sub(switches0) as f64 / window.as_secs_f64();
        let read_back = procfs::major_faults(pid).saturating_sub(faults0) as f64 / window.as_secs_f64();
        let answers = (cloud.sim().requests().len() - requests0) as f64 / window.as_secs_f64();

        // The history window open (a second launch opens it, as a launcher's click does) …
        let mut second = home.app_command(&display, &home.dir.path().join(format!("second-{round}.log")));
        second.env("CMUX_TRAY_TOKEN", &user.access_token).status()?;
        let opened = Instant::now();
        while !desktop.window_titled(HISTORY) {
            anyhow::ensure!(opened.elapsed() < Duration::from_secs(30), "the history window did not open");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_secs(10));
        let open = family(pid);
        // … and closed, as the window manager closes it (WM_DELETE_WINDOW).
        close_window(&display, HISTORY)?;
        std::thread::sleep(Duration::from_secs(10));
        let closed = family(pid);
        let closed_breakdown = procfs::rss_by_mapping(pid);
        stop(child)?;
        r.push(Idle { rss, pss, children, breakdown, wakeups, read_back, answers, open, closed, closed_breakdown });
    }
    let col = |f: &dyn Fn(&Idle) -> f64| r.iter().map(f).collect::<Vec<f64>>();
    let method = format!("release app, tray only, {}s after start, 100 follows; /proc/PID/smaps_rollup", settle.as_secs());
    // The 40 MB is 38.1 MiB; the figure is in MiB, as /proc counts.
    let goal_mib = 40e6 / (1024.0 * 1024.0);
    figures.push(Figure::of(3, "idle app RSS, tray only", "MiB", &col(&|i| i.rss), Goal::at_most(goal_mib, 400.0), &method));
    figures.push(Figure::of(3, "idle app PSS, tray only", "MiB", &col(&|i| i.pss), None, &method));
    figures.push(Figure::of(
        3,
        "idle wake-ups (context switches, all threads)",
        "/s",
        &col(&|i| i.wakeups),
        None,
        &format!("over {} s", window.as_secs()),
    ));
    figures.push(Figure::of(
        3,
        "idle pages read back (major faults)",
        "/s",
        &col(&|i| i.read_back),
        None,
        &format!("over the same {} s: what giving back start-up's pages costs while idle", window.as_secs()),
    ));
    figures.push(Figure::of(3, "long-poll requests in the same time", "/s", &col(&|i| i.answers), None, "the simulator's request log"));
    figures.push(Figure::of(3, "app + children RSS, history open", "MiB", &col(&|i| i.open.0), None, "10 s after it opened"));
    figures.push(Figure::of(3, "app + children PSS, history open", "MiB", &col(&|i| i.open.1), None, "10 s after it opened"));
    figures.push(Figure::of(3, "app + children RSS, history closed", "MiB", &col(&|i| i.closed.0), None, "10 s after it closed"));
    figures.push(Figure::of(3, "app + children PSS, history closed", "MiB", &col(&|i| i.closed.1), None, "10 s after it closed"));
    figures.push(Figure::of(
        3,
        "web processes left after closing",
        "",
        &col(&|i| i.closed.2.len() as f64),
        Goal::at_most(0.0, 0.0),
        "descendants of the app",
    ));
    if let Some(first) = r.first() {
        notes.push(format!(
            "row 3: children while idle: {:?}; with the history open: {:?}; after closing: {:?}",
            first.children, first.open.2, first.closed.2
        ));
        let top = |b: &[(String, u64)]| {
            b.iter().take(8).map(|(name, kib)| format!("{name} {:.1} MiB", *kib as f64 / 1024.0)).collect::<Vec<_>>().join(", ")
        };
        notes.push(format!("row 3: where the idle app's RSS is (first round, /proc/PID/smaps): {}", top(&first.breakdown)));
        notes.push(format!("row 3: and after the history was closed: {}", top(&first.closed_breakdown)));
    }
    Ok(())
}

/// One round of row 3.
struct Idle {
    rss: f64,
    pss: f64,
    children: Vec<String>,
    breakdown: Vec<(String, u64)>,
    wakeups: f64,
    /// Major page faults per second while idle: pages given back at start and needed again.
    read_back: f64,
    answers: f64,
    /// (RSS, PSS, children) with the history open, and after it closed.
    open: (f64, f64, Vec<String>),
    closed: (f64, f64, Vec<String>),
    closed_breakdown: Vec<(String, u64)>,
}

/// RSS and PSS in MiB of `pid` and all its descendants, and the descendants' names.
fn family(pid: u32) -> (f64, f64, Vec<String>) {
    let kids = procfs::descendants(pid);
    let (mut rss, mut pss) = procfs::rss_pss_kib(pid);
    for k in &kids {
        let (r, p) = procfs::rss_pss_kib(*k);
        rss += r;
        pss += p;
    }
    (rss as f64 / 1024.0, pss as f64 / 1024.0, kids.iter().map(|k| procfs::comm(*k)).collect())
}

/// Asks the window titled `title` to close, as a window manager does: a `WM_DELETE_WINDOW`
/// client message (ICCCM §4.2.8).
fn close_window(display: &str, title: &str) -> anyhow::Result<()> {
    let out = std::process::Command::new("xdotool")
        .args(["search", "--onlyvisible", "--name", &format!("^{title}$")])
        .env("DISPLAY", display)
        .output()?;
    let id: u32 = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no window {title:?}"))?;
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt, EventMask};
    let (conn, _) = x11rb::connect(Some(display))?;
    let atom = |name: &str| -> anyhow::Result<u32> { Ok(conn.intern_atom(false, name.as_bytes())?.reply()?.atom) };
    let (protocols, delete) = (atom("WM_PROTOCOLS")?, atom("WM_DELETE_WINDOW")?);
    let event = ClientMessageEvent::new(32, id, protocols, [delete, x11rb::CURRENT_TIME, 0, 0, 0]);
    conn.send_event(false, id, EventMask::NO_EVENT, event)?;
    conn.flush()?;
    Ok(())
}

/// The tray host's StatusNotifierWatcher, asked which items registered.
struct Watcher {
    conn: zbus::Connection,
}

impl Watcher {
    async fn connect(address: &str) -> anyhow::Result<Watcher> {
        Ok(Watcher { conn: zbus::connection::Builder::address(address).build().await? })
    }

    async fn items(&self) -> anyhow::Result<usize> {
        let reply = self
            .conn
            .call_method(
                Some("org.kde.StatusNotifierWatcher"),
                "/StatusNotifierWatcher",
                Some("org.freedesktop.DBus.Properties"),
                "Get",
                &("org.kde.StatusNotifierWatcher", "RegisteredStatusNotifierItems"),
            )
            .await?;
        let value: zbus::OwnedVariant = reply.body().deserialize()?;
        let items: Vec<String> = value.try_into()?;
        Ok(items.len())
    }
}
