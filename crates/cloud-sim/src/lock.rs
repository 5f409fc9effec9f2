//! The one way the simulator takes a mutex.

/// A mutex taken even when a panic elsewhere poisoned it: each critical section leaves its data
/// whole, so one failed request does not fail every later one.
pub(crate) fn locked<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
