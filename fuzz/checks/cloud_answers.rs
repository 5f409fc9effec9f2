//! What the cloud answers (docs/cloud-api.md): Runs, hand-offs, `/v1/me`, the sign-in's
//! answers, error bodies and list pages. Whatever the body, reading it gives a value or says
//! why not, and a list stays within its bounds.

use cmux_tray_engine::cloud::answer::{error_body, parse, read_answer};
use cmux_tray_engine::cloud::auth::{DevicePoll, DeviceStart, Tokens};
use cmux_tray_engine::cloud::listing::Listing;
use cmux_tray_engine::cloud::{Handoff, Me, Run};

/// One input: returns, or panics on what the contract above forbids.
pub fn check(data: &[u8]) {
    let Some((&status, body)) = data.split_first() else { return };
    // The first byte: under 128 a success, else 400 and up (400 + the rest).
    let status = match status {
        0..=127 => reqwest::StatusCode::OK,
        b => reqwest::StatusCode::from_u16(400 + u16::from(b - 128)).unwrap_or(reqwest::StatusCode::BAD_REQUEST),
    };
    let _ = error_body(body);
    if let Ok(body) = read_answer("fuzz", status, None, body.to_vec()) {
        let _ = parse::<Run>("fuzz", body.clone());
        let _ = parse::<Handoff>("fuzz", body.clone());
        let _ = parse::<Me>("fuzz", body.clone());
        let _ = DeviceStart::read(&reqwest::Url::parse("https://cmux.com/").unwrap(), body.clone());
        let _ = DevicePoll::read(body.clone());
        let _ = Tokens::read_refresh(body.clone());
        for key in ["handoffs", "runs"] {
            let mut handoffs = Listing::<Handoff>::default();
            let _ = handoffs.read_page("fuzz", &body, key);
            let (items, problems) = handoffs.into_parts();
            assert!(items.len() + problems.len() <= 20_000 + 22, "a list stays bounded");
            let mut runs = Listing::<Run>::default();
            let _ = runs.read_page("fuzz", &body, key);
        }
    }
}
