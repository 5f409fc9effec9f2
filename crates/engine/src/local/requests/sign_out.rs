//! `account.sign_out`: sign out and forget the saved sign-in.

use serde_json::{Value, json};

use super::params::internal;
use crate::local::protocol::{Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignOut;

without_params!(SignOut, Method::AccountSignOut);

impl SignOut {
    pub async fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.sign_out().await.map_err(internal)?;
        Ok(json!({"signedOut": true}))
    }
}
