//! What `status` shows (the tray, `cmux-tray status`, the socket's `tray.status`): the engine
//! fills it (`service/health.rs`), the views and the command line read it.

use crate::lang::Lang;
use crate::lang::say;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::cloud::Team;
use crate::store::{AccountProblem, AccountRow, FollowRow, StoredNotice};

/// Everything `status` shows.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub account: Option<AccountRow>,
    /// When banners are paused, in words: an RFC 3339 time, or "until resumed".
    pub paused: Option<String>,
    /// The end of the pause, RFC 3339; none when not paused or paused until resumed.
    #[serde(default)]
    pub paused_until: Option<String>,
    /// Paused until resumed.
    #[serde(default)]
    pub paused_indefinitely: bool,
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
    /// What is wrong now, each as its kind (said where it is shown: a line in the person's
    /// language, and its whole story in English behind "Why"); in JSON with that story as
    /// `text`, for scripts that print it.
    #[serde(serialize_with = "problems_with_text")]
    pub problems: Vec<Problem>,
    /// A newer version the release feed said (docs/configuration.md, "Updates").
    #[serde(default)]
    pub update_available: Option<String>,
    /// How the cloud is reached: "direct (no proxy is set)", "through http://proxy:3128
    /// (HTTPS_PROXY)". Only the running engine knows it.
    #[serde(default)]
    pub network: Option<String>,
    /// What holds banners back right now (empty: they show as notices come). Only the running
    /// engine knows the notification server and the system's switch.
    #[serde(default)]
    pub held_by: Vec<HeldBy>,
    /// Why the untold notices wait, when something keeps them untold (no server, banners off in
    /// the system); said on each untold notice's row.
    #[serde(default)]
    pub untold_wait_for: Option<HeldBy>,
}

crate::words::text_enum! {
    /// What holds banners back (`status`, docs/notices.md §3, README "When no banner shows").
    pub enum HeldBy {
        /// Nobody serves `org.freedesktop.Notifications` (or the session bus is gone): notices
        /// stay untold and go out when one appears.
        NoServer = "no notification server",
        /// The system's own setting (macOS, Windows): notices stay untold until it is turned on.
        SystemOff = "banners turned off in the system",
        /// `delivery.banners = false`: notices are recorded without a banner.
        BannersOff = "banners turned off",
        QuietHours = "quiet hours",
        Paused = "paused",
    }
}

/// Something wrong that the person is told (the tray's problem lines, `status`), its words made
/// here and nowhere else: `headline` in the person's language, `Display` the whole story.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Problem {
    /// The cloud cannot be reached, and why.
    Offline {
        why: String,
    },
    /// A banner is up but could not be saved as told (it is remembered in memory meanwhile).
    NotSaved {
        path: String,
        why: String,
    },
    /// The notification server would not show a banner after its tries.
    BannerNotShown {
        title: String,
        why: String,
    },
    /// The person has turned the app's banners off in the system's settings: they wait.
    BannersOff {
        why: String,
    },
    /// No notification server answers: banners wait for one.
    NoServer {
        why: String,
    },
    /// The cloud refused the access token.
    TokenRefused,
    /// The refresh token could not be saved, read or removed where it is kept.
    SignInNotKept {
        why: String,
    },
    SignInNotRead {
        why: String,
    },
    SignInNotRemoved {
        why: String,
    },
    /// The config file's `[delivery]` was refused; the last good settings stay in force.
    DeliverySettings {
        file: String,
        why: String,
    },
    /// The most items are followed already.
    TooManyFollows {
        max: usize,
        id: String,
    },
    /// A new follow could not be saved.
    FollowNotSaved {
        why: String,
    },
    /// A followed item's answer (or its end) could not be saved; it is asked for again.
    AnswerNotSaved {
        id: String,
        end: bool,
        why: String,
    },
    /// What the cloud answered could not be read.
    Unreadable {
        why: String,
    },
    /// An entry of a list the cloud sent could not be read (said by the list's reader).
    Listing {
        said: String,
    },
}

impl Problem {
    /// One short sentence in a person's words, without the library's error (the tray's menu);
    /// `Display` is the whole story (status, the log, the menu's "Why").
    pub fn headline(&self, lang: &Lang) -> String {
        match self {
            Problem::Offline { .. } => say!(lang, "problem-offline"),
            Problem::NotSaved { .. } => say!(lang, "problem-not-saved"),
            Problem::BannerNotShown { .. } => say!(lang, "problem-banner-not-shown"),
            Problem::BannersOff { .. } => say!(lang, "problem-banners-off"),
            Problem::NoServer { .. } => say!(lang, "problem-no-server"),
            Problem::TokenRefused => AccountProblem::TokenRefused.headline(lang),
            Problem::SignInNotKept { .. } => say!(lang, "problem-sign-in-not-kept"),
            Problem::SignInNotRead { .. } => say!(lang, "problem-sign-in-not-read"),
            Problem::SignInNotRemoved { .. } => say!(lang, "problem-sign-in-not-removed"),
            Problem::DeliverySettings { .. } => say!(lang, "problem-delivery-settings"),
            Problem::TooManyFollows { max, id } => say!(lang, "problem-too-many-follows", max = *max, id = id.as_str()),
            Problem::FollowNotSaved { .. } => say!(lang, "problem-follow-not-saved"),
            Problem::AnswerNotSaved { .. } => say!(lang, "problem-answer-not-saved"),
            Problem::Unreadable { .. } | Problem::Listing { .. } => say!(lang, "problem-unreadable"),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Offline { why } => write!(f, "Offline: the cloud cannot be reached ({why})"),
            Problem::NotSaved { path, why } => write!(f, "Could not save to {path}: {why}"),
            Problem::BannerNotShown { title, why } => write!(f, "A banner could not be shown (\"{title}\"): {why}"),
            Problem::BannersOff { why } => write!(f, "{why}; notices wait in the history until then"),
            Problem::NoServer { why } => {
                write!(f, "No notification server answers: banners wait until one does, notices are kept meanwhile ({why})")
            }
            Problem::TokenRefused => AccountProblem::TokenRefused.fmt(f),
            Problem::SignInNotKept { why } => write!(f, "the sign-in could not be kept: {why}"),
            Problem::SignInNotRead { why } => write!(f, "the saved sign-in could not be read: {why}"),
            Problem::SignInNotRemoved { why } => write!(f, "the saved sign-in could not be removed: {why}"),
            Problem::DeliverySettings { file, why } => write!(f, "{file}: {why}; keeping the last good delivery settings"),
            Problem::TooManyFollows { max, id } => write!(f, "Following {max} items, the most at once: {id} was not followed"),
            Problem::FollowNotSaved { why } => write!(f, "a follow could not be saved: {why}"),
            Problem::AnswerNotSaved { id, end: false, why } => write!(f, "saving {id} failed: {why}"),
            Problem::AnswerNotSaved { id, end: true, why } => write!(f, "saving the end of {id} failed: {why}"),
            Problem::Unreadable { why } | Problem::Listing { said: why } => f.write_str(why),
        }
    }
}

/// Each problem as its kind and fields, with its whole story as `text`.
fn problems_with_text<S: serde::Serializer>(problems: &[Problem], out: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Said<'a> {
        #[serde(flatten)]
        problem: &'a Problem,
        text: String,
    }
    out.collect_seq(problems.iter().map(|problem| Said { problem, text: problem.to_string() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_is_kept_as_its_kind_and_said_in_the_persons_language() {
        let p = AccountProblem::NotFound { kept: "the keyring".into() };
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json, serde_json::json!({"kind": "not-found", "kept": "the keyring"}));
        assert_eq!(serde_json::from_value::<AccountProblem>(json).unwrap(), p);
        let de = Lang::in_language(crate::lang::Language::German);
        assert_ne!(p.headline(&de), p.headline(&Lang::english()), "German in a German tray");
        assert_eq!(p.to_string(), "The saved sign-in was not found in the keyring: sign in again.");
        let offline = Problem::Offline { why: "connection refused".into() };
        assert_eq!(serde_json::to_value(&offline).unwrap(), serde_json::json!({"kind": "offline", "why": "connection refused"}));
        assert_ne!(offline.headline(&de), offline.headline(&Lang::english()));
    }
}
