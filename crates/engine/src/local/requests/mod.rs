//! One request type per socket method, shared by the client (`cmux-tray`) and the server, one
//! file each (as mini-redis's `cmd/`): `parse` reads it from the params a client sent (and
//! `parse_v1` from a v1 command's text, where one means the same), `apply` does it through the
//! engine and gives the reply, `params` writes it for the client to send. `local/methods.rs`
//! picks the type by the [`Method`] or [`Command`](super::protocol::Command) a line names.

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

mod attach;
mod cancel;
mod capabilities;
mod clear;
pub mod create;
mod create_for_caller;
mod device_start;
mod device_wait;
mod focus;
mod follow;
pub mod list;
mod login;
mod mark_all_read;
mod mark_read;
pub mod params;
mod pause;
mod ping;
mod reload;
mod resume;
mod sign_in_token;
mod sign_out;
mod tray_status;
mod tray_view;

pub use attach::Attach;
pub use cancel::Cancel;
pub use capabilities::Capabilities;
pub use clear::Clear;
pub use create::{Create, Created};
pub use create_for_caller::CreateForCaller;
pub use device_start::DeviceStart;
pub use device_wait::DeviceWait;
pub use focus::Focus;
pub use follow::Follow;
pub use list::List;
pub use login::{LoggedIn, Login};
pub use mark_all_read::MarkAllRead;
pub use mark_read::MarkRead;
pub use pause::Pause;
pub use ping::Ping;
pub use reload::{Reload, Reloaded};
pub use resume::Resume;
pub use sign_in_token::SignInToken;
pub use sign_out::SignOut;
pub use tray_status::GetStatus;
pub use tray_view::GetTrayView;

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
        same(Ping);
        same(Capabilities);
        same(Clear);
        same(GetTrayView);
        same(MarkAllRead);
        same(List { limit: 20 });
        same(MarkRead::All);
        same(MarkRead::One("4F1C".into()));
        same(Focus { workspace_id: "ws".into(), surface_id: Some("sf".into()), focused: true });
        same(Attach {
            session_id: "4f1c-22aa".into(),
            shown: crate::store::SessionShown { workspace_id: Some("ws".into()), surface_id: None, place: None },
        });
        let post = crate::notice::local::LocalPost {
            title: "t".into(),
            subtitle: "s".into(),
            body: "b".into(),
            workspace_id: Some("ws".into()),
            surface_id: Some("sf".into()),
            place: None,
            needs_you: true,
        };
        same(Create { post: post.clone() });
        same(CreateForCaller { post, caller_tty: Some("/dev/pts/3".into()) });
        let login = Login::parse(&Login { password: "hunter2".to_string().into() }.params()).unwrap();
        assert_eq!(secrecy::ExposeSecret::expose_secret(&login.password), "hunter2");
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
