//! Times and durations as a person says them: "2 min ago", "Yesterday", "until 07:00 tomorrow".
//! Every function takes the moment and the zone it is said in, so tests pin both.

use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};

use crate::lang::Lang;
use crate::lang::dates::Shape;
use crate::lang::say;

fn zoned(ms: i64, tz: &TimeZone) -> Zoned {
    Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH).to_zoned(tz.clone())
}

/// How long ago `at` was: "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", then the
/// date. A time in the future (a clock that moved) is "just now".
pub fn ago(lang: &Lang, at_ms: i64, now_ms: i64, tz: &TimeZone) -> String {
    let secs = (now_ms - at_ms).max(0) / 1000;
    let (then, now) = (zoned(at_ms, tz), zoned(now_ms, tz));
    let days = (now.date() - then.date()).get_days();
    match secs {
        0..45 => say!(lang, "ago-just-now"),
        45..3600 => say!(lang, "ago-minutes", n = ((secs + 30) / 60).max(1)),
        _ if days == 0 => say!(lang, "ago-hours", n = secs / 3600),
        _ if days == 1 => say!(lang, "ago-yesterday"),
        _ if days < 7 => say!(lang, "ago-days", n = days),
        _ => lang.dates().say(&then, Shape::Date),
    }
}

/// The exact time, for a tooltip: "Tue, 1 Dec 2026, 22:54".
pub fn exact(lang: &Lang, at_ms: i64, tz: &TimeZone) -> String {
    lang.dates().say(&zoned(at_ms, tz), Shape::Exact)
}

/// The heading of a day in the history: "Today", "Yesterday", "Monday 30 November" (with the
/// year when it is not this one).
pub fn day(lang: &Lang, at_ms: i64, now_ms: i64, tz: &TimeZone) -> String {
    let (then, now) = (zoned(at_ms, tz), zoned(now_ms, tz));
    match (now.date() - then.date()).get_days() {
        0 => say!(lang, "day-today"),
        1 => say!(lang, "day-yesterday"),
        _ if then.year() == now.year() => lang.dates().say(&then, Shape::LongDay),
        _ => lang.dates().say(&then, Shape::LongDayWithYear),
    }
}

/// A length of time: "45 s", "12 min", "2 h 5 min", "3 days".
pub fn span(lang: &Lang, ms: i64) -> String {
    let secs = ms.max(0) / 1000;
    match secs {
        0..60 => say!(lang, "span-seconds", n = secs),
        60..3600 => say!(lang, "span-minutes", n = secs / 60),
        3600..86_400 if secs % 3600 / 60 == 0 => say!(lang, "span-hours", n = secs / 3600),
        3600..86_400 => say!(lang, "span-hours-minutes", h = secs / 3600, m = secs % 3600 / 60),
        _ => say!(lang, "span-days", n = secs / 86_400),
    }
}

/// When something ends, from now: "until 07:00", "until 07:00 tomorrow", "until Sat 5 Dec, 08:00".
pub fn until(lang: &Lang, end_ms: i64, now_ms: i64, tz: &TimeZone) -> String {
    let (time, day) = by_day(lang, end_ms, now_ms, tz);
    match day {
        Day::Today => say!(lang, "until-today", time = time),
        Day::Tomorrow => say!(lang, "until-tomorrow", time = time),
        Day::Later(date) => say!(lang, "until-later", date = date, time = time),
    }
}

/// When something starts, from now: "at 22:00", "at 22:00 tomorrow", "on Sat 5 Dec at 23:00".
pub fn from(lang: &Lang, start_ms: i64, now_ms: i64, tz: &TimeZone) -> String {
    let (time, day) = by_day(lang, start_ms, now_ms, tz);
    match day {
        Day::Today => say!(lang, "from-today", time = time),
        Day::Tomorrow => say!(lang, "from-tomorrow", time = time),
        Day::Later(date) => say!(lang, "from-later", date = date, time = time),
    }
}

enum Day {
    Today,
    Tomorrow,
    /// "Sat 5 Dec".
    Later(String),
}

/// A moment's time of day, and its day as seen from now.
fn by_day(lang: &Lang, at_ms: i64, now_ms: i64, tz: &TimeZone) -> (String, Day) {
    let (at, now) = (zoned(at_ms, tz), zoned(now_ms, tz));
    let day = match (at.date() - now.date()).get_days() {
        0 => Day::Today,
        1 => Day::Tomorrow,
        _ => Day::Later(lang.dates().say(&at, Shape::ShortDay)),
    };
    (lang.dates().say(&at, Shape::Time), day)
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
        let (tz, en) = (berlin(), Lang::english());
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
            assert_eq!(ago(&en, ms(at), now, &tz), said, "{at}");
        }
        assert_eq!(exact(&en, ms("2026-12-01T22:54"), &tz), "Tue, 1 Dec 2026, 22:54");
    }

    #[test]
    fn days_spans_and_ends() {
        let now = ms("2026-12-01T22:54");
        let (tz, en) = (berlin(), Lang::english());
        assert_eq!(day(&en, ms("2026-12-01T00:01"), now, &tz), "Today");
        assert_eq!(day(&en, ms("2026-11-30T23:59"), now, &tz), "Yesterday");
        assert_eq!(day(&en, ms("2026-11-28T12:00"), now, &tz), "Saturday 28 November");
        assert_eq!(day(&en, ms("2025-11-28T12:00"), now, &tz), "Friday, 28 November 2025");
        assert_eq!(span(&en, 45_000), "45 s");
        assert_eq!(span(&en, 12 * 60_000 + 59_000), "12 min");
        assert_eq!(span(&en, 2 * 3_600_000 + 5 * 60_000), "2 h 5 min");
        assert_eq!(span(&en, 3_600_000), "1 h");
        assert_eq!(span(&en, 86_400_000 + 5), "1 day");
        assert_eq!(span(&en, 3 * 86_400_000), "3 days");
        assert_eq!(until(&en, ms("2026-12-01T23:30"), now, &tz), "until 23:30");
        assert_eq!(until(&en, ms("2026-12-02T07:00"), now, &tz), "until 07:00 tomorrow");
        assert_eq!(until(&en, ms("2026-12-05T08:00"), now, &tz), "until Sat 5 Dec, 08:00");
        assert_eq!(from(&en, ms("2026-12-01T23:00"), now, &tz), "at 23:00");
        assert_eq!(from(&en, ms("2026-12-02T22:00"), now, &tz), "at 22:00 tomorrow");
        assert_eq!(from(&en, ms("2026-12-05T23:00"), now, &tz), "on Sat 5 Dec at 23:00");
    }

    fn in_locale(language: crate::lang::Language, locale: &str) -> Lang {
        Lang::new(language, crate::lang::Dates::new(Some(locale.parse().unwrap())))
    }

    #[test]
    fn a_twelve_hour_locale_says_its_own_clock_and_day_order() {
        let now = ms("2026-12-01T22:54");
        let (tz, us) = (berlin(), in_locale(crate::lang::Language::English, "en-US"));
        // CLDR's en-US puts a narrow no-break space before AM and PM.
        assert_eq!(until(&us, ms("2026-12-02T07:00"), now, &tz), "until 7:00\u{202f}AM tomorrow");
        assert_eq!(from(&us, ms("2026-12-01T23:00"), now, &tz), "at 11:00\u{202f}PM");
        assert_eq!(until(&us, ms("2026-12-05T20:00"), now, &tz), "until Sat, Dec 5, 8:00\u{202f}PM");
        assert_eq!(exact(&us, ms("2026-12-01T22:54"), &tz), "Tue, Dec 1, 2026, 10:54\u{202f}PM");
        assert_eq!(day(&us, ms("2026-11-28T12:00"), now, &tz), "Saturday, November 28");
        assert_eq!(ago(&us, ms("2026-11-01T09:00"), now, &tz), "Nov 1, 2026");
    }

    #[test]
    fn german_says_german_words_and_dates() {
        let now = ms("2026-12-01T22:54");
        let (tz, de) = (berlin(), in_locale(crate::lang::Language::German, "de-DE"));
        assert_eq!(ago(&de, ms("2026-12-01T22:52"), now, &tz), "vor 2 Min.");
        assert_eq!(ago(&de, ms("2026-11-01T09:00"), now, &tz), "01.11.2026");
        assert_eq!(day(&de, ms("2026-11-28T12:00"), now, &tz), "Samstag, 28. November");
        assert_eq!(day(&de, ms("2026-12-01T00:01"), now, &tz), "Heute");
        assert_eq!(until(&de, ms("2026-12-02T07:00"), now, &tz), "bis morgen 07:00");
        assert_eq!(from(&de, ms("2026-12-05T23:00"), now, &tz), "am Sa., 5. Dez. um 23:00");
        assert_eq!(span(&de, 2 * 3_600_000 + 5 * 60_000), "2 Std. 5 Min.");
        assert_eq!(span(&de, 3 * 86_400_000), "3 Tage");
        assert_eq!(exact(&de, ms("2026-12-01T22:54"), &tz), "Di., 01.12.2026, 22:54");
    }
}
