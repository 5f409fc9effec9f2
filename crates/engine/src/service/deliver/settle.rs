//! When the deliverer decides: at once for a notice that comes alone, after a short settle for
//! the notices that follow it (docs/notices.md §3 "Bursts").
//!
//! Notices come in chains: each one seen within `QUIET` of the one before continues the chain.
//! The first of a chain, seen alone after a quiet moment, is decided at once (the leading
//! edge), so an isolated Run's end is a banner within milliseconds. The notices that follow
//! settle until none came for `QUIET`, at most `MAX` after the first of them, and are decided
//! together: a burst of ten is one banner, which takes the leading banner's place on screen.
//! Pure over the monotonic clock (a wall clock set back holds nothing), so it is tested with
//! made-up instants.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use tokio::time::Instant;

/// A chain goes on while notices come less than this far apart …
pub const QUIET: Duration = Duration::from_millis(500);
/// … and its followers wait at most this long after the first of them.
pub const MAX: Duration = Duration::from_millis(2000);

/// What the deliverer does with the untold notices it has now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Decide now. `leading`: the one notice is the first of its chain, alone.
    Decide { chain: u64, leading: bool },
    /// Look again after this long (the followers are still settling).
    Wait(Duration),
}

#[derive(Debug, Default)]
pub struct Settle {
    /// When each untold notice was first seen.
    seen: HashMap<String, Instant>,
    /// When the latest notice was first seen, decided or not: the chain's last link.
    last: Option<Instant>,
    /// Counts chains; a notice's chain says which leading banner its burst may replace.
    chain: u64,
}

impl Settle {
    /// `fresh`: the keys of the untold notices that may settle (not the app's own, not those
    /// waiting for another try at the server). `whole`: they are all of them, and a key seen
    /// before that is missing was decided; otherwise they are only those saved since the last
    /// look (a burst of thousands is looked at many times a second while it settles).
    pub fn verdict<'a>(&mut self, fresh: impl IntoIterator<Item = &'a str>, whole: bool, now: Instant) -> Verdict {
        let fresh: Vec<&str> = fresh.into_iter().collect();
        if whole {
            let all: HashSet<&str> = fresh.iter().copied().collect();
            self.seen.retain(|k, _| all.contains(k.as_str()));
        }
        let nothing_waits = self.seen.is_empty();
        let quiet_before = self.last.is_none_or(|l| now.saturating_duration_since(l) >= QUIET);
        let mut new = 0;
        for k in &fresh {
            if !self.seen.contains_key(*k) {
                self.seen.insert((*k).to_owned(), now);
                new += 1;
            }
        }
        if new > 0 {
            if quiet_before {
                self.chain += 1;
            }
            self.last = Some(now);
        }
        if self.seen.is_empty() {
            return Verdict::Decide { chain: self.chain, leading: false };
        }
        if nothing_waits && quiet_before && self.seen.len() == 1 {
            return Verdict::Decide { chain: self.chain, leading: true };
        }
        let first = self.seen.values().min().copied().unwrap_or(now);
        let last = self.seen.values().max().copied().unwrap_or(now);
        let ready = (last + QUIET).min(first + MAX);
        if ready > now { Verdict::Wait(ready - now) } else { Verdict::Decide { chain: self.chain, leading: false } }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn a_notice_alone_is_decided_at_once_and_the_ones_that_follow_settle() {
        let t0 = Instant::now();
        let mut s = Settle::default();
        assert_eq!(s.verdict(["a"], true, t0), Verdict::Decide { chain: 1, leading: true });
        // "a" was told; "b" comes 90 ms later: it follows, and waits for the chain to go quiet.
        assert_eq!(s.verdict(["b"], true, t0 + MS(90)), Verdict::Wait(QUIET));
        assert_eq!(s.verdict(["b", "c"], true, t0 + MS(180)), Verdict::Wait(QUIET));
        assert_eq!(s.verdict(["b", "c"], true, t0 + MS(680)), Verdict::Decide { chain: 1, leading: false });
        // A quiet moment later, the next one alone is the leading edge of a new chain.
        assert_eq!(s.verdict(["d"], true, t0 + MS(1200)), Verdict::Decide { chain: 2, leading: true });
    }

    #[test]
    fn followers_wait_at_most_max_after_the_first_of_them() {
        let t0 = Instant::now();
        let mut s = Settle::default();
        assert!(matches!(s.verdict(["lead"], true, t0), Verdict::Decide { leading: true, .. }));
        let mut keys = Vec::new();
        let mut t = t0;
        for i in 0..30 {
            t += MS(100);
            keys.push(format!("k{i}"));
            let v = s.verdict(keys.iter().map(String::as_str), true, t);
            let first = t0 + MS(100);
            if t >= first + MAX {
                assert_eq!(v, Verdict::Decide { chain: 1, leading: false }, "at {:?}", t - t0);
                return;
            }
            assert_eq!(v, Verdict::Wait((t + QUIET).min(first + MAX) - t));
        }
        panic!("never decided");
    }

    #[test]
    fn two_at_once_after_quiet_are_a_burst_not_a_leading_edge() {
        let t0 = Instant::now();
        let mut s = Settle::default();
        assert_eq!(s.verdict(["a", "b"], true, t0), Verdict::Wait(QUIET));
        assert_eq!(s.verdict(["a", "b"], true, t0 + QUIET), Verdict::Decide { chain: 1, leading: false });
    }

    #[test]
    fn a_look_at_only_the_new_keys_keeps_the_ones_before_and_a_whole_look_drops_the_decided() {
        let t0 = Instant::now();
        let mut s = Settle::default();
        assert_eq!(s.verdict(["a", "b"], true, t0), Verdict::Wait(QUIET));
        // Only "c" is new: "a" and "b" still settle, and the chain goes on from "c".
        assert_eq!(s.verdict(["c"], false, t0 + MS(100)), Verdict::Wait(QUIET));
        assert_eq!(s.verdict([], false, t0 + MS(300)), Verdict::Wait(MS(300)));
        assert_eq!(s.seen.len(), 3);
        // A whole look without "a" and "b" (decided meanwhile) keeps only "c".
        assert_eq!(s.verdict(["c"], true, t0 + MS(700)), Verdict::Decide { chain: 1, leading: false });
        assert_eq!(s.seen.len(), 1);
    }

    #[test]
    fn a_notice_seen_before_is_not_new_again() {
        let t0 = Instant::now();
        let mut s = Settle::default();
        assert_eq!(s.verdict(["a", "b"], true, t0), Verdict::Wait(QUIET));
        // "a" was decided (held back, say); "b" stays: it is not a new chain's lone first.
        assert_eq!(s.verdict(["b"], true, t0 + MS(600)), Verdict::Decide { chain: 1, leading: false });
        assert_eq!(s.verdict(["b"], true, t0 + MS(1300)), Verdict::Decide { chain: 1, leading: false });
    }
}
