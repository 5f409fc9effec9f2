//! Click routing and the focus rule for notices from terminals, inside the engine: what goes to
//! the terminal seam, what opens a card and says why, and that "cannot tell" shows the banner.
//! The real terminals (tmux, kitty, xterm) are the e2e tests' (tests/terminals.rs).

mod common;

use std::sync::Arc;

use cmux_tray_engine::clock::Clock;
use cmux_tray_engine::desktop::Recording;
use cmux_tray_engine::notice::local::LocalPost;
use cmux_tray_engine::place::Place;
use cmux_tray_engine::place::TmuxPane;
use cmux_tray_engine::terminal::{RevealError, Scripted};
use cmux_tray_engine::{Engine, EngineEvent, EngineOptions};
use common::*;

struct Desk {
    _sim: cmux_cloud_sim::RunningSim,
    _dir: tempfile::TempDir,
    desktop: Arc<Recording>,
    terminals: Arc<Scripted>,
    engine: Engine,
}

async fn desk() -> Desk {
    let sim = cmux_cloud_sim::start().await.expect("the simulator starts");
    let dir = tempfile::tempdir().unwrap();
    let desktop = Arc::new(Recording::new());
    let terminals = Arc::new(Scripted::default());
    let mut opts = EngineOptions::new(&sim.origin(), &sim.origin(), dir.path().join("state.sqlite3"), desktop.clone());
    opts.clock = Clock::following_tokio(1_780_000_000_000);
    opts.terminals = terminals.clone();
    // HTTP/1.1 on the paused clock, as common::start_engine says why.
    opts.network.transport = cmux_tray_engine::cloud::client::Transport::Http1;
    let engine = Engine::start(opts).await.expect("the engine starts");
    Desk { _sim: sim, _dir: dir, desktop, terminals, engine }
}

fn pane(n: u32) -> Place {
    Place {
        tmux: Some(TmuxPane { socket: "/tmp/tmux-1000/default".into(), session: None, window: None, pane: format!("%{n}") }),
        ..Default::default()
    }
}

fn post(title: &str, place: Option<Place>) -> LocalPost {
    LocalPost { title: title.into(), place, ..Default::default() }
}

/// A pane whose terminal stalls (asked whether the person looks at it, it answers after 3 s, as
/// a tmux server that does not answer within the tool's limit) sends 1,000 notices; a cloud Run
/// ends a moment later. Its banner still comes within a second: the pane is asked once a
/// delivery pass, not once a notice, and no pass waits longer than its budget. Before, each
/// notice asked in turn, 3 s each, and the Run's banner waited behind all of them.
#[tokio::test(start_paused = true)]
async fn a_stalled_pane_sending_a_thousand_notices_holds_no_cloud_banner_back() {
    let d = desk().await;
    let user = d._sim.sim.add_user("ada@example.com");
    d.engine.sign_in_with_token(secrecy::SecretString::from(user.access_token.clone()), None).await.expect("signed in");
    let run = cmux_tray_engine::cloud::RunId::parse(&d._sim.sim.create_run(&user.user_id, "Nightly build")).unwrap();
    d.engine.follow_run(&run).unwrap();
    eventually("the Run's wait held", SECS(30), || d._sim.sim.held_waits(run.as_str()) > 0).await;
    d.terminals.set_looked_at(Some(false));
    d.terminals.set_looked_at_delay(SECS(3));
    for chunk in 0..10 {
        let posts = (0..100).map(|i| post(&format!("Test {}", chunk * 100 + i), Some(pane(7)))).collect();
        for saved in d.engine.post_locals(posts).await {
            saved.unwrap();
        }
    }
    pass(SECS(5)).await;
    let ended = tokio::time::Instant::now();
    d._sim.sim.update_run(run.as_str(), cmux_cloud_sim::RunChange::status("succeeded"));
    let told = |d: &Desk| d.desktop.posted().iter().any(|(_, b)| b.item.to_string() == format!("run:{run}"));
    eventually("the Run's banner", SECS(3600), || told(&d)).await;
    let after = ended.elapsed();
    println!("the Run's banner {after:?} after its end; the stalled pane was asked {} times for 1,000 notices", d.terminals.asked());
    assert!(after <= SECS(1), "the Run's banner came {after:?} after its end");
    assert!(d.terminals.asked() <= 10, "the pane was asked {} times", d.terminals.asked());
}

#[tokio::test(start_paused = true)]
async fn the_focus_rule_asks_the_terminal_and_shows_the_banner_when_it_cannot_tell() {
    let d = desk().await;
    d.terminals.set_looked_at(Some(true));
    let seen = d.engine.post_local(post("Looked at", Some(pane(1)))).await.unwrap();
    pass(SECS(5)).await;
    assert!(d.desktop.posted().is_empty());
    assert_eq!(d.engine.store().notice(&seen.key).unwrap().unwrap().delivery.map(|r| r.as_str()), Some("focused"));
    for (answer, title) in [(Some(false), "Elsewhere"), (None, "Cannot tell")] {
        d.terminals.set_looked_at(answer);
        let n = d.engine.post_local(post(title, Some(pane(2)))).await.unwrap();
        pass(SECS(5)).await;
        assert_eq!(d.engine.store().notice(&n.key).unwrap().unwrap().delivery.map(|r| r.as_str()), Some("shown"), "{title}");
    }
    assert_eq!(d.desktop.posted().iter().map(|(_, b)| b.title.clone()).collect::<Vec<_>>(), ["Elsewhere", "Cannot tell"]);
}

#[tokio::test(start_paused = true)]
async fn a_click_brings_the_place_forward_and_a_gone_place_opens_the_card_with_the_reason() {
    let d = desk().await;
    let mut events = d.engine.subscribe();
    let n = d.engine.post_local(post("Tests passed", Some(pane(3)))).await.unwrap();
    pass(SECS(5)).await;
    let banner = d.desktop.posted()[0].0;
    d.desktop.click(banner);
    eventually("the place brought forward", SECS(10), || d.terminals.revealed().len() == 1).await;
    assert_eq!(d.terminals.revealed()[0].0, pane(3));
    eventually("read once revealed", SECS(10), || d.engine.store().notice(&n.key).unwrap().unwrap().read_at.is_some()).await;

    // The pane closed since: the card opens instead (an event for the shell), and says why.
    let gone = d.engine.post_local(post("Build finished", Some(pane(4)))).await.unwrap();
    pass(SECS(5)).await;
    d.terminals.set_reveal_error(Some(RevealError::Gone("tmux pane %4 is gone".into())));
    d.desktop.click(d.desktop.posted()[1].0);
    let clicked = loop {
        match events.recv().await {
            Ok(EngineEvent::Clicked { notice }) => break notice,
            Ok(_) => continue,
            Err(e) => panic!("no click event: {e}"),
        }
    };
    assert_eq!(clicked.key, gone.key);
    assert_eq!(clicked.reveal_note.as_deref(), Some("tmux pane %4 is gone, so this is what it said."));
    let stored = d.engine.store().notice(&gone.key).unwrap().unwrap();
    assert_eq!(stored.reveal_note, clicked.reveal_note);
    assert!(stored.read_at.is_none(), "read only once the shell shows the card");
}

#[tokio::test(start_paused = true)]
async fn one_banner_per_pane_and_inside_cmux_the_surface_is_the_item() {
    let d = desk().await;
    // Two notices from one pane: the second replaces the first's banner.
    let first = d.engine.post_local(post("First", Some(pane(5)))).await.unwrap();
    let second = d.engine.post_local(post("Second", Some(pane(5)))).await.unwrap();
    assert_eq!(first.item, second.item);
    assert_ne!(d.engine.post_local(post("Other pane", Some(pane(6)))).await.unwrap().item, first.item);
    // Inside cmux the surface's ids decide the item and the click, whatever else is known.
    let inside = LocalPost {
        workspace_id: Some("D9C269B8-1A2B-4C3D-8E9F-0123456789AB".into()),
        surface_id: Some("B9DD280A-0000-0000-0000-000000000001".into()),
        ..post("In cmux", Some(pane(5)))
    };
    let n = d.engine.post_local(inside).await.unwrap();
    assert_eq!(n.item.to_string(), "local:D9C269B8-1A2B-4C3D-8E9F-0123456789AB:B9DD280A-0000-0000-0000-000000000001");
}
