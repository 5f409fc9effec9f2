//! Quiet-hours windows (docs/notices.md §3): whatever the text, a window is read or refused with
//! the reason; a window read answers for any moment, in any zone, across DST, without a panic.

use cmux_tray_engine::policy::schedule::{Schedule, Window};

/// One input: returns, or panics on what the contract above forbids.
pub fn check(data: &[u8]) {
    if data.len() < 8 {
        return;
    }
    let (at, text) = data.split_at(8);
    let at =
        jiff::Timestamp::from_second(i64::from_le_bytes(at.try_into().unwrap()) % 4_000_000_000).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let text = String::from_utf8_lossy(text);
    if let Ok(window) = Window::parse(&text) {
        let again = Window::from_parts(window.days(), &window.start_text(), &window.end_text()).expect("a window's own parts read back");
        let (one, read_back) = (Schedule { windows: vec![window] }, Schedule { windows: vec![again] });
        for tz in ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC"] {
            let tz = jiff::tz::TimeZone::get(tz).unwrap_or(jiff::tz::TimeZone::UTC);
            let quiet = one.is_quiet(at, &tz);
            assert_eq!(quiet, read_back.is_quiet(at, &tz));
            if let Some((start, end)) = one.quiet_period(at, &tz) {
                assert!(start <= at && at < end, "{text:?} at {at}: a period that holds the moment");
            }
            if let Some((start, _)) = one.next_period(at, &tz) {
                assert!(start > at, "{text:?} at {at}: the next period starts after the moment");
            }
        }
    }
}
