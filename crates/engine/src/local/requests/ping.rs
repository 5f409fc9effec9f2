//! `system.ping` (v1 `ping`): is the engine there.

use serde_json::{Value, json};

use crate::local::protocol::{Method, MethodError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ping;

without_params!(Ping, Method::SystemPing);

impl Ping {
    pub fn apply(self) -> Result<Value, MethodError> {
        Ok(json!({"pong": true}))
    }

    pub fn v1(self) -> String {
        "PONG".into()
    }
}
