//! Times and durations as a person says them: "2 min ago", "Yesterday", "until 07:00 tomorrow".
//! Every function takes the moment and the zone it is said in, so tests pin both.

use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};

fn zoned(ms: i64, tz: &TimeZone) -> Zoned {
    Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH).to_zoned(tz.clone())
}

/// How long ago `at` was: "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", then the
/// date. A time in the future (a clock that moved) is "just now".
pub fn ago(at_ms: i64, now_ms: i64, tz: &TimeZone) -> String {
    let secs = (now_ms - at_ms).max(0) / 1000;
    let (then, now) = (zoned(at_ms, tz), zoned(now_ms, tz));
    let days = (now.date() - then.date()).get_days();
    match secs {
        0..45 => "just now".into(),
        45..3600 => format!("{} min ago", ((secs + 30) / 60).max(1)),
        _ if days == 0 => format!("{} h ago", secs / 3600),
        _ if days == 1 => "yesterday".into(),
        _ if days < 7 => format!("{days} days ago"),
        _ => then.strftime("%-d %b %Y").to_string(),
    }
}

/// The exact time, for a tooltip: "Tue 1 Dec 2026, 22:54".
pub fn exact(at_ms: i64, tz: &TimeZone) -> String {
    zoned(at_ms, tz).strftime("%a %-d %b %Y, %H:%M").to_string()
}

/// The heading of a day in the history: "Today", "Yesterday", "Monday 30 November" (with the
/// year when it is not this one).
pub fn day(at_ms: i64, now_ms: i64, tz: &TimeZone) -> String {
    let (then, now) = (zoned(at_ms, tz), zoned(now_ms, tz));
    match (now.date() - then.date()).get_days() {
        0 => "Today".into(),
        1 => "Yesterday".into(),
        _ if then.year() == now.year() => then.strftime("%A %-d %B").to_string(),
        _ => then.strftime("%A %-d %B %Y").to_string(),
    }
}

/// A length of time: "45 s", "12 min", "2 h 5 min", "3 days".
pub fn span(ms: i64) -> String {
    let secs = ms.max(0) / 1000;
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86_400 if secs % 3600 / 60 == 0 => format!("{} h", secs / 3600),
        3600..86_400 => format!("{} h {} min", secs / 3600, secs % 3600 / 60),
        _ if secs / 86_400 == 1 => "1 day".into(),
        _ => format!("{} days", secs / 86_400),
    }
}

/// When something ends, from now: "until 07:00", "until 07:00 tomorrow", "until Sat 5 Dec, 08:00".
pub fn until(end_ms: i64, now_ms: i64, tz: &TimeZone) -> String {
    by_day(end_ms, now_ms, tz, |time, day| match day {
        Day::Today => format!("until {time}"),
        Day::Tomorrow => format!("until {time} tomorrow"),
        Day::Later(date) => format!("until {date}, {time}"),
    })
}

/// When something starts, from now: "at 22:00", "at 22:00 tomorrow", "on Sat 5 Dec at 23:00".
pub fn from(start_ms: i64, now_ms: i64, tz: &TimeZone) -> String {
    by_day(start_ms, now_ms, tz, |time, day| match day {
        Day::Today => format!("at {time}"),
        Day::Tomorrow => format!("at {time} tomorrow"),
        Day::Later(date) => format!("on {date} at {time}"),
    })
}

enum Day {
    Today,
    Tomorrow,
    /// "Sat 5 Dec".
    Later(String),
}

/// A moment's time of day, and its day as seen from now.
fn by_day(at_ms: i64, now_ms: i64, tz: &TimeZone, say: impl Fn(String, Day) -> String) -> String {
    let (at, now) = (zoned(at_ms, tz), zoned(now_ms, tz));
    let day = match (at.date() - now.date()).get_days() {
        0 => Day::Today,
        1 => Day::Tomorrow,
        _ => Day::Later(at.strftime("%a %-d %b").to_string()),
    };
    say(at.strftime("%H:%M").to_string(), day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> i64 {
        let dt: jiff::civil::DateTime = text.parse().unwrap();
        berlin().to_ambiguous_zoned(dt).compatible().unwrap().timestamp().as_millisecond()
    }

    fn berlin() -> TimeZone {
        TimeZone::get("Europe/Berlin").unwrap()
    }

    #[test]
    fn how_long_ago_reads_as_a_person_says_it() {
        let now = ms("2026-12-01T22:54");
        let tz = berlin();
        let cases = [
            ("2026-12-01T22:54", "just now"),
            ("2026-12-01T22:52", "2 min ago"),
            ("2026-12-01T22:53", "1 min ago"),
            ("2026-12-01T19:50", "3 h ago"),
            ("2026-12-01T00:10", "22 h ago"),
            ("2026-11-30T23:50", "yesterday"),
            ("2026-11-27T09:00", "4 days ago"),
            ("2026-11-01T09:00", "1 Nov 2026"),
            ("2026-12-02T09:00", "just now"),
        ];
        for (at, said) in cases {
            assert_eq!(ago(ms(at), now, &tz), said, "{at}");
        }
        assert_eq!(exact(ms("2026-12-01T22:54"), &tz), "Tue 1 Dec 2026, 22:54");
    }

    #[test]
    fn days_spans_and_ends() {
        let now = ms("2026-12-01T22:54");
        let tz = berlin();
        assert_eq!(day(ms("2026-12-01T00:01"), now, &tz), "Today");
        assert_eq!(day(ms("2026-11-30T23:59"), now, &tz), "Yesterday");
        assert_eq!(day(ms("2026-11-28T12:00"), now, &tz), "Saturday 28 November");
        assert_eq!(day(ms("2025-11-28T12:00"), now, &tz), "Friday 28 November 2025");
        assert_eq!(span(45_000), "45 s");
        assert_eq!(span(12 * 60_000 + 59_000), "12 min");
        assert_eq!(span(2 * 3_600_000 + 5 * 60_000), "2 h 5 min");
        assert_eq!(span(3_600_000), "1 h");
        assert_eq!(span(86_400_000 + 5), "1 day");
        assert_eq!(span(3 * 86_400_000), "3 days");
        assert_eq!(until(ms("2026-12-01T23:30"), now, &tz), "until 23:30");
        assert_eq!(until(ms("2026-12-02T07:00"), now, &tz), "until 07:00 tomorrow");
        assert_eq!(until(ms("2026-12-05T08:00"), now, &tz), "until Sat 5 Dec, 08:00");
        assert_eq!(from(ms("2026-12-01T23:00"), now, &tz), "at 23:00");
        assert_eq!(from(ms("2026-12-02T22:00"), now, &tz), "at 22:00 tomorrow");
        assert_eq!(from(ms("2026-12-05T23:00"), now, &tz), "on Sat 5 Dec at 23:00");
    }
}
