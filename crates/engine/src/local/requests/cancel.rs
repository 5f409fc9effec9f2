//! `cloud.cancel`: cancel a Run from here; its end tells nothing.

use serde_json::{Value, json};

use super::MethodRequest;
use super::params::{engine_error, invalid, text};
use crate::cloud::RunId;
use crate::local::protocol::{Method, MethodError};
use crate::service::{Engine, SIGN_IN_RESTORE_WAIT};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cancel {
    pub run: RunId,
}

impl MethodRequest for Cancel {
    const METHOD: Method = Method::CloudCancel;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        Ok(Cancel { run: RunId::parse(&text(params, "id", "")?).map_err(invalid)? })
    }

    fn params(&self) -> Value {
        json!({"id": self.run})
    }
}

impl Cancel {
    pub async fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.account_ready(SIGN_IN_RESTORE_WAIT).await;
        engine.cancel_run(&self.run).await.map_err(engine_error)?;
        Ok(json!({"cancelled": true}))
    }
}
