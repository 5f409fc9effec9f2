//! `tray.view`: what the tray shows.

use serde_json::Value;

use super::params::internal;
use crate::local::protocol::{Method, MethodError};
use crate::service::Engine;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetTrayView;

without_params!(GetTrayView, Method::TrayView);

impl GetTrayView {
    pub fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        serde_json::to_value(engine.tray_view().map_err(internal)?).map_err(internal)
    }
}
