//! The delivery policy: whether a notice shows a banner, and how (docs/notices.md §3).
//!
//! Pure decisions over the settings, the moment (time, zone, pause) and what the person is
//! looking at; the deliverer (`crate::deliver`) applies them. Applied in this order: source and
//! master switches, pause, quiet hours (optionally broken through by `needs-you`), focus, then
//! coalescing of bursts, sound with a cooldown, and attention. A notice that shows no banner is
//! still recorded, with why.

pub mod delivery_settings;
pub mod schedule;

use crate::lang::Lang;
use crate::lang::say;
use jiff::Timestamp;
use jiff::tz::TimeZone;

pub use delivery_settings::{DeliverySettings, SettingError};

use crate::notice::Source;

crate::words::text_enum! {
    /// Why a notice did or did not show a banner (kept in the history as a notice's `delivery`).
    pub enum Reason {
        Shown = "shown",
        /// The master switch or the source's banner switch is off.
        Off = "banners off",
        Paused = "paused",
        QuietHours = "quiet hours",
        Focused = "focused",
        Coalesced = "coalesced",
        /// The server refused its banner, try after try: set aside with why (`failure`).
        NotShown = "not shown",
    }
}

impl Reason {
    /// Held back for the summary when the person is reachable again.
    pub fn is_held(self) -> bool {
        matches!(self, Reason::Paused | Reason::QuietHours)
    }
}

/// When a pause ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pause {
    Until(Timestamp),
    UntilResumed,
}

/// The moment a decision is made in.
pub struct Moment<'a> {
    pub now: Timestamp,
    pub tz: &'a TimeZone,
    pub pause: Option<Pause>,
}

impl Moment<'_> {
    pub fn paused(&self) -> bool {
        match self.pause {
            Some(Pause::UntilResumed) => true,
            Some(Pause::Until(t)) => self.now < t,
            None => false,
        }
    }
}

/// What is known of one notice when deciding.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub source: Source,
    pub urgent: bool,
    pub focused: bool,
}

/// Steps 1–4: may this notice show a banner at all? `None` when it may, else why not.
pub fn gate(s: &DeliverySettings, c: &Candidate, m: &Moment) -> Option<Reason> {
    if c.source == Source::App {
        return None; // the app's own banners (sign in again, summaries) are never held
    }
    if !s.banners || !s.source(c.source).banner {
        return Some(Reason::Off);
    }
    if m.paused() {
        return Some(Reason::Paused);
    }
    if quiet_now(s, m) && !(c.urgent && s.quiet.needs_you_breaks_through) {
        return Some(Reason::QuietHours);
    }
    if c.focused {
        return Some(Reason::Focused);
    }
    None
}

pub fn quiet_now(s: &DeliverySettings, m: &Moment) -> bool {
    s.quiet.enabled && s.quiet.schedule.is_quiet(m.now, m.tz)
}

/// "Pause until tomorrow" ends at this hour, local time.
pub const MORNING_HOUR: i8 = 8;

/// Tomorrow at [`MORNING_HOUR`] in `now`'s zone (the tray's and the CLI's "until tomorrow").
pub fn tomorrow_morning(now: &jiff::Zoned) -> Option<Timestamp> {
    let morning = now.date().tomorrow().ok()?.at(MORNING_HOUR, 0, 0, 0);
    morning.to_zoned(now.time_zone().clone()).ok().map(|z| z.timestamp())
}

/// The pauses the tray menu and the settings window offer (the channel declares them: the
/// page sends one).
pub use cmux_tray_channel::call::PauseFor;

/// When a pause of `how` ends, from `now`: `None` until resumed; "tomorrow" is
/// [`MORNING_HOUR`] tomorrow.
pub fn pause_until(how: PauseFor, now: &jiff::Zoned) -> Result<Option<Timestamp>, String> {
    match how {
        PauseFor::Hour => Ok(Some(now.timestamp() + jiff::SignedDuration::from_hours(1))),
        PauseFor::Tomorrow => tomorrow_morning(now).map(Some).ok_or_else(|| "no tomorrow morning in this time zone".into()),
        PauseFor::UntilResumed => Ok(None),
    }
}

/// Whether notices are being held (paused or quiet) right now, and until when if known.
pub fn held_until(s: &DeliverySettings, m: &Moment) -> Option<Option<Timestamp>> {
    let pause_end = match m.pause {
        Some(Pause::UntilResumed) => return Some(None),
        Some(Pause::Until(t)) if m.now < t => Some(t),
        _ => None,
    };
    let quiet_end = s.quiet.enabled.then(|| s.quiet.schedule.quiet_period(m.now, m.tz).map(|(_, e)| e)).flatten();
    match (pause_end, quiet_end) {
        (None, None) => None,
        (a, b) => Some(a.max(b)),
    }
}

/// Step 6: a batch of `batch` banners from one source, with `recent` already shown or coalesced
/// within the window, becomes one banner when together they are more than the limit.
pub fn coalesces(s: &DeliverySettings, batch: usize, recent: usize) -> bool {
    batch > 0 && batch + recent > s.coalesce_count
}

/// Step 5: at most one sound per source per cooldown.
pub fn sounds(s: &DeliverySettings, source: Source, last_sound: Option<Timestamp>, now: Timestamp) -> bool {
    s.sounds && s.source(source).sound && last_sound.is_none_or(|t| now.duration_since(t).as_secs_f64() >= s.sound_cooldown.as_secs_f64())
}

/// The words of a coalesced banner: "5 Runs ended".
pub fn coalesced_title(lang: &Lang, source: Source, n: usize) -> String {
    match source {
        Source::Run => say!(lang, "coalesced-runs", n = n),
        Source::Handoff => say!(lang, "coalesced-handoffs", n = n),
        Source::Local | Source::App => say!(lang, "coalesced-terminals", n = n),
    }
}

/// The words of the summary after quiet hours or a pause.
pub fn summary_title(lang: &Lang, n: usize, reason: Reason) -> String {
    match reason {
        Reason::Paused => say!(lang, "summary-paused", n = n),
        _ => say!(lang, "summary-away", n = n),
    }
}

/// A body listing the first titles: "A, B, C and 2 more".
pub fn list_body(lang: &Lang, titles: &[String]) -> String {
    let shown: Vec<&str> = titles.iter().take(3).map(String::as_str).collect();
    let body = match titles.len().saturating_sub(3) {
        0 => shown.join(", "),
        more => say!(lang, "list-more", list = shown.join(", "), n = more),
    };
    crate::text::cut(&body, crate::text::MAX_BODY_CHARS)
}

#[cfg(test)]
mod tests;
