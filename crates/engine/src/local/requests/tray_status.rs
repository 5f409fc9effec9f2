//! `tray.status`: what `status` shows.

use serde_json::{Value, json};

use super::MethodRequest;
use super::params::internal;
use crate::engine::Engine;
use crate::local::protocol::{Method, MethodError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetStatus;

impl MethodRequest for GetStatus {
    const METHOD: Method = Method::TrayStatus;

    fn parse(_: &Value) -> Result<Self, MethodError> {
        Ok(GetStatus)
    }

    fn params(&self) -> Value {
        json!({})
    }
}

impl GetStatus {
    pub fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        serde_json::to_value(engine.status().map_err(internal)?).map_err(internal)
    }
}
