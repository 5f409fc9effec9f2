//! `notification.mark_read`: marks one local notice read, or all.

use serde_json::{Value, json};

use super::MethodRequest;
use super::params::{internal, optional};
use crate::local::protocol::{ErrorCode, Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkRead {
    All,
    /// The notice with this cmux id.
    One(String),
}

impl MethodRequest for MarkRead {
    const METHOD: Method = Method::NotificationMarkRead;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        let all = params.get("all").and_then(Value::as_bool).unwrap_or(false);
        let id = optional(params, "id")?;
        match (all, id) {
            (true, _) => Ok(MarkRead::All),
            (false, Some(id)) => Ok(MarkRead::One(id)),
            (false, None) => Err(MethodError::new(ErrorCode::InvalidParams, "give id, or all: true")),
        }
    }

    fn params(&self) -> Value {
        match self {
            MarkRead::All => json!({"all": true}),
            MarkRead::One(id) => json!({"id": id}),
        }
    }
}

impl MarkRead {
    pub async fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        let marked = match &self {
            MarkRead::All => engine.mark_local_read(None).await.map_err(internal)?,
            MarkRead::One(id) => {
                let marked = engine.mark_local_read(Some(id)).await.map_err(internal)?;
                if marked == 0 && !engine.local_notice_exists(id).map_err(internal)? {
                    return Err(MethodError::new(ErrorCode::NotFound, format!("no notification {id}")));
                }
                marked
            }
        };
        Ok(json!({"marked_read": marked}))
    }
}
