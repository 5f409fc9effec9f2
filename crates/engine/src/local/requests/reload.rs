//! `settings.reload`: read the config file again.

use serde_json::{Value, json};

use crate::local::protocol::{Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reload;

without_params!(Reload, Method::SettingsReload);

impl Reload {
    pub fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.reload_delivery_settings();
        let problem = engine.delivery_settings_problem().map(|p| p.to_string());
        Ok(json!({"reloaded": problem.is_none(), "problem": problem}))
    }
}
