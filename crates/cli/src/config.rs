//! `cmux-tray config get|set` and the times `pause` takes.

use std::time::Duration;

use anyhow::Context;
use serde_json::json;

use cmux_tray_engine::config::Paths;

use crate::args::ConfigAction;
use crate::send_within;
use cmux_tray_engine::local::requests::{MethodRequest, Reload, Reloaded};

pub(crate) async fn config(paths: &Paths, action: ConfigAction) -> anyhow::Result<()> {
    use cmux_tray_engine::config;
    use cmux_tray_engine::setting_keys::{self, Key, Reader};
    match action {
        ConfigAction::Get { key: Some(key), json } => {
            let value = config::get_in_file(&paths.config_file, &key).map_err(|e| anyhow::anyhow!(e))?;
            if json {
                println!("{}", json!({ key.clone(): typed(&key, &value) }));
            } else {
                println!("{value}");
            }
            Ok(())
        }
        ConfigAction::Get { key: None, json: as_json } => {
            let keys = setting_keys::settable().map(Key::as_str);
            let mut all = serde_json::Map::new();
            for k in keys {
                let value = config::get_in_file(&paths.config_file, k).map_err(|e| anyhow::anyhow!(e))?;
                if !as_json {
                    println!("{k} = {value}");
                }
                all.insert(k.to_string(), typed(k, &value));
            }
            if as_json {
                println!("{}", serde_json::Value::Object(all));
            }
            Ok(())
        }
        ConfigAction::Set { key, value } => {
            config::set_in_file(&paths.config_file, &key, &value).map_err(|e| anyhow::anyhow!(e))?;
            if Key::parse(&key).map(|k| k.setting().reader) != Some(Reader::Delivery) {
                println!("{key} = {value} (applies when cmux-tray starts again)");
                return Ok(());
            }
            // Applied live when an engine runs; otherwise at its next start.
            let answer = send_within(paths, &Reload, Duration::from_secs(5)).await;
            match answer.map(serde_json::from_value::<Reloaded>) {
                Ok(Ok(Reloaded { reloaded: true, .. })) => println!("{key} = {value} (applied)"),
                Ok(Ok(Reloaded { problem, .. })) => eprintln!("cmux-tray: {}", problem.as_deref().unwrap_or("not applied")),
                Ok(Err(e)) => eprintln!("cmux-tray: the tray's answer to {}: {e}", <Reload as MethodRequest>::METHOD),
                Err(_) => println!("{key} = {value} (applies when cmux-tray starts)"),
            }
            Ok(())
        }
    }
}

/// A value as `config get` prints it, as JSON of its kind: booleans, numbers (seconds may have a
/// fraction), the quiet-hours windows as a list; a time zone, a URL or a path as a string.
fn typed(key: &str, text: &str) -> serde_json::Value {
    use cmux_tray_engine::setting_keys::{Key, Kind, Reader};
    let Some(setting) = Key::parse(key).map(Key::setting) else { return text.into() };
    let number = || serde_json::from_str::<serde_json::Number>(text).map(serde_json::Value::Number).ok();
    if text.is_empty() && setting.reader == Reader::Notify {
        return serde_json::Value::Null; // not set: the default applies
    }
    let typed = match setting.kind {
        Kind::Bool => text.parse::<bool>().ok().map(serde_json::Value::Bool),
        Kind::Seconds { .. } | Kind::Count { .. } | Kind::Days { .. } => number(),
        Kind::Windows => Some(text.split(';').map(str::trim).filter(|w| !w.is_empty()).collect::<Vec<_>>().into()),
        _ => None,
    };
    typed.unwrap_or_else(|| text.into())
}

/// A moment as `pause` and `status` say it: the person's own zone, "Fri 4 Dec 21:30".
pub(crate) fn in_local_time(t: jiff::Timestamp) -> String {
    t.to_zoned(jiff::tz::TimeZone::system()).strftime("%a %-d %b %H:%M").to_string()
}

/// A duration as jiff reads it (`1h`, `30m`, `1h30m`, `90 minutes`, `PT2H`), `tomorrow` (08:00
/// local), or `indefinitely`.
pub(crate) fn pause_until(text: &str) -> anyhow::Result<Option<jiff::Timestamp>> {
    let now = jiff::Zoned::now();
    match text.trim().to_ascii_lowercase().as_str() {
        "indefinitely" | "forever" | "until-resumed" => Ok(None),
        "tomorrow" => Ok(Some(cmux_tray_engine::policy::tomorrow_morning(&now).context("no tomorrow morning in this time zone")?)),
        words => {
            let pause: jiff::SignedDuration = words.parse().map_err(|e| {
                anyhow::anyhow!("pause {text:?}: expected a duration (1h, 30m, 1h30m, 90 minutes), tomorrow or indefinitely ({e})")
            })?;
            anyhow::ensure!(pause.is_positive(), "pause {text:?}: expected a positive duration");
            Ok(Some(now.timestamp().checked_add(pause)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_get_json_gives_each_value_its_type() {
        assert_eq!(typed("delivery.banners", "true"), json!(true));
        assert_eq!(typed("delivery.sound_cooldown", "10"), json!(10));
        assert_eq!(typed("delivery.sound_cooldown", "2.5"), json!(2.5));
        assert_eq!(typed("delivery.coalesce_count", "4"), json!(4));
        assert_eq!(typed("delivery.history_days", "30"), json!(30));
        assert_eq!(
            typed("delivery.quiet_hours.windows", "mon-fri 22:00-07:00; sat,sun 23:00-09:00"),
            json!(["mon-fri 22:00-07:00", "sat,sun 23:00-09:00"])
        );
        assert_eq!(typed("delivery.quiet_hours.windows", ""), json!([]));
        assert_eq!(typed("delivery.quiet_hours.time_zone", "system"), json!("system"));
        assert_eq!(typed("cloud.api_url", "https://cloud-api.cmux.dev"), json!("https://cloud-api.cmux.dev"));
        assert_eq!(typed("notify.enabled", "false"), json!(false));
        assert_eq!(typed("notify.timeout", "2.5"), json!(2.5));
        assert_eq!(typed("notify.idle_reminders", ""), json!(null));
    }

    #[test]
    fn a_pause_is_read_as_jiff_reads_a_duration() {
        let from_now = |text: &str| {
            let until = pause_until(text).unwrap().unwrap();
            (until.as_second() - jiff::Timestamp::now().as_second()) / 60
        };
        for (text, minutes) in [("1h", 60), ("30m", 30), ("1h30m", 90), ("90 minutes", 90), ("2 hours", 120), ("PT45M", 45), (" 1H ", 60)] {
            assert!((from_now(text) - minutes).abs() <= 1, "{text}: {} min", from_now(text));
        }
        assert_eq!(pause_until("indefinitely").unwrap(), None);
        assert!(pause_until("tomorrow").unwrap().is_some());
        for bad in ["soon", "-1h", "0m", ""] {
            let e = pause_until(bad).unwrap_err().to_string();
            assert!(e.contains("pause") && e.contains(&format!("{bad:?}")), "{bad}: {e}");
        }
    }
}
