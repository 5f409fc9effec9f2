//! `cmux-tray login`: a device code confirmed in the browser, or a token on stdin.

use std::time::Duration;

use cmux_tray_engine::cloud::TeamId;
use cmux_tray_engine::config::Paths;
use cmux_tray_engine::local::requests::{DeviceStart, DeviceWait, SignInToken};

use crate::{send, send_within};

pub(crate) async fn login(paths: &Paths, token_stdin: bool, team: Option<String>) -> anyhow::Result<()> {
    let team = team.map(|t| TeamId::parse(&t)).transpose()?;
    if token_stdin {
        let mut token = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut token)?;
        let token = token.trim();
        anyhow::ensure!(!token.is_empty(), "no token on stdin");
        let me = send(paths, &SignInToken { access_token: token.to_string().into(), team }).await?;
        println!("signed in as {}", me["email"].as_str().unwrap_or("?"));
        return Ok(());
    }
    let start = send(paths, &DeviceStart).await?;
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
    let me = send_within(paths, &DeviceWait { team }, within).await?;
    println!("signed in as {}", me["email"].as_str().unwrap_or("?"));
    Ok(())
}
