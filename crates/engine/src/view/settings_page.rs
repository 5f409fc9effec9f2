//! The settings window's content: every delivery setting with the words a person reads beside
//! its control, the quiet-hours windows as the editor draws them and whether quiet hours are on
//! now, the pause, and where the sign-in is kept, in one sentence. A change goes back through
//! `config set`'s own check (`config::set_in_file`), so the window and the command line refuse
//! the same values with the same words.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;

use super::times;
use crate::lang::Lang;
use crate::lang::say;
use crate::policy::schedule::Schedule;
use crate::policy::{DeliverySettings, Pause};
use crate::secrets::SecretStore;
use crate::setting_keys::{Key, Kind};

/// A setting shown as a switch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Switch {
    /// The dotted key, as `config get` names it.
    pub key: Key,
    pub label: String,
    pub on: bool,
}

/// One source's banner and sound switches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceRow {
    pub label: String,
    pub banner: Switch,
    pub sound: Switch,
}

/// A setting shown as a number inside a sentence: "{before} [value] {after}".
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Number {
    pub key: Key,
    pub value: String,
    /// For a screen reader: what the number is.
    pub label: String,
    pub min: u32,
    pub max: u32,
}

/// One quiet-hours window as the editor draws it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuietWindow {
    /// Monday first.
    pub days: [bool; 7],
    pub from: String,
    pub to: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuietView {
    pub enabled: Switch,
    pub windows: Vec<QuietWindow>,
    pub breaks_through: Switch,
    /// The key the zone is set by.
    pub time_zone_key: Key,
    /// The zone chosen; empty: the system's.
    pub time_zone: String,
    pub system_zone: String,
    /// "Quiet now, until 07:00 tomorrow." / "Not quiet now. Quiet hours start at 22:00."
    pub now: String,
    pub quiet_now: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PauseView {
    pub paused: bool,
    /// "Not paused." / "Paused until 09:00 tomorrow." / "Paused until you resume."
    pub line: String,
}

/// The account part: who, and where the sign-in is kept in one plain sentence, with the detail
/// behind a "Why?".
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptIn {
    pub sentence: String,
    pub why: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    pub master: Vec<Switch>,
    pub sources: Vec<SourceRow>,
    pub sound_cooldown: Number,
    pub coalesce_count: Number,
    pub coalesce_window: Number,
    pub history_days: Number,
    pub quiet: QuietView,
    pub pause: PauseView,
    /// The editor's day toggles, Monday first: (short, full name).
    pub days: Vec<(String, String)>,
    /// "Version X is available", when the release feed said so (the engine fills it).
    pub update: Option<String>,
    /// Why banners wait, while the person has turned them off in the system's settings (the
    /// engine fills it).
    pub banners_off: Option<String>,
}

/// The days of the week in the person's language, Monday first: (short, full), from the
/// locale's own names (the week of 2026-11-30, a Monday).
fn days(lang: &Lang) -> Vec<(String, String)> {
    (0..7)
        .map(|d| {
            let monday = jiff::civil::date(2026, 11, 30);
            let date = monday.checked_add(jiff::Span::new().days(d)).unwrap_or(monday).to_zoned(TimeZone::UTC).unwrap_or_default();
            lang.dates().weekday(&date)
        })
        .collect()
}

/// Whether quiet hours are on now and until when, or when they next start.
pub fn quiet_line(lang: &Lang, s: &DeliverySettings, now: Timestamp, tz: &TimeZone) -> (bool, String) {
    let schedule: &Schedule = &s.quiet.schedule;
    let ms = now.as_millisecond();
    if !s.quiet.enabled {
        return (false, say!(lang, "quiet-off"));
    }
    if schedule.windows.is_empty() {
        return (false, say!(lang, "quiet-no-window"));
    }
    match schedule.quiet_period(now, tz) {
        Some((_, end)) => {
            let until = times::until(lang, end.as_millisecond(), ms, tz);
            match s.quiet.needs_you_breaks_through {
                true => (true, say!(lang, "quiet-now-breaks-through", until = until)),
                false => (true, say!(lang, "quiet-now", until = until)),
            }
        }
        None => match schedule.next_period(now, tz) {
            Some((start, _)) => (false, say!(lang, "quiet-not-now-starts", from = times::from(lang, start.as_millisecond(), ms, tz))),
            None => (false, say!(lang, "quiet-not-now")),
        },
    }
}

pub fn pause_line(lang: &Lang, pause: Option<Pause>, now: Timestamp, tz: &TimeZone) -> PauseView {
    match pause {
        None => PauseView { paused: false, line: say!(lang, "pause-not") },
        Some(Pause::UntilResumed) => PauseView { paused: true, line: say!(lang, "pause-until-resumed") },
        Some(Pause::Until(t)) if t <= now => PauseView { paused: false, line: say!(lang, "pause-not") },
        Some(Pause::Until(t)) => PauseView {
            paused: true,
            line: say!(lang, "pause-until", until = times::until(lang, t.as_millisecond(), now.as_millisecond(), tz)),
        },
    }
}

/// Where the sign-in is kept, in a sentence; the detail is the "Why?".
pub fn kept_in(lang: &Lang, store: &SecretStore) -> KeptIn {
    match store {
        SecretStore::Keyring => KeptIn { sentence: say!(lang, "kept-keyring"), why: None },
        SecretStore::File { path, why } => KeptIn {
            sentence: say!(lang, "kept-file"),
            why: Some(say!(lang, "kept-file-why", why = why.as_str(), path = path.display().to_string())),
        },
    }
}

/// A sign-in with an access token alone (`CMUX_TRAY_TOKEN`, a pasted token): nothing is kept.
pub fn kept_in_memory(lang: &Lang) -> KeptIn {
    KeptIn { sentence: say!(lang, "kept-memory"), why: None }
}

/// The settings window's content. `tz` is the zone quiet hours are read in; `system_zone` the
/// system's name for its own.
pub fn settings_view(
    lang: &Lang,
    s: &DeliverySettings,
    pause: Option<Pause>,
    now: Timestamp,
    tz: &TimeZone,
    system_zone: &str,
) -> SettingsView {
    // Each control's key, label and bounds are the declaration's (`setting_keys`).
    let label = |key: Key| key.setting().label.map(|id| lang.say(id, None)).unwrap_or_else(|| key.to_string());
    let switch = |key: Key| Switch {
        key,
        label: label(key),
        on: crate::policy::delivery_settings::get(s, key).and_then(|v| v.parse::<bool>().ok()).unwrap_or(false),
    };
    let number = |key: Key| {
        let (min, max) = match key.setting().kind {
            Kind::Seconds { min, max } => (min.unwrap_or(0), max),
            Kind::Count { min, max } | Kind::Days { min, max } => (min, max),
            other => unreachable!("{key} is declared {other:?}, not a number"),
        };
        Number { key, value: crate::policy::delivery_settings::get(s, key).unwrap_or_default(), label: label(key), min, max }
    };
    let source = |label, (banner, sound): (Key, Key)| SourceRow { label, banner: switch(banner), sound: switch(sound) };
    let (quiet_now, now_line) = quiet_line(lang, s, now, tz);
    SettingsView {
        master: vec![switch(Key::Banners), switch(Key::Sounds), switch(Key::Attention), switch(Key::RemoteTmux)],
        sources: vec![
            source(say!(lang, "source-runs"), (Key::RunsBanner, Key::RunsSound)),
            source(say!(lang, "source-handoffs"), (Key::HandoffsBanner, Key::HandoffsSound)),
            source(say!(lang, "source-terminals"), (Key::LocalBanner, Key::LocalSound)),
        ],
        sound_cooldown: number(Key::SoundCooldown),
        coalesce_count: number(Key::CoalesceCount),
        coalesce_window: number(Key::CoalesceWindow),
        history_days: number(Key::HistoryDays),
        quiet: QuietView {
            enabled: switch(Key::QuietEnabled),
            windows: s
                .quiet
                .schedule
                .windows
                .iter()
                .map(|w| QuietWindow { days: w.days(), from: w.start_text(), to: w.end_text() })
                .collect(),
            breaks_through: switch(Key::QuietBreaksThrough),
            time_zone_key: Key::QuietTimeZone,
            time_zone: s.quiet.time_zone.clone().unwrap_or_default(),
            system_zone: system_zone.to_string(),
            now: now_line,
            quiet_now,
        },
        pause: pause_line(lang, pause, now, tz),
        days: days(lang),
        update: None,
        banners_off: None,
    }
}

/// The zones a person may pick for quiet hours: the IANA names of places (and UTC), sorted.
pub fn time_zones() -> Vec<String> {
    const AREAS: [&str; 9] = ["Africa/", "America/", "Antarctica/", "Asia/", "Atlantic/", "Australia/", "Europe/", "Indian/", "Pacific/"];
    let mut zones: Vec<String> = jiff::tz::db()
        .available()
        .map(|n| n.as_str().to_string())
        .filter(|n| n == "UTC" || AREAS.iter().any(|a| n.starts_with(a)))
        .collect();
    zones.sort();
    zones.dedup();
    zones
}

/// The quiet-hours windows the editor drew, as `config set delivery.quiet_hours.windows` takes
/// them; a bad one is named by its place in the list.
pub fn windows_value(windows: &[QuietWindowDraft]) -> Result<String, String> {
    let mut texts = Vec::new();
    for (i, w) in windows.iter().enumerate() {
        let window = crate::policy::schedule::Window::from_parts(w.days, &w.from, &w.to).map_err(|e| format!("Window {}: {e}", i + 1))?;
        texts.push(window.to_string());
    }
    Ok(texts.join("; "))
}

/// A window as the editor sends it (the channel declares it: the page sends it).
pub use cmux_tray_channel::call::QuietWindowDraft;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::schedule::Window;
    use crate::setting_keys::{Place, SETTINGS};

    fn berlin() -> TimeZone {
        TimeZone::get("Europe/Berlin").unwrap()
    }

    fn at(text: &str) -> Timestamp {
        let dt: jiff::civil::DateTime = text.parse().unwrap();
        berlin().to_ambiguous_zoned(dt).compatible().unwrap().timestamp()
    }

    fn quiet(windows: &[&str], breaks: bool) -> DeliverySettings {
        let mut s = DeliverySettings::default();
        s.quiet.enabled = true;
        s.quiet.needs_you_breaks_through = breaks;
        s.quiet.schedule.windows = windows.iter().map(|w| Window::parse(w).unwrap()).collect();
        s
    }

    #[test]
    fn the_live_line_says_whether_quiet_hours_are_on_now_and_until_when() {
        let (tz, en) = (berlin(), Lang::english());
        let s = quiet(&["mon-fri 22:00-07:00"], true);
        // Tuesday 2026-12-01.
        assert_eq!(
            quiet_line(&en, &s, at("2026-12-01T22:54"), &tz),
            (true, "Quiet now, until 07:00 tomorrow. “Needs you” still shows.".into())
        );
        assert_eq!(quiet_line(&en, &s, at("2026-12-01T12:00"), &tz), (false, "Not quiet now. Quiet hours start at 22:00.".into()));
        assert_eq!(
            quiet_line(&en, &quiet(&["sat,sun 23:00-09:00"], false), at("2026-12-01T12:00"), &tz),
            (false, "Not quiet now. Quiet hours start on Sat 5 Dec at 23:00.".into())
        );
        assert_eq!(
            quiet_line(&en, &quiet(&[], false), at("2026-12-01T12:00"), &tz).1,
            "Quiet hours are on, but no window is set: add one below."
        );
        assert_eq!(quiet_line(&en, &DeliverySettings::default(), at("2026-12-01T12:00"), &tz).1, "Quiet hours are off.");
    }

    #[test]
    fn the_view_holds_every_setting_with_its_words() {
        let (tz, en) = (berlin(), Lang::english());
        let s = quiet(&["mon-fri 22:00-07:00"], false);
        let v = settings_view(&en, &s, Some(Pause::UntilResumed), at("2026-12-01T12:00"), &tz, "Europe/Berlin");
        assert_eq!(v.sources.iter().map(|r| r.label.as_str()).collect::<Vec<_>>(), ["Cloud Runs", "Hand-offs", "Terminals"]);
        assert_eq!(v.sources[2].banner.key.as_str(), "delivery.local.banner");
        assert_eq!((v.sound_cooldown.value.as_str(), v.coalesce_count.value.as_str()), ("10", "4"));
        assert_eq!(
            v.quiet.windows,
            [QuietWindow { days: [true, true, true, true, true, false, false], from: "22:00".into(), to: "07:00".into() }]
        );
        assert_eq!(v.quiet.time_zone, "", "the system's");
        assert_eq!(v.pause, PauseView { paused: true, line: "Paused until you resume.".into() });
        let until = pause_line(&en, Some(Pause::Until(at("2026-12-02T08:00"))), at("2026-12-01T12:00"), &tz);
        assert_eq!(until.line, "Paused until 08:00 tomorrow.");
        assert!(!pause_line(&en, Some(Pause::Until(at("2026-12-01T08:00"))), at("2026-12-01T12:00"), &tz).paused, "over");
    }

    /// Every setting the declaration places in the window's notifications or quiet hours is in
    /// the view (the Advanced and General ones are the page's `connection` and `languages`).
    #[test]
    fn the_view_shows_every_delivery_setting_the_declaration_places_there_with_its_bounds() {
        let v = settings_view(&Lang::english(), &DeliverySettings::default(), None, at("2026-12-01T12:00"), &berlin(), "Europe/Berlin");
        let numbers = [&v.sound_cooldown, &v.coalesce_count, &v.coalesce_window, &v.history_days];
        let mut shown: Vec<Key> =
            v.master.iter().map(|s| s.key).chain(v.sources.iter().flat_map(|r| [r.banner.key, r.sound.key])).collect();
        shown.extend(numbers.iter().map(|n| n.key));
        shown.extend([v.quiet.enabled.key, v.quiet.breaks_through.key, v.quiet.time_zone_key, Key::QuietWindows]);
        for s in SETTINGS.iter().filter(|s| matches!(s.place, Place::Notifications | Place::QuietHours)) {
            assert!(shown.contains(&s.key), "{} is not in the settings window", s.key);
        }
        let remote = v.master.iter().find(|s| s.key == Key::RemoteTmux).expect("delivery.remote_tmux is a switch");
        assert!(remote.label.starts_with("Over cmux-tray ssh") && !remote.on, "{remote:?}");
        // Bounds as docs/configuration.md's table says them.
        assert_eq!((v.sound_cooldown.min, v.sound_cooldown.max), (0, 86_400));
        assert_eq!((v.coalesce_count.min, v.coalesce_count.max), (1, 1000));
        assert_eq!((v.history_days.min, v.history_days.max), (1, 3650));
        let german = settings_view(
            &Lang::in_language(crate::lang::Language::German),
            &DeliverySettings::default(),
            None,
            at("2026-12-01T12:00"),
            &berlin(),
            "Europe/Berlin",
        );
        assert!(german.master.iter().any(|s| s.key == Key::RemoteTmux && s.label.starts_with("Über cmux-tray ssh")));
    }

    #[test]
    fn drawn_windows_become_the_value_config_set_takes_and_a_bad_one_is_named() {
        let draft = |days: [bool; 7], from: &str, to: &str| QuietWindowDraft { days, from: from.into(), to: to.into() };
        let value =
            windows_value(&[draft([true; 7], "22:00", "07:00"), draft([false, false, false, false, false, true, true], "13:00", "15:00")]);
        assert_eq!(value.as_deref(), Ok("daily 22:00-07:00; sat,sun 13:00-15:00"));
        assert!(crate::policy::delivery_settings::value_for(Key::QuietWindows, &value.unwrap()).is_ok());
        assert_eq!(
            windows_value(&[draft([true; 7], "22:00", "07:00"), draft([false; 7], "13:00", "15:00")]),
            Err("Window 2: pick at least one day".into())
        );
        assert_eq!(windows_value(&[]), Ok(String::new()));
    }

    #[test]
    fn the_zone_list_has_places_and_utc() {
        let zones = time_zones();
        assert!(zones.iter().any(|z| z == "Europe/Berlin") && zones.iter().any(|z| z == "UTC"), "{}", zones.len());
        assert!(!zones.iter().any(|z| z.starts_with("Etc/") || z.starts_with("posix/")));
    }

    #[test]
    fn the_sign_in_is_kept_in_one_plain_sentence_with_a_why() {
        assert_eq!(kept_in(&Lang::english(), &SecretStore::Keyring).why, None);
        let file = kept_in(
            &Lang::english(),
            &SecretStore::File { path: "/home/ada/.local/share/cmux-tray/sign-in".into(), why: "no Secret Service on the bus".into() },
        );
        assert!(file.sentence.contains("private file"));
        assert!(file.why.unwrap().contains("no Secret Service on the bus"));
    }
}
