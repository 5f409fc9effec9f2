//! `delivery.pause`: pause banners until a time, or until resumed.

use serde_json::{Value, json};

use super::MethodRequest;
use super::params::{internal, optional};
use crate::local::protocol::{ErrorCode, Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pause {
    /// `None`: until resumed.
    pub until: Option<jiff::Timestamp>,
}

impl MethodRequest for Pause {
    const METHOD: Method = Method::DeliveryPause;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        // `until`: RFC 3339, or absent for "until resumed".
        let until = match optional(params, "until")? {
            None => None,
            Some(t) => {
                Some(t.parse::<jiff::Timestamp>().map_err(|e| MethodError::new(ErrorCode::InvalidParams, format!("until {t:?}: {e}")))?)
            }
        };
        Ok(Pause { until })
    }

    fn params(&self) -> Value {
        json!({"until": self.until.map(|t| t.to_string())})
    }
}

impl Pause {
    pub fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.pause(self.until).map_err(internal)?;
        Ok(json!({"paused": true, "until": self.until.map(|t| t.to_string())}))
    }
}
