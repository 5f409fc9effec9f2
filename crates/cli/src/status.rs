//! `cmux-tray status`: the account, follows and last notices, from the running engine or
//! the store when it is stopped.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use cmux_tray_engine::config::Paths;
use cmux_tray_engine::store::Store;
use cmux_tray_engine::{Status, local};

use crate::engine_request_within;

pub(crate) async fn status(paths: &Paths, as_json: bool) -> anyhow::Result<()> {
    let db: PathBuf = paths.database();
    let running = local::endpoint::is_live(&paths.socket());
    // The running engine knows more (its problems, where the sign-in is kept); else the store.
    let live = if running { engine_request_within(paths, "tray.status", json!({}), Duration::from_secs(5)).await.ok() } else { None };
    let status: Status = match live.and_then(|v| serde_json::from_value(v).ok()) {
        Some(s) => s,
        None if db.exists() => Status::read(&Store::open_read_only(&db)?, Vec::new())?,
        None => Status::default(),
    };
    if as_json {
        let mut v = serde_json::to_value(&status)?;
        v["engineRunning"] = json!(running);
        v["database"] = json!(db.display().to_string());
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    // Text from the cloud or an agent never reaches the terminal as escape sequences (a row
    // stored by an older version was not cleaned when it was made).
    let t = |s: &str| cmux_tray_engine::text::clean(s, false);
    println!("engine: {}", if running { "running" } else { "not running" });
    if let Some(network) = &status.network {
        println!("cloud reached: {network}");
    }
    if let Some(kept) = &status.sign_in_kept_in {
        println!("sign-in kept in: {}", t(kept));
    }
    for p in &status.problems {
        println!("problem: {}", t(p));
    }
    if let Some(p) = &status.paused {
        println!("banners paused: {p}");
    }
    match &status.account {
        Some(a) => println!("account: {}{}", t(&a.email), a.problem.as_deref().map(|p| format!(" — {}", t(p))).unwrap_or_default()),
        None => println!("account: not signed in"),
    }
    let active: Vec<_> = status.follows.iter().filter(|f| f.ended_at.is_none()).collect();
    println!("following: {}", active.len());
    for f in active {
        println!("  {} {}{}", f.kind.as_str(), t(&f.id), f.title.as_deref().map(|n| format!(" — {}", t(n))).unwrap_or_default());
    }
    println!("last notices:");
    for n in &status.notices {
        let why = n.failure.as_deref().map(|f| format!(": {}", t(f))).unwrap_or_default();
        println!("  [{}{why}] {} — {}", n.delivery.map_or(n.state.as_str(), |r| r.as_str()), t(&n.title), t(&n.body));
    }
    Ok(())
}
