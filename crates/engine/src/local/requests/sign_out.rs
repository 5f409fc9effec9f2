//! `account.sign_out`: sign out and forget the saved sign-in.

use serde_json::{Value, json};

use super::MethodRequest;
use super::params::internal;
use crate::engine::Engine;
use crate::local::protocol::{Method, MethodError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignOut;

impl MethodRequest for SignOut {
    const METHOD: Method = Method::AccountSignOut;

    fn parse(_: &Value) -> Result<Self, MethodError> {
        Ok(SignOut)
    }

    fn params(&self) -> Value {
        json!({})
    }
}

impl SignOut {
    pub async fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.sign_out().await.map_err(internal)?;
        Ok(json!({"signedOut": true}))
    }
}
