//! `account.sign_in_token`: sign in with an access token (kept in memory).

use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

use super::MethodRequest;
use super::params::{internal, required, team};
use crate::cloud::TeamId;
use crate::local::protocol::{Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug)]
pub struct SignInToken {
    pub access_token: SecretString,
    pub team: Option<TeamId>,
}

impl MethodRequest for SignInToken {
    const METHOD: Method = Method::AccountSignInToken;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        Ok(SignInToken { access_token: SecretString::from(required(params, "access_token")?), team: team(params)? })
    }

    fn params(&self) -> Value {
        json!({"access_token": self.access_token.expose_secret(), "team": self.team})
    }
}

impl SignInToken {
    pub async fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        let me = engine.sign_in_with_token(self.access_token, self.team).await.map_err(internal)?;
        Ok(json!({"email": me.email, "userId": me.user_id}))
    }
}
