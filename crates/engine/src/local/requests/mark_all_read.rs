//! `tray.mark_all_read`: marks every notice read.

use serde_json::{Value, json};

use super::params::internal;
use crate::local::protocol::{Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkAllRead;

without_params!(MarkAllRead, Method::TrayMarkAllRead);

impl MarkAllRead {
    pub async fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        Ok(json!({"marked_read": engine.mark_all_read().await.map_err(internal)?}))
    }
}
