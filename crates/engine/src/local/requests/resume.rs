//! `delivery.resume`: banners again.

use serde_json::{Value, json};

use super::MethodRequest;
use super::params::internal;
use crate::engine::Engine;
use crate::local::protocol::{Method, MethodError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resume;

impl MethodRequest for Resume {
    const METHOD: Method = Method::DeliveryResume;

    fn parse(_: &Value) -> Result<Self, MethodError> {
        Ok(Resume)
    }

    fn params(&self) -> Value {
        json!({})
    }
}

impl Resume {
    pub fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.resume().map_err(internal)?;
        Ok(json!({"paused": false}))
    }
}
