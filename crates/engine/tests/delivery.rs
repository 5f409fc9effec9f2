//! The delivery policy end to end inside the engine: the simulator over loopback HTTP, a paused
//! clock, the config file as the person writes it, and a recording desktop.

mod common;

use std::time::Duration;

use cmux_cloud_sim::RunChange;
use cmux_tray_engine::notice::Item;
use cmux_tray_engine::notice::local::LocalPost;
use common::*;

/// The virtual clock starts at 2026-05-28T20:26:40Z: 22:26:40 in Berlin (CEST).
const BERLIN: &str = "[delivery.quiet_hours]\ntime_zone = \"Europe/Berlin\"\n";

fn delivery_of(w: &World, key_part: &str) -> Option<String> {
    w.engine
        .status()
        .unwrap()
        .notices
        .into_iter()
        .find(|n| n.key.contains(key_part))
        .and_then(|n| n.delivery)
        .map(|r| r.as_str().to_owned())
}

async fn end_run(w: &World, task: &str, status: &str) -> String {
    let run = w.run(task);
    w.engine.follow_run(&run).unwrap();
    w.sim.sim.update_run(run.as_str(), RunChange::status(status));
    w.engine.wait_run_end(&run).await.unwrap();
    pass(SECS(3)).await; // past the settle window
    run.to_string()
}

#[tokio::test(start_paused = true)]
async fn during_quiet_hours_nothing_shows_and_one_summary_follows_them() {
    let w = World::new().await;
    w.configure(&format!("{BERLIN}windows = [\"daily 22:00-23:00\"]\n"));
    let a = end_run(&w, "First while quiet", "succeeded").await;
    let b = end_run(&w, "Second while quiet", "failed").await;
    assert!(w.banners().is_empty(), "{:?}", w.banners());
    assert_eq!(delivery_of(&w, &a).as_deref(), Some("quiet hours"), "the history has it, and why");
    assert_eq!(delivery_of(&w, &b).as_deref(), Some("quiet hours"));
    // 23:00 Berlin: the quiet hours end, and one summary says what came in.
    pass(SECS(34 * 60)).await;
    let banners = w.banners();
    assert_eq!(banners.len(), 1, "{banners:?}");
    assert_eq!(banners[0].title, "2 notices while you were away");
    assert_eq!(banners[0].body, "First while quiet, Second while quiet");
    // And never again: 23 hours on, inside the next night's window, nothing more was posted …
    pass(SECS(23 * 3600)).await;
    assert_eq!(w.banners().len(), 1, "{:#?}", w.banners());
    // … and that night's quiet hours hold a new end again, summed up when they end.
    let _ = end_run(&w, "Tomorrow night", "succeeded").await;
    assert_eq!(w.banners().len(), 1);
    pass(SECS(3600)).await;
    assert_eq!(w.banners().len(), 2);
    assert_eq!(w.banners()[1].title, "1 notice while you were away");
}

#[tokio::test(start_paused = true)]
async fn needs_you_breaks_through_only_when_asked() {
    let w = World::new().await;
    w.configure(&format!("{BERLIN}windows = [\"daily 22:00-23:00\"]\nneeds_you_breaks_through = true\n"));
    let urgent = w.engine.post_local(LocalPost { title: "plain".into(), ..Default::default() }).await.unwrap();
    pass(SECS(3)).await;
    assert_eq!(delivery_of(&w, &urgent.key).as_deref(), Some("quiet hours"));
    let ho = w.handoff(Some("Refactor"), false);
    w.engine.follow_handoff(&ho).unwrap();
    w.sim.sim.update_handoff(ho.as_str(), cmux_cloud_sim::HandoffChange::status("needs-you"));
    eventually("the needs-you shows", SECS(30), || w.banners().len() == 1).await;
    assert!(w.banners()[0].urgent, "with the attention hint");
}

#[tokio::test(start_paused = true)]
async fn a_pause_holds_banners_and_survives_a_relaunch() {
    let mut w = World::new().await;
    w.engine.pause(Some(jiff::Timestamp::from_millisecond(w.clock.now_ms() + 3_600_000).unwrap())).unwrap();
    let a = end_run(&w, "While paused", "succeeded").await;
    assert_eq!(delivery_of(&w, &a).as_deref(), Some("paused"));
    w.relaunch().await;
    let b = end_run(&w, "Still paused after a relaunch", "succeeded").await;
    assert_eq!(delivery_of(&w, &b).as_deref(), Some("paused"));
    assert!(w.banners().is_empty());
    pass(SECS(3600)).await;
    eventually("the summary", SECS(5), || w.banners().len() == 1).await;
    assert_eq!(w.banners()[0].title, "2 notices while notifications were paused");
    // Until resumed.
    w.engine.pause(None).unwrap();
    let _ = end_run(&w, "Held until resumed", "succeeded").await;
    pass(SECS(48 * 3600)).await;
    assert_eq!(w.banners().len(), 1);
    w.engine.resume().unwrap();
    eventually("the summary after resuming", SECS(5), || w.banners().len() == 2).await;
    assert_eq!(w.banners()[1].title, "1 notice while notifications were paused");
}

#[tokio::test(start_paused = true)]
async fn a_pause_ending_during_quiet_hours_gives_one_summary_when_they_end() {
    let w = World::new().await;
    w.configure(&format!("{BERLIN}windows = [\"daily 22:00-23:30\"]\n"));
    // Paused until 22:45 Berlin; quiet until 23:30.
    let until = w.clock.now_ms() + (18 * 60 + 20) * 1000;
    w.engine.pause(Some(jiff::Timestamp::from_millisecond(until).unwrap())).unwrap();
    let a = end_run(&w, "Paused", "succeeded").await;
    pass(SECS(25 * 60)).await; // 22:52: the pause is over, the quiet hours are not
    assert!(w.banners().is_empty(), "no summary while still quiet: {:?}", w.banners());
    let b = end_run(&w, "Quiet", "succeeded").await;
    assert_eq!(delivery_of(&w, &a).as_deref(), Some("paused"));
    assert_eq!(delivery_of(&w, &b).as_deref(), Some("quiet hours"));
    pass(SECS(40 * 60)).await; // past 23:30
    let banners = w.banners();
    assert_eq!(banners.len(), 1, "{banners:?}");
    assert_eq!(banners[0].title, "2 notices while you were away");
}

#[tokio::test(start_paused = true)]
async fn a_focused_surface_gets_no_banner_and_viewing_marks_read() {
    let w = World::new().await;
    let ws = "D9C269B8-1A2B-4C3D-8E9F-0123456789AB";
    let sf = "B9DD280A-0000-0000-0000-000000000001";
    let post = |t: &str| LocalPost { title: t.into(), workspace_id: Some(ws.into()), surface_id: Some(sf.into()), ..Default::default() };
    w.engine.set_focus(ws, Some(sf), true).await.unwrap();
    let looked_at = w.engine.post_local(post("Looking at it")).await.unwrap();
    pass(SECS(3)).await;
    assert!(w.banners().is_empty());
    assert_eq!(delivery_of(&w, &looked_at.key).as_deref(), Some("focused"));
    w.engine.set_focus(ws, Some(sf), false).await.unwrap();
    let away = w.engine.post_local(post("Looked away")).await.unwrap();
    eventually("a banner", SECS(5), || w.banners().len() == 1).await;
    // Coming back to the surface marks it read and takes the banner away.
    w.engine.set_focus(ws, Some(sf), true).await.unwrap();
    let n = w.engine.store().notice(&away.key).unwrap().unwrap();
    assert!(n.read_at.is_some());
    assert_eq!(w.desktop.withdrawn(), vec![n.banner_id.unwrap()]);
    // A hand-off whose session a terminal shows, focused: no banner either.
    let ho = w.handoff(None, false);
    let session = w.sim.sim.handoff(ho.as_str()).unwrap()["sessionId"].as_str().unwrap().to_string();
    let shown = cmux_tray_engine::store::SessionShown { workspace_id: Some(ws.into()), surface_id: Some(sf.into()), place: None };
    w.engine.attach_session(&session, &shown).unwrap();
    w.engine.follow_handoff(&ho).unwrap();
    w.sim.sim.update_handoff(ho.as_str(), cmux_cloud_sim::HandoffChange::status("done"));
    pass(SECS(10)).await;
    assert_eq!(w.banners().len(), 1);
    assert_eq!(delivery_of(&w, ho.as_str()).as_deref(), Some("focused"));
    // The app's own window showing an item counts the same.
    let run = w.run("On screen");
    w.engine.set_viewing(Some(&Item::Run(run.clone()))).await.unwrap();
    w.engine.follow_run(&run).unwrap();
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    pass(SECS(10)).await;
    assert_eq!(delivery_of(&w, run.as_str()).as_deref(), Some("focused"));
    // Showing an item whose banner is up marks it read and takes the banner away; once nothing
    // is shown, banners come again.
    w.engine.set_viewing(None).await.unwrap();
    let shown = w.run("Shown later");
    w.engine.follow_run(&shown).unwrap();
    w.sim.sim.update_run(shown.as_str(), RunChange::status("succeeded"));
    eventually("its banner", SECS(10), || !w.banners_for(shown.as_str()).is_empty()).await;
    let (banner, _) = w.desktop.posted().into_iter().find(|(_, b)| b.item == Item::Run(shown.clone())).unwrap();
    w.engine.set_viewing(Some(&Item::Run(shown.clone()))).await.unwrap();
    assert!(w.desktop.withdrawn().contains(&banner), "the banner is taken away");
    let n = w.engine.store().latest_told(&Item::Run(shown.clone())).unwrap().unwrap();
    assert!(n.read_at.is_some(), "marked read");
}

#[tokio::test(start_paused = true)]
async fn a_run_that_ends_alone_is_a_banner_without_waiting_for_a_burst() {
    let w = World::new().await;
    let run = w.run("Alone");
    w.engine.follow_run(&run).unwrap();
    pass(SECS(1)).await;
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    let changed = tokio::time::Instant::now();
    while w.banners_for(run.as_str()).is_empty() {
        assert!(changed.elapsed() < SECS(5), "no banner");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // docs/notices.md §3 "Bursts": a notice that comes alone is decided at once; only the ones
    // that follow it settle (0.5 s). Virtual time passes only while this test or a timer waits.
    let waited = changed.elapsed();
    assert!(waited < Duration::from_millis(500), "the banner waited {waited:?}, as long as a burst settles");
}

#[tokio::test(start_paused = true)]
async fn ten_runs_within_a_second_make_one_banner_and_one_sound() {
    let w = World::new().await;
    let runs: Vec<_> = (0..10).map(|i| w.run(&format!("Burst {i}"))).collect();
    for r in &runs {
        w.engine.follow_run(r).unwrap();
    }
    pass(SECS(1)).await;
    for r in &runs {
        w.sim.sim.update_run(r.as_str(), RunChange::status("succeeded"));
        pass(Duration::from_millis(90)).await;
    }
    eventually("a banner", SECS(10), || !w.banners().is_empty()).await;
    pass(SECS(5)).await;
    // The first end came alone and was a banner at once (the leading edge); the nine that
    // followed it became one banner that took its place: one banner on screen, one sound.
    let banners = w.banners();
    assert_eq!(banners.len(), 2, "{banners:?}");
    assert_eq!((banners[0].title.as_str(), banners[0].sound), ("Burst 0", true));
    assert_eq!(banners[1].title, "10 Runs ended");
    assert_eq!(banners[1].body, "Burst 0, Burst 1, Burst 2 and 7 more");
    assert!(!banners[1].sound, "a burst rings once");
    let first_id = w.desktop.posted().into_iter().find(|(_, b)| b.title == "Burst 0").unwrap().0;
    assert_eq!(banners[1].replaces, Some(first_id), "the burst's banner takes the first one's place");
    let status = w.engine.status().unwrap();
    assert_eq!(status.notices.iter().filter(|n| n.delivery.map(|r| r.as_str()) == Some("coalesced")).count(), 10);
    // A trickle, 1.5 s apart: four are shown one by one; the fifth within the 10 s window makes
    // them a burst. The sound rings once per 10 s cooldown.
    pass(SECS(30)).await;
    let trickle: Vec<_> = (0..5).map(|i| w.run(&format!("Trickle {i}"))).collect();
    for r in &trickle {
        w.engine.follow_run(r).unwrap();
    }
    pass(SECS(1)).await;
    for r in &trickle {
        w.sim.sim.update_run(r.as_str(), RunChange::status("succeeded"));
        pass(Duration::from_millis(1500)).await;
    }
    pass(SECS(3)).await;
    let later: Vec<_> = w.banners().into_iter().skip(2).collect();
    let titles: Vec<&str> = later.iter().map(|b| b.title.as_str()).collect();
    assert_eq!(titles, ["Trickle 0", "Trickle 1", "Trickle 2", "Trickle 3", "5 Runs ended"]);
    let rang: Vec<bool> = later.iter().map(|b| b.sound).collect();
    assert_eq!(rang, [true, false, false, false, false], "one sound per 10 s");
    pass(SECS(10)).await;
    let _ = end_run(&w, "After the cooldown", "succeeded").await;
    assert!(w.banners().last().unwrap().sound, "rings again after the cooldown");
}

#[tokio::test(start_paused = true)]
async fn switches_per_source_and_the_master_switch() {
    let w = World::new().await;
    w.configure("[delivery.runs]\nbanner = false\n");
    let run = end_run(&w, "Muted source", "succeeded").await;
    assert_eq!(delivery_of(&w, &run).as_deref(), Some("banners off"));
    let local = w.engine.post_local(LocalPost { title: "Another source".into(), ..Default::default() }).await.unwrap();
    eventually("the local banner", SECS(5), || w.banners().len() == 1).await;
    assert!(w.banners()[0].sound);
    w.configure("[delivery]\nbanners = true\nsounds = false\n");
    let _ = w.engine.post_local(LocalPost { title: "Silent".into(), ..Default::default() }).await.unwrap();
    pass(SECS(15)).await;
    assert!(!w.banners()[1].sound, "sounds off");
    w.configure("[delivery]\nbanners = false\n");
    let off = w.engine.post_local(LocalPost { title: "Nothing".into(), ..Default::default() }).await.unwrap();
    pass(SECS(3)).await;
    assert_eq!(w.banners().len(), 2);
    assert_eq!(delivery_of(&w, &off.key).as_deref(), Some("banners off"));
    let _ = local;
}

#[tokio::test(start_paused = true)]
async fn a_bad_config_keeps_the_last_good_settings_and_names_the_key() {
    let mut w = World::new().await;
    w.configure(&format!("{BERLIN}windows = [\"daily 22:00-23:00\"]\n"));
    let bad = format!("{BERLIN}windows = [\"daily 25:00-07:00\"]\n");
    w.configure(&bad);
    let problems = w.engine.status().unwrap().problems.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert!(
        problems.iter().any(|p| p.contains("delivery.quiet_hours.windows") && p.contains("25:00") && p.contains("last good")),
        "{problems:?}"
    );
    // Still quiet by the last good settings.
    let a = end_run(&w, "Held by the last good settings", "succeeded").await;
    assert_eq!(delivery_of(&w, &a).as_deref(), Some("quiet hours"));
    // A relaunch with the bad file still starts from the last good settings, file untouched.
    w.relaunch().await;
    let b = end_run(&w, "Held after a relaunch", "succeeded").await;
    assert_eq!(delivery_of(&w, &b).as_deref(), Some("quiet hours"));
    assert_eq!(std::fs::read_to_string(w.dir.path().join("config.toml")).unwrap(), bad);
    // Fixed: applied live, no restart.
    w.configure("[delivery.quiet_hours]\nenabled = false\n");
    assert!(w.engine.status().unwrap().problems.is_empty());
    eventually("the summary for the held two", SECS(5), || w.banners().len() == 1).await;
    let c = end_run(&w, "Shown again", "succeeded").await;
    assert_eq!(delivery_of(&w, &c).as_deref(), Some("shown"));
}

#[tokio::test(start_paused = true)]
async fn mark_all_read_takes_the_banners_away_and_the_tray_calms_down() {
    let w = World::new().await;
    for t in ["One", "Two"] {
        w.engine.post_local(LocalPost { title: t.into(), ..Default::default() }).await.unwrap();
    }
    eventually("two banners", SECS(5), || w.banners().len() == 2).await;
    let view = w.engine.tray_view().unwrap();
    assert_eq!((view.icon, view.unread), (cmux_tray_engine::view::Icon::Unread, 2));
    assert_eq!(w.engine.mark_all_read().await.unwrap(), 2);
    let mut withdrawn = w.desktop.withdrawn();
    withdrawn.sort();
    let mut posted: Vec<u32> = w.desktop.posted().iter().map(|(id, _)| *id).collect();
    posted.sort();
    assert_eq!(withdrawn, posted);
    let view = w.engine.tray_view().unwrap();
    assert_eq!((view.icon, view.unread), (cmux_tray_engine::view::Icon::Idle, 0));
}
