//! The service's error body, as every endpoint and every injected fault answers it.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The service's error body: `{"error": {"code", "message", "retryable"?}}`.
pub fn error(status: StatusCode, code: &str, message: &str) -> Response {
    let retryable = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
    let mut body = json!({"error": {"code": code, "message": message}});
    if retryable {
        body["error"]["retryable"] = json!(true);
    }
    (status, Json(body)).into_response()
}
