//! A line a socket client sends (docs/local-socket.md): v1 and v2, a notice's place included.
//! Whatever the bytes, decoding answers or refuses with a reason, and never panics.

use cmux_tray_engine::local::protocol::{self, Request};
use cmux_tray_engine::place::Place;

/// One input: returns, or panics on what the contract above forbids.
pub fn check(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    match protocol::parse(&line) {
        Err(rejected) => {
            let said = protocol::rejected_line(&rejected);
            assert!(!said.contains('\n'), "one line: {said:?}");
        }
        Ok(Request::V1 { args, .. }) => {
            let _ = protocol::split_payload(&args);
        }
        Ok(Request::V2 { id, params, .. }) => {
            if let Some(place) = params.get("place")
                && let Ok(place) = Place::from_json(place)
            {
                // A place that passed its checks names things only: its key and words are safe.
                let _ = (place.key(), place.describe());
                place.check().expect("a place read from JSON passes its own checks");
            }
            let _ = protocol::v2_ok(&id, params);
        }
    }
}
