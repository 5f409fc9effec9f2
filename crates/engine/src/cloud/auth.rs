//! Signing in (docs/cloud-api.md, "Sign-in"): the device-code flow cmux.com serves to
//! command-line clients, and the refresh of an access token.

use std::time::Duration;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use serde_json::json;

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

impl CloudClient {
    /// `POST /api/vault/cli/auth/start`.
    pub async fn device_start(&self, client_name: &str) -> Result<DeviceStart, CloudError> {
        let b: StartBody = self.auth_post("/api/vault/cli/auth/start", json!({"client": client_name})).await?;
        let verification_url = self
            .auth_url()
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

    /// `POST /api/vault/cli/auth/poll`.
    pub async fn device_poll(&self, device_code: &str) -> Result<DevicePoll, CloudError> {
        let b: PollBody = self.auth_post("/api/vault/cli/auth/poll", json!({"deviceCode": device_code})).await?;
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

    /// `POST /api/auth/refresh`: a new access token (and perhaps a new refresh token).
    pub async fn refresh(&self, refresh_token: &SecretString) -> Result<Tokens, CloudError> {
        use secrecy::ExposeSecret;
        let b: RefreshBody = self.auth_post("/api/auth/refresh", json!({"refreshToken": refresh_token.expose_secret()})).await?;
        Ok(Tokens {
            access_token: b.access_token.into(),
            refresh_token: b.refresh_token.map(Into::into),
            expires_in: b.expires_in_seconds.map(Duration::from_secs),
        })
    }
}
