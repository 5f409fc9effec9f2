//! `notification.list` (v1 `list_notifications`): the newest local notices, oldest first.

use serde_json::{Value, json};

use super::MethodRequest;
use super::params::internal;
use crate::local::protocol::{self, ErrorCode, Method, MethodError};
use crate::service::Engine;
use crate::store::StoredNotice;

/// How many notices a list answers with when not asked for fewer (the newest).
pub const LIST_LIMIT: usize = 500;
/// The most a list answers with.
pub const LIST_LIMIT_MAX: usize = 5000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct List {
    pub limit: usize,
}

impl MethodRequest for List {
    const METHOD: Method = Method::NotificationList;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        let limit = match params.get("limit") {
            None | Some(Value::Null) => LIST_LIMIT,
            Some(v) => v.as_u64().filter(|n| (1..=LIST_LIMIT_MAX as u64).contains(n)).ok_or_else(|| {
                MethodError::new(ErrorCode::InvalidParams, format!("limit must be a whole number from 1 to {LIST_LIMIT_MAX}, not {v}"))
            })? as usize,
        };
        Ok(List { limit })
    }

    fn params(&self) -> Value {
        json!({"limit": self.limit})
    }
}

impl List {
    pub fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        let list = engine.local_notices(self.limit).map_err(internal)?;
        let items: Vec<Value> = list.iter().map(list_item).collect();
        Ok(json!({"notifications": items}))
    }

    /// v1 `list_notifications`: the newest [`LIST_LIMIT`], one line each.
    pub fn v1(engine: &Engine) -> String {
        match engine.local_notices(LIST_LIMIT) {
            Ok(list) if list.is_empty() => "No notifications".into(),
            Ok(list) => list
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let entry = protocol::V1Entry {
                        id: n.cmux_id.as_deref().unwrap_or(""),
                        workspace: n.workspace_id.as_deref(),
                        surface: n.surface_id.as_deref(),
                        read: n.read_at.is_some(),
                        title: &n.title,
                        subtitle: &n.subtitle,
                        body: local_body(n),
                    };
                    protocol::v1_list_line(i, &entry)
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Err(e) => format!("ERROR: {e}"),
        }
    }
}

/// The body as the terminal sent it. A notice stored before schema 4 kept only the banner body
/// (subtitle joined in, cut at 200 characters): the subtitle is taken off that.
fn local_body(n: &StoredNotice) -> &str {
    match &n.local_body {
        Some(body) => body,
        None => n.body.strip_prefix(&format!("{} — ", n.subtitle)).filter(|_| !n.subtitle.is_empty()).unwrap_or(&n.body),
    }
}

fn list_item(n: &StoredNotice) -> Value {
    let created = jiff::Timestamp::from_millisecond(n.created_at).map(|t| t.to_string()).unwrap_or_default();
    json!({
        "id": n.cmux_id,
        "workspace_id": n.workspace_id,
        "surface_id": n.surface_id,
        "title": n.title,
        "subtitle": n.subtitle,
        "body": local_body(n),
        "created_at": created,
        "is_read": n.read_at.is_some(),
    })
}
