//! Row 1: change → banner. From the simulator changing a Run to the `Notify` call arriving at
//! the recorder, over isolated events, with 1, 1,000 and 10,000 items followed; and what 60 s
//! polling (Gitify's way) would have given for the same event times.
//!
//! An event: a Run is created and handed over (`cloud.follow` on the socket), and once its wait
//! is held at the simulator, it ends. Events are isolated: each comes 0.52 s after the previous
//! banner, past the 0.5 s that would make it part of a chain (docs/notices.md §3 "Bursts").

use std::time::{Duration, Instant};

use cmux_cloud_sim::RunChange;

use crate::suite::stats::{self, Figure, Gate, Goal};
use crate::suite::world::{ISOLATION, World, wait_for};

/// The quick form's gate, about 3× the debug build's own quick p99: 7.9 ms at 1 followed and
/// 8.9 ms at 1,000 (AMD EPYC, 2 cores, as a normal user, 2026-12-04).
const GATE_P99: Option<Gate> = Gate::below(27.0);

/// Events are told in this many rounds; a figure is over every event, the rounds' values its
/// spread.
const ROUNDS: usize = 5;

pub struct Options {
    pub follows: Vec<usize>,
    pub events: usize,
    pub env: Vec<(String, String)>,
}

pub fn run(o: &Options, figures: &mut Vec<Figure>, note: &mut Vec<String>) -> anyhow::Result<()> {
    for &n in &o.follows {
        let background = n.saturating_sub(1);
        let env: Vec<(&str, &str)> = o.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let world = World::start(background / 2, background - background / 2, &env)?;
        let mut client = world.client()?;
        let sim = world.cloud.sim();
        let epoch = Instant::now();
        // The poller's phase: any moment is as likely; taken from the wall clock's nanoseconds.
        let phase = f64::from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.subsec_nanos()) / 1e9 * 60.0;
        let mut latencies = Vec::with_capacity(o.events);
        let mut at = Vec::with_capacity(o.events);
        let mut last_banner = Instant::now() - ISOLATION;
        for i in 0..o.events {
            let run = sim.create_run(&world.user.user_id, &format!("Event {i}"));
            client.follow("run", &run)?;
            wait_for("the event's wait held", Duration::from_secs(20), || sim.held_waits(&run) > 0)?;
            let quiet = (last_banner + ISOLATION).saturating_duration_since(Instant::now());
            std::thread::sleep(quiet);
            let before = world.recorder.count();
            let changed = Instant::now();
            sim.update_run(&run, RunChange::status("succeeded"));
            wait_for("the event's banner", Duration::from_secs(20), || world.recorder.count() > before)?;
            let arrival = world.recorder.since(before).remove(0);
            latencies.push(arrival.at.duration_since(changed).as_secs_f64() * 1000.0);
            at.push(changed.duration_since(epoch).as_secs_f64());
            last_banner = arrival.at;
        }
        // Nothing was told twice: one banner per event, no more (a late one would come within
        // the follow's next answer, well inside the isolation gap each event already waited).
        std::thread::sleep(ISOLATION);
        let extra = world.recorder.count() - o.events;
        anyhow::ensure!(extra == 0, "{extra} banners more than events at {n} follows");

        let rounds: Vec<&[f64]> = latencies.chunks(o.events.div_ceil(ROUNDS)).collect();
        let method = format!(
            "over all {} isolated Run ends, the spread that of its {} rounds; simulator change → Notify at an in-process recorder on a private bus",
            o.events,
            rounds.len()
        );
        let name = |what: &str| format!("change → banner {what}, {n} followed");
        let p99 = |r: &[f64]| stats::percentile(r, 99.0);
        figures.push(Figure::pooled(1, &name("p50"), "ms", &rounds, stats::median, None, &method));
        figures.push(Figure::pooled(1, &name("p99"), "ms", &rounds, p99, Goal::at_most(50.0), &method).gated(GATE_P99));
        figures.push(Figure::pooled(1, &name("max"), "ms", &rounds, stats::max, None, &method));
        // 60 s polling, from the same event times: an end waits for the next poll.
        let polled: Vec<f64> = at.iter().map(|t| (60.0 - (t + phase) % 60.0) * 1000.0).collect();
        let poll_rounds: Vec<&[f64]> = polled.chunks(o.events.div_ceil(ROUNDS)).collect();
        let ratio = |f: fn(&[f64]) -> f64| poll_rounds.iter().zip(&rounds).map(|(p, r)| f(p) / f(r)).collect::<Vec<f64>>();
        let poll_method =
            format!("the same event times, told at the next tick of a 60 s poll whose phase is {phase:.1} s (drawn from the clock)");
        let poll_method = poll_method.as_str();
        figures.push(Figure::of(
            1,
            &format!("60 s polling p50, {n} followed"),
            "ms",
            &poll_rounds.iter().map(|r| stats::median(r)).collect::<Vec<_>>(),
            None,
            poll_method,
        ));
        figures.push(Figure::of(1, &format!("60 s polling p50 ÷ ours, {n} followed"), "×", &ratio(stats::median), None, poll_method));
        note.push(format!(
            "row 1, {n} followed: pooled over {} events p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; 60 s polling p50 {:.1} s, p99 {:.1} s ({:.0} × ours at p50)",
            latencies.len(),
            stats::median(&latencies),
            stats::percentile(&latencies, 99.0),
            stats::max(&latencies),
            stats::median(&polled) / 1000.0,
            stats::percentile(&polled, 99.0) / 1000.0,
            stats::median(&polled) / stats::median(&latencies)
        ));
    }
    Ok(())
}
