//! `surface.focus`: the person looks at a cmux surface, or looks away; its notices are read.

use serde_json::{Value, json};

use super::MethodRequest;
use super::params::{internal, optional, required};
use crate::local::protocol::{ErrorCode, Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Focus {
    pub workspace_id: String,
    pub surface_id: Option<String>,
    pub focused: bool,
}

impl MethodRequest for Focus {
    const METHOD: Method = Method::SurfaceFocus;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        let workspace_id = required(params, "workspace_id")?;
        let focused = params
            .get("focused")
            .and_then(Value::as_bool)
            .ok_or_else(|| MethodError::new(ErrorCode::InvalidParams, "focused must be true or false".to_string()))?;
        Ok(Focus { workspace_id, surface_id: optional(params, "surface_id")?, focused })
    }

    fn params(&self) -> Value {
        json!({"workspace_id": self.workspace_id, "surface_id": self.surface_id, "focused": self.focused})
    }
}

impl Focus {
    pub async fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.set_focus(&self.workspace_id, self.surface_id.as_deref(), self.focused).await.map_err(internal)?;
        Ok(json!({}))
    }
}
