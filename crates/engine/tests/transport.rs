//! How the cloud client speaks HTTP (docs/cloud-api.md, "Where this project's build differs"):
//! over HTTP/2 the waits share connections, 100 to a connection, so none queues behind the
//! server's stream limit (the simulator's server allows 200 streams a connection).
//!
//! Real time, not the paused clock: a paused runtime that goes idle moves its clock to the end
//! of the holds at once, and the point here is what is held at the same moment. Nothing is timed:
//! the check waits for a state and fails past half a hold (10 s).

mod common;

use std::time::Duration;

use cmux_cloud_sim::{Fault, FaultBody, RunChange};
use cmux_tray_engine::cloud::Network;
use cmux_tray_engine::cloud::{CloudClient, CloudError, Credentials, RUN_HOLD, RunId, RunStatus};
use common::eventually;
use secrecy::SecretString;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http2_250_waits_are_all_held_at_once_on_three_connections() {
    let sim = cmux_cloud_sim::start().await.expect("the simulator starts");
    let user = sim.sim.add_user("ada@example.com");
    let client = CloudClient::new(&sim.origin(), &sim.origin(), &Network::default()).expect("a client");
    let cred = Credentials { access_token: SecretString::from(user.access_token.clone()), team: None };
    let hold_and_end = async |round: usize| {
        let runs: Vec<RunId> =
            (0..250).map(|i| RunId::parse(&sim.sim.create_run(&user.user_id, &format!("Run {round}.{i}"))).unwrap()).collect();
        let waits: Vec<_> = runs
            .iter()
            .map(|id| {
                let (client, cred, id) = (client.clone(), cred.clone(), id.clone());
                tokio::spawn(async move { client.wait_run(&cred, &id, RUN_HOLD).await })
            })
            .collect();
        // On one connection 50 of them would queue until others ended.
        let all_held = || runs.iter().all(|id| sim.sim.held_waits(id.as_str()) > 0);
        eventually(&format!("round {round}: all 250 waits held at once"), Duration::from_secs(5), all_held).await;
        assert_eq!(client.wait_connections(), 3, "round {round}: 100 waits to a connection: 100, 100 and 50");
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
        let client = CloudClient::new(&sim.origin(), &sim.origin(), &Network::default()).expect("a client");
        let id = RunId::parse(&sim.sim.create_run(&user.user_id, "Raced")).unwrap();
        let (c, cr, i) = (client.clone(), cred.clone(), id.clone());
        let wait = tokio::spawn(async move { c.wait_run(&cr, &i, RUN_HOLD).await });
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

/// The waits' own HTTP/2 connections send what reqwest sends (docs/cloud-api.md, "Headers":
/// `Authorization`, `x-cmux-team` and protocol headers only) and read errors the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http2_a_wait_sends_only_the_two_headers_and_reads_errors_as_any_call_does() {
    let sim = cmux_cloud_sim::start().await.expect("the simulator starts");
    let user = sim.sim.add_user("ada@example.com");
    let team = sim.sim.add_team(&user.user_id, "Stack");
    let client = CloudClient::new(&sim.origin(), &sim.origin(), &Network::default()).expect("a client");
    let cred = Credentials {
        access_token: SecretString::from(user.access_token.clone()),
        team: Some(cmux_tray_engine::cloud::TeamId::parse(&team).unwrap()),
    };
    let id = RunId::parse(&sim.sim.create_run(&user.user_id, "Headers")).unwrap();
    sim.sim.clear_requests();
    let (c, cr, i) = (client.clone(), cred.clone(), id.clone());
    let wait = tokio::spawn(async move { c.wait_run(&cr, &i, RUN_HOLD).await });
    eventually("the wait held at the simulator", Duration::from_secs(5), || sim.sim.held_waits(id.as_str()) > 0).await;
    sim.sim.update_run(id.as_str(), RunChange::status("running"));
    assert_eq!(wait.await.unwrap().expect("an answer").status, RunStatus::Running);
    assert_eq!(client.wait_connections(), 1, "the wait went over the waits' own connection");

    let requests = sim.sim.requests();
    let waits: Vec<_> = requests.iter().filter(|r| r.path == format!("/api/runs/{id}/wait")).collect();
    assert_eq!(waits.len(), 1, "{requests:?}");
    let allowed = ["host", "accept", "authorization", "x-cmux-team"];
    for (name, _) in &waits[0].headers {
        assert!(allowed.contains(&name.as_str()), "the wait sent header {name}");
    }
    assert_eq!(waits[0].header("authorization"), Some(format!("Bearer {}", user.access_token).as_str()));
    assert_eq!(waits[0].header("x-cmux-team"), Some(team.as_str()));
    assert_eq!(waits[0].header("accept"), Some("application/json"));

    // Someone else's Run: 403, a follow's end. A token the server refuses: 401, a stale token.
    let bob = sim.sim.add_user("bob@example.com");
    let theirs = RunId::parse(&sim.sim.create_run(&bob.user_id, "Not Ada's")).unwrap();
    match client.wait_run(&cred, &theirs, RUN_HOLD).await {
        Err(CloudError::Gone { status: 403, .. }) => {}
        other => panic!("someone else's Run: {other:?}"),
    }
    let stale = Credentials { access_token: SecretString::from("not-a-token".to_string()), team: None };
    match client.wait_run(&stale, &id, RUN_HOLD).await {
        Err(CloudError::StaleToken) => {}
        other => panic!("a refused token: {other:?}"),
    }
    // A 16 MiB answer is read up to the snapshot cap (256 KiB, docs/cloud-api.md) and no further.
    sim.sim.add_fault(Fault::on("/wait").body(FaultBody::Oversized));
    match client.wait_run(&cred, &id, RUN_HOLD).await {
        Err(CloudError::Unreadable { detail, .. }) if detail.contains("larger than 256 KiB") => {}
        other => panic!("an oversized answer: {other:?}"),
    }
}
