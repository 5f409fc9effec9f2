//! `settings.reload`: read the config file again.

use serde_json::{Value, json};

use super::MethodRequest;
use crate::engine::Engine;
use crate::local::protocol::{Method, MethodError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reload;

impl MethodRequest for Reload {
    const METHOD: Method = Method::SettingsReload;

    fn parse(_: &Value) -> Result<Self, MethodError> {
        Ok(Reload)
    }

    fn params(&self) -> Value {
        json!({})
    }
}

impl Reload {
    pub fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.reload_delivery_settings();
        let problem = engine.delivery_settings_problem().map(|p| p.to_string());
        Ok(json!({"reloaded": problem.is_none(), "problem": problem}))
    }
}
