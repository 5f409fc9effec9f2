//! `system.capabilities`: the methods and the access mode.

use serde_json::{Value, json};

use crate::local::conn::Conn;
use crate::local::protocol::{Method, MethodError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capabilities;

without_params!(Capabilities, Method::SystemCapabilities);

impl Capabilities {
    pub fn apply(self, conn: &Conn) -> Result<Value, MethodError> {
        Ok(json!({
            "methods": Method::ALL,
            "access_mode": if conn.password.is_some() { "password" } else { "user" },
        }))
    }
}
