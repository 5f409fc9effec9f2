//! Pacing, read off the simulator's request log: no item is asked twice within 2 s after an
//! immediate answer, no retry gap exceeds 60 s, and a stalled server does not hang a follow.

mod common;

use cmux_cloud_sim::{Fault, RunChange};
use common::*;

/// Arrival gaps (ms) between consecutive requests to paths containing `part`.
fn gaps(w: &World, part: &str) -> Vec<u64> {
    let at: Vec<u64> = w.requests_to(part).iter().map(|r| r.at_ms).collect();
    at.windows(2).map(|p| p[1] - p[0]).collect()
}

#[tokio::test(start_paused = true)]
async fn an_item_answered_at_once_is_not_asked_again_within_two_seconds() {
    let w = World::new().await;
    let run = w.run("Chatty");
    w.engine.follow_run(&run).unwrap();
    // The Run changes every 300 ms for a minute: every wait is answered at once.
    for i in 0..200 {
        let status = if i % 2 == 0 { "running" } else { "queued" };
        w.sim.sim.update_run(run.as_str(), RunChange::status(status));
        pass(std::time::Duration::from_millis(300)).await;
    }
    let g = gaps(&w, run.as_str());
    assert!(g.len() >= 25, "asked {} times", g.len() + 1);
    let min = *g.iter().min().unwrap();
    assert!(min >= 2000, "two waits {min} ms apart: {g:?}");
    println!("immediate answers: {} waits, smallest gap {min} ms", g.len() + 1);
}

#[tokio::test(start_paused = true)]
async fn failures_back_off_and_no_retry_gap_exceeds_sixty_seconds() {
    let w = World::new().await;
    let run = w.run("Unlucky");
    w.sim.sim.add_fault(Fault::on("/wait").status(503).times(0));
    w.engine.follow_run(&run).unwrap();
    pass(SECS(15 * 60)).await;
    let g = gaps(&w, run.as_str());
    assert!(g.len() >= 15, "{g:?}");
    assert!(g.iter().all(|&gap| (2000..=60_000).contains(&gap)), "{g:?}");
    assert!(g[..4].iter().all(|&gap| gap <= 16_000), "the first retries come soon: {g:?}");
    assert!(g.iter().rev().take(5).all(|&gap| gap >= 30_000), "later retries back off: {g:?}");
    // Retry-After is honoured, but never past the cap.
    w.sim.sim.clear_faults();
    w.sim.sim.add_fault(Fault::on("/wait").status(429).retry_after(45));
    w.sim.sim.add_fault(Fault::on("/wait").status(503).retry_after(3600));
    w.sim.sim.clear_requests();
    pass(SECS(5 * 60)).await;
    let g = gaps(&w, run.as_str());
    assert!(g.iter().all(|&gap| gap <= 60_000), "{g:?}");
    assert!(g[0] >= 45_000, "Retry-After 45 honoured: {g:?}");
    // And it recovers.
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    eventually("the banner", SECS(120), || w.banners().len() == 1).await;
    println!("backoff gaps (ms): {g:?}");
}

#[tokio::test(start_paused = true)]
async fn a_stalled_server_does_not_hang_a_follow() {
    let w = World::new().await;
    let run = w.run("Stalled");
    w.sim.sim.add_fault(Fault::on("/wait").stall().times(2));
    w.engine.follow_run(&run).unwrap();
    pass(SECS(20)).await;
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    // Two stalls: each ends at the client's own deadline (10 s hold + 15 s margin), then a retry.
    eventually("the banner after two stalls", SECS(180), || w.banners().len() == 1).await;
    let g = gaps(&w, run.as_str());
    assert_eq!(g.len(), 2, "{g:?}");
    assert!(g.iter().all(|&gap| (25_000..=25_000 + 60_000).contains(&gap)), "{g:?}");
    // A waiter on a follow that ends any other way gets an error, not a hang.
    let other = w.run("Stalled forever, then forbidden");
    w.sim.sim.add_fault(Fault::on(other.as_str()).stall());
    w.sim.sim.add_fault(Fault::on(other.as_str()).status(403));
    w.engine.follow_run(&other).unwrap();
    let end = tokio::time::timeout(SECS(600), w.engine.wait_run_end(&other)).await.expect("no hang");
    assert!(end.is_err());
}

#[tokio::test(start_paused = true)]
async fn a_held_wait_is_followed_at_once_and_nothing_wakes_while_nothing_happens() {
    let w = World::new().await;
    let run = w.run("Quiet");
    let ho = w.handoff(None, false);
    w.engine.follow_run(&run).unwrap();
    w.engine.follow_handoff(&ho).unwrap();
    pass(SECS(10 * 60)).await;
    // Held waits: one per hold (10 s Runs, 25 s hand-offs), re-asked at once, nothing more.
    let runs = w.requests_to(run.as_str()).len();
    let handoffs = w.requests_to(ho.as_str()).len();
    assert!((59..=61).contains(&runs), "{runs} Run waits in 10 min");
    // The first hand-off wait answers at once (version 1 is past 0); then 25 s holds.
    assert!((24..=26).contains(&handoffs), "{handoffs} hand-off waits in 10 min");
}

/// Follows started together (a restart resumes them all) ask their first wait for a hold drawn
/// between the 2 s floor and the server's full hold, so they spread over the beats; and every
/// hold ends on a beat (1 s of the clock), so that the answers of many come together
/// (docs/cloud-api.md, "Pacing").
#[tokio::test(start_paused = true)]
async fn follows_started_together_spread_over_the_beats_and_every_hold_ends_on_one() {
    let w = World::new().await;
    let runs: Vec<_> = (0..20).map(|i| w.run(&format!("Together {i}"))).collect();
    for run in &runs {
        w.engine.follow_run(run).unwrap();
    }
    pass(SECS(35)).await;
    // A wait without `timeoutMs` asks for the Run's full hold.
    let hold = |r: &cmux_cloud_sim::LoggedRequest| r.param("timeoutMs").map_or(10_000, |ms| ms.parse::<u64>().unwrap());
    let (mut first_holds, mut phases) = (Vec::new(), Vec::new());
    for run in &runs {
        let asks = w.requests_to(run.as_str());
        assert!(asks.len() >= 3, "{run} asked {} times", asks.len());
        let first = hold(&asks[0]);
        assert!((2_000..=10_000).contains(&first), "first hold {first} ms");
        for (i, pair) in asks.windows(2).enumerate() {
            let held = hold(&pair[0]);
            assert_eq!(pair[1].at_ms - pair[0].at_ms, held, "each wait was held as asked");
            assert!(i == 0 || held > 9_000, "later holds are the full hold, cut to the beat: {held} ms");
            phases.push((pair[0].at_ms + held) % 1_000);
        }
        first_holds.push(first);
    }
    phases.dedup();
    assert_eq!(phases.len(), 1, "every hold of every follow ends on the same phase of the second: {phases:?}");
    first_holds.sort();
    first_holds.dedup();
    assert!(first_holds.len() >= 5, "drawn, not one hold for all: {first_holds:?}");
}
