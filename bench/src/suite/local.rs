//! Row 4: the local socket (docs/local-socket.md). Requests per second and round trips for v1
//! `notify` and v2 `notification.create_for_caller`: on one connection pipelined (the
//! connection's throughput) and each answered before the next (its round trip, beside `ping`'s),
//! and over 16 connections; and the whole `cmux-tray notify` process until its banner reaches
//! the server, beside `notify-send` (libnotify) sending the same notice straight to the server.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::suite::procfs;
use crate::suite::socket::Client;
use crate::suite::stats::{self, Figure, Gate, Goal};
use crate::suite::world::{ISOLATION, World, wait_for};

/// The quick form's gates, about 3× the debug build's own quick figures (AMD EPYC, 2 cores, as a
/// normal user from root-owned binaries, 2026-12-04), v1 then v2: a connection per request 1,376
/// and 1,254 req/s, p99 1.67 and 2.09 ms; pipelined 12,393 and 8,621 req/s; `cmux-tray notify` ÷
/// `notify-send` 1.47×.
struct Gates {
    once_rate: Option<Gate>,
    once_p99: Option<Gate>,
}
const GATES: [Gates; 2] = [
    Gates { once_rate: Gate::above(460.0), once_p99: Gate::below(5.0) },
    Gates { once_rate: Gate::above(420.0), once_p99: Gate::below(6.3) },
];
const GATE_PIPELINED: Option<Gate> = Gate::above(2_870.0);
const GATE_RATIO: Option<Gate> = Gate::below(4.4);

/// The static remote client's path, which scripts/bench sets in its full form (scripts/remote-client).
const REMOTE_CLIENT: &str = "CMUX_TRAY_REMOTE_CLIENT";

/// Who sends the notice in the whole-process figures.
#[derive(Debug, Clone, Copy)]
enum Sender<'a> {
    /// `cmux-tray notify`, this machine's build.
    Ours,
    /// `notify-send`, straight to the server.
    NotifySend,
    /// `cmux-tray notify`, the static remote client.
    Static(&'a Path),
}

/// Requests a pipelining client has in flight: as many as the daemon answers together
/// (`local::server::MAX_BATCH`, docs/local-socket.md "Pipelining").
const PIPELINED: usize = 64;

pub fn run(quick: bool, figures: &mut Vec<Figure>, notes: &mut Vec<String>) -> anyhow::Result<()> {
    let per_run = if quick { 1_000 } else { 20_000 };
    // Three rounds in the quick form too: one round alone swung 870–2,700 req/s in CI's debug build.
    let repeats = 3;
    // The floor under every round trip here: `ping`, which saves nothing, one after another.
    {
        let world = World::start(0, 0, &[])?;
        let mut client = world.client()?;
        let mut rates = Vec::new();
        for _ in 0..repeats {
            let start = Instant::now();
            for _ in 0..per_run {
                anyhow::ensure!(client.ask("ping")? == "PONG", "ping was not answered PONG");
            }
            rates.push(per_run as f64 / start.elapsed().as_secs_f64());
        }
        let method = format!("{per_run} pings, each answered before the next: the socket and the wake-ups alone");
        figures.push(Figure::of(4, "v1 ping, 1 connection, each answered first", "req/s", &rates, None, &method));
    }
    let v1 = |i: usize| format!("notify Bench {i}|sub|body {i}");
    let v2 = |i: usize| {
        serde_json::json!({"id": i, "method": "notification.create_for_caller", "params": {"title": format!("Bench {i}"), "subtitle": "sub", "body": format!("body {i}")}})
            .to_string()
    };
    let methods: [(&str, &(dyn Fn(usize) -> String + Sync)); 2] = [("v1 notify", &v1), ("v2 notification.create_for_caller", &v2)];
    for ((name, make), gates) in methods.into_iter().zip(GATES) {
        // A store of its own for each method: the second would otherwise save into one the first
        // filled (120,000 notices), which measures the store's size as much as the method.
        let world = World::start(0, 0, &[])?;
        let (mut rate, mut p50, mut p99, mut rate16, mut wal, mut stolen) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut once_rate, mut once_p50, mut once_p99) = (Vec::new(), Vec::new(), Vec::new());
        let wal_path = world.home.database().with_extension("sqlite3-wal");
        let socket = world.home.socket();
        for round in 0..repeats {
            // The client people run: a connection for each request (`cmux-tray notify`, agents'
            // hooks), each answered before the next.
            let mut each = Vec::with_capacity(per_run);
            let start = Instant::now();
            for i in 0..per_run {
                let t = Instant::now();
                let answer = Client::once(&socket, &make((repeats + round) * per_run + i))?;
                anyhow::ensure!(!answer.starts_with("ERROR") && !answer.contains("\"error\""), "{name}: {answer}");
                each.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            once_rate.push(per_run as f64 / start.elapsed().as_secs_f64());
            once_p50.push(stats::median(&each));
            once_p99.push(stats::percentile(&each, 99.0));
            let sampler = Longest::watch(&wal_path);
            let mut client = world.client()?;
            let mut rtt = Vec::with_capacity(per_run);
            let ticks = procfs::machine_ticks()?;
            let start = Instant::now();
            for i in 0..per_run {
                let t = Instant::now();
                let answer = client.ask(&make(i))?;
                anyhow::ensure!(!answer.starts_with("ERROR") && !answer.contains("\"error\""), "{name}: {answer}");
                rtt.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            rate.push(per_run as f64 / start.elapsed().as_secs_f64());
            p50.push(stats::median(&rtt));
            p99.push(stats::percentile(&rtt, 99.0));
            let (all, steal) = procfs::machine_ticks()?;
            stolen.push((steal - ticks.1) as f64 * 100.0 / (all - ticks.0).max(1) as f64);
            // 16 connections side by side, each sending its share one after another.
            let start = Instant::now();
            std::thread::scope(|s| -> anyhow::Result<()> {
                let handles: Vec<_> = (0..16)
                    .map(|c| {
                        let world = &world;
                        s.spawn(move || -> anyhow::Result<()> {
                            let mut client = world.client()?;
                            for i in 0..per_run / 16 {
                                client.ask(&make(c * per_run + i))?;
                            }
                            Ok(())
                        })
                    })
                    .collect();
                for h in handles {
                    h.join().map_err(|_| anyhow::anyhow!("a client thread panicked"))??;
                }
                Ok(())
            })?;
            rate16.push((per_run / 16 * 16) as f64 / start.elapsed().as_secs_f64());
            wal.push(sampler.bytes() as f64 / 1_048_576.0);
        }
        // The headline: the goals are set on the client people run.
        let once = format!("{per_run} requests, a connection each (connect, send, answer, close), one after another");
        figures.push(
            Figure::of(4, &format!("{name}, a connection per request"), "req/s", &once_rate, Goal::at_least(20_000.0), &once)
                .gated(gates.once_rate),
        );
        figures.push(Figure::of(4, &format!("{name}, a connection per request, p50"), "ms", &once_p50, None, &once));
        figures.push(
            Figure::of(4, &format!("{name}, a connection per request, p99"), "ms", &once_p99, Goal::at_most(1.0), &once)
                .gated(gates.once_p99),
        );
        let method = format!("{per_run} requests on one connection, each answered before the next");
        // The same client keeping its connection: the round trip alone, bounded by the
        // machine's wake-ups (`ping`'s figure).
        figures.push(Figure::of(4, &format!("{name}, 1 connection, each answered first"), "req/s", &rate, None, &method));
        figures.push(Figure::of(4, &format!("{name} round trip p50, 1 connection"), "ms", &p50, None, &method));
        figures.push(Figure::of(4, &format!("{name} round trip p99, 1 connection"), "ms", &p99, None, &method));
        // What the hypervisor took meanwhile: a vCPU not run for a moment is a slow round trip
        // that no code here can help (this project's VMs: up to a quarter of their busy time).
        let steal = "the machine's steal time (/proc/stat) ÷ all its CPU time, during the round trips";
        figures.push(Figure::of(4, &format!("{name}, CPU time the host took meanwhile"), "%", &stolen, None, steal));
        figures.push(Figure::of(4, &format!("{name}, 16 connections"), "req/s", &rate16, None, &method));
        let rounds: Vec<String> = p99.iter().zip(&stolen).map(|(p, s)| format!("p99 {p:.2} ms at {s:.1} % stolen")).collect();
        notes.push(format!("row 4, {name}, each round: {}", rounds.join("; ")));
        let read = "its length read every 20 ms during each round";
        figures.push(Figure::of(4, &format!("{name}, the store's WAL at its longest"), "MiB", &wal, None, read));
    }

    // One connection's throughput: a client that sends without waiting (PIPELINED requests
    // written at once, then their answers read; the daemon saves what came together in one
    // commit). The goal of requests a second on one connection is set on this figure. After the
    // round trips above and on stores of their own, so that those do not wait on what a burst
    // at this pace leaves behind (its settle, its checkpoints, the kernel writing it back).
    for (name, make) in methods {
        let world = World::start(0, 0, &[])?;
        let mut client = world.client()?;
        let mut piped = Vec::new();
        for round in 0..repeats {
            let requests: Vec<String> = (0..per_run).map(|i| make(round * per_run + i)).collect();
            let start = Instant::now();
            for chunk in requests.chunks(PIPELINED) {
                let ok = client.pipeline(chunk)?;
                anyhow::ensure!(ok == chunk.len(), "{name}: {} of {} pipelined requests failed", chunk.len() - ok, chunk.len());
            }
            piped.push(per_run as f64 / start.elapsed().as_secs_f64());
        }
        let method = format!("{per_run} requests, {PIPELINED} written at once, then their answers read");
        // An extra: no client people run pipelines (the goal is on a connection per request).
        figures.push(Figure::of(4, &format!("{name}, 1 connection, pipelined"), "req/s", &piped, None, &method).gated(GATE_PIPELINED));
    }

    // The whole process, until its banner arrives: ours against notify-send.
    // And the static remote client's (scripts/remote-client), when scripts/bench built one.
    let world = World::start(0, 0, &[])?;
    let rounds: usize = if quick { 10 } else { 40 };
    let remote = std::env::var_os(REMOTE_CLIENT).map(PathBuf::from);
    let senders: Vec<Sender> = [Sender::Ours, Sender::NotifySend].into_iter().chain(remote.as_deref().map(Sender::Static)).collect();
    let (mut ours, mut theirs, mut static_ones) = (Vec::new(), Vec::new(), Vec::new());
    let mut last = Instant::now() - ISOLATION;
    for i in 0..rounds {
        for &sender in &senders {
            std::thread::sleep((last + ISOLATION).saturating_duration_since(Instant::now()));
            let before = world.recorder.count();
            let title = format!("Done {i}");
            let notify = ["notify", "--title", &title, "--body", "Tests passed"];
            let mut command = match sender {
                Sender::Ours => world.home.command(&notify),
                Sender::Static(client) => world.home.program(client, &notify),
                Sender::NotifySend => world.home.program(std::path::Path::new("/usr/bin/notify-send"), &[&title, "Tests passed"]),
            };
            let start = Instant::now();
            let status = command.stdin(Stdio::null()).stdout(Stdio::null()).status()?;
            anyhow::ensure!(status.success(), "{sender:?} failed");
            wait_for("its banner", Duration::from_secs(10), || world.recorder.count() > before)?;
            let arrival = world.recorder.since(before).remove(0);
            let ms = arrival.at.duration_since(start).as_secs_f64() * 1000.0;
            match sender {
                Sender::Ours => ours.push(ms),
                Sender::Static(_) => static_ones.push(ms),
                Sender::NotifySend => theirs.push(ms),
            }
            last = arrival.at;
        }
    }
    let chunks = |v: &[f64]| v.chunks(rounds.div_ceil(5)).map(stats::median).collect::<Vec<f64>>();
    let method = format!("{rounds} each, alternating; exec → Notify at the recorder; medians of 5 groups");
    let (o, t) = (chunks(&ours), chunks(&theirs));
    let ratio: Vec<f64> = o.iter().zip(&t).map(|(a, b)| a / b).collect();
    figures.push(Figure::of(4, "`cmux-tray notify` → banner", "ms", &o, None, &method));
    figures.push(Figure::of(4, "`notify-send` → banner", "ms", &t, None, &method));
    figures.push(Figure::of(4, "`cmux-tray notify` ÷ `notify-send`", "×", &ratio, Goal::at_most(1.5), &method).gated(GATE_RATIO));
    // The remote client (docs/terminals.md "The client there"): its size and start-up beside the host build's.
    let size = |path: &Path| -> anyhow::Result<f64> { Ok(std::fs::metadata(path)?.len() as f64 / (1024.0 * 1024.0)) };
    let size_method = "the file's length, as the build leaves it (release: stripped)";
    figures.push(Figure::of(
        4,
        "`cmux-tray` size, this machine's build",
        "MiB",
        &[size(&cmux_tray_e2e::bin("cmux-tray"))?],
        None,
        size_method,
    ));
    match &remote {
        Some(path) => {
            figures.push(Figure::of(4, "`cmux-tray` size, static remote client", "MiB", &[size(path)?], None, size_method));
            let s = chunks(&static_ones);
            figures.push(Figure::of(4, "`cmux-tray notify` → banner, static remote client", "ms", &s, None, &method));
        }
        None => {
            notes.push(format!("row 4: no static remote client measured ({REMOTE_CLIENT} unset: scripts/bench builds it in its full form)"))
        }
    }
    notes.push(format!(
        "row 4: cmux-tray notify p50 {:.1} ms, notify-send p50 {:.1} ms over {rounds} each",
        stats::median(&ours),
        stats::median(&theirs)
    ));
    Ok(())
}

/// A file's length at its longest, read every 20 ms from the moment `watch` is called until
/// `bytes` (the store's WAL, which a stream of notices once grew without end).
pub struct Longest {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl Longest {
    pub fn watch(path: &Path) -> Longest {
        let stop = Arc::new(AtomicBool::new(false));
        let (theirs, path): (_, PathBuf) = (stop.clone(), path.into());
        let thread = std::thread::spawn(move || {
            let mut longest = 0;
            while !theirs.load(Ordering::Relaxed) {
                longest = longest.max(std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0));
                std::thread::sleep(Duration::from_millis(20));
            }
            longest
        });
        Longest { stop, thread }
    }

    pub fn bytes(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or(0)
    }
}
