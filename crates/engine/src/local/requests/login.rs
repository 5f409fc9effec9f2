//! `auth.login` (v1 `auth`): the password, in password mode before anything else.

use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

use super::MethodRequest;
use super::params::text;
use crate::local::conn::Conn;
use crate::local::protocol::{ErrorCode, Method, MethodError};

#[derive(Clone, Debug)]
pub struct Login {
    pub password: SecretString,
}

impl MethodRequest for Login {
    const METHOD: Method = Method::AuthLogin;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        Ok(Login { password: SecretString::from(text(params, "password", "")?) })
    }

    fn params(&self) -> Value {
        json!({"password": self.password.expose_secret()})
    }
}

/// How a login went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoggedIn {
    /// No password is set: every connection is authorised.
    NotRequired,
    Authenticated,
    Refused,
}

impl Login {
    /// v1 `auth <password>`.
    pub fn parse_v1(args: &str) -> Login {
        Login { password: SecretString::from(args.trim().to_string()) }
    }

    pub fn apply(self, conn: &mut Conn) -> LoggedIn {
        if conn.password.is_none() {
            LoggedIn::NotRequired
        } else if conn.check_password(self.password.expose_secret()) {
            LoggedIn::Authenticated
        } else {
            LoggedIn::Refused
        }
    }
}

impl LoggedIn {
    pub fn v1(self) -> String {
        match self {
            LoggedIn::NotRequired => "OK: Authentication not required",
            LoggedIn::Authenticated => "OK: Authenticated",
            LoggedIn::Refused => "ERROR: Invalid password",
        }
        .into()
    }

    pub fn v2(self) -> Result<Value, MethodError> {
        match self {
            LoggedIn::NotRequired => Ok(json!({"authenticated": true, "required": false})),
            LoggedIn::Authenticated => Ok(json!({"authenticated": true})),
            LoggedIn::Refused => Err(MethodError::new(ErrorCode::AuthFailed, "invalid password")),
        }
    }
}
