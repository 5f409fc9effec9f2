//! Seed 003's proof list, against the simulator over real HTTP: one notice per terminal Run.

mod common;

use cmux_cloud_sim::{Fault, FaultBody, RunChange};
use common::*;
use serde_json::json;

#[tokio::test(start_paused = true)]
async fn one_notice_per_terminal_run_also_with_two_waiters_a_late_follow_and_a_relaunch() {
    let mut w = World::new().await;
    let run = w.run("Fix the flaky login test\n\nDetails …");
    w.engine.follow_run(&run).unwrap();
    w.engine.follow_run(&run).unwrap(); // a second hand-over of the same Run starts nothing new
    let (a, b) = (w.engine.clone(), w.engine.clone());
    let (r1, r2) = (run.clone(), run.clone());
    let waiter1 = tokio::spawn(async move { a.wait_run_end(&r1).await });
    let waiter2 = tokio::spawn(async move { b.wait_run_end(&r2).await });
    pass(SECS(3)).await;
    w.sim.sim.update_run(run.as_str(), RunChange::status("running"));
    pass(SECS(30)).await;
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    let end1 = waiter1.await.unwrap().expect("the first waiter gets the end");
    let end2 = waiter2.await.unwrap().expect("the second waiter gets the end");
    assert_eq!(end1, end2);
    assert!(end1.receipt.is_some(), "the end carries its receipt");
    eventually("the banner", SECS(5), || !w.banners().is_empty()).await;

    // A late follow of a Run that ended: nothing new.
    w.engine.follow_run(&run).unwrap();
    pass(SECS(30)).await;
    // A relaunch: nothing new either.
    w.relaunch().await;
    pass(SECS(60)).await;
    let banners = w.banners_for(run.as_str());
    assert_eq!(banners.len(), 1, "{banners:?}");
    assert_eq!((banners[0].title.as_str(), banners[0].body.as_str()), ("Fix the flaky login test", "Run finished"));

    // A late follow of a Run never followed before, ended already: told once.
    let late = w.run("Late one");
    w.sim.sim.update_run(late.as_str(), RunChange::status("failed"));
    w.engine.follow_run(&late).unwrap();
    eventually("the late Run's banner", SECS(30), || w.banners_for(late.as_str()).len() == 1).await;
    assert_eq!(w.banners_for(late.as_str())[0].body, "Run failed");
}

#[tokio::test(start_paused = true)]
async fn none_for_this_apps_own_cancel_also_when_the_cancel_comes_before_the_follow() {
    let w = World::new().await;
    // Cancelled from here while followed.
    let followed = w.run("Followed then cancelled");
    w.engine.follow_run(&followed).unwrap();
    pass(SECS(1)).await;
    w.engine.cancel_run(&followed).await.unwrap();
    // Cancelled from here before any follow started (the cancel starts one; a later hand-over too).
    let unfollowed = w.run("Cancelled before its follow");
    w.engine.cancel_run(&unfollowed).await.unwrap();
    w.engine.follow_run(&unfollowed).unwrap();
    for id in [&followed, &unfollowed] {
        let end = w.engine.wait_run_end(id).await.expect("the follow sees the end");
        assert_eq!(end.status, cmux_tray_engine::cloud::RunStatus::Cancelled);
    }
    pass(SECS(60)).await;
    assert!(w.banners().is_empty(), "{:?}", w.banners());
    let cancels = w.requests_to("/cancel");
    assert_eq!(cancels.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn one_for_a_cancel_elsewhere() {
    let w = World::new().await;
    let run = w.run("Cancelled in the browser");
    w.engine.follow_run(&run).unwrap();
    pass(SECS(5)).await;
    w.sim.sim.update_run(run.as_str(), RunChange::status("cancelled"));
    eventually("the banner", SECS(30), || !w.banners().is_empty()).await;
    pass(SECS(30)).await;
    let b = w.banners_for(run.as_str());
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].body, "Run cancelled");
}

#[tokio::test(start_paused = true)]
async fn a_body_that_is_no_run_snapshot_is_never_an_end() {
    let w = World::new().await;
    let run = w.run("Odd answers");
    for body in [
        FaultBody::NotASnapshot,
        FaultBody::Malformed,
        FaultBody::Oversized,
        FaultBody::Raw(r#"{"id": "run_0123456789abcdef0123", "task": "someone else's", "status": "succeeded"}"#.into()),
        FaultBody::Raw(format!(r#"{{"id": "{run}", "task": "t", "status": "exploded"}}"#)),
    ] {
        w.sim.sim.add_fault(Fault::on("/wait").body(body));
    }
    w.engine.follow_run(&run).unwrap();
    // Five unreadable answers in a row, each retried after a backoff; none is an end.
    pass(SECS(200)).await;
    assert!(w.banners().is_empty(), "{:?}", w.banners());
    let follow = w.engine.store().follow(cmux_tray_engine::store::FollowKind::Run, run.as_str()).unwrap().unwrap();
    assert_eq!(follow.ended_at, None, "still followed");
    let status = w.engine.status().unwrap();
    assert!(
        status.problems.iter().map(ToString::to_string).any(|p| p.contains("unreadable") && p.contains("exploded")),
        "{:?}",
        status.problems
    );
    assert!(status.problems.iter().map(ToString::to_string).any(|p| p.contains("larger than")), "{:?}", status.problems);
    // The real end still comes through.
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    eventually("the banner", SECS(120), || w.banners().len() == 1).await;
    // Problems not seen again for an hour are over: the tray's icon does not stay red.
    pass(SECS(30 * 60)).await;
    assert!(!w.engine.status().unwrap().problems.is_empty(), "still shown after half an hour");
    pass(SECS(31 * 60)).await;
    assert!(w.engine.status().unwrap().problems.is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_ended_runs_card_outlives_a_relaunch_and_a_restored_wait_shows_the_end() {
    let mut w = World::new().await;
    let run = w.run("Card please");
    w.engine.follow_run(&run).unwrap();
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    let before = w.engine.wait_run_end(&run).await.unwrap();
    w.relaunch().await;
    let card = w.engine.store().card(run.as_str()).unwrap().expect("the card survived");
    assert_eq!((card.task.as_str(), card.outcome.as_str()), ("Card please", "finished"));
    assert!(card.receipt.is_some());
    // A waiter after the relaunch (a restored page) reads the ended Run from its card.
    let after = w.engine.wait_run_end(&run).await.unwrap();
    assert_eq!(after.receipt, before.receipt);
}

#[tokio::test(start_paused = true)]
async fn a_cancel_noted_before_a_quit_stays_silent_after_the_relaunch() {
    let mut w = World::new().await;
    let run = w.run("Cancel then quit");
    // The cancel request fails (the server is down); the note is already saved.
    w.sim.sim.add_fault(Fault::on("/cancel").status(503));
    assert!(w.engine.cancel_run(&run).await.is_err());
    w.relaunch().await;
    // The Run is cancelled (the user tried again elsewhere); the end is this app's own doing.
    w.sim.sim.update_run(run.as_str(), RunChange::status("cancelled"));
    let end = w.engine.wait_run_end(&run).await.unwrap();
    assert_eq!(end.status, cmux_tray_engine::cloud::RunStatus::Cancelled);
    pass(SECS(30)).await;
    assert!(w.banners().is_empty(), "{:?}", w.banners());
}

#[tokio::test(start_paused = true)]
async fn another_accounts_run_is_not_followed() {
    let w = World::new().await;
    let other = w.sim.sim.add_user("eve@example.com");
    let theirs = cmux_tray_engine::cloud::RunId::parse(&w.sim.sim.create_run(&other.user_id, "Not yours")).unwrap();
    w.engine.follow_run(&theirs).unwrap();
    let err = w.engine.wait_run_end(&theirs).await.unwrap_err();
    assert!(err.to_string().contains("Gone(403)"), "{err}");
    w.sim.sim.update_run(theirs.as_str(), RunChange::status("succeeded"));
    pass(SECS(60)).await;
    assert!(w.banners().is_empty());
    assert_eq!(w.requests_to(theirs.as_str()).len(), 1, "asked once, refused, never again");
}

#[tokio::test(start_paused = true)]
async fn a_send_that_answered_before_its_run_ended_takes_the_receipt_and_so_does_one_still_answering() {
    let w = World::new().await;
    let run = w.run("Receipt");
    w.engine.follow_run(&run).unwrap();
    let e = w.engine.clone();
    let r = run.clone();
    // One still answering: waits through the end.
    let answering = tokio::spawn(async move { e.wait_run_end(&r).await });
    // One that gave up (its deadline) before the end: asks again after, and gets the receipt.
    let gave_up = tokio::time::timeout(SECS(5), w.engine.wait_run_end(&run)).await;
    assert!(gave_up.is_err(), "still running at its deadline");
    w.sim.sim.update_run(
        run.as_str(),
        RunChange {
            status: Some("succeeded".into()),
            receipt: Some(json!({"summary": "All green", "sessionId": "s1"})),
            ..Default::default()
        },
    );
    let a = answering.await.unwrap().unwrap();
    let b = w.engine.wait_run_end(&run).await.unwrap();
    assert_eq!(a.receipt.as_ref().unwrap().summary.as_deref(), Some("All green"));
    assert_eq!(a.receipt, b.receipt);
}

#[tokio::test(start_paused = true)]
async fn an_end_saved_but_not_told_is_told_at_the_next_launch_once() {
    let mut w = World::new().await;
    let run = w.run("Told after the relaunch");
    w.desktop.set_failing(true); // no notification server: the end is saved, not told
    w.engine.follow_run(&run).unwrap();
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    w.engine.wait_run_end(&run).await.unwrap();
    pass(SECS(5)).await;
    assert_eq!(w.engine.store().untold().unwrap().len(), 1);
    w.desktop.set_failing(false);
    w.relaunch().await;
    eventually("told at the launch", SECS(5), || w.banners().len() == 1).await;
    w.relaunch().await;
    pass(SECS(60)).await;
    assert_eq!(w.banners().len(), 1, "told once");
    assert!(w.engine.store().untold().unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn forty_runs_in_flight_are_all_followed_and_cards_past_their_week_take_their_banners() {
    let w = World::new().await;
    w.configure("[delivery]\ncoalesce_count = 1000\n"); // a banner each, to watch each one withdrawn
    let runs: Vec<_> = (0..40).map(|i| w.run(&format!("Run number {i}"))).collect();
    for r in &runs {
        w.engine.follow_run(r).unwrap();
    }
    eventually("40 live follows", SECS(5), || w.engine.live_follows() == 40).await;
    pass(SECS(25)).await;
    for (i, r) in runs.iter().enumerate() {
        let status = if i % 3 == 0 { "failed" } else { "succeeded" };
        w.sim.sim.update_run(r.as_str(), RunChange::status(status));
    }
    eventually("40 banners", SECS(60), || w.banners().len() == 40).await;
    assert_eq!(w.engine.live_follows(), 0);
    for r in &runs {
        assert_eq!(w.banners_for(r.as_str()).len(), 1, "{r}");
    }
    // A week later the cards are dropped and their banners withdrawn.
    pass(SECS(7 * 24 * 3600 + 3600)).await;
    assert_eq!(w.engine.sweep().await.unwrap(), 0, "the hourly sweep already dropped them");
    let mut withdrawn = w.desktop.withdrawn();
    withdrawn.sort();
    let mut posted: Vec<u32> = w.desktop.posted().into_iter().map(|(id, _)| id).collect();
    posted.sort();
    assert_eq!(withdrawn, posted);
    assert!(w.engine.store().card(runs[0].as_str()).unwrap().is_none());
}

#[tokio::test(start_paused = true)]
async fn a_failed_wait_does_not_end_the_follow_and_the_notice_still_comes() {
    let w = World::new().await;
    let run = w.run("Through the storm");
    w.sim.sim.add_fault(Fault::on("/wait").status(503).times(3));
    w.sim.sim.add_fault(Fault::on("/wait").reset());
    w.sim.sim.add_fault(Fault::on("/wait").status(429).retry_after(20));
    w.engine.follow_run(&run).unwrap();
    pass(SECS(90)).await;
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    eventually("the banner", SECS(120), || w.banners().len() == 1).await;
}

#[tokio::test(start_paused = true)]
async fn a_relaunch_resumes_the_signed_in_users_runs() {
    let mut w = World::new().await;
    let run = w.run("Resumed");
    w.engine.follow_run(&run).unwrap();
    pass(SECS(3)).await;
    w.relaunch().await;
    assert_eq!(w.engine.live_follows(), 1);
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    eventually("the banner", SECS(30), || w.banners().len() == 1).await;
}

#[tokio::test(start_paused = true)]
async fn sign_out_and_an_account_switch_stop_them() {
    let w = World::new().await;
    let mine = w.run("Mine");
    w.engine.follow_run(&mine).unwrap();
    pass(SECS(3)).await;
    // An account switch: the other account's follows stop, asked no more.
    let other = w.sim.sim.add_user("bob@example.com");
    w.sign_in(&other.access_token).await;
    eventually("the follow stopped", SECS(5), || w.engine.live_follows() == 0).await;
    let asked_before = w.requests_to(mine.as_str()).len();
    w.sim.sim.update_run(mine.as_str(), RunChange::status("succeeded"));
    pass(SECS(120)).await;
    assert_eq!(w.requests_to(mine.as_str()).len(), asked_before, "no more waits for another account's Run");
    assert!(w.banners().is_empty());
    // Bob's own follow, then a sign-out: stops too.
    let bobs = cmux_tray_engine::cloud::RunId::parse(&w.sim.sim.create_run(&other.user_id, "Bob's")).unwrap();
    w.engine.follow_run(&bobs).unwrap();
    eventually("Bob's follow", SECS(5), || w.engine.live_follows() == 1).await;
    w.engine.sign_out().await.unwrap();
    eventually("stopped at sign-out", SECS(5), || w.engine.live_follows() == 0).await;
    assert!(w.engine.follow_run(&bobs).is_err(), "nothing is followed while signed out");
    assert!(w.engine.status().unwrap().account.is_none());
}

#[tokio::test(start_paused = true)]
async fn a_run_is_given_up_after_six_hours() {
    let w = World::new().await;
    let run = w.run("Forever running");
    w.engine.follow_run(&run).unwrap();
    let e = w.engine.clone();
    let r = run.clone();
    let waiter = tokio::spawn(async move { e.wait_run_end(&r).await });
    pass(SECS(6 * 3600 + 60)).await;
    let err = waiter.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("Expired"), "{err}");
    let f = w.engine.store().follow(cmux_tray_engine::store::FollowKind::Run, run.as_str()).unwrap().unwrap();
    assert_eq!(f.end_reason.as_deref(), Some("expired"));
}

#[tokio::test(start_paused = true)]
async fn a_refused_token_signs_out_visibly() {
    let w = World::new().await;
    let run = w.run("Stale");
    w.engine.follow_run(&run).unwrap();
    pass(SECS(3)).await;
    w.sim.sim.revoke_token(&w.user.access_token);
    eventually("stopped", SECS(60), || w.engine.live_follows() == 0).await;
    let status = w.engine.status().unwrap();
    assert!(status.account.unwrap().problem.unwrap().to_string().contains("sign in again"));
    eventually("one banner says so", SECS(5), || w.banners().len() == 1).await;
    assert_eq!(w.banners()[0].title, "cmux-tray: sign in again");
}

#[tokio::test(start_paused = true)]
async fn only_store_ids_reach_the_path_and_only_the_two_headers_are_sent() {
    let w = World::new().await;
    let team = w.sim.sim.add_team(&w.user.user_id, "Stack");
    pass(SECS(1)).await; // the first sign-in (no team) has read its lists
    w.sim.sim.clear_requests();
    w.engine
        .sign_in_with_token(
            secrecy::SecretString::from(w.user.access_token.clone()),
            Some(cmux_tray_engine::cloud::TeamId::parse(&team).unwrap()),
        )
        .await
        .unwrap();
    let run = w.run("Headers");
    w.engine.follow_run(&run).unwrap();
    let ho = w.handoff(Some("Headers too"), false);
    w.engine.follow_handoff(&ho).unwrap();
    pass(SECS(30)).await;
    let requests = w.sim.sim.requests();
    assert!(!requests.is_empty());
    let allowed = ["host", "accept", "authorization", "x-cmux-team", "content-type", "content-length"];
    for r in &requests {
        for (name, _) in &r.headers {
            assert!(allowed.contains(&name.as_str()), "{} sent header {name}", r.path);
        }
        assert_eq!(r.header("authorization"), Some(format!("Bearer {}", w.user.access_token).as_str()));
        if r.path != "/v1/me" {
            assert_eq!(r.header("x-cmux-team"), Some(team.as_str()), "{}", r.path);
        }
    }
    // Every path is a known route with a checked id; every query only integers and the cursor.
    for r in &requests {
        let ok_path = r.path == "/v1/me"
            || r.path == "/v1/handoffs"
            || r.path == "/api/runs"
            || r.path == format!("/api/runs/{run}/wait")
            || r.path == format!("/v1/handoffs/{ho}/wait");
        assert!(ok_path, "{}", r.path);
        for pair in r.query.as_deref().unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap();
            assert!(["after", "timeoutMs", "limit", "cursor", "active"].contains(&k), "{pair}");
            if k != "cursor" {
                assert!(v.chars().all(|c| c.is_ascii_digit()), "{pair}");
            }
        }
    }
    // A hostile id never gets as far as a request.
    for bad in ["run_../../v1/me", "run_0123456789abcdef012?x=1", "ho_0123456789abcdef0123"] {
        assert!(cmux_tray_engine::cloud::RunId::parse(bad).is_err(), "{bad}");
    }
}

/// Follows tell their ends on one channel for all (it keeps the last 256): a waiter among 300
/// ends at once reads past the others' ends to its own. (Here it keeps up; one that falls behind
/// reads its end from the store, as a waiter arriving after the end does.)
#[tokio::test(start_paused = true)]
async fn a_waiter_gets_its_runs_end_among_300_ends_at_once() {
    let w = World::new().await;
    let runs: Vec<_> = (0..300).map(|i| w.run(&format!("Run {i}"))).collect();
    for run in &runs {
        w.engine.follow_run(run).unwrap();
    }
    let (engine, last) = (w.engine.clone(), runs[299].clone());
    let waiter = tokio::spawn(async move { engine.wait_run_end(&last).await });
    pass(SECS(3)).await;
    for run in &runs {
        w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    }
    let end = tokio::time::timeout(SECS(60), waiter).await.expect("no hang").unwrap().expect("the end");
    assert_eq!((end.id.as_str(), end.status), (runs[299].as_str(), cmux_tray_engine::cloud::RunStatus::Succeeded));
}
