//! The sign-in window's states in words: waiting for the browser, expired, refused, done.

use serde::Serialize;

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
pub fn waiting(expires_in_seconds: u64) -> SignInView {
    SignInView {
        state: SignInState::Waiting,
        headline: "Waiting for you to confirm the code in your browser…".into(),
        detail: format!("The code is good for {}.", super::words::span(expires_in_seconds as i64 * 1000)),
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
pub fn ended(how: Ended) -> SignInView {
    match how {
        Ended::SignedIn { email } => SignInView {
            state: SignInState::Done,
            headline: format!("Signed in as {email}."),
            detail: "You can close this window: cmux-tray keeps you signed in.".into(),
        },
        Ended::Expired => SignInView {
            state: SignInState::Expired,
            headline: "This code expired before it was confirmed.".into(),
            detail: "Get a new code and confirm it in the browser.".into(),
        },
        Ended::Refused { why } => {
            SignInView { state: SignInState::Refused, headline: "The sign-in did not go through.".into(), detail: why }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_end_reads_in_words() {
        assert_eq!(waiting(900).detail, "The code is good for 15 min.");
        let done = ended(Ended::SignedIn { email: "ada@example.com".into() });
        assert_eq!((done.state, done.headline.as_str()), (SignInState::Done, "Signed in as ada@example.com."));
        assert_eq!(ended(Ended::Expired).state, SignInState::Expired);
        let refused = ended(Ended::Refused { why: "the cloud refused (401)".into() });
        assert_eq!((refused.state, refused.detail.as_str()), (SignInState::Refused, "the cloud refused (401)"));
    }
}
