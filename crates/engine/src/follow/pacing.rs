//! How soon to ask again (docs/cloud-api.md, "Pacing"). Pure: the follow loop supplies the
//! elapsed time and the jitter.

use std::time::Duration;

#[derive(Clone, Copy, Debug)]
pub struct Pacing {
    /// An item answered at once is asked again no sooner than this.
    pub floor: Duration,
    /// The first failure's backoff; each further failure doubles it.
    pub first_backoff: Duration,
    /// No wait between two requests for one item is longer than this.
    pub max_backoff: Duration,
    /// Holds end on a multiple of this (of the clock), so that the answers of many follows
    /// come together and the daemon wakes once for them.
    pub beat: Duration,
}

impl Default for Pacing {
    fn default() -> Self {
        Pacing {
            floor: Duration::from_secs(2),
            first_backoff: Duration::from_secs(2),
            max_backoff: Duration::from_secs(60),
            beat: Duration::from_secs(1),
        }
    }
}

impl Pacing {
    /// After an answer that took `elapsed`: keep requests for one item at least `floor` apart.
    pub fn after_answer(&self, elapsed: Duration) -> Duration {
        self.floor.saturating_sub(elapsed)
    }

    /// The hold the first wait of a follow asks for: between the floor and the server's `full`
    /// hold (`jitter` in 0..=1). Follows that start together (a restart resumes them all) then
    /// end their holds apart and are asked again apart ever after, instead of all at once every
    /// hold; never under the floor, so the first answer is not followed by a pause.
    pub fn first_hold(&self, full: Duration, jitter: f64) -> Duration {
        let floor = self.floor.min(full);
        floor + (full - floor).mul_f64(jitter.clamp(0.0, 1.0))
    }

    /// `hold`, asked at `now_ms`, cut short to end on a beat: the holds of all follows end on
    /// the same few instants a second and their answers come together, one wake-up for many,
    /// while the drawn first holds keep the follows spread over the beats. Never under the
    /// floor: such a hold ends one beat later instead.
    pub fn on_beat(&self, hold: Duration, now_ms: i64) -> Duration {
        let (beat, hold_ms) = (self.beat.as_millis() as i64, hold.as_millis() as i64);
        if beat == 0 {
            return hold;
        }
        let mut ms = hold_ms - (now_ms + hold_ms).rem_euclid(beat);
        if ms < self.floor.as_millis() as i64 {
            ms += beat;
        }
        Duration::from_millis(ms as u64)
    }

    /// After the `failures`-th failure in a row (1-based): exponential, with "equal jitter"
    /// (half fixed, half random, `jitter` in 0..=1), at least the server's `Retry-After`, never
    /// more than `max_backoff`, and never sooner than the floor.
    pub fn after_failure(&self, failures: u32, retry_after: Option<Duration>, elapsed: Duration, jitter: f64) -> Duration {
        let exp = self.first_backoff.saturating_mul(1u32 << failures.saturating_sub(1).min(16)).min(self.max_backoff);
        let jittered = exp / 2 + exp.mul_f64(jitter.clamp(0.0, 1.0) / 2.0);
        let wait = jittered.max(retry_after.unwrap_or_default()).min(self.max_backoff);
        wait.max(self.after_answer(elapsed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn an_immediate_answer_waits_out_the_floor() {
        let p = Pacing::default();
        assert_eq!(p.after_answer(Duration::ZERO), S(2));
        assert_eq!(p.after_answer(Duration::from_millis(500)), Duration::from_millis(1500));
        assert_eq!(p.after_answer(S(10)), Duration::ZERO, "a held answer is followed at once");
    }

    #[test]
    fn failures_back_off_to_sixty_seconds() {
        let p = Pacing::default();
        let table = [(1, 1, 2), (2, 2, 4), (3, 4, 8), (4, 8, 16), (5, 16, 32), (6, 30, 60), (7, 30, 60), (40, 30, 60)];
        for (n, lo, hi) in table {
            let low = p.after_failure(n, None, Duration::ZERO, 0.0);
            let high = p.after_failure(n, None, Duration::ZERO, 1.0);
            assert_eq!(low, S(lo).max(S(2)), "failure {n}, no jitter");
            assert_eq!(high, S(hi), "failure {n}, full jitter");
        }
    }

    #[test]
    fn a_first_hold_lies_between_the_floor_and_the_full_hold() {
        let p = Pacing::default();
        assert_eq!(p.first_hold(S(10), 0.0), S(2));
        assert_eq!(p.first_hold(S(10), 0.5), S(6));
        assert_eq!(p.first_hold(S(25), 1.0), S(25));
        assert_eq!(p.first_hold(S(1), 0.5), S(1), "a hold shorter than the floor is kept whole");
    }

    #[test]
    fn a_hold_is_cut_to_end_on_a_beat_but_never_under_the_floor() {
        let p = Pacing::default();
        let ms = Duration::from_millis;
        assert_eq!(p.on_beat(S(10), 5_000), S(10), "already on a beat");
        assert_eq!(p.on_beat(S(10), 5_300), ms(9_700));
        assert_eq!(p.on_beat(S(25), 1_999), ms(24_001));
        assert_eq!(p.on_beat(ms(2_200), 1_500), ms(2_500), "under the floor: one beat later");
        assert_eq!(p.on_beat(S(10), -300), ms(9_300), "a clock before 1970 is still a clock");
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let p = Pacing::default();
        assert_eq!(p.after_failure(1, Some(S(30)), Duration::ZERO, 0.0), S(30));
        assert_eq!(p.after_failure(1, Some(S(3600)), Duration::ZERO, 0.0), S(60));
        assert_eq!(p.after_failure(6, Some(S(1)), Duration::ZERO, 1.0), S(60));
    }
}
