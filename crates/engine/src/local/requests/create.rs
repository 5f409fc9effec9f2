//! `notification.create` (v1 `notify`, `notify_needs_you`, `notify_target`): a notice, with the
//! cmux surface it came from. Saved with its batch, in one commit (`local/methods.rs`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::MethodRequest;
use super::params::{flag, internal, optional, place, text};
use crate::local::protocol::{self, Command, Method, MethodError};
use crate::notice::Notice;
use crate::notice::local::LocalPost;
use crate::service::EngineError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Create {
    pub post: LocalPost,
}

impl MethodRequest for Create {
    const METHOD: Method = Method::NotificationCreate;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        Ok(Create { post: post(params, "workspace_id", "surface_id")? })
    }

    fn params(&self) -> Value {
        let p = &self.post;
        json!({
            "title": p.title,
            "subtitle": p.subtitle,
            "body": p.body,
            "workspace_id": p.workspace_id,
            "surface_id": p.surface_id,
            "place": p.place,
            "needs_you": p.needs_you,
        })
    }
}

/// A notice's params, its cmux surface under `ws_key` and `sf_key` (`notification.create` and
/// `notification.create_for_caller` name them differently).
pub(super) fn post(params: &Value, ws_key: &str, sf_key: &str) -> Result<LocalPost, MethodError> {
    Ok(LocalPost {
        title: text(params, "title", "Notification")?,
        subtitle: text(params, "subtitle", "")?,
        body: text(params, "body", "")?,
        workspace_id: optional(params, ws_key)?,
        surface_id: optional(params, sf_key)?,
        place: place(params)?,
        needs_you: flag(params, "needs_you")?,
    })
}

impl Create {
    /// v1 `notify`, `notify_needs_you` and `notify_target`: the notice, or the usage error's
    /// reply line. `None` for every other command.
    pub fn parse_v1(command: Command, args: &str) -> Option<Result<Create, String>> {
        let post = match command {
            // `notify_needs_you` (ours): as `notify`, for a sender that waits for the person.
            Command::Notify | Command::NotifyNeedsYou => {
                let (title, subtitle, body) = protocol::split_payload(args);
                LocalPost { title, subtitle, body, needs_you: command == Command::NotifyNeedsYou, ..Default::default() }
            }
            Command::NotifyTarget => {
                let mut parts = args.splitn(3, char::is_whitespace);
                let (Some(ws), Some(sf), payload) = (parts.next().filter(|s| !s.is_empty()), parts.next(), parts.next()) else {
                    return Some(Err("ERROR: Usage: notify_target <workspace_id> <surface_id> <title>|<subtitle>|<body>".into()));
                };
                let (title, subtitle, body) = protocol::split_payload(payload.unwrap_or(""));
                LocalPost { title, subtitle, body, workspace_id: Some(ws.into()), surface_id: Some(sf.into()), ..Default::default() }
            }
            _ => return None,
        };
        Some(Ok(Create { post }))
    }
}

/// A saved notice's v1 answer.
pub fn saved_v1(saved: Result<Notice, EngineError>) -> String {
    match saved {
        Ok(_) => "OK".into(),
        Err(e) => format!("ERROR: {e}"),
    }
}

/// A saved notice's v2 result, as the server writes it and the client reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Created {
    /// Its cmux id.
    pub id: String,
    pub workspace_id: Option<String>,
    pub surface_id: Option<String>,
}

/// A saved notice's v2 result: where it is, and its cmux id.
pub fn saved_v2(saved: Result<Notice, EngineError>) -> Result<Value, MethodError> {
    let origin = saved.map_err(internal)?.local.unwrap_or_default();
    let created = Created { id: origin.cmux_id, workspace_id: origin.workspace_id, surface_id: origin.surface_id };
    serde_json::to_value(created).map_err(internal)
}
