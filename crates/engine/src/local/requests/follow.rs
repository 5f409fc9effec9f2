//! `cloud.follow`: follow a Run or a hand-off.

use serde_json::{Value, json};

use super::MethodRequest;
use super::params::{engine_error, invalid, text};
use crate::cloud::{HandoffId, RunId};
use crate::local::protocol::{ErrorCode, Method, MethodError};
use crate::service::{Engine, SIGN_IN_RESTORE_WAIT};
use crate::store::FollowKind;

/// What to follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Follow {
    Run(RunId),
    Handoff(HandoffId),
}

impl MethodRequest for Follow {
    const METHOD: Method = Method::CloudFollow;

    fn parse(params: &Value) -> Result<Self, MethodError> {
        let id = text(params, "id", "")?;
        let kind = text(params, "kind", "")?;
        match FollowKind::parse(&kind) {
            Some(FollowKind::Run) => Ok(Follow::Run(RunId::parse(&id).map_err(invalid)?)),
            Some(FollowKind::Handoff) => Ok(Follow::Handoff(HandoffId::parse(&id).map_err(invalid)?)),
            None => Err(MethodError::new(ErrorCode::InvalidParams, format!("kind {kind:?}: expected \"run\" or \"handoff\""))),
        }
    }

    fn params(&self) -> Value {
        match self {
            Follow::Run(id) => json!({"kind": FollowKind::Run, "id": id}),
            Follow::Handoff(id) => json!({"kind": FollowKind::Handoff, "id": id}),
        }
    }
}

impl Follow {
    pub async fn apply(self, engine: &Engine) -> Result<Value, MethodError> {
        engine.account_ready(SIGN_IN_RESTORE_WAIT).await;
        match self {
            Follow::Run(run) => engine.follow_run(&run).map_err(engine_error)?,
            Follow::Handoff(handoff) => engine.follow_handoff(&handoff).map_err(engine_error)?,
        }
        Ok(json!({"following": true}))
    }
}
