//! What can go wrong talking to the cloud, sorted by what the caller must do about it.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum CloudError {
    /// 401: the access token is stale; refresh once and retry once.
    #[error("the access token was refused (401): sign in again")]
    StaleToken,
    /// 403 or 404: not this account's item, or the store is not deployed. A follow ends silently.
    #[error("{what}: the server answered {status} (not this account's, or not there)")]
    Gone { what: String, status: u16 },
    /// 429, 503, other 5xx, `retryable: true`: the server answered, later; back off and retry.
    #[error("{what}: {reason}; will retry")]
    RetryLater { what: String, reason: String, retry_after: Option<Duration> },
    /// No answer: the connection could not be made, broke, or timed out. Back off and retry; the
    /// follower looks for the cloud meanwhile and wakes the follows when it answers.
    #[error("{what}: {reason}; will retry")]
    Unreachable { what: String, reason: String },
    /// The proxy on the way to the cloud refused (407, 403, 502, a name it cannot resolve): not a
    /// passing failure, so the tray says it at once; retried like one all the same.
    #[error("{what}: {reason}")]
    ProxyRefused { what: String, reason: String },
    /// The answer is not the expected shape, or too large: never an end, retried like a failure.
    #[error("{what}: unreadable answer: {detail}")]
    Unreadable { what: String, detail: String },
    /// Any other refusal (a 3xx we do not follow, a 400): a defect or a misconfiguration.
    #[error("{what}: refused with {status}: {detail}")]
    Refused { what: String, status: u16, detail: String },
}

impl CloudError {
    /// Whether the cloud could not be reached at all (as opposed to answering with an error).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Self::Unreachable { .. } | Self::ProxyRefused { .. })
    }

    /// Whether a follow should back off and try again (as opposed to end, or re-authenticate).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::RetryLater { .. } | Self::Unreachable { .. } | Self::ProxyRefused { .. } | Self::Unreadable { .. } | Self::Refused { .. }
        )
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RetryLater { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
