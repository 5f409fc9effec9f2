//! Seed 002's proof list, against the simulator over real HTTP: one notice per
//! (hand-off, turn, status) for done, failed and needs-you.

mod common;

use cmux_cloud_sim::state::NewHandoff;
use cmux_cloud_sim::{Fault, FaultBody, HandoffChange};
use cmux_tray_engine::cloud::HandoffId;
use cmux_tray_engine::store::FollowKind;
use common::*;

fn change(status: &str, summary: Option<&str>) -> HandoffChange {
    HandoffChange { status: Some(status.into()), summary: summary.map(String::from), ..Default::default() }
}

#[tokio::test(start_paused = true)]
async fn each_turns_done_and_needs_you_posts_once_and_the_watcher_outlives_a_turn() {
    let w = World::new().await;
    let ho = w.handoff(Some("Refactor the parser"), false);
    w.engine.follow_handoff(&ho).unwrap();
    let sim = &w.sim.sim;
    sim.update_handoff(ho.as_str(), change("running", None));
    pass(SECS(5)).await;
    sim.update_handoff(ho.as_str(), change("needs-you", Some("Which branch?")));
    pass(SECS(5)).await;
    // The same turn stops for the person again (a new version, same key): no second banner.
    sim.update_handoff(ho.as_str(), change("running", None));
    pass(SECS(5)).await;
    sim.update_handoff(ho.as_str(), change("needs-you", Some("Which branch, really?")));
    pass(SECS(5)).await;
    sim.update_handoff(ho.as_str(), change("done", Some("Pushed to main")));
    pass(SECS(5)).await;
    // Turn 2 on the same id: its done posts though turn 1's did.
    sim.update_handoff(ho.as_str(), HandoffChange { next_turn: true, ..Default::default() });
    pass(SECS(5)).await;
    sim.update_handoff(ho.as_str(), change("done", Some("Second answer")));
    pass(SECS(30)).await;
    let words: Vec<(String, String)> = w.banners().into_iter().map(|b| (b.title, b.body)).collect();
    assert_eq!(
        words,
        [
            ("Refactor the parser".to_string(), "Needs you".to_string()),
            ("Refactor the parser".to_string(), "Done — Pushed to main".to_string()),
            ("Refactor the parser".to_string(), "Done — Second answer".to_string()),
        ]
    );
    // One banner id per hand-off: each later banner replaces the one before.
    let ids: Vec<u32> = w.desktop.posted().iter().map(|(id, _)| *id).collect();
    assert!(ids.windows(2).all(|p| p[0] == p[1]), "{ids:?}");
    assert_eq!(w.engine.live_follows(), 1, "the watcher outlives the turns");
    // It stops when the hand-off closes.
    sim.update_handoff(ho.as_str(), HandoffChange { close: true, ..Default::default() });
    eventually("stopped at closed", SECS(30), || w.engine.live_follows() == 0).await;
    let f = w.engine.store().follow(FollowKind::Handoff, ho.as_str()).unwrap().unwrap();
    assert_eq!(f.end_reason.as_deref(), Some("closed"));
}

#[tokio::test(start_paused = true)]
async fn a_cancel_and_progress_never_post() {
    let w = World::new().await;
    let ho = w.handoff(None, false);
    w.engine.follow_handoff(&ho).unwrap();
    for status in ["starting", "running", "cancelled", "running", "cancelled"] {
        w.sim.sim.update_handoff(ho.as_str(), change(status, Some("progress")));
        pass(SECS(5)).await;
    }
    pass(SECS(60)).await;
    assert!(w.banners().is_empty(), "{:?}", w.banners());
    assert_eq!(w.engine.live_follows(), 1, "a cancel ends a turn, not the hand-off");
}

#[tokio::test(start_paused = true)]
async fn a_failed_turn_posts_once_and_a_closing_turn_end_not_yet_told_posts() {
    let w = World::new().await;
    let ho = w.handoff(None, false);
    w.engine.follow_handoff(&ho).unwrap();
    w.sim.sim.update_handoff(ho.as_str(), change("failed", Some("Tests are red")));
    pass(SECS(5)).await;
    w.sim.sim.update_handoff(ho.as_str(), HandoffChange { title: Some("renamed".into()), ..Default::default() });
    pass(SECS(5)).await;
    // The next turn ends and closes in one change: told, then the follow ends.
    w.sim.sim.update_handoff(
        ho.as_str(),
        HandoffChange { next_turn: true, status: Some("done".into()), summary: Some("Fixed".into()), close: true, ..Default::default() },
    );
    eventually("stopped", SECS(30), || w.engine.live_follows() == 0).await;
    eventually("two banners", SECS(5), || w.banners().len() == 2).await;
    let bodies: Vec<String> = w.banners().into_iter().map(|b| b.body).collect();
    assert_eq!(bodies, ["Failed — Tests are red", "Done — Fixed"]);
}

#[tokio::test(start_paused = true)]
async fn a_store_from_before_turns_closes_at_its_first_end() {
    let w = World::new().await;
    let ho = w.handoff(Some("Legacy"), true);
    w.engine.follow_handoff(&ho).unwrap();
    w.sim.sim.update_handoff(ho.as_str(), change("running", None));
    pass(SECS(5)).await;
    assert_eq!(w.engine.live_follows(), 1);
    w.sim.sim.update_handoff(ho.as_str(), change("done", Some("All done")));
    eventually("closed at the first end", SECS(30), || w.engine.live_follows() == 0).await;
    eventually("its banner", SECS(5), || w.banners().len() == 1).await;
    let asked = w.requests_to(ho.as_str()).len();
    w.sim.sim.update_handoff(ho.as_str(), HandoffChange { next_turn: true, status: Some("done".into()), ..Default::default() });
    pass(SECS(60)).await;
    assert_eq!(w.requests_to(ho.as_str()).len(), asked, "not asked again");
    assert_eq!(w.banners().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_stop_already_told_does_not_post_again_after_a_relaunch() {
    let mut w = World::new().await;
    let ho = w.handoff(None, false);
    w.engine.follow_handoff(&ho).unwrap();
    w.sim.sim.update_handoff(ho.as_str(), change("needs-you", None));
    eventually("told", SECS(30), || w.banners().len() == 1).await;
    w.relaunch().await;
    // The relaunched follow resumes from its saved version, and the list at sign-in knows it.
    pass(SECS(120)).await;
    assert_eq!(w.banners().len(), 1);
    w.sim.sim.update_handoff(ho.as_str(), change("done", None));
    eventually("the next stop", SECS(30), || w.banners().len() == 2).await;
}

#[tokio::test(start_paused = true)]
async fn a_handoff_found_in_the_list_posts_only_what_changes_after() {
    let sim_only = World::new().await;
    // Made elsewhere before this app signs in: one already waiting for the person.
    let owner = sim_only.user.user_id.clone();
    let waiting = sim_only.sim.sim.create_handoff(NewHandoff { owner: owner.clone(), title: Some("Waiting".into()), ..Default::default() });
    sim_only.sim.sim.update_handoff(&waiting, change("needs-you", None));
    let closed = sim_only.sim.sim.create_handoff(NewHandoff { owner: owner.clone(), ..Default::default() });
    sim_only.sim.sim.update_handoff(&closed, HandoffChange { status: Some("done".into()), close: true, ..Default::default() });
    // More than one page of open ones, to read the list page after page.
    let many: Vec<String> =
        (0..120).map(|_| sim_only.sim.sim.create_handoff(NewHandoff { owner: owner.clone(), ..Default::default() })).collect();
    // A new sign-in reads the list.
    let token = sim_only.user.access_token.clone();
    sim_only.engine.sign_out().await.unwrap();
    sim_only.sign_in(&token).await;
    eventually("all open ones followed", SECS(30), || sim_only.engine.live_follows() == 121).await;
    pass(SECS(60)).await;
    assert!(sim_only.banners().is_empty(), "the listed state is not news: {:?}", sim_only.banners());
    let pages: Vec<_> = sim_only.requests_to("/v1/handoffs").into_iter().filter(|r| !r.path.contains("/wait")).collect();
    assert!(pages.iter().any(|r| r.query.as_deref().unwrap_or("").contains("cursor=")), "read page after page");
    // What changes after is news; the same needs-you again is not.
    sim_only.sim.sim.update_handoff(&waiting, HandoffChange { summary: Some("still waiting".into()), ..Default::default() });
    pass(SECS(10)).await;
    assert!(sim_only.banners().is_empty());
    sim_only.sim.sim.update_handoff(&waiting, change("done", Some("Answered")));
    sim_only.sim.sim.update_handoff(&many[7], change("needs-you", None));
    eventually("two banners", SECS(30), || sim_only.banners().len() == 2).await;
    assert!(sim_only.requests_to(&closed).is_empty(), "a closed hand-off is not followed");
}

#[tokio::test(start_paused = true)]
async fn one_the_store_no_longer_shows_is_dropped_without_posting() {
    let w = World::new().await;
    let ho = w.handoff(None, false);
    w.engine.follow_handoff(&ho).unwrap();
    pass(SECS(5)).await;
    w.sim.sim.remove_handoff(ho.as_str());
    eventually("dropped", SECS(30), || w.engine.live_follows() == 0).await;
    pass(SECS(60)).await;
    assert!(w.banners().is_empty());
    let f = w.engine.store().follow(FollowKind::Handoff, ho.as_str()).unwrap().unwrap();
    assert_eq!(f.end_reason.as_deref(), Some("gone (404)"));
}

#[tokio::test(start_paused = true)]
async fn bodies_of_another_shape_are_unreadable() {
    let w = World::new().await;
    let ho = w.handoff(None, false);
    for body in [
        FaultBody::NotASnapshot,
        FaultBody::Raw(format!(r#"{{"id": "{ho}", "version": 9, "turn": 1, "status": "exploded"}}"#)),
        FaultBody::Raw(r#"{"id": "ho_ffffffffffffffffffff", "version": 9, "turn": 1, "status": "done"}"#.into()),
        FaultBody::Raw(format!(r#"{{"id": "{ho}", "version": "nine", "turn": 1, "status": "done"}}"#)),
    ] {
        w.sim.sim.add_fault(Fault::on("/wait").body(body));
    }
    w.engine.follow_handoff(&ho).unwrap();
    pass(SECS(120)).await;
    assert!(w.banners().is_empty(), "{:?}", w.banners());
    let problems = w.engine.status().unwrap().problems.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert!(problems.iter().filter(|p| p.contains("unreadable")).count() >= 4, "{problems:?}");
    assert_eq!(w.engine.live_follows(), 1, "still followed");
}

#[tokio::test(start_paused = true)]
async fn a_bad_entry_in_the_list_is_named_and_the_rest_are_followed() {
    let w = World::new().await;
    let good = w.handoff(None, false);
    let page = format!(
        r#"{{"handoffs": [{{"id": "ho_NOT-AN-ID", "version": 1, "turn": 1, "state": "open", "status": "running"}},
                          {{"id": "{good}", "version": 1, "turn": 1, "state": "open", "status": "mystery"}},
                          {}], "nextCursor": null}}"#,
        w.sim.sim.handoff(good.as_str()).unwrap()
    );
    w.sim.sim.add_fault(Fault {
        path_contains: Some("/v1/handoffs".into()),
        method: Some("GET".into()),
        ..Fault::on("/v1/handoffs").body(FaultBody::Raw(page))
    });
    let token = w.user.access_token.clone();
    w.engine.sign_out().await.unwrap();
    w.sign_in(&token).await;
    eventually("the good one followed", SECS(30), || w.engine.live_follows() == 1).await;
    let problems = w.engine.status().unwrap().problems.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert!(problems.iter().any(|p| p.contains("entry 1") && p.contains("ho_NOT-AN-ID")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("entry 2") && p.contains("mystery")), "{problems:?}");
    let _ = HandoffId::parse(good.as_str()).unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_handoff_is_given_up_when_unchanged_for_three_days() {
    let w = World::new().await;
    let ho = w.handoff(None, false);
    w.engine.follow_handoff(&ho).unwrap();
    pass(SECS(2 * 24 * 3600)).await;
    w.sim.sim.update_handoff(ho.as_str(), change("running", None)); // a change resets the clock
    pass(SECS(2 * 24 * 3600)).await;
    assert_eq!(w.engine.live_follows(), 1);
    pass(SECS(24 * 3600 + 120)).await;
    assert_eq!(w.engine.live_follows(), 0);
    let f = w.engine.store().follow(FollowKind::Handoff, ho.as_str()).unwrap().unwrap();
    assert_eq!(f.end_reason.as_deref(), Some("expired"));
}

#[tokio::test(start_paused = true)]
async fn where_the_store_is_not_deployed_nothing_is_followed() {
    let w = World::new().await;
    w.sim.sim.add_fault(Fault::on("/v1/handoffs").status(404).times(0));
    let ho = w.handoff(None, false);
    w.engine.follow_handoff(&ho).unwrap();
    eventually("ended", SECS(30), || w.engine.live_follows() == 0).await;
    assert!(w.banners().is_empty());
}
