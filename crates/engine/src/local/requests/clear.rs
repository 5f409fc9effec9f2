//! `notification.clear` (v1 `clear_notifications`): forgets every local notice and takes their
//! banners away.

use serde_json::{Value, json};

use super::params::internal;
use crate::local::protocol::{Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clear;

without_params!(Clear, Method::NotificationClear);

impl Clear {
    pub async fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.clear_local().await.map_err(internal)?;
        Ok(json!({}))
    }

    pub async fn v1(self, engine: &Engine) -> String {
        match engine.clear_local().await {
            Ok(()) => "OK".into(),
            Err(e) => format!("ERROR: {e}"),
        }
    }
}
