//! A short story for a newcomer, about half a minute long: a Run starts and finishes, a
//! hand-off needs you and then is done, a second Run fails. Its items exist before the app signs
//! in, so the app adopts them from the lists at sign-in; what changes after is news.

use std::time::Duration;

use crate::state::{NewHandoff, Sim, SimUser};
use crate::{HandoffChange, RunChange};

/// The account and the items of the story, made before anyone signs in.
pub struct Story {
    pub user: SimUser,
    run: String,
    doomed: String,
    handoff: String,
}

pub fn seed(sim: &Sim) -> Story {
    let user = sim.add_user("demo@example.com");
    let run = sim.create_run(&user.user_id, "Fix the flaky login test\n\nIt fails one time in ten on CI.");
    let doomed = sim.create_run(&user.user_id, "Upgrade the build to the new toolchain");
    let handoff =
        sim.create_handoff(NewHandoff { owner: user.user_id.clone(), title: Some("Refactor the parser".into()), ..Default::default() });
    Story { user, run, doomed, handoff }
}

/// Plays the story, one step every `step`.
pub async fn play(sim: Sim, story: Story, step: Duration) {
    tokio::time::sleep(step).await;
    tracing::info!("demo: the Run starts");
    sim.update_run(&story.run, RunChange::status("running"));
    sim.update_handoff(&story.handoff, HandoffChange::status("running"));
    tokio::time::sleep(step).await;
    tracing::info!("demo: the Run finishes");
    sim.update_run(&story.run, RunChange::status("succeeded"));
    tokio::time::sleep(step).await;
    tracing::info!("demo: the hand-off needs you");
    sim.update_handoff(
        &story.handoff,
        HandoffChange { status: Some("needs-you".into()), summary: Some("Which branch should I push to?".into()), ..Default::default() },
    );
    tokio::time::sleep(step).await;
    tracing::info!("demo: the hand-off's turn is done");
    sim.update_handoff(
        &story.handoff,
        HandoffChange {
            status: Some("done".into()),
            summary: Some("Pushed to parser-refactor; 3 files changed.".into()),
            ..Default::default()
        },
    );
    tokio::time::sleep(step).await;
    tracing::info!("demo: the second Run fails");
    sim.update_run(&story.doomed, RunChange::status("failed"));
}
