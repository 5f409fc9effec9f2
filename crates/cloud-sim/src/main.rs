//! `cmux-sim`: the cloud simulator as a process, for demos and tests in other processes.

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;
use cmux_cloud_sim::Sim;

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
    let mut token = None;
    if args.demo {
        let story = cmux_cloud_sim::demo::seed(&sim);
        writeln!(out, "user {} {}", story.user.user_id, story.user.email)?;
        writeln!(out, "token {}", story.user.access_token)?;
        token = Some(story.user.access_token.clone());
        tokio::spawn(cmux_cloud_sim::demo::play(sim.clone(), story, Duration::from_secs(5)));
    } else if let Some(email) = args.user {
        let user = sim.add_user(&email);
        writeln!(out, "user {} {}", user.user_id, user.email)?;
        writeln!(out, "token {}", user.access_token)?;
        token = Some(user.access_token);
    }
    // What README's walkthrough pastes into the shell that runs cmux-tray: the API and the
    // sign-in are both served here.
    writeln!(out, "# to point cmux-tray at this simulator, paste into the shell that runs it:")?;
    writeln!(out, "export CMUX_TRAY_API_URL={0} CMUX_TRAY_AUTH_URL={0}", running.origin())?;
    if let Some(token) = token {
        writeln!(out, "export CMUX_TRAY_TOKEN={token}")?;
    }
    out.flush()?;
    tokio::signal::ctrl_c().await?;
    running.shutdown().await;
    Ok(())
}
