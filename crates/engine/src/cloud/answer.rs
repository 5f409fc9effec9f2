//! What the cloud answers, read: a status and a body into the value asked for, or the error the
//! status says (docs/cloud-api.md, "Errors"). Pure: the client and the fuzz targets call it alike.

use std::time::Duration;

use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::CloudError;

/// `Retry-After` in seconds (docs/cloud-api.md, "Where this project's build differs").
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let seconds = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim().parse::<u64>().ok()?;
    Some(Duration::from_secs(seconds))
}

/// An answer's body, or the error its status says (docs/cloud-api.md, "Errors").
pub fn read_answer(what: &str, status: StatusCode, retry_after: Option<Duration>, bytes: Vec<u8>) -> Result<Vec<u8>, CloudError> {
    if status.is_success() {
        return Ok(bytes);
    }
    let (code, message, retryable) = error_body(&bytes);
    let detail = match (&code, &message) {
        (Some(c), Some(m)) => format!("{c}: {m}"),
        (Some(c), None) => c.clone(),
        _ => String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned(),
    };
    Err(match status {
        StatusCode::UNAUTHORIZED => CloudError::StaleToken,
        StatusCode::FORBIDDEN | StatusCode::NOT_FOUND => CloudError::Gone { what: what.into(), status: status.as_u16() },
        s if s == StatusCode::TOO_MANY_REQUESTS || s.is_server_error() || retryable => {
            CloudError::RetryLater { what: what.into(), reason: format!("the server answered {} ({detail})", s.as_u16()), retry_after }
        }
        s if s.is_redirection() => CloudError::Refused {
            what: what.into(),
            status: s.as_u16(),
            detail: "redirects are not followed (they would carry the token elsewhere)".into(),
        },
        s => CloudError::Refused { what: what.into(), status: s.as_u16(), detail },
    })
}

/// An error body's code, message and whether it says to retry (`{"error": {…}}`).
pub fn error_body(bytes: &[u8]) -> (Option<String>, Option<String>, bool) {
    let v: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    let e = &v["error"];
    (e["code"].as_str().map(String::from), e["message"].as_str().map(String::from), e["retryable"].as_bool().unwrap_or(false))
}

/// The body as `T`, or why it is unreadable.
pub fn parse<T: DeserializeOwned>(what: &str, bytes: Vec<u8>) -> Result<T, CloudError> {
    serde_json::from_slice(&bytes).map_err(|e| unreadable(what, e.to_string()))
}

/// An answer that is not the expected shape.
pub fn unreadable(what: &str, detail: String) -> CloudError {
    CloudError::Unreadable { what: what.into(), detail }
}
