//! `cmux-tray login`: a device code confirmed in the browser, or a token on stdin.

use std::time::Duration;

use serde_json::json;

use cmux_tray_engine::config::Paths;

use crate::{engine_request, engine_request_within};

pub(crate) async fn login(paths: &Paths, token_stdin: bool, team: Option<String>) -> anyhow::Result<()> {
    if token_stdin {
        let mut token = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut token)?;
        let token = token.trim();
        anyhow::ensure!(!token.is_empty(), "no token on stdin");
        let me = engine_request(paths, "account.sign_in_token", json!({"access_token": token, "team": team})).await?;
        println!("signed in as {}", me["email"].as_str().unwrap_or("?"));
        return Ok(());
    }
    let start = engine_request(paths, "account.device_start", json!({})).await?;
    let url = start["verificationUrl"].as_str().unwrap_or_default();
    println!("To sign in, open {url}");
    println!("and confirm the code {}", start["userCode"].as_str().unwrap_or_default());
    // Opening the page is a courtesy; the line above is what counts.
    let page = url.to_string();
    tokio::spawn(async move {
        if let Err(e) = cmux_tray_engine::reveal::open_sign_in_page(&page).await {
            tracing::debug!("opening the sign-in page: {e}");
        }
    });
    let within = Duration::from_secs(start["expiresInSeconds"].as_u64().unwrap_or(900) + 30);
    let me = engine_request_within(paths, "account.device_wait", json!({"team": team}), within).await?;
    println!("signed in as {}", me["email"].as_str().unwrap_or("?"));
    Ok(())
}
