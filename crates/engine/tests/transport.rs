//! How the cloud client speaks HTTP (docs/cloud-api.md, "Where this project's build differs"):
//! over HTTP/2 the waits share connections, 100 to a connection, so none queues behind the
//! server's stream limit (the simulator's server allows 200 streams a connection).
//!
//! Real time, not the paused clock: a paused runtime that goes idle moves its clock to the end
//! of the holds at once, and the point here is what is held at the same moment. Nothing is timed:
//! the check waits for a state and fails past half a hold (10 s).

mod common;

use std::time::Duration;

use cmux_cloud_sim::RunChange;
use cmux_tray_engine::cloud::client::Transport;
use cmux_tray_engine::cloud::{CloudClient, Credentials, RunId, RunStatus};
use common::eventually;
use secrecy::SecretString;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http2_250_waits_are_all_held_at_once_on_three_connections() {
    let sim = cmux_cloud_sim::start().await.expect("the simulator starts");
    let user = sim.sim.add_user("ada@example.com");
    let client = CloudClient::new(&sim.origin(), &sim.origin(), Transport::Http2).expect("a client");
    let cred = Credentials { access_token: SecretString::from(user.access_token.clone()), team: None };
    let hold_and_end = async |round: usize| {
        let runs: Vec<RunId> =
            (0..250).map(|i| RunId::parse(&sim.sim.create_run(&user.user_id, &format!("Run {round}.{i}"))).unwrap()).collect();
        let waits: Vec<_> = runs
            .iter()
            .map(|id| {
                let (client, cred, id) = (client.clone(), cred.clone(), id.clone());
                tokio::spawn(async move { client.wait_run(&cred, &id).await })
            })
            .collect();
        // On one connection 50 of them would queue until others ended.
        let all_held = || runs.iter().all(|id| sim.sim.held_waits(id.as_str()) > 0);
        eventually(&format!("round {round}: all 250 waits held at once"), Duration::from_secs(5), all_held).await;
        assert_eq!(client.pools(), 3, "round {round}: 100 waits to a connection: 100, 100 and 50");
        for id in &runs {
            sim.sim.update_run(id.as_str(), RunChange::status("succeeded"));
        }
        for wait in waits {
            let run = wait.await.unwrap().expect("every wait answers the end");
            assert_eq!(run.status, RunStatus::Succeeded);
        }
    };
    hold_and_end(1).await;
    // Ended calls give their places back: the same 250 again need no fourth connection.
    hold_and_end(2).await;
}

/// The sign-in's race: a wait and another call start together on a client with no connection
/// yet, so both wait for the one HTTP/2 connection being made. The wait must still be answered
/// when its Run changes, not at its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_started_beside_another_call_on_a_new_connection_is_answered_at_the_change() {
    let sim = cmux_cloud_sim::start().await.expect("the simulator starts");
    let user = sim.sim.add_user("ada@example.com");
    let cred = Credentials { access_token: SecretString::from(user.access_token.clone()), team: None };
    for round in 0..3 {
        let client = CloudClient::new(&sim.origin(), &sim.origin(), Transport::Http2).expect("a client");
        let id = RunId::parse(&sim.sim.create_run(&user.user_id, "Raced")).unwrap();
        let (c, cr, i) = (client.clone(), cred.clone(), id.clone());
        let wait = tokio::spawn(async move { c.wait_run(&cr, &i).await });
        let (c, cr) = (client.clone(), cred.clone());
        let me = tokio::spawn(async move { c.me(&cr).await });
        let held = || sim.sim.held_waits(id.as_str()) > 0;
        eventually(&format!("round {round}: the wait held at the simulator"), Duration::from_secs(5), held).await;
        sim.sim.update_run(id.as_str(), RunChange::status("running"));
        // Well before the hold (10 s) would end on its own.
        let run = tokio::time::timeout(Duration::from_secs(5), wait).await;
        let run = run.unwrap_or_else(|_| panic!("round {round}: no answer 5 s after the change")).unwrap().expect("an answer");
        assert_eq!(run.status, RunStatus::Running);
        assert!(me.await.unwrap().is_ok(), "round {round}: the other call is answered too");
    }
}
