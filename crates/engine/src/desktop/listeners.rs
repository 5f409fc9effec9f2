//! Threads that wait for a banner's answer, counted (macOS, where hearing a click holds a thread
//! until the banner is clicked or closed): at most [`LISTENING`] at once, never tokio's pool.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most banners whose click is listened for at once, where listening holds a thread.
pub const LISTENING: usize = 16;

/// Threads that wait for a banner's answer, counted: one is taken per banner listened to and
/// given back when its wait ends; none is given past the limit.
pub struct Listeners {
    live: Arc<AtomicUsize>,
    limit: usize,
}

/// A listener's place, given back when dropped (its wait ended).
pub struct Listening(Arc<AtomicUsize>);

impl Drop for Listening {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Listeners {
    pub fn new(limit: usize) -> Listeners {
        Listeners { live: Default::default(), limit }
    }

    /// A place for one more listener, or `None` when `limit` are listening.
    pub fn take(&self) -> Option<Listening> {
        self.live.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.limit).then_some(n + 1)).ok()?;
        Some(Listening(self.live.clone()))
    }

    pub fn live(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Thousands of banners with none answered hold no more than `LISTENING` threads; each wait
    /// that ends gives its place back.
    #[test]
    fn listening_is_bounded_and_each_ended_wait_frees_its_place() {
        let listeners = Listeners::new(LISTENING);
        let held: Vec<Listening> = (0..5_000).filter_map(|_| listeners.take()).collect();
        assert_eq!(held.len(), LISTENING);
        assert_eq!(listeners.live(), LISTENING);
        drop(held.into_iter().next());
        assert!(listeners.take().is_some(), "an ended wait frees its place");
    }
}
