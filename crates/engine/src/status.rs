//! What `status` shows (the tray, `cmux-tray status`, the socket's `tray.status`): the engine
//! fills it (`engine/status.rs`), the views and the command line read it.

use serde::Serialize;

use crate::cloud::Team;
use crate::store::{AccountRow, FollowRow, StoredNotice};

/// Everything `status` shows.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub account: Option<AccountRow>,
    /// When banners are paused: an RFC 3339 time, or "until resumed".
    pub paused: Option<String>,
    /// Where the sign-in is kept (the keyring, or the file fallback and why).
    pub sign_in_kept_in: Option<String>,
    /// Said in the tray when the sign-in is not in the keyring (the file fallback), never silently.
    #[serde(default)]
    pub sign_in_note: Option<String>,
    /// The signed-in account's teams as the cloud listed them at sign-in (personal first).
    #[serde(default)]
    pub teams: Vec<Team>,
    pub follows: Vec<FollowRow>,
    pub notices: Vec<StoredNotice>,
    pub problems: Vec<String>,
    /// How the cloud is reached: "direct (no proxy is set)", "through http://proxy:3128
    /// (HTTPS_PROXY)". Only the running engine knows it.
    #[serde(default)]
    pub network: Option<String>,
}
