//! Reading a request's params, and an engine's errors as the socket's: what each request file
//! and `local/methods.rs` share.

use serde_json::Value;

use crate::local::protocol::{ErrorCode, MethodError};
use crate::place::Place;
use crate::service::EngineError;

/// A string parameter: absent is `default`, present must be a string.
pub fn text(params: &Value, key: &str, default: &str) -> Result<String, MethodError> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(default.into()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(MethodError::new(ErrorCode::InvalidParams, format!("{key} must be a string, not {other}"))),
    }
}

/// A boolean parameter: absent is false, present must be a boolean.
pub fn flag(params: &Value, key: &str) -> Result<bool, MethodError> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(MethodError::new(ErrorCode::InvalidParams, format!("{key} must be true or false, not {other}"))),
    }
}

/// A string parameter that may be absent or blank (none).
pub fn optional(params: &Value, key: &str) -> Result<Option<String>, MethodError> {
    let s = text(params, key, "")?;
    Ok((!s.trim().is_empty()).then_some(s))
}

pub fn required(params: &Value, key: &str) -> Result<String, MethodError> {
    optional(params, key)?.ok_or_else(|| MethodError::new(ErrorCode::InvalidParams, format!("{key} is required")))
}

/// The terminal place a client sent (ours), checked field by field; absent or empty is none.
pub fn place(params: &Value) -> Result<Option<Place>, MethodError> {
    match params.get("place") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => Place::from_json(v).map(|p| (!p.is_empty()).then_some(p)).map_err(|e| MethodError::new(ErrorCode::InvalidParams, e)),
    }
}

/// A team's id, if one was given.
pub fn team(params: &Value) -> Result<Option<crate::cloud::TeamId>, MethodError> {
    optional(params, "team")?.map(|t| crate::cloud::TeamId::parse(&t)).transpose().map_err(invalid)
}

pub fn invalid(e: impl std::fmt::Display) -> MethodError {
    MethodError::new(ErrorCode::InvalidParams, e.to_string())
}

/// An engine error's code: "not signed in" has its own, the rest are internal.
pub fn engine_error(e: EngineError) -> MethodError {
    match e {
        EngineError::SignedOut => MethodError::new(ErrorCode::NotSignedIn, e.to_string()),
        EngineError::TooManyFollows { .. } => MethodError::new(ErrorCode::TooManyFollows, e.to_string()),
        e => internal(e),
    }
}

pub fn internal(e: impl std::fmt::Display) -> MethodError {
    MethodError::new(ErrorCode::InternalError, e.to_string())
}
