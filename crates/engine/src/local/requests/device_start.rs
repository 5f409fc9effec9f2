//! `account.device_start`: start a device sign-in (a code to confirm on the cloud's page).

use serde_json::Value;

use super::params::internal;
use crate::local::protocol::{Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceStart;

without_params!(DeviceStart, Method::AccountDeviceStart);

impl DeviceStart {
    pub async fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        let start = engine.device_start().await.map_err(internal)?;
        Ok(serde_json::to_value(start).unwrap_or_default())
    }
}
