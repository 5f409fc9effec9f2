//! `session.attach`: a terminal shows a cloud session, so its banners' click comes back there
//! (what `cmux-tray attach` sends).

use serde_json::{Value, json};

use super::MethodRequest;
use super::params::{internal, optional, place, required};
use crate::local::forwarded::Forwarded;
use crate::local::protocol::{ErrorCode, Method, MethodError};
use crate::place::Place;
use crate::service::Engine;
use crate::store::SessionShown;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attach {
    pub session_id: String,
    pub shown: SessionShown,
}

impl MethodRequest for Attach {
    const METHOD: Method = Method::SessionAttach;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        Attach::parse_placed(params, || place(params))
    }

    fn params(&self) -> Value {
        json!({
            "session_id": self.session_id,
            "workspace_id": self.shown.workspace_id,
            "surface_id": self.shown.surface_id,
            "place": self.shown.place,
        })
    }
}

impl Attach {
    /// As a connection sent it: a remote terminal's session comes back to the local one
    /// running its ssh, whatever place it named.
    pub fn parse_from(params: &Value, forwarded: Option<&Forwarded>) -> Result<Self, MethodError> {
        match forwarded {
            Some(forwarded) => Attach::parse_placed(params, || Ok(forwarded.place.clone())),
            None => Attach::parse(params),
        }
    }

    fn parse_placed(params: &Value, place: impl FnOnce() -> Result<Option<Place>, MethodError>) -> Result<Self, MethodError> {
        let session_id = required(params, "session_id")?;
        let shown =
            SessionShown { workspace_id: optional(params, "workspace_id")?, surface_id: optional(params, "surface_id")?, place: place()? };
        if shown.workspace_id.is_none() && shown.place.is_none() {
            return Err(MethodError::new(ErrorCode::InvalidParams, "workspace_id or place is required"));
        }
        Ok(Attach { session_id, shown })
    }

    pub fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.attach_session(&self.session_id, &self.shown).map_err(internal)?;
        Ok(json!({}))
    }
}
