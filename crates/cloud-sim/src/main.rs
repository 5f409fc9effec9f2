//! `cmux-sim`: the cloud simulator as a process, for demos and tests in other processes.

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;
use cmux_cloud_sim::state::NewHandoff;
use cmux_cloud_sim::{HandoffChange, RunChange, Sim};

/// Serve a simulator of the cmux cloud API on loopback.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address to listen on; only loopback addresses are accepted.
    #[arg(long, default_value = "127.0.0.1:8787")]
    addr: SocketAddr,
    /// Create an account with this email at start and print its access token.
    #[arg(long)]
    user: Option<String>,
    /// Play a short story for a newcomer: a Run that ends, a hand-off that needs you and is done,
    /// a Run that fails. Implies --user demo@example.com.
    #[arg(long)]
    demo: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    anyhow::ensure!(args.addr.ip().is_loopback(), "--addr {}: the simulator only listens on loopback", args.addr);
    let sim = Sim::new();
    let running = cmux_cloud_sim::serve(sim.clone(), args.addr).await?;
    let mut out = std::io::stdout();
    writeln!(out, "origin {}", running.origin())?;
    let email = args.user.or_else(|| args.demo.then(|| "demo@example.com".to_string()));
    if let Some(email) = email {
        let user = sim.add_user(&email);
        writeln!(out, "user {} {}", user.user_id, user.email)?;
        writeln!(out, "token {}", user.access_token)?;
        out.flush()?;
        if args.demo {
            tokio::spawn(story(sim.clone(), user.user_id));
        }
    }
    out.flush()?;
    tokio::signal::ctrl_c().await?;
    running.shutdown().await;
    Ok(())
}

/// Items exist before the engine signs in, so it adopts them from the lists; what changes after
/// is news.
async fn story(sim: Sim, owner: String) {
    let run = sim.create_run(&owner, "Fix the flaky login test\n\nIt fails one time in ten on CI.");
    let doomed = sim.create_run(&owner, "Upgrade the build to the new toolchain");
    let handoff = sim.create_handoff(NewHandoff {
        owner: owner.clone(),
        title: Some("Refactor the parser".into()),
        ..Default::default()
    });
    let step = |secs| tokio::time::sleep(Duration::from_secs(secs));
    step(5).await;
    tracing::info!("demo: the Run starts");
    sim.update_run(&run, RunChange::status("running"));
    sim.update_handoff(&handoff, HandoffChange::status("running"));
    step(5).await;
    tracing::info!("demo: the Run finishes");
    sim.update_run(&run, RunChange::status("succeeded"));
    step(5).await;
    tracing::info!("demo: the hand-off needs you");
    sim.update_handoff(
        &handoff,
        HandoffChange { status: Some("needs-you".into()), summary: Some("Which branch should I push to?".into()), ..Default::default() },
    );
    step(5).await;
    tracing::info!("demo: the hand-off's turn is done");
    sim.update_handoff(
        &handoff,
        HandoffChange { status: Some("done".into()), summary: Some("Pushed to parser-refactor; 3 files changed.".into()), ..Default::default() },
    );
    step(5).await;
    tracing::info!("demo: the second Run fails");
    sim.update_run(&doomed, RunChange::status("failed"));
}
