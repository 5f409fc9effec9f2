//! Wall-clock time, through one seam.
//!
//! Durations (holds, pacing, backoff) use tokio's clock everywhere. Ages that must survive a
//! relaunch (a Run's 6 hours, a hand-off's 3 days, a card's 7 days) are wall-clock milliseconds,
//! read here: the system clock in the app, or a clock that moves with tokio's (paused) clock in
//! tests, so a test can let six virtual hours pass in no time.

#[derive(Clone, Debug)]
pub enum Clock {
    System,
    /// `base_ms` at `start`, moving with tokio's clock.
    Tokio {
        base_ms: i64,
        start: tokio::time::Instant,
    },
}

impl Clock {
    /// A clock that starts at `base_ms` and moves with tokio's clock. Call inside a runtime.
    pub fn following_tokio(base_ms: i64) -> Clock {
        Clock::Tokio { base_ms, start: tokio::time::Instant::now() }
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        match self {
            Clock::System => jiff::Timestamp::now().as_millisecond(),
            Clock::Tokio { base_ms, start } => base_ms + start.elapsed().as_millis() as i64,
        }
    }
}

pub const HOUR_MS: i64 = 3600 * 1000;
pub const DAY_MS: i64 = 24 * HOUR_MS;
