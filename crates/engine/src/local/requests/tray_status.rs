//! `tray.status`: what `status` shows.

use serde_json::Value;

use super::params::internal;
use crate::local::protocol::{Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetStatus;

without_params!(GetStatus, Method::TrayStatus);

impl GetStatus {
    pub fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        serde_json::to_value(engine.status().map_err(internal)?).map_err(internal)
    }
}
