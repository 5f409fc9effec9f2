//! `cmux-tray status`: the account, follows and last notices, from the running engine or
//! the store when it is stopped.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use cmux_tray_engine::config::Paths;
use cmux_tray_engine::store::{Store, StoredNotice};
use cmux_tray_engine::{Status, local};

use crate::send_within;
use cmux_tray_engine::local::requests::GetStatus;

pub(crate) async fn status(paths: &Paths, as_json: bool) -> anyhow::Result<()> {
    let db: PathBuf = paths.database();
    let running = local::endpoint::is_live(&paths.socket());
    // The running engine knows more (its problems, where the sign-in is kept); else the store.
    let live = if running { send_within(paths, &GetStatus, Duration::from_secs(5)).await.ok() } else { None };
    let status: Status = match live.and_then(|v| serde_json::from_value(v).ok()) {
        Some(s) => s,
        None if db.exists() => Status::read(&Store::open_read_only(&db)?, Vec::new())?,
        None => Status::default(),
    };
    if as_json {
        let mut v = serde_json::to_value(&status)?;
        v["engineRunning"] = json!(running);
        v["database"] = json!(db.display().to_string());
        // Each notice says why it did or did not show (docs: README "When no banner shows").
        if let Some(notices) = v["notices"].as_array_mut() {
            for (n, stored) in notices.iter_mut().zip(&status.notices) {
                n["why"] = json!(why(stored, &status, running));
            }
        }
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
        println!("problem: {}", t(&p.to_string()));
    }
    match (&status.paused, status.paused_until.as_deref().and_then(|t| t.parse::<jiff::Timestamp>().ok())) {
        (Some(_), Some(until)) => println!("banners paused until {}", crate::config::in_local_time(until)),
        (Some(p), None) => println!("banners paused {p}"),
        (None, _) => {}
    }
    if running {
        match status.held_by.as_slice() {
            [] => println!("banners: shown as notices come"),
            held => println!("banners held back by: {}", held.iter().map(|h| h.as_str()).collect::<Vec<_>>().join(", ")),
        }
    }
    match &status.account {
        Some(a) => {
            println!("account: {}{}", t(&a.email), a.problem.as_ref().map(|p| format!(" — {}", t(&p.to_string()))).unwrap_or_default())
        }
        None => println!("account: not signed in"),
    }
    let active: Vec<_> = status.follows.iter().filter(|f| f.ended_at.is_none()).collect();
    println!("following: {}", active.len());
    for f in active {
        println!("  {} {}{}", f.kind.as_str(), t(&f.id), f.title.as_deref().map(|n| format!(" — {}", t(n))).unwrap_or_default());
    }
    println!("last notices:");
    for n in &status.notices {
        println!("  [{}] {} — {}", t(&why(n, &status, running)), t(&n.title), t(&n.body));
    }
    Ok(())
}

/// Why a notice did or did not show, in a few words: its delivery (with the server's words when
/// it refused), or, while it is untold, what it waits for.
fn why(n: &StoredNotice, status: &Status, running: bool) -> String {
    match (n.delivery, &n.failure) {
        (Some(reason), Some(failure)) => format!("{}: {failure}", reason.as_str()),
        (Some(reason), None) => reason.as_str().to_string(),
        (None, _) if !running => format!("{}: no engine runs to show it", n.state.as_str()),
        (None, _) => match status.untold_wait_for {
            Some(held) => format!("{}: waiting, {}", n.state.as_str(), held.as_str()),
            None => format!("{}: being decided", n.state.as_str()),
        },
    }
}
