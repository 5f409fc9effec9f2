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
    /// 429, 503, other 5xx, `retryable: true`, a network error or a timeout: back off and retry.
    #[error("{what}: {reason}; will retry")]
    RetryLater { what: String, reason: String, retry_after: Option<Duration> },
    /// The answer is not the expected shape, or too large: never an end, retried like a failure.
    #[error("{what}: unreadable answer: {detail}")]
    Unreadable { what: String, detail: String },
    /// Any other refusal (a 3xx we do not follow, a 400): a defect or a misconfiguration.
    #[error("{what}: refused with {status}: {detail}")]
    Refused { what: String, status: u16, detail: String },
}

impl CloudError {
    /// Whether a follow should back off and try again (as opposed to end, or re-authenticate).
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::RetryLater { .. } | Self::Unreadable { .. } | Self::Refused { .. })
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RetryLater { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
