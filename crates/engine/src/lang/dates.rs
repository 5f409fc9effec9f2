//! Dates and times in a locale's own way, from ICU4X's CLDR data: "3:30 PM" or "15:30",
//! "Sat, Dec 5" or "Sa., 5. Dez.". Formatters are made per call: cheap with compiled data, and
//! the `Lang` stays plain data that threads share.

use icu_datetime::fieldsets;
use icu_datetime::input::{Date, DateTime, Time};
use icu_datetime::{DateTimeFormatter, NoCalendarFormatter};
use icu_locale_core::Locale;
use jiff::Zoned;

/// The locale dates are said in.
#[derive(Clone, Debug, PartialEq)]
pub struct Dates {
    locale: Locale,
}

/// How much of a moment is said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// "15:30", "3:30 PM".
    Time,
    /// "Sat 5 Dec", "Sat, Dec 5", "Sa., 5. Dez.".
    ShortDay,
    /// "Saturday 5 December", "Samstag, 5. Dezember".
    LongDay,
    /// "Saturday, 5 December 2026".
    LongDayWithYear,
    /// "5 Dec 2026", "Dec 5, 2026", "05.12.2026".
    Date,
    /// "Sat, 5 Dec 2026, 15:30", for a tooltip.
    Exact,
}

impl Dates {
    /// `None` (C, POSIX, unset): English with a 24-hour clock and the day first (en-GB).
    pub fn new(locale: Option<Locale>) -> Dates {
        Dates { locale: locale.unwrap_or_else(|| "en-GB".parse().expect("en-GB is a locale")) }
    }

    /// What the C locale gives.
    pub fn c_locale() -> Dates {
        Dates::new(None)
    }

    pub fn locale(&self) -> &Locale {
        &self.locale
    }

    /// A moment in this locale's way, as `shape` says.
    pub fn say(&self, at: &Zoned, shape: Shape) -> String {
        let prefs = (&self.locale).into();
        let date = Date::try_new_gregorian(at.year() as i32, at.month() as u8, at.day() as u8).ok();
        let time = Time::try_new(at.hour() as u8, at.minute() as u8, at.second() as u8, 0).ok();
        // One formatter type per field set (ICU4X keeps only the data each one needs).
        macro_rules! said {
            ($set:expr) => {
                date.zip(time).and_then(|(date, time)| {
                    DateTimeFormatter::try_new(prefs, $set).map(|f| f.format(&DateTime { date, time }).to_string()).ok()
                })
            };
        }
        let said = match shape {
            // A time alone falls back to a time alone.
            Shape::Time => time
                .and_then(|time| NoCalendarFormatter::try_new(prefs, fieldsets::T::hm()).map(|f| f.format(&time).to_string()).ok())
                .or_else(|| Some(at.strftime("%H:%M").to_string())),
            Shape::ShortDay => said!(fieldsets::MDE::medium()),
            Shape::LongDay => said!(fieldsets::MDE::long()),
            Shape::LongDayWithYear => said!(fieldsets::YMDE::long()),
            Shape::Date => said!(fieldsets::YMD::medium()),
            Shape::Exact => said!(fieldsets::YMDE::medium().with_time_hm()),
        };
        said.unwrap_or_else(|| at.strftime("%Y-%m-%d %H:%M").to_string())
    }

    /// A day's weekday, short and in full: ("Mon", "Monday"), ("Mo.", "Montag").
    pub fn weekday(&self, at: &Zoned) -> (String, String) {
        let prefs = (&self.locale).into();
        let date = Date::try_new_gregorian(at.year() as i32, at.month() as u8, at.day() as u8).ok();
        let said = |set| date.and_then(|date| DateTimeFormatter::try_new(prefs, set).map(|f| f.format(&date).to_string()).ok());
        match (said(fieldsets::E::medium()), said(fieldsets::E::long())) {
            (Some(short), Some(full)) => (short, full),
            _ => (at.strftime("%a").to_string(), at.strftime("%A").to_string()),
        }
    }
}
