//! Rows 3 and 5: the tray app, release build, on a virtual display with a tray host's watcher
//! and a real Secret Service. Start-up: exec → the tray item registered with the watcher, cold
//! (page cache dropped, when this user may) and warm. Idle: 60 s after start with 100 follows,
//! RSS, PSS and private memory of the tray process, wake-ups per second (context switches, from
//! /proc) beside the long-polls' own answers; a window opened warm (a launch → the history
//! mapped, which it is once its page has loaded), timed both by polling `xdotool` and by the X
//! server's map event, beside a bare WebKitGTK window (the floor: `cmux-bench-webview`); then
//! the tray and every child with the history open, and after it closed (the windows process and
//! its web processes gone); last, a window with the page cache emptied.

use std::process::Child;
use std::time::{Duration, Instant};

use cmux_tray_e2e::maps::MapWatch;
use cmux_tray_e2e::{DesktopSession, Home};

use crate::suite::stats::{self, Figure, Gate, Goal};
use crate::suite::{helper, procfs};

/// The history window's title in the session's language (`page-history-title` in
/// crates/engine/lang/<code>.ftl): `xdotool --name` looks for it, and the map watch for it exactly.
fn history_title(lang: &str) -> &'static str {
    if lang.starts_with("de") { "cmux-tray — Verlauf" } else { "cmux-tray — History" }
}

// The quick form's gates, about 3× the debug app's own quick figures (AMD EPYC, 2 cores, as a
// normal user from root-owned binaries): idle RSS 40.5 MiB and private 37.3 MiB (2026-12-04
// 22:40, the log's queue no longer 4 MiB; 43.9 and 40.7 before), most of it the debug binary's
// own pages. Warm start-up is gated at 2× the debug app's 61 ms: at 3× it passed a start-up 5×
// the release figure (28 ms), and a 100 ms sleep put in start-up must fail it.
const GATE_STARTUP: Option<Gate> = Gate::below(120.0);
/// The libraries of a web engine (WebKitGTK and its JavaScript engine): the tray maps none of
/// them (README: "no web engine"; the windows are a process of their own).
const WEB_ENGINE: [&str; 2] = ["libwebkit2gtk", "libjavascriptcoregtk"];
const GATE_RSS: Option<Gate> = Gate::below(120.0);
const GATE_USS: Option<Gate> = Gate::below(110.0);
/// A new window (warm, by either wait, and after an hour-like idle): 3× the median polled one
/// (319 ms) of three quick runs of the debug build, 2026-12-05 20:43–21:11 UTC (polled 220, 319
/// and 359 ms; by the map event 199, 310 and 270; after the idle 217, 270 and 291). CI's machine
/// once read 656 ms. The figures from before issue 46 pass it (`3e40db5`, one quick run: warm
/// 346 ms, after the idle 343): a gate at 3× cannot tell a return to them.
const GATE_NEW_WINDOW: Option<Gate> = Gate::below(950.0);
/// The first window since the tray started: 3× the slowest of the same quick runs (242, 486 and
/// 265 ms), and past the release build's slowest rounds (983 ms: the first round's, after the
/// cold start-ups had emptied the page cache, before they moved to the row's end). `3e40db5`'s
/// 534 ms passes it.
const GATE_WINDOW_FIRST: Option<Gate> = Gate::below(1500.0);
/// A window opened again while kept after its close: 3.4× the debug build's 35 ms (the median of
/// its reopens, 2026-12-05, quick form), as CI's machine once read 125 ms for a single reopen;
/// one that starts a new windows process (380 ms and more) fails it.
const GATE_WINDOW_KEPT: Option<Gate> = Gate::below(120.0);
/// The slowest of a round's reopens: the goal itself (250 ms), past CI's single 125 ms, and
/// short of a reopen that starts a new windows process (380 ms and more in the debug build).
const GATE_WINDOW_KEPT_SLOWEST: Option<Gate> = Gate::below(250.0);
/// When the closed history's memory is read.
const CLOSED: &str = "once its processes ended (its kept while over), or 30 s after it closed";
/// How soon after its close the history is opened again, as a person who closed it a moment
/// too soon would.
const REOPENED_AFTER: Duration = Duration::from_secs(2);
/// Reopens a round, each after its own close: one alone read 33 to 59 ms here, 125 ms on CI.
const REOPENS: usize = 3;

/// `lang` is the session's `LANG` for the tray and every launch (`C.UTF-8`, else `--lang`).
pub fn run(quick: bool, idle: bool, startup: bool, lang: &str, figures: &mut Vec<Figure>, notes: &mut Vec<String>) -> anyhow::Result<()> {
    let history = history_title(lang);
    notes.push(format!("rows 3 and 5: the session's LANG={lang}"));
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
        command.arg("--hidden").env("CMUX_TRAY_TOKEN", &user.access_token).env("LANG", lang);
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
        let mut warm = Vec::new();
        for n in 1..=repeats {
            let (child, ms) = start_app(n)?;
            warm.push(ms);
            stop(child)?;
        }
        figures.push(
            Figure::of(
                5,
                "start-up, warm (exec → tray item registered)",
                "ms",
                &warm,
                Goal::at_most(100.0),
                "--hidden, 100 follows restored, the watcher's RegisteredStatusNotifierItems polled every 2 ms",
            )
            .gated(GATE_STARTUP),
        );
    }
    // Cold: nothing of the app in the page cache (root or the helper; said so when neither).
    // Last in the row: an emptied page cache makes the next window start WebKit from the disk
    // (about 600 ms against 300). Not in the quick form: it has no gate, and an emptied page
    // cache slows what CI runs next.
    let cold_start_ups = |figures: &mut Vec<Figure>, notes: &mut Vec<String>| -> anyhow::Result<()> {
        if !startup {
            return Ok(());
        }
        let mut cold = Vec::new();
        for n in 0..if quick { 0 } else { 3 } {
            if !helper::drop_caches()? {
                break;
            }
            let (child, ms) = start_app(100 + n)?;
            stop(child)?;
            cold.push(ms);
        }
        if quick {
            notes.push("row 5: cold start-up is not in the quick form".into());
        } else if cold.is_empty() {
            notes.push("row 5: cold start-up not measured (dropping the page cache needs root or scripts/bench's helper)".into());
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
        Ok(())
    };
    if !idle {
        return cold_start_ups(figures, notes);
    }
    // Each round a fresh app: idle; its first menu; its windows; an hour-like idle, then its
    // first menu and its first window; the history closed again; a window with the page cache
    // emptied.
    let rounds = if quick { 1 } else { 3 };
    let settle = Duration::from_secs(if quick { 10 } else { 60 });
    let window = Duration::from_secs(if quick { 5 } else { 30 });
    // How long the window's figures wait after it opened and after it closed.
    let after_window = Duration::from_secs(if quick { 5 } else { 10 });
    let mut r: Vec<Idle> = Vec::new();
    let mut paged_out = true;
    for round in 0..rounds {
        let mut child = start_app(200 + round)?.0;
        let pid = child.id();
        std::thread::sleep(settle);
        let log = home.dir.path().join(format!("app-{}.log", 200 + round));
        anyhow::ensure!(child.try_wait()?.is_none(), "the app exited while idle: {}", std::fs::read_to_string(&log).unwrap_or_default());
        let idle = family(pid)?;
        let breakdown = procfs::rss_by_mapping(pid)?;
        let web_engine = procfs::mapped_files(pid, &WEB_ENGINE)?;
        // Wake-ups, beside the answers the long-polls themselves bring.
        let requests0 = cloud.sim().requests().len();
        let switches0 = procfs::context_switches(pid)?;
        let faults0 = procfs::major_faults(pid)?;
        std::thread::sleep(window);
        let wakeups = procfs::switches_between(&switches0, &procfs::context_switches(pid)?) as f64 / window.as_secs_f64();
        let read_back = procfs::major_faults(pid)?.saturating_sub(faults0) as f64 / window.as_secs_f64();
        let answers = (cloud.sim().requests().len() - requests0) as f64 / window.as_secs_f64();
        let menu_warm = cloud.rt.block_on(watcher.open_menu())?;
        // The first window since the tray started; closed, and opened again a moment later,
        // while the closed window is kept (docs/architecture.md "Two processes"); closed again,
        // and once its process ended, the next: a new windows process.
        let window_first = open_history(&home, &display, &desktop, &user.access_token, lang, &format!("first-{round}"))?;
        close(&desktop, history)?;
        let mut kept = None;
        let mut window_kept = Vec::with_capacity(REOPENS);
        for again in 0..REOPENS {
            std::thread::sleep(REOPENED_AFTER);
            // A window still shown would make the next open a figure of nothing.
            anyhow::ensure!(!desktop.window_titled(history), "the history still shows {REOPENED_AFTER:?} after its close");
            anyhow::ensure!(!procfs::descendants(pid)?.is_empty(), "the closed history's process ended within {REOPENED_AFTER:?}");
            if kept.is_none() {
                kept = Some(family(pid)?);
            }
            window_kept.push(open_history(&home, &display, &desktop, &user.access_token, lang, &format!("kept-{round}-{again}"))?);
            close(&desktop, history)?;
        }
        let kept = kept.expect("REOPENS is at least 1");
        let given = given_to_windows(pid)?;
        if round == 0 {
            notes.push(format!("row 3: what the tray gave its windows process, given the bare window too: {given:?}"));
            // Untimed: the first bare window makes WebKit's folders of its own, which the app's
            // windows have made by now.
            bare_window(&home, &display, &desktop, lang, &given, "bare-first")?;
        }
        windows_ended(pid)?;
        // A new windows process four times: polled, by the map event, by the map event, polled;
        // each wait once right after the kept window's process ended and once after its twin's.
        // A bare WebKitGTK window after each polled one, timed as it is: the floor under it.
        let (mut window_warm, mut window_warm_event, mut poll_lag, mut bare) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (n, wait) in [Wait::Polled, Wait::MapEvent, Wait::MapEvent, Wait::Polled].into_iter().enumerate() {
            let timed = open_new_window(&home, &display, &desktop, &user.access_token, lang, &format!("warm-{round}-{n}"), wait)?;
            match wait {
                Wait::Polled => {
                    window_warm.push(timed.shown);
                    poll_lag.push(timed.shown - timed.mapped);
                }
                Wait::MapEvent => window_warm_event.push(timed.mapped),
            }
            close(&desktop, history)?;
            windows_ended(pid)?;
            if let Wait::Polled = wait {
                bare.push(bare_window(&home, &display, &desktop, lang, &given, &format!("bare-{round}-{n}"))?);
            }
        }

        // An hour-like idle: the kernel has taken back the pages of an app nobody touched while
        // others ran (what it may: clean file pages, and anonymous ones where there is swap).
        let mut after = None;
        if helper::page_out(pid)? {
            let given_back = family(pid)?;
            let faults = procfs::major_faults(pid)?;
            let menu = cloud.rt.block_on(watcher.open_menu())?;
            let menu_faults = procfs::major_faults(pid)?.saturating_sub(faults);
            helper::page_out(pid)?;
            after = Some(AfterIdle { given_back, menu, menu_faults, window: 0.0 });
        } else {
            paged_out = false;
        }

        // The history window opened again, after the hour-like idle.
        let window = open_history(&home, &display, &desktop, &user.access_token, lang, &format!("second-{round}"))?;
        if let Some(a) = &mut after {
            a.window = window;
        }
        std::thread::sleep(after_window);
        let open = family(pid)?;
        // … and closed, as the window manager closes it (WM_DELETE_WINDOW).
        close(&desktop, history)?;
        let closing = Instant::now();
        // Not an error here: "processes left after closing" reads any that stayed.
        windows_end(pid)?;
        std::thread::sleep(after_window.saturating_sub(closing.elapsed()));
        let closed = family(pid)?;
        let closed_breakdown = procfs::rss_by_mapping(pid)?;
        // A new window with the page cache emptied, as the first after a boot: WebKit and the
        // libraries it links read from the disk. Last in the round, so that no other figure
        // pays for it; not in the quick form, as the cold start-ups.
        let window_cold = if !quick && helper::drop_caches()? {
            let ms = open_history(&home, &display, &desktop, &user.access_token, lang, &format!("cold-{round}"))?;
            close(&desktop, history)?;
            windows_ended(pid)?;
            Some(ms)
        } else {
            None
        };
        stop(child)?;
        r.push(Idle {
            idle,
            breakdown,
            web_engine,
            wakeups,
            read_back,
            answers,
            menu_warm,
            window_first,
            window_kept,
            window_warm,
            window_warm_event,
            poll_lag,
            bare,
            kept,
            after,
            open,
            closed,
            closed_breakdown,
            window_cold,
        });
    }
    let col = |f: &dyn Fn(&Idle) -> f64| r.iter().map(f).collect::<Vec<f64>>();
    let method = format!("the tray process, no window, {}s after start, 100 follows; /proc/PID/smaps_rollup", settle.as_secs());
    // The goals are in MB (docs/benchmarks.md, row 3); the figures in MiB, as /proc counts.
    let mib = |mb: f64| mb * 1e6 / (1024.0 * 1024.0);
    figures.push(Figure::of(3, "idle tray RSS", "MiB", &col(&|i| i.idle.rss), Goal::at_most(mib(20.0)), &method).gated(GATE_RSS));
    figures.push(Figure::of(3, "idle tray PSS", "MiB", &col(&|i| i.idle.pss), None, &method));
    figures.push(
        Figure::of(
            3,
            "web engine libraries mapped in the idle tray",
            "",
            &col(&|i| i.web_engine.len() as f64),
            Goal::at_most(0.0),
            &format!("files in /proc/PID/maps named {}*", WEB_ENGINE.join("* or ")),
        )
        .gated(Gate::below(0.0)),
    );
    figures.push(Figure::of(3, "idle tray private (USS)", "MiB", &col(&|i| i.idle.uss), Goal::at_most(mib(15.0)), &method).gated(GATE_USS));
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
        "idle pages read in (major faults)",
        "/s",
        &col(&|i| i.read_back),
        None,
        &format!("over the same {} s: pages the idle tray had to read back from disk", window.as_secs()),
    ));
    figures.push(Figure::of(3, "long-poll requests in the same time", "/s", &col(&|i| i.answers), None, "the simulator's request log"));
    let menu = "the tray host's calls when its icon is clicked: dbusmenu AboutToShow(0), then GetLayout(0, -1)";
    figures.push(Figure::of(3, "menu opened, warm", "ms", &col(&|i| i.menu_warm), None, menu));
    let launch = "a launch (as a launcher's click) → the history window mapped, shown once its page loaded (xdotool polled every 5 ms)";
    // The window's goals are issue 46's (docs/benchmarks.md, "Not met in this run"): 400 ms for the
    // first window since start, 250 ms for a warm one.
    figures.push(
        Figure::of(3, "first window since the tray started", "ms", &col(&|i| i.window_first), Goal::at_most(400.0), launch)
            .gated(GATE_WINDOW_FIRST),
    );
    // Two a round of each; `all` reads every round's.
    let all = |f: &dyn Fn(&Idle) -> &Vec<f64>| r.iter().flat_map(|i| f(i).iter().copied()).collect::<Vec<f64>>();
    let turns =
        "four new windows a round, in the order polled, map event, map event, polled, a bare WebKitGTK window after each polled one";
    figures.push(
        Figure::of(
            3,
            "a window opened, warm",
            "ms",
            &all(&|i| &i.window_warm),
            Goal::at_most(250.0),
            &format!("a new windows process, once the closed one's ended; {turns}: {launch}"),
        )
        .gated(GATE_NEW_WINDOW),
    );
    // The same path timed without the poll, which starts a program every 5 ms beside the window
    // it waits for. No goal: the goal is judged by the method it was set with, above.
    figures.push(
        Figure::of(
            3,
            "a window opened, warm, timed by its map event",
            "ms",
            &all(&|i| &i.window_warm_event),
            None,
            &format!("as the warm one above, {turns}: to the X server's MapNotify for the window, no program started"),
        )
        .gated(GATE_NEW_WINDOW),
    );
    figures.push(Figure::of(
        3,
        "the poll's lag behind the map event",
        "ms",
        &all(&|i| &i.poll_lag),
        None,
        "the warm polled windows: the poll's time less the map event's, read on a thread beside it, of the same launch",
    ));
    // The floor: what WebKitGTK alone takes for a window here. No goal and no gate (it is not the
    // app's); the app's share is the warm window less it, round by round.
    figures.push(Figure::of(
        3,
        "a bare WebKitGTK window, the floor",
        "ms",
        &all(&|i| &i.bare),
        None,
        "cmux-bench-webview: GTK, one webview, a page of a few lines, shown once loaded, the windows process's environment; its exec → mapped (xdotool polled every 5 ms), after each polled new window",
    ));
    figures.push(Figure::of(
        3,
        "a window opened, warm, less the bare window",
        "ms",
        &col(&|i| stats::median(&i.window_warm) - stats::median(&i.bare)),
        None,
        "each round's median polled new window less its median bare window: the launch handed to the tray, Tauri, the page, its data",
    ));
    let again = format!("{} s after its close, while it is kept hidden", REOPENED_AFTER.as_secs());
    figures.push(
        Figure::of(
            3,
            "a window opened again, kept since its close",
            "ms",
            &all(&|i| &i.window_kept),
            Goal::at_most(250.0),
            &format!("{again}, {REOPENS} a round, each after its own close: {launch}"),
        )
        .gated(GATE_WINDOW_KEPT),
    );
    // The median hides one slow reopen a round, and a regression may slow only some (the first
    // after a new window's close, say): each round's slowest is gated too.
    figures.push(
        Figure::of(
            3,
            "a window opened again, the slowest of a round",
            "ms",
            &col(&|i| stats::max(&i.window_kept)),
            None,
            &format!("{again}, the slowest of each round's {REOPENS}: {launch}"),
        )
        .gated(GATE_WINDOW_KEPT_SLOWEST),
    );
    figures.push(Figure::of(3, "tray + children RSS, a closed window kept", "MiB", &col(&|i| i.kept.rss), None, &again));
    figures.push(Figure::of(3, "tray + children PSS, a closed window kept", "MiB", &col(&|i| i.kept.pss), None, &again));
    if paged_out {
        let after = |f: &dyn Fn(&AfterIdle) -> f64| r.iter().filter_map(|i| i.after.as_ref().map(f)).collect::<Vec<f64>>();
        let idle = "after an hour-like idle: every mapping of the app paged out (process_madvise MADV_PAGEOUT, as root)";
        figures.push(Figure::of(3, "RSS after an hour-like idle", "MiB", &after(&|a| a.given_back.rss), None, idle));
        figures.push(Figure::of(3, "first menu after an hour-like idle", "ms", &after(&|a| a.menu), None, &format!("{idle}; {menu}")));
        figures.push(Figure::of(3, "pages read in for that menu", "", &after(&|a| a.menu_faults as f64), None, "major faults"));
        figures.push(
            Figure::of(
                3,
                "first window after an hour-like idle",
                "ms",
                &after(&|a| a.window),
                None,
                &format!("{idle} again; a second launch → the history window mapped (xdotool polled every 5 ms)"),
            )
            .gated(GATE_NEW_WINDOW),
        );
    } else {
        notes.push("row 3: the hour-like idle not measured: paging out needs root or scripts/bench's helper".into());
    }
    let cold: Vec<f64> = r.iter().filter_map(|i| i.window_cold).collect();
    if !cold.is_empty() {
        figures.push(Figure::of(
            3,
            "a new window, the page cache emptied",
            "ms",
            &cold,
            None,
            "the page cache dropped (what no running process maps, as WebKit after a boot) at the end of each round: a launch → the history window mapped (xdotool polled every 5 ms)",
        ));
    } else if !quick {
        notes.push("row 3: the window with the page cache emptied not measured: dropping it needs root or scripts/bench's helper".into());
    }
    figures.push(Figure::of(3, "tray + children RSS, history open", "MiB", &col(&|i| i.open.rss), None, "10 s after it opened"));
    figures.push(Figure::of(3, "tray + children PSS, history open", "MiB", &col(&|i| i.open.pss), None, "10 s after it opened"));
    figures.push(Figure::of(3, "tray + children RSS, history closed", "MiB", &col(&|i| i.closed.rss), None, CLOSED));
    figures.push(Figure::of(3, "tray + children PSS, history closed", "MiB", &col(&|i| i.closed.pss), None, CLOSED));
    figures.push(
        Figure::of(
            3,
            "processes left after closing",
            "",
            &col(&|i| i.closed.children.len() as f64),
            Goal::at_most(0.0),
            "descendants of the tray (the windows process, web processes), once they ended or 30 s after closing",
        )
        .gated(Gate::below(0.0)),
    );
    if let Some(first) = r.first() {
        notes.push(format!(
            "row 3: children while idle: {:?}; with the history open: {:?}; after closing: {:?}",
            first.idle.children, first.open.children, first.closed.children
        ));
        let top = |b: &[(String, u64)]| {
            b.iter().take(8).map(|(name, kib)| format!("{name} {:.1} MiB", *kib as f64 / 1024.0)).collect::<Vec<_>>().join(", ")
        };
        notes.push(format!("row 3: where the idle app's RSS is (first round, /proc/PID/smaps): {}", top(&first.breakdown)));
        notes.push(format!("row 3: web engine libraries the idle tray mapped (first round): {:?}", first.web_engine));
        notes.push(format!("row 3: and after the history was closed: {}", top(&first.closed_breakdown)));
    }
    cold_start_ups(figures, notes)
}

/// One round of row 3.
struct Idle {
    idle: Family,
    breakdown: Vec<(String, u64)>,
    /// The web engine's libraries the idle tray maps (none).
    web_engine: Vec<String>,
    wakeups: f64,
    /// Major page faults per second while idle: pages read back from disk.
    read_back: f64,
    answers: f64,
    menu_warm: f64,
    /// A launch → the history window mapped: the first since the tray started, the same opened
    /// again while kept after its close, and the next once its process ended.
    window_first: f64,
    window_kept: Vec<f64>,
    window_warm: Vec<f64>,
    /// New windows like `window_warm`'s, each timed by the X server's map event instead.
    window_warm_event: Vec<f64>,
    /// How long after its map event the poll found each of `window_warm`'s windows.
    poll_lag: Vec<f64>,
    /// A bare WebKitGTK window (`cmux-bench-webview`) after each polled new window, timed as it.
    bare: Vec<f64>,
    /// The tray and its children while the closed window is kept.
    kept: Family,
    after: Option<AfterIdle>,
    /// With the history open, and after it closed.
    open: Family,
    closed: Family,
    closed_breakdown: Vec<(String, u64)>,
    /// A new window with the page cache emptied (none in the quick form, or without root).
    window_cold: Option<f64>,
}

/// The app once its pages were given back, as after an hour of idling.
struct AfterIdle {
    given_back: Family,
    menu: f64,
    menu_faults: u64,
    window: f64,
}

/// The memory of a process and all its descendants, in MiB, and the descendants' names.
struct Family {
    rss: f64,
    pss: f64,
    uss: f64,
    children: Vec<String>,
}

fn family(pid: u32) -> anyhow::Result<Family> {
    let mut m = procfs::memory_kib(pid)?;
    let mut children = Vec::new();
    for k in procfs::descendants(pid)? {
        // A child that ended since it was listed is no longer the family's.
        let (c, name) = match procfs::memory_kib(k).and_then(|c| Ok((c, procfs::comm(k)?))) {
            Ok(read) => read,
            Err(e) if procfs::gone(&e) => continue,
            Err(e) => return Err(e),
        };
        (m.rss, m.pss, m.uss) = (m.rss + c.rss, m.pss + c.pss, m.uss + c.uss);
        children.push(name);
    }
    let mib = |kib: u64| kib as f64 / 1024.0;
    Ok(Family { rss: mib(m.rss), pss: mib(m.pss), uss: mib(m.uss), children })
}

/// Opens the history as a launcher's click does (a second launch, handed to the tray) and
/// returns the milliseconds until `xdotool`, polled every 5 ms, finds its window mapped.
fn open_history(home: &Home, display: &str, desktop: &DesktopSession, token: &str, lang: &str, name: &str) -> anyhow::Result<f64> {
    let opened = launch_history(home, display, token, lang, name)?;
    polled_until_shown(desktop, lang, opened)
}

/// The milliseconds from `opened` until `xdotool`, polled every 5 ms, finds the history mapped.
fn polled_until_shown(desktop: &DesktopSession, lang: &str, opened: Instant) -> anyhow::Result<f64> {
    while !desktop.window_titled(history_title(lang)) {
        anyhow::ensure!(opened.elapsed() < Duration::from_secs(30), "the history window did not open");
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(ms_since(opened, Instant::now()))
}

/// How a new window's launch is timed: as before, by `xdotool` polled every 5 ms, with the map
/// event read beside it; or by the X server's map event alone, no program started meanwhile.
#[derive(Clone, Copy)]
enum Wait {
    Polled,
    MapEvent,
}

/// A launch's times, in ms from the launch: when its wait found the window shown, and when the
/// X server told its map (`MapNotify`); the same with [`Wait::MapEvent`].
struct Timed {
    shown: f64,
    mapped: f64,
}

/// Opens the history as [`open_history`] does, timed by `wait`.
fn open_new_window(
    home: &Home,
    display: &str,
    desktop: &DesktopSession,
    token: &str,
    lang: &str,
    name: &str,
    wait: Wait,
) -> anyhow::Result<Timed> {
    let watch = MapWatch::new(display, history_title(lang)).map_err(|e| anyhow::anyhow!("watching the display's maps: {e}"))?;
    let opened = launch_history(home, display, token, lang, name)?;
    let mapped =
        || watch.wait(Duration::from_secs(30)).map(|at| ms_since(opened, at)).map_err(|e| anyhow::anyhow!("the history window: {e}"));
    match wait {
        Wait::MapEvent => mapped().map(|ms| Timed { shown: ms, mapped: ms }),
        // The map event read on a thread of its own while this one polls, so that each is read
        // when it comes.
        Wait::Polled => std::thread::scope(|s| {
            let event = s.spawn(mapped);
            let shown = polled_until_shown(desktop, lang, opened)?;
            let mapped = event.join().map_err(|_| anyhow::anyhow!("the map watch panicked"))??;
            Ok(Timed { shown, mapped })
        }),
    }
}

fn ms_since(start: Instant, end: Instant) -> f64 {
    end.duration_since(start).as_secs_f64() * 1000.0
}

/// What the tray gave its windows process of the variables it sets where no accessibility bus
/// runs, read from the running one's environment, so that the bare window starts as it does.
fn given_to_windows(tray: u32) -> anyhow::Result<Vec<(String, String)>> {
    let keys = cmux_tray_channel::webview_env::NO_ACCESSIBILITY_BUS.map(|(k, _)| k);
    for pid in procfs::descendants(tray)? {
        // A web process may end between the listing and this read.
        if procfs::comm(pid).is_ok_and(|comm| comm.starts_with("cmux-tray-windo")) {
            let environ = std::fs::read(format!("/proc/{pid}/environ"))?;
            let given = environ.split(|b| *b == 0).filter_map(|kv| {
                let (k, v) = std::str::from_utf8(kv).ok()?.split_once('=')?;
                keys.contains(&k).then(|| (k.to_owned(), v.to_owned()))
            });
            return Ok(given.collect());
        }
    }
    anyhow::bail!("no windows process under the tray to read its environment from")
}

/// A bare WebKitGTK window titled as the history, from its exec to its map (`xdotool` polled
/// every 5 ms, as [`polled_until_shown`]); closed as the history is, and waited for to end with
/// its web processes, as the app's are.
fn bare_window(
    home: &Home,
    display: &str,
    desktop: &DesktopSession,
    lang: &str,
    given: &[(String, String)],
    name: &str,
) -> anyhow::Result<f64> {
    let log_path = home.dir.path().join(format!("{name}.log"));
    let log = std::fs::File::create(&log_path)?;
    let mut command = home.program(&cmux_tray_e2e::bin("cmux-bench-webview"), &[history_title(lang)]);
    command.env("DISPLAY", display).env("LANG", lang).envs(given.iter().map(|(k, v)| (k, v)));
    command.stdout(log.try_clone()?).stderr(log).stdin(std::process::Stdio::null());
    let opened = Instant::now();
    let mut child = command.spawn()?;
    let said = || std::fs::read_to_string(&log_path).unwrap_or_default();
    let mut shown = Err(anyhow::anyhow!("the bare window did not open within 30 s: {}", said()));
    while opened.elapsed() < Duration::from_secs(30) {
        if desktop.window_titled(history_title(lang)) {
            shown = Ok(ms_since(opened, Instant::now()));
            break;
        }
        if let Some(status) = child.try_wait()? {
            anyhow::bail!("the bare window's process ended before its window showed ({status}): {}", said());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let web = procfs::descendants(child.id())?;
    let shown = shown.and_then(|ms| close(desktop, history_title(lang)).map(|()| ms));
    if shown.is_err() {
        let _ = child.kill();
    }
    let closed = Instant::now();
    let gone = |pid: &u32| !std::path::Path::new(&format!("/proc/{pid}")).exists();
    while child.try_wait()?.is_none() || !web.iter().all(gone) {
        if closed.elapsed() > WINDOWS_END {
            let _ = child.kill();
            anyhow::bail!("the bare window's processes outlived its close by {WINDOWS_END:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    shown
}

/// A second launch asking for the history, as a launcher's click; when it started.
fn launch_history(home: &Home, display: &str, token: &str, lang: &str, name: &str) -> anyhow::Result<Instant> {
    let mut launch = home.app_command(display, &home.dir.path().join(format!("{name}.log")));
    let opened = Instant::now();
    launch.env("CMUX_TRAY_TOKEN", token).env("LANG", lang).status()?;
    Ok(opened)
}

/// Closes the window titled `title` as a window manager does (WM_DELETE_WINDOW).
fn close(desktop: &DesktopSession, title: &str) -> anyhow::Result<()> {
    desktop.close_window(title).map_err(|e| anyhow::anyhow!("closing {title:?}: {e}"))
}

/// Waits for the tray's windows process and web processes to end after a close (the closed
/// window's kept while: docs/architecture.md "Two processes"); fails past [`WINDOWS_END`].
fn windows_ended(pid: u32) -> anyhow::Result<()> {
    anyhow::ensure!(windows_end(pid)?, "the windows process outlived its closed window by {WINDOWS_END:?}");
    Ok(())
}

/// How long the windows process may take to end after its window closed: its kept while, with
/// room for a loaded machine (CI's, the debug build).
const WINDOWS_END: Duration = Duration::from_secs(30);

/// Waits up to [`WINDOWS_END`] for the tray's descendants to end; says whether they did.
fn windows_end(pid: u32) -> anyhow::Result<bool> {
    let closing = Instant::now();
    while !procfs::descendants(pid)?.is_empty() {
        if closing.elapsed() >= WINDOWS_END {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(true)
}

/// The tray host's StatusNotifierWatcher, asked which items registered.
struct Watcher {
    conn: zbus::Connection,
}

impl Watcher {
    async fn connect(address: &str) -> anyhow::Result<Watcher> {
        Ok(Watcher { conn: zbus::connection::Builder::address(address)?.build().await? })
    }

    async fn items(&self) -> anyhow::Result<usize> {
        Ok(self.registered().await?.len())
    }

    /// The watcher's `RegisteredStatusNotifierItems`.
    async fn registered(&self) -> anyhow::Result<Vec<String>> {
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
        let value: zbus::zvariant::OwnedValue = reply.body().deserialize()?;
        Ok(value.try_into()?)
    }

    /// What a tray host does when its icon is clicked: the menu's `AboutToShow(0)` and its
    /// `GetLayout(0, -1, [])`, timed in ms.
    async fn open_menu(&self) -> anyhow::Result<f64> {
        let items = self.registered().await?;
        let item = items.first().ok_or_else(|| anyhow::anyhow!("no tray item registered"))?;
        // An item registers as "NAME/PATH" or as its bus name alone (path /StatusNotifierItem).
        let (name, path) = match item.find('/') {
            Some(i) => (item[..i].to_string(), item[i..].to_string()),
            None => (item.clone(), "/StatusNotifierItem".to_string()),
        };
        let reply = self
            .conn
            .call_method(
                Some(name.as_str()),
                path.as_str(),
                Some("org.freedesktop.DBus.Properties"),
                "Get",
                &("org.kde.StatusNotifierItem", "Menu"),
            )
            .await?;
        let menu: zbus::zvariant::OwnedValue = reply.body().deserialize()?;
        let menu: zbus::zvariant::OwnedObjectPath = menu.try_into()?;
        let start = Instant::now();
        self.conn.call_method(Some(name.as_str()), menu.as_str(), Some("com.canonical.dbusmenu"), "AboutToShow", &(0i32,)).await?;
        let empty: Vec<&str> = Vec::new();
        self.conn
            .call_method(Some(name.as_str()), menu.as_str(), Some("com.canonical.dbusmenu"), "GetLayout", &(0i32, -1i32, empty))
            .await?;
        Ok(start.elapsed().as_secs_f64() * 1000.0)
    }
}
