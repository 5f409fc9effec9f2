//! One banner's trouble stays that banner's: a banner the server refuses, a store that cannot be
//! written, a wall clock set back. The engine against the simulator and a recording desktop, on
//! tokio's paused clock.

mod common;

use cmux_tray_engine::clock::{Clock, HOUR_MS};
use cmux_tray_engine::notice::local::LocalPost;
use common::{SECS, World, eventually, pass};

async fn post(w: &World, title: &str) -> String {
    let post = LocalPost { title: title.into(), body: "body".into(), ..Default::default() };
    w.engine.post_local(post).await.expect("posted").key
}

fn titles(w: &World) -> Vec<String> {
    w.banners().into_iter().map(|b| b.title).collect()
}

#[tokio::test(start_paused = true)]
async fn a_banner_the_server_refuses_is_set_aside_after_three_tries_and_the_others_go_out() {
    let w = World::new().await;
    w.desktop.refuse_titles_with(Some("Refused"));
    let bad = post(&w, "Refused by the server").await;
    post(&w, "First good one").await;
    post(&w, "Second good one").await;
    eventually("the good banners", SECS(5), || titles(&w).len() == 2).await;
    assert_eq!(titles(&w), ["First good one", "Second good one"]);
    // docs/notices.md §3: three tries, 15 s apart, then set aside with the server's reason.
    pass(SECS(60)).await;
    assert_eq!(w.desktop.refused().len(), 3, "{:?}", w.desktop.refused());
    let n = w.engine.store().notice(&bad).unwrap().unwrap();
    assert_eq!((n.state.as_str(), n.delivery.map(|r| r.as_str())), ("told", Some("not shown")));
    assert!(n.failure.as_deref().is_some_and(|f| f.contains("refuse")), "{:?}", n.failure);
    let status = w.engine.status().unwrap();
    assert!(
        status.problems.iter().map(ToString::to_string).any(|p| p.contains("could not be shown") && p.contains("Refused by the server")),
        "{:?}",
        status.problems
    );
    // Set aside means set aside: no fourth try, however long.
    pass(SECS(120)).await;
    assert_eq!(w.desktop.refused().len(), 3);
    // And the next banner goes out as any other.
    post(&w, "Third good one").await;
    eventually("the next banner", SECS(5), || titles(&w).len() == 3).await;
}

#[tokio::test(start_paused = true)]
async fn a_banner_shown_while_the_store_cannot_be_written_is_not_shown_again() {
    let w = World::new().await;
    let key = post(&w, "Shown once").await;
    // The disk fills before the deliverer marks it told (the settle wait is 0.5 s).
    w.engine.store().refuse_writes(true).unwrap();
    eventually("the banner", SECS(5), || w.banners().len() == 1).await;
    pass(SECS(60)).await;
    assert_eq!(w.banners().len(), 1, "a failed write posts no second banner: {:?}", titles(&w));
    let status = w.engine.status().unwrap();
    assert!(
        status.problems.iter().map(ToString::to_string).any(|p| p.starts_with("Could not save to")),
        "a failed write is a visible problem: {:?}",
        status.problems
    );
    // Space again: the banner shown is saved as told, with the id it got.
    w.engine.store().refuse_writes(false).unwrap();
    eventually("saved as told", SECS(20), || w.engine.store().notice(&key).unwrap().unwrap().state.as_str() == "told").await;
    let n = w.engine.store().notice(&key).unwrap().unwrap();
    assert_eq!(n.banner_id, Some(w.desktop.posted()[0].0));
    assert_eq!(w.banners().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_wall_clock_set_back_an_hour_holds_no_banner() {
    let mut w = World::new().await;
    w.desktop.set_failing(true);
    post(&w, "Made before the clock went back").await;
    pass(SECS(2)).await;
    assert!(w.banners().is_empty());
    // The clock is set back an hour across a relaunch; a server is there now.
    w.clock = Clock::following_tokio(w.clock.now_ms() - HOUR_MS);
    w.desktop.set_failing(false);
    w.relaunch().await;
    eventually("the banner", SECS(5), || w.banners().len() == 1).await;
}

#[tokio::test(start_paused = true)]
async fn the_history_forgets_what_is_older_than_its_days_but_never_what_is_untold() {
    let mut w = World::new().await;
    let old = post(&w, "A month ago").await;
    eventually("told", SECS(5), || w.banners().len() == 1).await;
    w.desktop.set_failing(true);
    let untold = post(&w, "Never told").await;
    // docs/notices.md: the history keeps 30 days by default. A month away, the machine off.
    w.relaunch_after(SECS(31 * 86_400)).await;
    w.engine.sweep().await.unwrap();
    assert!(w.engine.store().notice(&old).unwrap().is_none(), "a told notice past its days is forgotten");
    assert!(w.engine.store().notice(&untold).unwrap().is_some(), "what is untold is kept, however old");
    // The days are a setting.
    w.desktop.set_failing(false);
    eventually("told at last", SECS(30), || w.engine.store().notice(&untold).unwrap().is_some_and(|n| n.state.as_str() == "told")).await;
    w.configure("[delivery]\nhistory_days = 400\n");
    w.relaunch_after(SECS(40 * 86_400)).await;
    w.engine.sweep().await.unwrap();
    assert!(w.engine.store().notice(&untold).unwrap().is_some(), "kept past 30 days when asked for 400");
}

#[tokio::test(start_paused = true)]
async fn past_the_follow_cap_a_follow_is_refused_and_said_never_dropped() {
    let sim = cmux_cloud_sim::start().await.unwrap();
    let user = sim.sim.add_user("ada@example.com");
    let dir = tempfile::tempdir().unwrap();
    let desktop = std::sync::Arc::new(cmux_tray_engine::desktop::Recording::new());
    let mut opts = cmux_tray_engine::EngineOptions::new(&sim.origin(), &sim.origin(), dir.path().join("state.sqlite3"), desktop);
    opts.clock = Clock::following_tokio(1_780_000_000_000);
    opts.limits.max_follows = 2;
    let engine = cmux_tray_engine::Engine::start(opts).await.unwrap();
    let run = |task: &str| cmux_tray_engine::cloud::RunId::parse(&sim.sim.create_run(&user.user_id, task)).unwrap();
    let (a, b, c) = (run("a"), run("b"), run("c"));
    // At sign-in the active Runs are adopted: two fit, the third is refused and said.
    engine.sign_in_with_token(secrecy::SecretString::from(user.access_token.clone()), None).await.unwrap();
    let refused = |engine: &cmux_tray_engine::Engine, id: &str| {
        engine.status().unwrap().problems.iter().map(ToString::to_string).any(|p| p.contains(id) && p.contains("was not followed"))
    };
    let refused_one = || [&a, &b, &c].into_iter().find(|id| refused(&engine, id.as_str())).cloned();
    eventually("two adopted, one refused", SECS(30), || engine.live_follows() == 2 && refused_one().is_some()).await;
    let left_out = refused_one().unwrap();
    let followed: Vec<_> = [&a, &b, &c].into_iter().filter(|id| **id != left_out).cloned().collect();
    engine.follow_run(&followed[0]).expect("one already followed always fits");
    let err = engine.follow_run(&left_out).unwrap_err().to_string();
    assert!(err.contains("already following 2 items") && err.contains(left_out.as_str()), "{err}");
    // One ends: there is room again.
    sim.sim.update_run(followed[0].as_str(), cmux_cloud_sim::RunChange::status("succeeded"));
    eventually("its follow ended", SECS(30), || engine.live_follows() == 1).await;
    engine.follow_run(&left_out).expect("room again");
}

#[tokio::test(start_paused = true)]
async fn a_handoff_followed_through_a_link_from_outside_never_opens_a_workspace_on_its_host() {
    let w = World::new().await;
    let id = cmux_tray_engine::cloud::HandoffId::parse(&w.sim.sim.create_handoff(cmux_cloud_sim::state::NewHandoff {
        owner: w.user.user_id.clone(),
        title: Some("Deploy".into()),
        host: Some("attacker.example".into()),
        ..Default::default()
    }))
    .unwrap();
    // Any web page can fire cmux-tray://follow/handoff/<id>.
    w.engine.follow_handoff_from(&id, cmux_tray_engine::Asked::Link).unwrap();
    let follow = w.engine.store().follow(cmux_tray_engine::store::FollowKind::Handoff, id.as_str()).unwrap().unwrap();
    assert!(!follow.made_here, "a link from outside does not say it was made here");
    let mut events = w.engine.subscribe();
    w.sim.sim.update_handoff(
        id.as_str(),
        cmux_cloud_sim::HandoffChange { status: Some("done".into()), summary: Some("Deployed".into()), ..Default::default() },
    );
    eventually("the banner", SECS(30), || w.banners_for(id.as_str()).len() == 1).await;
    let (banner_id, _) = w.desktop.posted().into_iter().find(|(_, b)| b.item.to_string().ends_with(id.as_str())).unwrap();
    w.desktop.click(banner_id);
    // The click opens the app on the card (docs/notices.md §4), not a workspace on the host.
    let clicked = tokio::time::timeout(SECS(10), async {
        loop {
            if let Ok(cmux_tray_engine::EngineEvent::Clicked { notice }) = events.recv().await {
                return notice;
            }
        }
    })
    .await
    .expect("the click reaches the app");
    assert_eq!(clicked.item.to_string(), format!("handoff:{id}"));
}
