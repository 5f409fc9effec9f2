//! Signing in (docs/cloud-api.md, "Sign-in"): the device-code flow cmux.com serves to
//! command-line clients, and the refresh of an access token.

use std::time::Duration;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::answer::parse;
use super::{CloudClient, CloudError};

/// A device sign-in under way: the code to show, the page to open.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceStart {
    #[serde(skip_serializing)]
    pub device_code: String,
    pub user_code: String,
    /// Absolute: the auth origin joined with the server's `verificationUrl`.
    pub verification_url: String,
    pub expires_in_seconds: u64,
    pub interval_seconds: u64,
}

/// Tokens from a sign-in or a refresh.
#[derive(Clone)]
pub struct Tokens {
    pub access_token: SecretString,
    pub refresh_token: Option<SecretString>,
    /// When the server says; `None` means "until a 401 says otherwise".
    pub expires_in: Option<Duration>,
}

/// How a device sign-in ended.
pub enum DevicePoll {
    Pending,
    Expired,
    Approved(Tokens),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StartBody {
    device_code: String,
    user_code: String,
    verification_url: String,
    expires_in_seconds: u64,
    interval_seconds: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PollBody {
    status: String,
    access_token: Option<String>,
    refresh_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RefreshBody {
    access_token: String,
    refresh_token: Option<String>,
    expires_in_seconds: Option<u64>,
}

const START: &str = "/api/vault/cli/auth/start";
const POLL: &str = "/api/vault/cli/auth/poll";
const REFRESH: &str = "/api/auth/refresh";

impl CloudClient {
    /// `POST /api/vault/cli/auth/start`.
    pub async fn device_start(&self, client_name: &str) -> Result<DeviceStart, CloudError> {
        let bytes = self.auth_post_bytes(START, json!({"client": client_name})).await?;
        DeviceStart::read(self.auth_url(), bytes)
    }

    /// `POST /api/vault/cli/auth/poll`.
    pub async fn device_poll(&self, device_code: &str) -> Result<DevicePoll, CloudError> {
        DevicePoll::read(self.auth_post_bytes(POLL, json!({"deviceCode": device_code})).await?)
    }

    /// `POST /api/auth/refresh`: a new access token (and perhaps a new refresh token).
    pub async fn refresh(&self, refresh_token: &SecretString) -> Result<Tokens, CloudError> {
        use secrecy::ExposeSecret;
        Tokens::read_refresh(self.auth_post_bytes(REFRESH, json!({"refreshToken": refresh_token.expose_secret()})).await?)
    }
}

impl DeviceStart {
    /// The start's answer, its page made absolute against the auth origin `auth`.
    pub fn read(auth: &url::Url, bytes: Vec<u8>) -> Result<DeviceStart, CloudError> {
        let b: StartBody = parse(&format!("POST {START}"), bytes)?;
        let verification_url = auth
            .join(&b.verification_url)
            .map(|u| u.to_string())
            .map_err(|e| CloudError::Unreadable { what: "device sign-in".into(), detail: format!("verificationUrl: {e}") })?;
        Ok(DeviceStart {
            device_code: b.device_code,
            user_code: b.user_code,
            verification_url,
            expires_in_seconds: b.expires_in_seconds.clamp(1, 3600),
            interval_seconds: b.interval_seconds.clamp(1, 60),
        })
    }
}

impl DevicePoll {
    /// A poll's answer: pending, expired, or approved with its tokens.
    pub fn read(bytes: Vec<u8>) -> Result<DevicePoll, CloudError> {
        let b: PollBody = parse(&format!("POST {POLL}"), bytes)?;
        match (b.status.as_str(), b.access_token) {
            ("pending", _) => Ok(DevicePoll::Pending),
            ("expired", _) => Ok(DevicePoll::Expired),
            ("approved", Some(access)) => Ok(DevicePoll::Approved(Tokens {
                access_token: access.into(),
                refresh_token: b.refresh_token.map(Into::into),
                expires_in: None,
            })),
            (other, _) => Err(CloudError::Unreadable {
                what: "device sign-in".into(),
                detail: format!("status {other:?} without the tokens it needs"),
            }),
        }
    }
}

impl Tokens {
    /// A refresh's answer.
    pub fn read_refresh(bytes: Vec<u8>) -> Result<Tokens, CloudError> {
        let b: RefreshBody = parse(&format!("POST {REFRESH}"), bytes)?;
        Ok(Tokens {
            access_token: b.access_token.into(),
            refresh_token: b.refresh_token.map(Into::into),
            expires_in: b.expires_in_seconds.map(Duration::from_secs),
        })
    }
}
