//! Quiet hours: a weekly schedule of windows in local time, e.g. `mon-fri 22:00-07:00`.
//!
//! A window belongs to the day it starts on; one that ends at or before its start crosses
//! midnight into the next day. Local times are resolved in the time zone given at each call
//! (so a change of zone applies at once), with RFC 5545's rule for the daylight-saving
//! transitions: a time inside a spring-forward gap is pushed forward by the gap's length (02:30
//! becomes 03:30), and a time inside a fall-back overlap is its first occurrence. A day has one
//! window per entry, so an overlap never makes a second quiet period (nor a second summary).

use std::fmt;

use jiff::Timestamp;
use jiff::civil::{Date, DateTime, Time, Weekday};
use jiff::tz::TimeZone;

/// One window: the weekdays it starts on, and its local start and end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    days: [bool; 7], // Monday first
    start: Time,
    end: Time,
    text: String,
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

const DAY_NAMES: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

fn day_index(name: &str) -> Option<usize> {
    let n = name.trim().to_ascii_lowercase();
    DAY_NAMES.iter().position(|d| n.starts_with(d) && n.len() <= 9)
}

fn weekday_index(w: Weekday) -> usize {
    w.to_monday_zero_offset() as usize
}

fn parse_time(text: &str) -> Result<Time, String> {
    let (h, m) = text.trim().split_once(':').ok_or_else(|| format!("{text:?} is not HH:MM"))?;
    let (h, m): (i8, i8) =
        (h.parse().map_err(|_| format!("{text:?} is not HH:MM"))?, m.parse().map_err(|_| format!("{text:?} is not HH:MM"))?);
    if !(0..=23).contains(&h) || !(0..=59).contains(&m) || text.trim().len() != 5 {
        return Err(format!("{text:?} is not a time of day (00:00 to 23:59)"));
    }
    Ok(Time::constant(0, 0, 0, 0).with().hour(h).minute(m).build().expect("checked above"))
}

impl Window {
    /// Parses `DAYS HH:MM-HH:MM`. DAYS: `daily`, a day (`mon`), a range (`mon-fri`), or a
    /// comma list of those (`sat,sun`). `-` and `–` both separate the times.
    pub fn parse(text: &str) -> Result<Window, String> {
        let shape = || format!("{text:?}: expected DAYS HH:MM-HH:MM, e.g. \"mon-fri 22:00-07:00\"");
        let (days_text, times) = text.trim().split_once(char::is_whitespace).ok_or_else(shape)?;
        let times = times.trim().replace('–', "-");
        let (start, end) = times.split_once('-').ok_or_else(shape)?;
        let (start, end) =
            (parse_time(start).map_err(|e| format!("{text:?}: {e}"))?, parse_time(end).map_err(|e| format!("{text:?}: {e}"))?);
        if start == end {
            return Err(format!("{text:?}: a window must not start and end at the same time"));
        }
        let mut days = [false; 7];
        for part in days_text.split(',') {
            let part = part.trim().to_ascii_lowercase();
            if part == "daily" || part == "*" || part == "every" {
                days = [true; 7];
                continue;
            }
            let bad = || format!("{text:?}: {part:?} is not a day (mon … sun), a range (mon-fri) or daily");
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (day_index(a).ok_or_else(bad)?, day_index(b).ok_or_else(bad)?);
                    let mut i = a;
                    loop {
                        days[i] = true;
                        if i == b {
                            break;
                        }
                        i = (i + 1) % 7;
                    }
                }
                None => days[day_index(&part).ok_or_else(bad)?] = true,
            }
        }
        Ok(Window { days, start, end, text: text.trim().to_string() })
    }

    /// A window from its parts, as the settings window's editor draws it: the weekdays it starts
    /// on (Monday first) and its local start and end as `HH:MM`. Written the way a person would
    /// type it (`mon-fri 22:00-07:00`, `daily …`, `sat,sun …`), so `config get` reads back plainly.
    pub fn from_parts(days: [bool; 7], start: &str, end: &str) -> Result<Window, String> {
        let mut parts: Vec<String> = Vec::new();
        let mut i = 0;
        while i < 7 {
            if !days[i] {
                i += 1;
                continue;
            }
            let first = i;
            while i + 1 < 7 && days[i + 1] {
                i += 1;
            }
            parts.push(match i - first {
                0 => DAY_NAMES[first].to_string(),
                1 => format!("{},{}", DAY_NAMES[first], DAY_NAMES[i]),
                _ => format!("{}-{}", DAY_NAMES[first], DAY_NAMES[i]),
            });
            i += 1;
        }
        let days_text = match parts.len() {
            0 => return Err("pick at least one day".into()),
            _ if days == [true; 7] => "daily".to_string(),
            _ => parts.join(","),
        };
        Window::parse(&format!("{days_text} {}-{}", start.trim(), end.trim()))
    }

    /// The weekdays it starts on, Monday first.
    pub fn days(&self) -> [bool; 7] {
        self.days
    }

    /// Its local start and end, `HH:MM`.
    pub fn start_text(&self) -> String {
        self.start.strftime("%H:%M").to_string()
    }

    pub fn end_text(&self) -> String {
        self.end.strftime("%H:%M").to_string()
    }

    /// The quiet period this window makes when it starts on `date`, in `tz`.
    fn period_on(&self, date: Date, tz: &TimeZone) -> Option<(Timestamp, Timestamp)> {
        if !self.days[weekday_index(date.weekday())] {
            return None;
        }
        let end_date = if self.end > self.start { date } else { date.tomorrow().ok()? };
        let resolve = |d: Date, t: Time| tz.to_ambiguous_zoned(DateTime::from_parts(d, t)).compatible().ok().map(|z| z.timestamp());
        Some((resolve(date, self.start)?, resolve(end_date, self.end)?))
    }
}

/// The weekly schedule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    pub windows: Vec<Window>,
}

impl Schedule {
    /// The quiet period `at` falls in, as (start, end), if any. Touching or overlapping windows
    /// make one period.
    pub fn quiet_period(&self, at: Timestamp, tz: &TimeZone) -> Option<(Timestamp, Timestamp)> {
        let today = at.to_zoned(tz.clone()).date();
        let mut periods: Vec<(Timestamp, Timestamp)> = Vec::new();
        let mut day = today.yesterday().ok()?.yesterday().ok()?;
        for _ in 0..5 {
            for w in &self.windows {
                periods.extend(w.period_on(day, tz));
            }
            day = day.tomorrow().ok()?;
        }
        periods.sort();
        // Merge, then find the one containing `at`.
        let mut merged: Vec<(Timestamp, Timestamp)> = Vec::new();
        for (s, e) in periods {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        merged.into_iter().find(|(s, e)| *s <= at && at < *e)
    }

    /// The next quiet period to start after `at`, within a week, as (start, end).
    pub fn next_period(&self, at: Timestamp, tz: &TimeZone) -> Option<(Timestamp, Timestamp)> {
        let mut day = at.to_zoned(tz.clone()).date();
        let mut best: Option<(Timestamp, Timestamp)> = None;
        for _ in 0..8 {
            for w in &self.windows {
                if let Some(p) = w.period_on(day, tz).filter(|(s, _)| *s > at) {
                    best = Some(best.map_or(p, |b| b.min(p)));
                }
            }
            day = day.tomorrow().ok()?;
        }
        best
    }

    pub fn is_quiet(&self, at: Timestamp, tz: &TimeZone) -> bool {
        self.quiet_period(at, tz).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tz(name: &str) -> TimeZone {
        TimeZone::get(name).unwrap()
    }

    /// An instant given as local wall time in `zone` (earlier occurrence in an overlap).
    fn local(zone: &str, text: &str) -> Timestamp {
        let dt: DateTime = text.parse().unwrap();
        tz(zone).to_ambiguous_zoned(dt).earlier().unwrap().timestamp()
    }

    fn schedule(windows: &[&str]) -> Schedule {
        Schedule { windows: windows.iter().map(|w| Window::parse(w).unwrap()).collect() }
    }

    #[test]
    fn windows_parse_and_bad_ones_say_why() {
        assert!(Window::parse("mon-fri 22:00-07:00").is_ok());
        assert!(Window::parse("sat,sun 23:30–09:15").is_ok());
        assert!(Window::parse("daily 12:00-13:00").is_ok());
        assert!(Window::parse("fri-mon 20:00-08:00").is_ok(), "a range may wrap the week");
        for (bad, says) in [
            ("mon-fri 25:00-07:00", "not a time of day"),
            ("mon-fri 22:00", "expected DAYS HH:MM-HH:MM"),
            ("someday 22:00-07:00", "not a day"),
            ("daily 22:00-22:00", "same time"),
            ("daily 7:00-9:00", "not a time of day"),
            ("22:00-07:00", "expected DAYS"),
        ] {
            let err = Window::parse(bad).unwrap_err();
            assert!(err.contains(says) && err.contains(bad), "{bad}: {err}");
        }
    }

    #[test]
    fn a_window_drawn_from_parts_reads_back_as_a_person_writes_it() {
        let weekdays = [true, true, true, true, true, false, false];
        let w = Window::from_parts(weekdays, "22:00", "07:00").unwrap();
        assert_eq!(
            (w.to_string().as_str(), w.days(), w.start_text(), w.end_text()),
            ("mon-fri 22:00-07:00", weekdays, "22:00".into(), "07:00".into())
        );
        let cases = [
            ([true; 7], "daily 12:00-13:00"),
            ([false, false, false, false, false, true, true], "sat,sun 12:00-13:00"),
            ([true, false, true, true, true, false, true], "mon,wed-fri,sun 12:00-13:00"),
        ];
        for (days, text) in cases {
            let w = Window::from_parts(days, "12:00", "13:00").unwrap();
            assert_eq!(w.to_string(), text);
            assert_eq!(Window::parse(text).unwrap().days(), days, "{text} reads back");
        }
        assert_eq!(Window::from_parts([false; 7], "22:00", "07:00").unwrap_err(), "pick at least one day");
        assert!(Window::from_parts([true; 7], "22:00", "22:00").unwrap_err().contains("same time"));
        assert!(Window::from_parts([true; 7], "24:00", "07:00").unwrap_err().contains("not a time of day"));
    }

    #[test]
    fn the_next_quiet_period_is_the_soonest_start_after_now() {
        let s = schedule(&["mon-fri 22:00-07:00", "sat,sun 23:00-09:00"]);
        let b = tz("Europe/Berlin");
        // Friday 2026-12-04 at noon: Friday's 22:00; Saturday noon: Saturday's 23:00.
        assert_eq!(s.next_period(local("Europe/Berlin", "2026-12-04T12:00"), &b).unwrap().0, local("Europe/Berlin", "2026-12-04T22:00"));
        assert_eq!(s.next_period(local("Europe/Berlin", "2026-12-05T12:00"), &b).unwrap().0, local("Europe/Berlin", "2026-12-05T23:00"));
        assert_eq!(schedule(&[]).next_period(local("Europe/Berlin", "2026-12-05T12:00"), &b), None);
    }

    #[test]
    fn a_window_crosses_midnight() {
        let s = schedule(&["daily 22:00-07:00"]);
        let b = tz("Europe/Berlin");
        let table = [
            ("2026-11-30T21:59", false),
            ("2026-11-30T22:00", true),
            ("2026-11-30T23:59", true),
            ("2026-12-01T00:00", true),
            ("2026-12-01T06:59", true),
            ("2026-12-01T07:00", false),
            ("2026-12-01T12:00", false),
        ];
        for (at, quiet) in table {
            assert_eq!(s.is_quiet(local("Europe/Berlin", at), &b), quiet, "{at}");
        }
        let (start, end) = s.quiet_period(local("Europe/Berlin", "2026-12-01T03:00"), &b).unwrap();
        assert_eq!((start, end), (local("Europe/Berlin", "2026-11-30T22:00"), local("Europe/Berlin", "2026-12-01T07:00")));
    }

    #[test]
    fn the_weekday_boundary_belongs_to_the_day_a_window_starts() {
        let s = schedule(&["mon-fri 22:00-07:00"]);
        let b = tz("Europe/Berlin");
        // 2026-12-04 is a Friday.
        let table = [
            ("2026-12-04T23:00", true), // Friday night
            ("2026-12-05T06:59", true), // … into Saturday morning
            ("2026-12-05T07:00", false),
            ("2026-12-05T23:00", false), // Saturday night: no window
            ("2026-12-06T23:00", false), // Sunday night: no window
            ("2026-12-07T06:00", false), // Monday morning: Sunday had none
            ("2026-12-07T22:30", true),  // Monday night
        ];
        for (at, quiet) in table {
            assert_eq!(s.is_quiet(local("Europe/Berlin", at), &b), quiet, "{at}");
        }
    }

    #[test]
    fn a_window_starting_inside_the_spring_forward_gap() {
        // Europe/Berlin, 2026-03-29: 02:00 jumps to 03:00. A window 02:30-06:00 that day starts
        // at 03:30 (RFC 5545: pushed forward by the gap); other days at 02:30.
        let s = schedule(&["daily 02:30-06:00"]);
        let b = tz("Europe/Berlin");
        let start = local("Europe/Berlin", "2026-03-29T03:30");
        assert!(!s.is_quiet(local("Europe/Berlin", "2026-03-29T03:29"), &b));
        assert_eq!(s.quiet_period(start, &b).unwrap().0, start);
        assert!(s.is_quiet(local("Europe/Berlin", "2026-03-29T05:59"), &b));
        assert!(!s.is_quiet(local("Europe/Berlin", "2026-03-29T06:00"), &b));
        assert!(s.is_quiet(local("Europe/Berlin", "2026-03-30T02:30"), &b));
        // Three hours of quiet that night, not three and a half.
        let (a, z) = s.quiet_period(start, &b).unwrap();
        assert_eq!(z.duration_since(a).as_secs(), 2 * 3600 + 30 * 60);
    }

    #[test]
    fn the_fall_back_overlap_makes_one_quiet_period() {
        // Europe/Berlin, 2026-10-25: 03:00 falls back to 02:00; 02:00-03:00 happens twice.
        let s = schedule(&["daily 02:15-02:45"]);
        let b = tz("Europe/Berlin");
        let mut transitions = 0;
        let mut was = false;
        let mut t = local("Europe/Berlin", "2026-10-25T00:00");
        let stop = local("Europe/Berlin", "2026-10-25T06:00");
        while t < stop {
            let now = s.is_quiet(t, &b);
            if was && !now {
                transitions += 1;
            }
            was = now;
            t = t.checked_add(jiff::SignedDuration::from_mins(1)).unwrap();
        }
        assert_eq!(transitions, 1, "one quiet period ends, so one summary");
    }

    #[test]
    fn a_change_of_time_zone_applies_at_once() {
        let s = schedule(&["daily 22:00-07:00"]);
        let instant = local("Europe/Berlin", "2026-11-30T21:30"); // 20:30 UTC
        assert!(!s.is_quiet(instant, &tz("Europe/Berlin")));
        // The laptop lands in Tokyo: the same instant is 05:30 there, inside last night's window.
        assert!(s.is_quiet(instant, &tz("Asia/Tokyo")));
        assert!(!s.is_quiet(instant, &tz("America/New_York")), "15:30 in New York");
    }

    #[test]
    fn touching_windows_make_one_period() {
        let s = schedule(&["daily 22:00-00:00", "daily 00:00-07:00"]);
        let b = tz("Europe/Berlin");
        let (start, end) = s.quiet_period(local("Europe/Berlin", "2026-11-30T23:00"), &b).unwrap();
        assert_eq!((start, end), (local("Europe/Berlin", "2026-11-30T22:00"), local("Europe/Berlin", "2026-12-01T07:00")));
    }
}
