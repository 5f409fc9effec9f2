//! The `[delivery]` settings: a versioned schema in the TOML config file.
//!
//! Unknown keys warn and are ignored; a bad value names the key, the value and what is allowed,
//! and the caller keeps its last good settings. Every key has a dotted name for
//! `cmux-tray config get|set` and the settings window.

use std::time::Duration;

use super::schedule::{Schedule, Window};
use crate::notice::Source;

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

/// The kinds of value a key takes (for `config set` and the settings window).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    Bool,
    Seconds,
    Count,
    Windows,
    TimeZone,
    Days,
}

/// One key of `[delivery]`, declared once: its dotted name, the kind of value it takes, how
/// `config get` reads it and how the file's value is set (checked as the file is read).
pub struct Setting {
    pub key: &'static str,
    pub kind: ValueKind,
    get: fn(&DeliverySettings) -> String,
    set: fn(&mut DeliverySettings, &str, &toml::Value) -> Result<(), SettingError>,
}

/// One `Setting`: the key, its kind, the field it sets, how the file's value is read and how
/// `config get` shows it.
macro_rules! setting {
    ($key:literal, $kind:ident, $($field:ident).+, $read:ident, $show:ident) => {
        Setting { key: $key, kind: ValueKind::$kind, get: |s| $show(&s.$($field).+), set: |s, k, v| $read(k, v).map(|x| s.$($field).+ = x) }
    };
}

/// Every key of `[delivery]`. Parsing, `config get`, `config set` and the key lists read this.
pub const SETTINGS: &[Setting] = &[
    setting!("delivery.banners", Bool, banners, boolean, plain),
    setting!("delivery.sounds", Bool, sounds, boolean, plain),
    setting!("delivery.sound_cooldown", Seconds, sound_cooldown, seconds, in_seconds),
    setting!("delivery.coalesce_count", Count, coalesce_count, count, plain),
    setting!("delivery.coalesce_window", Seconds, coalesce_window, seconds, in_seconds),
    setting!("delivery.attention", Bool, attention, boolean, plain),
    setting!("delivery.runs.banner", Bool, runs.banner, boolean, plain),
    setting!("delivery.runs.sound", Bool, runs.sound, boolean, plain),
    setting!("delivery.handoffs.banner", Bool, handoffs.banner, boolean, plain),
    setting!("delivery.handoffs.sound", Bool, handoffs.sound, boolean, plain),
    setting!("delivery.local.banner", Bool, local.banner, boolean, plain),
    setting!("delivery.local.sound", Bool, local.sound, boolean, plain),
    setting!("delivery.quiet_hours.enabled", Bool, quiet.enabled, boolean, plain),
    setting!("delivery.quiet_hours.windows", Windows, quiet.schedule, windows, windows_text),
    setting!("delivery.quiet_hours.needs_you_breaks_through", Bool, quiet.needs_you_breaks_through, boolean, plain),
    setting!("delivery.quiet_hours.time_zone", TimeZone, quiet.time_zone, time_zone, zone_text),
    setting!("delivery.history_days", Days, history_days, days, plain),
    setting!("delivery.remote_tmux", Bool, remote_tmux, boolean, plain),
];

/// The tables inside `[delivery]`, and what a value there that is no table is told.
const TABLES: &[(&str, &str)] = &[
    ("runs", "expected a table with banner and sound"),
    ("handoffs", "expected a table with banner and sound"),
    ("local", "expected a table with banner and sound"),
    ("quiet_hours", "expected a table [delivery.quiet_hours]"),
];

/// Every dotted key, in the order of [`SETTINGS`].
pub fn keys() -> impl Iterator<Item = &'static str> {
    SETTINGS.iter().map(|s| s.key)
}

fn setting(key: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.key == key)
}

pub fn kind_of(key: &str) -> Option<ValueKind> {
    setting(key).map(|s| s.kind)
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

fn err(key: &str, value: &toml::Value, allowed: &str) -> SettingError {
    SettingError { key: key.into(), value: value.to_string(), allowed: allowed.into() }
}

fn boolean(key: &str, v: &toml::Value) -> Result<bool, SettingError> {
    v.as_bool().ok_or_else(|| err(key, v, "expected true or false"))
}

fn seconds(key: &str, v: &toml::Value) -> Result<Duration, SettingError> {
    let secs = v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).ok_or_else(|| err(key, v, "expected seconds (a number)"))?;
    if !(0.0..=86_400.0).contains(&secs) {
        return Err(err(key, v, "expected 0 to 86400 seconds"));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn count(key: &str, v: &toml::Value) -> Result<usize, SettingError> {
    match v.as_integer() {
        Some(n) if (1..=1000).contains(&n) => Ok(n as usize),
        _ => Err(err(key, v, "expected a whole number from 1 to 1000")),
    }
}

fn days(key: &str, v: &toml::Value) -> Result<u32, SettingError> {
    match v.as_integer() {
        Some(n) if (1..=3650).contains(&n) => Ok(n as u32),
        _ => Err(err(key, v, "expected a whole number of days from 1 to 3650")),
    }
}

/// Quiet-hours windows: an array of `"DAYS HH:MM-HH:MM"` strings.
pub fn windows(key: &str, v: &toml::Value) -> Result<Schedule, SettingError> {
    let list = v.as_array().ok_or_else(|| err(key, v, "expected a list like [\"mon-fri 22:00-07:00\"]"))?;
    let mut schedule = Schedule::default();
    for item in list {
        let text = item.as_str().ok_or_else(|| err(key, item, "each window is a string like \"mon-fri 22:00-07:00\""))?;
        schedule.windows.push(Window::parse(text).map_err(|e| err(key, v, &e))?);
    }
    Ok(schedule)
}

fn time_zone(key: &str, v: &toml::Value) -> Result<Option<String>, SettingError> {
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
    for (key, v) in table {
        let k = format!("delivery.{key}");
        if key == "schema" {
            match v.as_integer() {
                Some(n) if n > SCHEMA => warnings.push(format!(
                    "delivery.schema = {n}: written by a newer cmux-tray (this one reads {SCHEMA}); keys it does not know are ignored"
                )),
                Some(n) if n >= 1 => {}
                _ => return Err(err(&k, v, &format!("expected a schema version (1 to {SCHEMA})"))),
            }
        } else if let Some((_, allowed)) = TABLES.iter().find(|(name, _)| name == key) {
            let t = v.as_table().ok_or_else(|| err(&k, v, allowed))?;
            if key == "quiet_hours" {
                s.quiet.enabled = true; // a table that says nothing else still means "on"
            }
            for (sub, sv) in t {
                let sk = format!("{k}.{sub}");
                match setting(&sk) {
                    Some(one) => (one.set)(&mut s, &sk, sv)?,
                    None => warnings.push(format!("unknown key {sk} (ignored)")),
                }
            }
        } else {
            // A quoted key with a dot in it (`"runs.banner" = …`) is no key of the table's.
            match setting(&k).filter(|_| !key.contains('.')) {
                Some(one) => (one.set)(&mut s, &k, v)?,
                None => warnings.push(format!("unknown key {k} (ignored)")),
            }
        }
    }
    Ok((s, warnings))
}

/// The value of a dotted key in these settings, as `config get` prints it.
pub fn get(s: &DeliverySettings, key: &str) -> Option<String> {
    setting(key).map(|one| (one.get)(s))
}

/// Parses a value given on the command line for `key` into the TOML value the file will hold.
pub fn value_for(key: &str, text: &str) -> Result<toml::Value, SettingError> {
    let kind = kind_of(key).ok_or_else(|| SettingError {
        key: key.into(),
        value: format!("{text:?}"),
        allowed: format!("unknown key; known keys: {}", keys().collect::<Vec<_>>().join(", ")),
    })?;
    let v = match kind {
        ValueKind::Bool => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" | "1" => toml::Value::Boolean(true),
            "false" | "off" | "no" | "0" => toml::Value::Boolean(false),
            _ => toml::Value::String(text.into()),
        },
        ValueKind::Seconds | ValueKind::Count | ValueKind::Days => match text.trim().parse::<i64>() {
            Ok(n) => toml::Value::Integer(n),
            Err(_) => text.trim().parse::<f64>().map(toml::Value::Float).unwrap_or(toml::Value::String(text.into())),
        },
        ValueKind::Windows => {
            toml::Value::Array(text.split(';').map(str::trim).filter(|w| !w.is_empty()).map(|w| toml::Value::String(w.into())).collect())
        }
        ValueKind::TimeZone => toml::Value::String(text.trim().into()),
    };
    // Check it the way the file will be read.
    let check = match kind {
        ValueKind::Bool => boolean(key, &v).map(drop),
        ValueKind::Seconds => seconds(key, &v).map(drop),
        ValueKind::Count => count(key, &v).map(drop),
        ValueKind::Windows => windows(key, &v).map(drop),
        ValueKind::TimeZone => time_zone(key, &v).map(drop),
        ValueKind::Days => days(key, &v).map(drop),
    };
    check.map(|()| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<(DeliverySettings, Vec<String>), SettingError> {
        let t: toml::Table = text.parse().unwrap();
        parse(t.get("delivery").and_then(|d| d.as_table()))
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
        assert_eq!(value_for("delivery.banners", "off").unwrap(), toml::Value::Boolean(false));
        assert_eq!(value_for("delivery.sound_cooldown", "2.5").unwrap(), toml::Value::Float(2.5));
        let w = value_for("delivery.quiet_hours.windows", "mon-fri 22:00-07:00; sat,sun 23:00-09:00").unwrap();
        assert_eq!(w.as_array().unwrap().len(), 2);
        assert!(value_for("delivery.quiet_hours.windows", "daily 25:00-07:00").is_err());
        assert!(value_for("delivery.volume", "11").unwrap_err().allowed.contains("unknown key"));
        assert!(value_for("delivery.banners", "perhaps").is_err());
    }
}
