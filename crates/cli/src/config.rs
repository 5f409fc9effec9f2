//! `cmux-tray config get|set` and the times `pause` takes.

use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::json;

use cmux_tray_engine::config::Paths;

use crate::args::ConfigAction;
use crate::engine_request_within;

pub(crate) async fn config(paths: &Paths, action: ConfigAction) -> anyhow::Result<()> {
    use cmux_tray_engine::config;
    use cmux_tray_engine::policy::settings as delivery;
    match action {
        ConfigAction::Get { key: Some(key) } => {
            println!("{}", config::get_in_file(&paths.config_file, &key).map_err(|e| anyhow::anyhow!(e))?);
            Ok(())
        }
        ConfigAction::Get { key: None } => {
            let keys = delivery::keys().chain(config::EDITABLE.iter().map(|(k, _)| *k));
            for k in keys {
                println!("{k} = {}", config::get_in_file(&paths.config_file, k).map_err(|e| anyhow::anyhow!(e))?);
            }
            Ok(())
        }
        ConfigAction::Set { key, value } => {
            config::set_in_file(&paths.config_file, &key, &value).map_err(|e| anyhow::anyhow!(e))?;
            if !key.starts_with("delivery.") {
                println!("{key} = {value} (applies when cmux-tray starts again)");
                return Ok(());
            }
            // Applied live when an engine runs; otherwise at its next start.
            match engine_request_within(paths, "settings.reload", json!({}), Duration::from_secs(5)).await {
                Ok(r) if r["reloaded"] == json!(false) => eprintln!("cmux-tray: {}", r["problem"].as_str().unwrap_or("not applied")),
                Ok(_) => println!("{key} = {value} (applied)"),
                Err(_) => println!("{key} = {value} (applies when cmux-tray starts)"),
            }
            Ok(())
        }
    }
}

/// `1h`, `90m`, `tomorrow` (08:00 local), `indefinitely`.
pub(crate) fn pause_until(text: &str) -> anyhow::Result<Option<jiff::Timestamp>> {
    let t = text.trim().to_ascii_lowercase();
    let now = jiff::Zoned::now();
    let span = |n: &str, unit: &str| -> anyhow::Result<jiff::Timestamp> {
        let n: i64 = n.parse().with_context(|| format!("pause {text:?}: expected a number before {unit}"))?;
        anyhow::ensure!(n > 0, "pause {text:?}: expected a positive duration");
        let d = if unit == "h" { jiff::SignedDuration::from_hours(n) } else { jiff::SignedDuration::from_mins(n) };
        Ok(now.timestamp().checked_add(d)?)
    };
    Ok(Some(match t.as_str() {
        "indefinitely" | "forever" | "until-resumed" => return Ok(None),
        "tomorrow" => cmux_tray_engine::policy::tomorrow_morning(&now).context("no tomorrow morning in this time zone")?,
        _ if t.ends_with('h') => span(&t[..t.len() - 1], "h")?,
        _ if t.ends_with('m') => span(&t[..t.len() - 1], "m")?,
        _ => bail!("pause {text:?}: expected 1h, 30m, tomorrow or indefinitely"),
    }))
}
