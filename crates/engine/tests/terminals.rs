//! Click routing and the focus rule for notices from terminals, inside the engine: what goes to
//! the terminal seam, what opens a card and says why, and that "cannot tell" shows the banner.
//! The real terminals (tmux, kitty, xterm) are the e2e tests' (tests/terminals.rs).

mod common;

use std::sync::Arc;

use cmux_tray_engine::clock::Clock;
use cmux_tray_engine::desktop::Recording;
use cmux_tray_engine::notice::local::LocalPost;
use cmux_tray_engine::terminal::place::TmuxPane;
use cmux_tray_engine::terminal::{Place, RevealError, Scripted};
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

#[tokio::test(start_paused = true)]
async fn the_focus_rule_asks_the_terminal_and_shows_the_banner_when_it_cannot_tell() {
    let d = desk().await;
    d.terminals.set_looked_at(Some(true));
    let seen = d.engine.post_local(post("Looked at", Some(pane(1)))).unwrap();
    pass(SECS(5)).await;
    assert!(d.desktop.posted().is_empty());
    assert_eq!(d.engine.outbox().notice(&seen.key).unwrap().unwrap().delivery.as_deref(), Some("focused"));
    for (answer, title) in [(Some(false), "Elsewhere"), (None, "Cannot tell")] {
        d.terminals.set_looked_at(answer);
        let n = d.engine.post_local(post(title, Some(pane(2)))).unwrap();
        pass(SECS(5)).await;
        assert_eq!(d.engine.outbox().notice(&n.key).unwrap().unwrap().delivery.as_deref(), Some("shown"), "{title}");
    }
    assert_eq!(d.desktop.posted().iter().map(|(_, b)| b.title.clone()).collect::<Vec<_>>(), ["Elsewhere", "Cannot tell"]);
}

#[tokio::test(start_paused = true)]
async fn a_click_brings_the_place_forward_and_a_gone_place_opens_the_card_with_the_reason() {
    let d = desk().await;
    let mut events = d.engine.subscribe();
    let n = d.engine.post_local(post("Tests passed", Some(pane(3)))).unwrap();
    pass(SECS(5)).await;
    let banner = d.desktop.posted()[0].0;
    d.desktop.click(banner);
    eventually("the place brought forward", SECS(10), || d.terminals.revealed().len() == 1).await;
    assert_eq!(d.terminals.revealed()[0].0, pane(3));
    eventually("read once revealed", SECS(10), || d.engine.outbox().notice(&n.key).unwrap().unwrap().read_at.is_some()).await;

    // The pane closed since: the card opens instead (an event for the shell), and says why.
    let gone = d.engine.post_local(post("Build finished", Some(pane(4)))).unwrap();
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
    let stored = d.engine.outbox().notice(&gone.key).unwrap().unwrap();
    assert_eq!(stored.reveal_note, clicked.reveal_note);
    assert!(stored.read_at.is_none(), "read only once the shell shows the card");
}

#[tokio::test(start_paused = true)]
async fn one_banner_per_pane_and_inside_cmux_the_surface_is_the_item() {
    let d = desk().await;
    // Two notices from one pane: the second replaces the first's banner.
    let first = d.engine.post_local(post("First", Some(pane(5)))).unwrap();
    let second = d.engine.post_local(post("Second", Some(pane(5)))).unwrap();
    assert_eq!(first.item, second.item);
    assert_ne!(d.engine.post_local(post("Other pane", Some(pane(6)))).unwrap().item, first.item);
    // Inside cmux the surface's ids decide the item and the click, whatever else is known.
    let inside = LocalPost {
        workspace_id: Some("D9C269B8-1A2B-4C3D-8E9F-0123456789AB".into()),
        surface_id: Some("B9DD280A-0000-0000-0000-000000000001".into()),
        ..post("In cmux", Some(pane(5)))
    };
    let n = d.engine.post_local(inside).unwrap();
    assert_eq!(n.item, "local:D9C269B8-1A2B-4C3D-8E9F-0123456789AB:B9DD280A-0000-0000-0000-000000000001");
}
