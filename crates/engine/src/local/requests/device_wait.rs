//! `account.device_wait`: wait for the device sign-in to be confirmed.

use serde_json::{Value, json};

use super::MethodRequest;
use super::params::{internal, team};
use crate::cloud::TeamId;
use crate::local::protocol::{Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceWait {
    pub team: Option<TeamId>,
}

impl MethodRequest for DeviceWait {
    const METHOD: Method = Method::AccountDeviceWait;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        Ok(DeviceWait { team: team(params)? })
    }

    fn params(&self) -> Value {
        json!({"team": self.team})
    }
}

impl DeviceWait {
    pub async fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        let me = engine.device_finish(self.team).await.map_err(internal)?;
        Ok(json!({"email": me.email, "userId": me.user_id}))
    }
}
