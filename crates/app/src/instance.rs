//! One tray per user: the first launch holds `app.lock` in the runtime folder and serves the
//! app's channel; a later launch hands its arguments over the channel and ends.

use std::time::{Duration, Instant};

use anyhow::Context;
use cmux_tray_channel::{self as channel, ToTray};
use cmux_tray_engine::config::Paths;
use cmux_tray_engine::local;

/// How long a second launch tries to reach a first one that holds the lock but may still be
/// starting (binding its channel).
const HAND_OVER: Duration = Duration::from_secs(10);

/// The first instance's lock, held while it runs.
pub struct Instance {
    _lock: std::fs::File,
}

pub enum Claim {
    /// This launch is the first: its lock and the channel it serves.
    First(Instance, local::Listener),
    /// A running tray took the arguments.
    HandedOver,
}

pub async fn claim(paths: &Paths, argv: &[String]) -> anyhow::Result<Claim> {
    cmux_tray_engine::private::create_dir(&paths.runtime_dir).with_context(|| format!("making {} private", paths.runtime_dir.display()))?;
    let lock_path = paths.runtime_dir.join("app.lock");
    let lock = cmux_tray_engine::private::open_lock(&lock_path).with_context(|| format!("opening {}", lock_path.display()))?;
    let started = Instant::now();
    loop {
        if lock.try_lock().is_ok() {
            let listener = local::bind(&paths.channel()).await?;
            return Ok(Claim::First(Instance { _lock: lock }, listener));
        }
        match hand_over(paths, argv).await {
            Ok(()) => {
                tracing::info!("the running cmux-tray took this launch's arguments");
                return Ok(Claim::HandedOver);
            }
            Err(e) if started.elapsed() > HAND_OVER => {
                anyhow::bail!("cmux-tray runs ({} is held) but its channel does not answer: {e}", lock_path.display())
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

async fn hand_over(paths: &Paths, argv: &[String]) -> anyhow::Result<()> {
    let mut stream = local::endpoint::connect(&paths.channel()).await?;
    channel::write(&mut stream, &ToTray::Launched { argv: argv.to_vec() }).await?;
    Ok(())
}
