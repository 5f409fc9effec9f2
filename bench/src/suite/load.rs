//! Row 6: load. 200 local clients post notices as fast as they can (each a connection per
//! notice, as `cmux-tray notify` and agents' hooks do) for a minute while the daemon holds 10,000
//! follows. Throughout, a `ping` every 50 ms on a connection of its own (its worst answer), the
//! daemon's memory read every second, the store's WAL at its longest; at the end, the banners
//! the recorder got: a flood must become a few coalesced banners (docs/notices.md, "Bursts").

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::suite::local::Longest;
use crate::suite::procfs;
use crate::suite::socket::Client;
use crate::suite::stats::{self, Figure, Gate, Goal};
use crate::suite::world::World;

const CLIENTS: usize = 200;

/// The daemon's RSS (KiB) read at a moment (s since the load began).
type Sample = (f64, u64);
const PING_EVERY: Duration = Duration::from_millis(50);

// The quick form's gates (10 s, 1,000 follows), about 3× the debug build's own quick figures
// (AMD EPYC, 2 cores, as a normal user, 2026-12-04): ping's worst 24.6 ms; RSS grown over the
// second half 10.4, 20.6, 23.0, 34.7, 37.2, 42.9, 46.9, 48.6 and 81.4 MiB in nine runs, median
// 37 MiB. In 10 s the RSS is still climbing to its plateau (its peak is its last reading), so the
// quick growth measures that climb, not a leak: the long form's minute shows a leak (1.5 MiB
// grown over its second half, 2026-12-04 05:53).
const GATE_PING: Option<Gate> = Gate::below(74.0);
const GATE_GROWTH: Option<Gate> = Gate::below(110.0);
/// Notices answered OK a second: the floor of row 4's connection-per-request gate (a third of
/// the debug build's 1,376 req/s one client alone), which 200 clients must reach too.
const GATE_RATE: Option<Gate> = Gate::above(460.0);
/// The share of notices not answered OK: the long form refused 0.9 % ("Too many connections",
/// a client reconnecting at once; docs/benchmarks.md row 6); a daemon refusing every notice
/// refuses 100 %.
const GATE_REFUSED: Option<Gate> = Gate::below(10.0);

pub fn run(quick: bool, figures: &mut Vec<Figure>, notes: &mut Vec<String>) -> anyhow::Result<()> {
    let (follows, duration) = if quick { (1_000, Duration::from_secs(10)) } else { (10_000, Duration::from_secs(60)) };
    let world = World::start(0, 0, &[])?;
    let (runs, handoffs) = world.follow_new(follows)?;
    world.wait_held(runs.iter().chain(&handoffs), Duration::from_secs(180))?;
    let pid = world.pid();
    let socket = world.home.socket();
    let before_rss = procfs::rss_pss_kib(pid)?.0;
    let banners_before = world.recorder.count();
    let wal = Longest::watch(&world.home.database().with_extension("sqlite3-wal"));

    let stop = Arc::new(AtomicBool::new(false));
    let (sent, refused) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let first_refusal: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
    let start = Instant::now();
    let (pings, rss) = std::thread::scope(|s| -> anyhow::Result<(Vec<f64>, Vec<Sample>)> {
        for c in 0..CLIENTS {
            let (stop, sent, refused, socket) = (stop.clone(), sent.clone(), refused.clone(), socket.clone());
            let first_refusal = first_refusal.clone();
            s.spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    match Client::once(&socket, &format!("notify Load {c}.{i}|agent {c}|body {i}")) {
                        Ok(answer) if answer == "OK" => {
                            sent.fetch_add(1, Ordering::Relaxed);
                        }
                        other => {
                            refused.fetch_add(1, Ordering::Relaxed);
                            let said = other.unwrap_or_else(|e| e.to_string());
                            first_refusal.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(said);
                        }
                    }
                    i += 1;
                }
            });
        }
        let pinger = {
            let (stop, socket) = (stop.clone(), socket.clone());
            s.spawn(move || -> anyhow::Result<Vec<f64>> {
                let mut client = Client::connect(&socket)?;
                let mut times = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    anyhow::ensure!(client.ask("ping")? == "PONG", "ping was not answered PONG");
                    times.push(t.elapsed().as_secs_f64() * 1000.0);
                    std::thread::sleep(PING_EVERY.saturating_sub(t.elapsed()));
                }
                Ok(times)
            })
        };
        let mut rss = Vec::new();
        while start.elapsed() < duration {
            std::thread::sleep(Duration::from_secs(1));
            rss.push((start.elapsed().as_secs_f64(), procfs::rss_pss_kib(pid)?.0));
        }
        stop.store(true, Ordering::Relaxed);
        let pings = pinger.join().map_err(|_| anyhow::anyhow!("the pinger panicked"))??;
        Ok((pings, rss))
    })?;
    let elapsed = start.elapsed().as_secs_f64();
    // The last burst settles (at most 2 s after its first notice), then its banner comes.
    std::thread::sleep(Duration::from_secs(3));
    let banners = world.recorder.count() - banners_before;
    let sent = sent.load(Ordering::Relaxed);
    let refused = refused.load(Ordering::Relaxed);

    let mib = |kib: u64| kib as f64 / 1024.0;
    let peak = rss.iter().map(|(_, r)| *r).max().unwrap_or(before_rss);
    let half = rss.iter().find(|(t, _)| *t >= elapsed / 2.0).map_or(before_rss, |(_, r)| *r);
    let end = rss.last().map_or(before_rss, |(_, r)| *r);
    let growth = mib(end.saturating_sub(half));
    let method = format!(
        "{CLIENTS} clients, each a connection per v1 notify, as fast as answered, for {} s; {follows} follows held",
        duration.as_secs()
    );
    let ping = format!("a ping every {} ms on its own connection, during the load", PING_EVERY.as_millis());
    figures.push(Figure::of(6, "notices answered OK", "/s", &[sent as f64 / elapsed], None, &method).gated(GATE_RATE));
    let refused_pct = refused as f64 * 100.0 / (sent + refused).max(1) as f64;
    figures.push(
        Figure::of(6, "notices not answered OK", "%", &[refused_pct], None, "refused or failed, of all sent during the load")
            .gated(GATE_REFUSED),
    );
    figures
        .push(Figure::of(6, "ping's worst answer under load", "ms", &[stats::max(&pings)], Goal::at_most(100.0), &ping).gated(GATE_PING));
    figures.push(Figure::of(6, "ping p99 under load", "ms", &[stats::percentile(&pings, 99.0)], None, &ping));
    figures.push(Figure::of(6, "daemon RSS added by the load, at its peak", "MiB", &[mib(peak.saturating_sub(before_rss))], None, &method));
    figures.push(
        Figure::of(6, "daemon RSS grown over the second half", "MiB", &[growth], None, "RSS at the end − RSS half way; a leak grows here")
            .gated(GATE_GROWTH),
    );
    figures.push(Figure::of(6, "the store's WAL at its longest", "MiB", &[wal.bytes() as f64 / 1_048_576.0], None, "read every 20 ms"));
    // docs/notices.md, "Bursts": a chain that never breaks is decided every 2 s (at most 2 s
    // after its first notice), one banner each time, the first notice's at once: at most one
    // banner per 2 s, and one more.
    let most = (elapsed / 2.0).ceil() + 1.0;
    figures.push(
        Figure::of(6, "banners for the whole load", "", &[banners as f64], Goal::at_most(most), "Notify calls at the recorder")
            .gated(Gate::below(most)),
    );
    notes.push(format!(
        "row 6: {sent} notices answered OK and {refused} not (the first: {:?}) in {elapsed:.1} s; {} pings, worst {:.1} ms; RSS {:.1} MiB before, {:.1} at the peak, {:.1} half way, {:.1} at the end; {banners} banners",
        first_refusal.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone().unwrap_or_default(),
        pings.len(),
        stats::max(&pings),
        mib(before_rss),
        mib(peak),
        mib(half),
        mib(end)
    ));
    Ok(())
}
