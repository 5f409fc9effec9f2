//! The policy's decisions, table-driven over a fake clock and zone.

use crate::lang::Lang;
use std::time::Duration;

use jiff::civil::DateTime;
use jiff::tz::TimeZone;

use super::schedule::{Schedule, Window};
use super::*;

fn berlin() -> TimeZone {
    TimeZone::get("Europe/Berlin").unwrap()
}

fn at(text: &str) -> Timestamp {
    let dt: DateTime = text.parse().unwrap();
    berlin().to_ambiguous_zoned(dt).earlier().unwrap().timestamp()
}

fn quiet(windows: &[&str]) -> DeliverySettings {
    let mut s = DeliverySettings::default();
    s.quiet.enabled = true;
    s.quiet.schedule = Schedule { windows: windows.iter().map(|w| Window::parse(w).unwrap()).collect() };
    s
}

const RUN: Candidate = Candidate { source: Source::Run, urgent: false, focused: false };
const NEEDS_YOU: Candidate = Candidate { source: Source::Handoff, urgent: true, focused: false };

#[test]
fn the_order_of_the_rules() {
    let tz = berlin();
    let mut s = quiet(&["daily 22:00-07:00"]);
    let day = Moment { now: at("2026-11-30T12:00"), tz: &tz, pause: None };
    let night = Moment { now: at("2026-11-30T23:00"), tz: &tz, pause: None };
    let paused = Moment { now: at("2026-11-30T12:00"), tz: &tz, pause: Some(Pause::UntilResumed) };
    let focused = Candidate { focused: true, ..RUN };
    let table: Vec<(&str, &DeliverySettings, Candidate, &Moment, Option<Reason>)> = vec![
        ("by day", &s, RUN, &day, None),
        ("at night", &s, RUN, &night, Some(Reason::QuietHours)),
        ("paused", &s, RUN, &paused, Some(Reason::Paused)),
        ("focused", &s, focused, &day, Some(Reason::Focused)),
        ("focused at night: quiet comes first", &s, focused, &night, Some(Reason::QuietHours)),
        ("needs-you at night, no break-through", &s, NEEDS_YOU, &night, Some(Reason::QuietHours)),
    ];
    for (what, settings, c, m, expected) in table {
        assert_eq!(gate(settings, &c, m), expected, "{what}");
    }
    s.quiet.needs_you_breaks_through = true;
    assert_eq!(gate(&s, &NEEDS_YOU, &night), None, "needs-you breaks through");
    assert_eq!(gate(&s, &RUN, &night), Some(Reason::QuietHours));
    s.runs.banner = false;
    assert_eq!(gate(&s, &RUN, &day), Some(Reason::Off));
    assert_eq!(gate(&s, &NEEDS_YOU, &day), None, "another source is unaffected");
    s.banners = false;
    assert_eq!(gate(&s, &NEEDS_YOU, &day), Some(Reason::Off), "the master switch");
    let app = Candidate { source: Source::App, urgent: false, focused: false };
    assert_eq!(gate(&s, &app, &night), None, "the app's own banners are never held");
}

#[test]
fn a_pause_ending_during_quiet_hours_hands_over_to_them() {
    let tz = berlin();
    let s = quiet(&["daily 22:00-07:00"]);
    let pause = Some(Pause::Until(at("2026-11-30T23:00")));
    let m = |t: &str| Moment { now: at(t), tz: &tz, pause };
    assert_eq!(gate(&s, &RUN, &m("2026-11-30T21:00")), Some(Reason::Paused));
    assert_eq!(gate(&s, &RUN, &m("2026-11-30T22:30")), Some(Reason::Paused));
    assert_eq!(gate(&s, &RUN, &m("2026-11-30T23:30")), Some(Reason::QuietHours));
    assert_eq!(gate(&s, &RUN, &m("2026-12-01T07:00")), None);
    // Held throughout, and the hold ends with the quiet hours (one summary, at 07:00).
    assert_eq!(held_until(&s, &m("2026-11-30T22:30")), Some(Some(at("2026-12-01T07:00"))));
    assert_eq!(held_until(&s, &m("2026-11-30T21:00")), Some(Some(at("2026-11-30T23:00"))));
    assert_eq!(held_until(&s, &m("2026-12-01T07:00")), None);
    let forever = Moment { now: at("2026-11-30T12:00"), tz: &tz, pause: Some(Pause::UntilResumed) };
    assert_eq!(held_until(&s, &forever), Some(None));
}

#[test]
fn bursts_coalesce_past_the_limit() {
    let s = DeliverySettings::default(); // more than 4 in 10 s
    let table = [(1, 0, false), (4, 0, false), (5, 0, true), (10, 0, true), (1, 3, false), (1, 4, true), (0, 9, false)];
    for (batch, recent, expected) in table {
        assert_eq!(coalesces(&s, batch, recent), expected, "batch {batch}, recent {recent}");
    }
}

#[test]
fn one_sound_per_source_per_cooldown() {
    let s = DeliverySettings::default();
    let t0 = at("2026-11-30T12:00");
    assert!(sounds(&s, Source::Run, None, t0));
    assert!(!sounds(&s, Source::Run, Some(t0), t0 + Duration::from_secs(9)));
    assert!(sounds(&s, Source::Run, Some(t0), t0 + Duration::from_secs(10)));
    let mut quiet_runs = s.clone();
    quiet_runs.runs.sound = false;
    assert!(!sounds(&quiet_runs, Source::Run, None, t0));
    assert!(sounds(&quiet_runs, Source::Local, None, t0));
}

#[test]
fn the_words_of_summaries_and_bursts() {
    assert_eq!(coalesced_title(&Lang::english(), Source::Run, 5), "5 Runs ended");
    assert_eq!(summary_title(&Lang::english(), 3, Reason::QuietHours), "3 notices while you were away");
    assert_eq!(summary_title(&Lang::english(), 1, Reason::Paused), "1 notice while notifications were paused");
    let titles: Vec<String> = ["A", "B", "C", "D", "E"].iter().map(|s| s.to_string()).collect();
    assert_eq!(list_body(&Lang::english(), &titles), "A, B, C and 2 more");
    assert_eq!(list_body(&Lang::english(), &titles[..2]), "A, B");
}

#[test]
fn until_tomorrow_means_eight_in_the_morning_local_time() {
    let now: jiff::Zoned = "2026-11-30T23:30[Europe/Berlin]".parse().unwrap();
    assert_eq!(tomorrow_morning(&now), Some(at("2026-12-01T08:00")));
    // Across a change of clocks the morning is still 08:00 local.
    let before_dst: jiff::Zoned = "2026-03-28T12:00[Europe/Berlin]".parse().unwrap();
    assert_eq!(tomorrow_morning(&before_dst), Some(at("2026-03-29T08:00")));
}

#[test]
fn each_offered_pause_ends_when_its_words_say() {
    let now: jiff::Zoned = "2026-11-30T22:54[Europe/Berlin]".parse().unwrap();
    assert_eq!(pause_until(PauseFor::Hour, &now), Ok(Some(at("2026-11-30T23:54"))));
    assert_eq!(pause_until(PauseFor::Tomorrow, &now), Ok(Some(at("2026-12-01T08:00"))));
    assert_eq!(pause_until(PauseFor::UntilResumed, &now), Ok(None));
}
