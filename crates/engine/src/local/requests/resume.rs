//! `delivery.resume`: banners again.

use serde_json::{Value, json};

use super::params::internal;
use crate::local::protocol::{Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resume;

without_params!(Resume, Method::DeliveryResume);

impl Resume {
    pub fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.resume().map_err(internal)?;
        Ok(json!({"paused": false}))
    }
}
