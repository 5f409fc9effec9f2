//! `settings.reload`: read the config file again.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::local::protocol::{Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reload;

without_params!(Reload, Method::SettingsReload);

/// Its result: applied, or the problem that kept the file's settings from applying.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reloaded {
    pub reloaded: bool,
    pub problem: Option<String>,
}

impl Reload {
    pub fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.reload_delivery_settings();
        let problem = engine.delivery_settings_problem().map(|p| p.to_string());
        serde_json::to_value(Reloaded { reloaded: problem.is_none(), problem }).map_err(crate::local::requests::params::internal)
    }
}
