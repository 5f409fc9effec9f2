//! Staying signed in, against the simulator: the device-code sign-in, renewal before expiry and
//! after a 401, a refused refresh that signs out visibly, a relaunch with the saved sign-in, and
//! a sign-out that deletes it. (The real keyring is exercised end to end in tests/.)

mod common;

use cmux_cloud_sim::RunChange;
use cmux_tray_engine::Engine;
use cmux_tray_engine::secrets::SecretStore;
use common::*;

/// An engine like the world's, but with a secret store (the file fallback) and not signed in.
async fn engine_with_secrets(w: &World) -> (Engine, SecretStore) {
    let store = SecretStore::File { path: w.dir.path().join("secrets.json"), why: "tests".into() };
    let mut opts =
        cmux_tray_engine::EngineOptions::new(&w.sim.origin(), &w.sim.origin(), w.dir.path().join("b.sqlite3"), w.desktop.clone());
    opts.clock = w.clock.clone();
    opts.secrets = Some(store.clone());
    (Engine::start(opts).await.unwrap(), store)
}

async fn device_sign_in(w: &World, engine: &Engine) -> cmux_tray_engine::cloud::Me {
    let start = engine.device_start().await.unwrap();
    assert_eq!(start.verification_url, format!("{}/vault/cli-auth?code={}", w.sim.origin(), start.user_code));
    let e = engine.clone();
    let finish = tokio::spawn(async move { e.device_finish(None).await });
    pass(SECS(7)).await; // the person reads the code and approves it
    assert!(w.sim.sim.approve_device(&start.user_code, &w.user.user_id));
    finish.await.unwrap().expect("signed in")
}

#[tokio::test(start_paused = true)]
async fn a_device_sign_in_keeps_the_refresh_token_and_a_relaunch_uses_it() {
    let w = World::new().await;
    w.engine.sign_out().await.unwrap();
    let (engine, store) = engine_with_secrets(&w).await;
    let me = device_sign_in(&w, &engine).await;
    assert_eq!(me.email, "ada@example.com");
    assert!(store.load(&me.user_id).unwrap().is_some(), "the refresh token is kept");
    let run = w.run("Across a relaunch");
    engine.follow_run(&run).unwrap();
    engine.shutdown().await;
    // A relaunch without any token given: the saved sign-in signs in again.
    let (engine, _) = engine_with_secrets(&w).await;
    let me2 = engine.resume_saved_account().await.unwrap().expect("resumed");
    assert_eq!(me2.user_id, me.user_id);
    assert_eq!(engine.live_follows(), 1, "its follows resume");
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    eventually("the banner", SECS(30), || w.banners().len() == 1).await;
    // Sign-out deletes the saved sign-in.
    engine.sign_out().await.unwrap();
    assert!(store.load(&me.user_id).unwrap().is_none());
    assert!(engine.resume_saved_account().await.unwrap().is_none());
}

#[tokio::test(start_paused = true)]
async fn an_expired_code_says_so() {
    let w = World::new().await;
    let (engine, _) = engine_with_secrets(&w).await;
    engine.device_start().await.unwrap();
    let err = engine.device_finish(None).await.unwrap_err();
    assert!(err.to_string().contains("expired"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn the_access_token_is_renewed_after_a_401_and_then_before_it_expires() {
    let w = World::new().await;
    w.sim.sim.set_access_ttl(Some(300));
    let (engine, _) = engine_with_secrets(&w).await;
    device_sign_in(&w, &engine).await;
    let run = w.run("Outlives its token");
    engine.follow_run(&run).unwrap();
    // The first token (expiry unknown to the app) runs out: a 401, a refresh, the follow goes on.
    pass(SECS(320)).await;
    let refreshes = w.requests_to("/api/auth/refresh").len();
    assert_eq!(refreshes, 1, "refreshed once after the 401");
    let first_401s = w.sim.sim.requests().iter().filter(|r| r.path.contains(run.as_str()) && r.status == Some(401)).count();
    assert!(first_401s > 0, "the expired token was refused first");
    // From now on the expiry is known: renewed a minute early, no more 401s.
    w.sim.sim.clear_requests();
    pass(SECS(30 * 60)).await;
    let refreshes = w.requests_to("/api/auth/refresh");
    assert!((6..=8).contains(&refreshes.len()), "every ~4 min: {}", refreshes.len());
    let refused = w.sim.sim.requests().iter().filter(|r| r.status == Some(401)).count();
    assert_eq!(refused, 0, "renewed before it expired: no more 401s");
    assert_eq!(engine.live_follows(), 1);
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    eventually("the banner", SECS(30), || w.banners().len() == 1).await;
    let status = engine.status().unwrap();
    assert!(status.account.unwrap().problem.is_none());
}

#[tokio::test(start_paused = true)]
async fn a_refused_refresh_signs_out_visibly_and_forgets_the_secret() {
    let w = World::new().await;
    w.sim.sim.set_access_ttl(Some(300));
    let (engine, store) = engine_with_secrets(&w).await;
    let me = device_sign_in(&w, &engine).await;
    let run = w.run("Stranded");
    engine.follow_run(&run).unwrap();
    w.sim.sim.revoke_user_tokens(&w.user.user_id); // the device was revoked on cmux.com
    eventually("stopped", SECS(120), || engine.live_follows() == 0).await;
    let status = engine.status().unwrap();
    assert!(status.account.unwrap().problem.unwrap().to_string().contains("sign in again"));
    eventually("one banner says so", SECS(10), || w.banners().len() == 1).await;
    assert_eq!(w.banners()[0].title, "cmux-tray: sign in again");
    assert!(store.load(&me.user_id).unwrap().is_none(), "a refused refresh token is not kept");
    // A relaunch has nothing to resume with, and says so rather than starting silently.
    let (engine, _) = engine_with_secrets(&w).await;
    assert!(engine.resume_saved_account().await.unwrap().is_none());
}

#[tokio::test(start_paused = true)]
async fn a_chosen_team_is_sent_from_then_on_and_remembered_for_the_account() {
    let mut w = World::new().await;
    let stack = w.sim.sim.add_team(&w.user.user_id, "Platform");
    let teams = w.engine.teams().await.unwrap();
    assert_eq!(teams.len(), 2, "{teams:?}");
    assert_eq!(teams[0].kind, "personal", "the personal team comes first");
    let run = w.run("Followed across the switch");
    w.engine.follow_run(&run).unwrap();
    pass(SECS(3)).await;

    // A team that is not the account's is refused and changes nothing.
    let other = cmux_tray_engine::cloud::TeamId::parse("team_ffffffffffffffffffff").unwrap();
    let err = w.engine.choose_team(other).await.unwrap_err();
    assert!(err.to_string().contains("team_ffffffffffffffffffff"), "{err}");
    assert_eq!(w.engine.status().unwrap().account.unwrap().team, None);

    let team = cmux_tray_engine::cloud::TeamId::parse(&stack).unwrap();
    w.engine.choose_team(team).await.unwrap();
    assert_eq!(w.engine.status().unwrap().account.unwrap().team.as_deref(), Some(stack.as_str()));
    w.sim.sim.clear_requests();
    pass(SECS(30)).await;
    // The follow under way goes on, now on the team's behalf; the lists are read for the team.
    let asked = w.requests_to(run.as_str());
    assert!(!asked.is_empty());
    assert!(asked.iter().all(|r| r.header("x-cmux-team") == Some(stack.as_str())), "every request carries the team");
    assert!(w.requests_to("/v1/handoffs").iter().any(|r| r.header("x-cmux-team") == Some(stack.as_str())));
    assert_eq!(w.engine.live_follows(), 1);
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    eventually("the banner", SECS(30), || w.banners().len() == 1).await;
    // Remembered for the account: a relaunch that resumes the saved account uses it again.
    let saved = w.engine.status().unwrap().account.unwrap();
    assert_eq!(saved.team.as_deref(), Some(stack.as_str()));
    // Remembered across a sign-out too: the same account signing in again without naming a
    // team gets the one it chose.
    w.engine.sign_out().await.unwrap();
    w.relaunch().await;
    assert_eq!(w.engine.status().unwrap().account.unwrap().team.as_deref(), Some(stack.as_str()));
    w.sim.sim.clear_requests();
    w.run("After the relaunch");
    pass(SECS(5)).await;
    assert!(w.requests_to("/v1/handoffs").iter().all(|r| r.header("x-cmux-team") == Some(stack.as_str())));
}

#[tokio::test(start_paused = true)]
async fn an_unreachable_cloud_shows_offline_until_it_answers_again() {
    let w = World::new().await;
    let run = w.run("Through an outage");
    w.engine.follow_run(&run).unwrap();
    pass(SECS(5)).await;
    assert!(w.engine.status().unwrap().problems.is_empty());
    w.sim.sim.add_fault(cmux_cloud_sim::Fault::on(run.as_str()).status(503).times(0));
    eventually("offline in the status", SECS(120), || {
        w.engine.status().unwrap().problems.iter().map(ToString::to_string).any(|p| p.starts_with("Offline: the cloud cannot be reached"))
    })
    .await;
    assert_eq!(w.engine.tray_view().unwrap().icon, cmux_tray_engine::view::Icon::Problem);
    w.sim.sim.clear_faults();
    eventually("online again", SECS(120), || w.engine.status().unwrap().problems.is_empty()).await;
    w.sim.sim.update_run(run.as_str(), RunChange::status("succeeded"));
    eventually("the banner", SECS(30), || w.banners().len() == 1).await;
}

#[tokio::test(start_paused = true)]
async fn a_switch_of_account_deletes_the_saved_sign_in_of_the_one_before() {
    let w = World::new().await;
    w.engine.sign_out().await.unwrap();
    let (engine, store) = engine_with_secrets(&w).await;
    let ada = device_sign_in(&w, &engine).await;
    assert!(store.load(&ada.user_id).unwrap().is_some());
    let run = w.run("Ada's, parked at the switch");
    engine.follow_run(&run).unwrap();
    let grace = w.sim.sim.add_user("grace@example.com");
    engine.sign_in_with_token(secrecy::SecretString::from(grace.access_token.clone()), None).await.unwrap();
    eventually("ada's saved sign-in deleted", SECS(5), || store.load(&ada.user_id).unwrap().is_none()).await;
    assert_eq!(engine.live_follows(), 0, "ada's follow stopped");
    assert_eq!(engine.status().unwrap().account.unwrap().email, "grace@example.com");
}
