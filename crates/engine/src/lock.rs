//! The one way the engine takes a mutex.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// A mutex taken even when a panic elsewhere poisoned it: every critical section here leaves
/// its data whole before anything in it can panic, so one failed task does not take every
/// later banner, click and status with it.
pub trait Locked<T> {
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T> Locked<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
