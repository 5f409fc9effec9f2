//! `notification.create_for_caller`: a notice, with the caller's terminal place (what
//! `cmux-tray notify` sends). Saved with its batch, in one commit (`local/methods.rs`).

use serde_json::{Value, json};

use super::MethodRequest;
use super::create::post;
use crate::local::protocol::{Method, MethodError};
use crate::notice::local::LocalPost;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateForCaller {
    pub post: LocalPost,
    /// The caller's terminal device, for cmux's own socket (this one does not read it).
    pub caller_tty: Option<String>,
}

impl MethodRequest for CreateForCaller {
    const METHOD: Method = Method::NotificationCreateForCaller;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        Ok(CreateForCaller {
            post: post(params, "preferred_workspace_id", "preferred_surface_id")?,
            // Never refused for its shape: cmux's field, which this socket ignores.
            caller_tty: params.get("caller_tty").and_then(Value::as_str).map(String::from),
        })
    }

    fn params(&self) -> Value {
        let p = &self.post;
        let mut params = json!({
            "title": p.title,
            "subtitle": p.subtitle,
            "body": p.body,
            "preferred_workspace_id": p.workspace_id,
            "preferred_surface_id": p.surface_id,
            "caller_tty": self.caller_tty,
            "prefer_tty": false,
            "place": p.place,
        });
        // Only when set: cmux's own socket knows no such field.
        if p.needs_you {
            params["needs_you"] = json!(true);
        }
        params
    }
}
