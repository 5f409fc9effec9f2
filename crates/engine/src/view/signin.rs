//! The sign-in window's states in words: waiting for the browser, expired, refused, done.

use serde::Serialize;

use crate::lang::Lang;
use crate::lang::say;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignInState {
    Waiting,
    Expired,
    Refused,
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignInView {
    pub state: SignInState,
    pub headline: String,
    /// What to do next, or what went wrong.
    pub detail: String,
}

/// While the person confirms the code in the browser.
pub fn waiting(lang: &Lang, expires_in_seconds: u64) -> SignInView {
    SignInView {
        state: SignInState::Waiting,
        headline: say!(lang, "signin-waiting"),
        detail: say!(lang, "signin-good-for", span = super::times::span(lang, expires_in_seconds as i64 * 1000)),
    }
}

/// How a sign-in ended, as the window tells it.
pub enum Ended {
    SignedIn {
        email: String,
    },
    /// The code expired before it was confirmed.
    Expired,
    /// The cloud or the app refused it, with why.
    Refused {
        why: String,
    },
}

/// How a sign-in ended, in words.
pub fn ended(lang: &Lang, how: Ended) -> SignInView {
    match how {
        Ended::SignedIn { email } => SignInView {
            state: SignInState::Done,
            headline: say!(lang, "signin-done", email = email),
            detail: say!(lang, "signin-done-detail"),
        },
        Ended::Expired => {
            SignInView { state: SignInState::Expired, headline: say!(lang, "signin-expired"), detail: say!(lang, "signin-expired-detail") }
        }
        Ended::Refused { why } => SignInView { state: SignInState::Refused, headline: say!(lang, "signin-refused"), detail: why },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_end_reads_in_words() {
        let en = Lang::english();
        assert_eq!(waiting(&en, 900).detail, "The code is good for 15 min.");
        let done = ended(&en, Ended::SignedIn { email: "ada@example.com".into() });
        assert_eq!((done.state, done.headline.as_str()), (SignInState::Done, "Signed in as ada@example.com."));
        assert_eq!(ended(&en, Ended::Expired).state, SignInState::Expired);
        let refused = ended(&en, Ended::Refused { why: "the cloud refused (401)".into() });
        assert_eq!((refused.state, refused.detail.as_str()), (SignInState::Refused, "the cloud refused (401)"));
    }
}
