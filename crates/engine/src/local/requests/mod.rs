//! One request type per method the command line sends, shared by the client (`cmux-tray`) and
//! the server, one file each (as mini-redis's `cmd/`): `parse` reads it from the params a client
//! sent, `apply` does it through the engine, `params` writes it for the client to send. The
//! methods only other clients send (cmux's notices, `session.attach`, `surface.focus` …) are
//! answered in `local/methods.rs`.

/// A request sent without params (`{}`), whatever params it is sent with.
macro_rules! without_params {
    ($name:ident, $method:expr) => {
        impl $crate::local::requests::MethodRequest for $name {
            const METHOD: $crate::local::protocol::Method = $method;

            fn parse(_: &serde_json::Value) -> Result<Self, $crate::local::protocol::MethodError> {
                Ok($name)
            }

            fn params(&self) -> serde_json::Value {
                serde_json::json!({})
            }
        }
    };
}

mod cancel;
mod device_start;
mod device_wait;
mod follow;
pub mod params;
mod pause;
mod reload;
mod resume;
mod sign_in_token;
mod sign_out;
mod tray_status;

pub use cancel::Cancel;
pub use device_start::DeviceStart;
pub use device_wait::DeviceWait;
pub use follow::Follow;
pub use pause::Pause;
pub use reload::Reload;
pub use resume::Resume;
pub use sign_in_token::SignInToken;
pub use sign_out::SignOut;
pub use tray_status::GetStatus;

use serde_json::Value;

use super::protocol::{Method, MethodError};

/// A request as the client sends it and the server reads it.
pub trait MethodRequest: Sized {
    /// The method it is sent as.
    const METHOD: Method;
    /// Reads it from the params a client sent; what is wrong is named.
    fn parse(params: &Value) -> Result<Self, MethodError>;
    /// Its params, as the client sends them.
    fn params(&self) -> Value;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::{HandoffId, RunId, TeamId};

    /// What the client sends is what the server reads, for every request (docs/local-socket.md's
    /// params, one type for both sides).
    #[test]
    fn each_request_reads_back_from_the_params_it_sends() {
        fn same<R: MethodRequest + PartialEq + std::fmt::Debug>(r: R) {
            assert_eq!(R::parse(&r.params()).unwrap(), r, "{}", R::METHOD);
        }
        same(Follow::Run(RunId::parse("run_0123456789abcdef0123").unwrap()));
        same(Follow::Handoff(HandoffId::parse("ho_0123456789abcdef0123").unwrap()));
        same(Cancel { run: RunId::parse("run_0123456789abcdef0123").unwrap() });
        same(Pause { until: Some("2026-12-05T07:00:00Z".parse().unwrap()) });
        same(Pause { until: None });
        same(DeviceWait { team: Some(TeamId::parse("team_0123456789abcdef0123").unwrap()) });
        same(Resume);
        same(SignOut);
        same(DeviceStart);
        same(Reload);
        same(GetStatus);
        let token = SignInToken { access_token: "t0k".to_string().into(), team: None };
        let read = SignInToken::parse(&token.params()).unwrap();
        assert_eq!(secrecy::ExposeSecret::expose_secret(&read.access_token), "t0k");
        // The wire's words, as docs/local-socket.md names them.
        assert_eq!(Follow::METHOD.as_str(), "cloud.follow");
        assert_eq!(
            Follow::Run(RunId::parse("run_0123456789abcdef0123").unwrap()).params(),
            serde_json::json!({"kind": "run", "id": "run_0123456789abcdef0123"})
        );
        let bad = Follow::parse(&serde_json::json!({"kind": "job", "id": "x"})).unwrap_err();
        assert!(bad.message.contains("\"job\""), "{}", bad.message);
    }
}
