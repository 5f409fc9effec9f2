//! `cmux-sim`: the cloud simulator as a process, for demos and tests in other processes.

use std::net::SocketAddr;

use clap::Parser;

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
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt().with_env_filter(
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
    )
    .with_writer(std::io::stderr)
    .init();
    let args = Args::parse();
    anyhow::ensure!(args.addr.ip().is_loopback(), "--addr {}: the simulator only listens on loopback", args.addr);
    let sim = cmux_cloud_sim::Sim::new();
    let running = cmux_cloud_sim::serve(sim.clone(), args.addr).await?;
    println!("origin {}", running.origin());
    if let Some(email) = args.user {
        let user = sim.add_user(&email);
        println!("user {} {}", user.user_id, user.email);
        println!("token {}", user.access_token);
    }
    tokio::signal::ctrl_c().await?;
    running.shutdown().await;
    Ok(())
}
