//! The process's own limits, raised for what one engine holds.

/// Over HTTP/1.1 (`[cloud] http = "1.1"`) every held wait is a socket, and Linux's soft limit is
/// often 1,024: the soft descriptor limit goes up to the hard one, so 10,000 follows
/// (docs/notices.md allows 20,000) fit. Where the platform refuses (macOS caps it below an
/// unlimited hard limit), it stays.
#[cfg(unix)]
pub fn raise_descriptor_limit() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current.is_some() && limit.current < limit.maximum.or(Some(u64::MAX)) {
        let raised = Rlimit { current: limit.maximum, maximum: limit.maximum };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => tracing::debug!(from = ?limit.current, to = ?limit.maximum, "descriptor limit raised"),
            Err(e) => tracing::debug!(at = ?limit.current, "descriptor limit kept: {e}"),
        }
    }
}

/// Windows limits handles per process far above 10,000 held waits: nothing to raise.
#[cfg(not(unix))]
pub fn raise_descriptor_limit() {}
