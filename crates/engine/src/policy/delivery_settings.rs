//! The `[delivery]` settings: a versioned schema in the TOML config file.
//!
//! Unknown keys warn and are ignored; a bad value names the key, the value and what is allowed,
//! and the caller keeps its last good settings. Each key, its kind and its bounds are declared
//! in `setting_keys`; this reads and prints their values.

use std::time::Duration;

use super::schedule::{Schedule, Window};
use crate::notice::Source;
use crate::setting_keys::{self, Key, Kind, Reader};

/// The table, and the key of its version.
pub const DELIVERY: &str = "delivery";
pub const SCHEMA_KEY: &str = "schema";

/// The schema version this build writes and reads.
pub const SCHEMA: i64 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceSettings {
    pub banner: bool,
    pub sound: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuietHours {
    pub enabled: bool,
    pub schedule: Schedule,
    /// A `needs-you` still shows during quiet hours.
    pub needs_you_breaks_through: bool,
    /// An IANA zone; `None` follows the system's (and its changes).
    pub time_zone: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliverySettings {
    /// Master switches.
    pub banners: bool,
    pub sounds: bool,
    pub runs: SourceSettings,
    pub handoffs: SourceSettings,
    pub local: SourceSettings,
    /// At most one sound per source per this long.
    pub sound_cooldown: Duration,
    /// More than `coalesce_count` notices of one source within `coalesce_window` become one banner.
    pub coalesce_count: usize,
    pub coalesce_window: Duration,
    /// An urgency hint for `needs-you`.
    pub attention: bool,
    pub quiet: QuietHours,
    /// The history keeps a notice this many days (what is still untold is always kept).
    pub history_days: u32,
    /// The tray speaks to another machine's tmux over the ssh connection's own ControlMaster: a
    /// click selects the notice's pane there, and no banner shows while that pane is looked at
    /// (docs/terminals.md, "Agents on another machine").
    pub remote_tmux: bool,
}

impl Default for DeliverySettings {
    fn default() -> Self {
        let on = SourceSettings { banner: true, sound: true };
        DeliverySettings {
            banners: true,
            sounds: true,
            runs: on,
            handoffs: on,
            local: on,
            sound_cooldown: Duration::from_secs(10),
            coalesce_count: 4,
            coalesce_window: Duration::from_secs(10),
            attention: true,
            quiet: QuietHours { enabled: false, schedule: Schedule::default(), needs_you_breaks_through: false, time_zone: None },
            history_days: 30,
            remote_tmux: false,
        }
    }
}

impl DeliverySettings {
    pub fn source(&self, source: Source) -> SourceSettings {
        match source {
            Source::Run => self.runs,
            Source::Handoff => self.handoffs,
            Source::Local => self.local,
            Source::App => SourceSettings { banner: true, sound: false },
        }
    }
}

/// What was wrong with one setting.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key} = {value}: {allowed}")]
pub struct SettingError {
    pub key: String,
    pub value: String,
    pub allowed: String,
}

/// The value of `key` in these settings, as `config get` prints it; `None`: no `[delivery]` key.
pub fn get(s: &DeliverySettings, key: Key) -> Option<String> {
    Some(match key {
        Key::Banners => plain(&s.banners),
        Key::Sounds => plain(&s.sounds),
        Key::SoundCooldown => in_seconds(&s.sound_cooldown),
        Key::CoalesceCount => plain(&s.coalesce_count),
        Key::CoalesceWindow => in_seconds(&s.coalesce_window),
        Key::Attention => plain(&s.attention),
        Key::RunsBanner => plain(&s.runs.banner),
        Key::RunsSound => plain(&s.runs.sound),
        Key::HandoffsBanner => plain(&s.handoffs.banner),
        Key::HandoffsSound => plain(&s.handoffs.sound),
        Key::LocalBanner => plain(&s.local.banner),
        Key::LocalSound => plain(&s.local.sound),
        Key::QuietEnabled => plain(&s.quiet.enabled),
        Key::QuietWindows => windows_text(&s.quiet.schedule),
        Key::QuietBreaksThrough => plain(&s.quiet.needs_you_breaks_through),
        Key::QuietTimeZone => zone_text(&s.quiet.time_zone),
        Key::HistoryDays => plain(&s.history_days),
        Key::RemoteTmux => plain(&s.remote_tmux),
        _ => return None,
    })
}

/// Sets `key` from the file's value, checked by its declared kind and bounds.
fn set(s: &mut DeliverySettings, key: Key, v: &toml::Value) -> Result<(), SettingError> {
    match key {
        Key::Banners => s.banners = boolean(key, v)?,
        Key::Sounds => s.sounds = boolean(key, v)?,
        Key::SoundCooldown => s.sound_cooldown = seconds(key, v)?,
        Key::CoalesceCount => s.coalesce_count = whole(key, v)? as usize,
        Key::CoalesceWindow => s.coalesce_window = seconds(key, v)?,
        Key::Attention => s.attention = boolean(key, v)?,
        Key::RunsBanner => s.runs.banner = boolean(key, v)?,
        Key::RunsSound => s.runs.sound = boolean(key, v)?,
        Key::HandoffsBanner => s.handoffs.banner = boolean(key, v)?,
        Key::HandoffsSound => s.handoffs.sound = boolean(key, v)?,
        Key::LocalBanner => s.local.banner = boolean(key, v)?,
        Key::LocalSound => s.local.sound = boolean(key, v)?,
        Key::QuietEnabled => s.quiet.enabled = boolean(key, v)?,
        Key::QuietWindows => s.quiet.schedule = windows(key, v)?,
        Key::QuietBreaksThrough => s.quiet.needs_you_breaks_through = boolean(key, v)?,
        Key::QuietTimeZone => s.quiet.time_zone = time_zone(key, v)?,
        Key::HistoryDays => s.history_days = whole(key, v)?,
        Key::RemoteTmux => s.remote_tmux = boolean(key, v)?,
        // Not a `[delivery]` key: the caller reads only those.
        _ => {}
    }
    Ok(())
}

fn plain(value: &impl ToString) -> String {
    value.to_string()
}

fn in_seconds(d: &Duration) -> String {
    format!("{}", d.as_secs_f64())
}

fn windows_text(schedule: &Schedule) -> String {
    schedule.windows.iter().map(|w| w.to_string()).collect::<Vec<_>>().join("; ")
}

fn zone_text(zone: &Option<String>) -> String {
    zone.clone().unwrap_or_else(|| "system".into())
}

fn err(key: impl std::fmt::Display, value: &toml::Value, allowed: &str) -> SettingError {
    SettingError { key: key.to_string(), value: value.to_string(), allowed: allowed.into() }
}

fn boolean(key: Key, v: &toml::Value) -> Result<bool, SettingError> {
    v.as_bool().ok_or_else(|| err(key, v, "expected true or false"))
}

fn seconds(key: Key, v: &toml::Value) -> Result<Duration, SettingError> {
    let secs = v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).ok_or_else(|| err(key, v, "expected seconds (a number)"))?;
    let Kind::Seconds { min, max } = key.setting().kind else { unreachable!("{key} is declared in seconds") };
    let min = min.unwrap_or(0);
    if !(f64::from(min)..=f64::from(max)).contains(&secs) {
        return Err(err(key, v, &format!("expected {min} to {max} seconds")));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A whole number of notices or of days, within the key's declared bounds.
fn whole(key: Key, v: &toml::Value) -> Result<u32, SettingError> {
    let (min, max, what) = match key.setting().kind {
        Kind::Count { min, max } => (min, max, ""),
        Kind::Days { min, max } => (min, max, " of days"),
        other => unreachable!("{key} is declared {other:?}"),
    };
    match v.as_integer() {
        Some(n) if (i64::from(min)..=i64::from(max)).contains(&n) => Ok(n as u32),
        _ => Err(err(key, v, &format!("expected a whole number{what} from {min} to {max}"))),
    }
}

/// Quiet-hours windows: an array of `"DAYS HH:MM-HH:MM"` strings.
pub fn windows(key: Key, v: &toml::Value) -> Result<Schedule, SettingError> {
    let list = v.as_array().ok_or_else(|| err(key, v, "expected a list like [\"mon-fri 22:00-07:00\"]"))?;
    let mut schedule = Schedule::default();
    for item in list {
        let text = item.as_str().ok_or_else(|| err(key, item, "each window is a string like \"mon-fri 22:00-07:00\""))?;
        schedule.windows.push(Window::parse(text).map_err(|e| err(key, v, &e))?);
    }
    Ok(schedule)
}

fn time_zone(key: Key, v: &toml::Value) -> Result<Option<String>, SettingError> {
    let name = v.as_str().ok_or_else(|| err(key, v, "expected a time zone name like \"Europe/Berlin\""))?;
    if name.is_empty() || name.eq_ignore_ascii_case("system") {
        return Ok(None);
    }
    jiff::tz::TimeZone::get(name).map_err(|e| err(key, v, &format!("unknown time zone ({e})")))?;
    Ok(Some(name.into()))
}

/// Reads `[delivery]`. Returns the settings and the warnings (unknown keys, a newer schema).
pub fn parse(table: Option<&toml::Table>) -> Result<(DeliverySettings, Vec<String>), SettingError> {
    let mut s = DeliverySettings::default();
    let mut warnings = Vec::new();
    let Some(table) = table else { return Ok((s, warnings)) };
    for (name, v) in table {
        let k = format!("{DELIVERY}.{name}");
        if name == SCHEMA_KEY {
            match v.as_integer() {
                Some(n) if n > SCHEMA => warnings.push(format!(
                    "delivery.schema = {n}: written by a newer cmux-tray (this one reads {SCHEMA}); keys it does not know are ignored"
                )),
                Some(n) if n >= 1 => {}
                _ => return Err(err(&k, v, &format!("expected a schema version (1 to {SCHEMA})"))),
            }
        } else if setting_keys::is_table(&k) {
            let t = v.as_table().ok_or_else(|| err(&k, v, &format!("expected a table [{k}]")))?;
            if k == Key::QuietEnabled.split().0 {
                s.quiet.enabled = true; // a table that says nothing else still means "on"
            }
            for (sub, sv) in t {
                match Key::in_table(&k, sub) {
                    Some(key) => set(&mut s, key, sv)?,
                    None => warnings.push(format!("unknown key {k}.{sub} (ignored)")),
                }
            }
        } else {
            match Key::in_table(DELIVERY, name).filter(|key| key.setting().reader == Reader::Delivery) {
                Some(key) => set(&mut s, key, v)?,
                None => warnings.push(format!("unknown key {k} (ignored)")),
            }
        }
    }
    Ok((s, warnings))
}

/// Parses a value given on the command line for a `[delivery]` key into the TOML value the
/// file will hold, checked the way the file will be read.
pub fn value_for(key: Key, text: &str) -> Result<toml::Value, SettingError> {
    let v = match key.setting().kind {
        Kind::Bool => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" | "1" => toml::Value::Boolean(true),
            "false" | "off" | "no" | "0" => toml::Value::Boolean(false),
            _ => toml::Value::String(text.into()),
        },
        Kind::Seconds { .. } | Kind::Count { .. } | Kind::Days { .. } => match text.trim().parse::<i64>() {
            Ok(n) => toml::Value::Integer(n),
            Err(_) => text.trim().parse::<f64>().map(toml::Value::Float).unwrap_or(toml::Value::String(text.into())),
        },
        Kind::Windows => {
            toml::Value::Array(text.split(';').map(str::trim).filter(|w| !w.is_empty()).map(|w| toml::Value::String(w.into())).collect())
        }
        _ => toml::Value::String(text.trim().into()),
    };
    set(&mut DeliverySettings::default(), key, &v).map(|()| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<(DeliverySettings, Vec<String>), SettingError> {
        let t: toml::Table = text.parse().unwrap();
        parse(t.get(DELIVERY).and_then(|d| d.as_table()))
    }

    #[test]
    fn defaults_and_a_full_table() {
        assert_eq!(read("").unwrap().0, DeliverySettings::default());
        let (s, warnings) = read(
            "[delivery]\nschema = 1\nbanners = true\nsound_cooldown = 5\ncoalesce_count = 3\n[delivery.runs]\nsound = false\n\
             [delivery.quiet_hours]\nwindows = [\"mon-fri 22:00-07:00\", \"sat,sun 23:00-09:00\"]\nneeds_you_breaks_through = true\ntime_zone = \"Europe/Berlin\"\n",
        )
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(s.sound_cooldown, Duration::from_secs(5));
        assert_eq!(s.runs, SourceSettings { banner: true, sound: false });
        assert!(s.quiet.enabled && s.quiet.needs_you_breaks_through);
        assert_eq!(s.quiet.schedule.windows.len(), 2);
    }

    #[test]
    fn bad_values_name_the_key_the_value_and_what_is_allowed() {
        let cases = [
            ("[delivery]\nbanners = \"yes\"\n", "delivery.banners", "true or false"),
            ("[delivery]\ncoalesce_count = 0\n", "delivery.coalesce_count", "1 to 1000"),
            ("[delivery.quiet_hours]\nwindows = [\"mon-fri 25:00-07:00\"]\n", "delivery.quiet_hours.windows", "not a time of day"),
            ("[delivery.quiet_hours]\ntime_zone = \"Mars/Olympus\"\n", "delivery.quiet_hours.time_zone", "unknown time zone"),
            ("[delivery.runs]\nbanner = 1\n", "delivery.runs.banner", "true or false"),
        ];
        for (text, key, allowed) in cases {
            let e = read(text).unwrap_err();
            assert_eq!(e.key, key, "{text}");
            assert!(e.allowed.contains(allowed), "{e}");
        }
        let e = read("[delivery.quiet_hours]\nwindows = [\"mon-fri 25:00-07:00\"]\n").unwrap_err();
        assert!(e.to_string().contains("25:00"), "{e}");
    }

    #[test]
    fn unknown_keys_and_a_newer_schema_warn() {
        let (s, w) = read("[delivery]\nschema = 9\nconfetti = true\n[delivery.runs]\nvolume = 3\n").unwrap();
        assert_eq!(s, DeliverySettings::default());
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w.iter().any(|w| w.contains("delivery.confetti")));
        assert!(w.iter().any(|w| w.contains("delivery.runs.volume")));
    }

    #[test]
    fn a_quoted_dotted_key_is_unknown_not_a_tables_key() {
        let (s, w) = read("[delivery]\n\"runs.banner\" = false\n").unwrap();
        assert_eq!(s, DeliverySettings::default());
        assert!(w.iter().any(|w| w.contains("unknown key delivery.runs.banner")), "{w:?}");
    }

    #[test]
    fn command_line_values_are_checked_like_the_file() {
        assert_eq!(value_for(Key::Banners, "off").unwrap(), toml::Value::Boolean(false));
        assert_eq!(value_for(Key::SoundCooldown, "2.5").unwrap(), toml::Value::Float(2.5));
        let w = value_for(Key::QuietWindows, "mon-fri 22:00-07:00; sat,sun 23:00-09:00").unwrap();
        assert_eq!(w.as_array().unwrap().len(), 2);
        assert!(value_for(Key::QuietWindows, "daily 25:00-07:00").is_err());
        assert!(value_for(Key::Banners, "perhaps").is_err());
    }
}
