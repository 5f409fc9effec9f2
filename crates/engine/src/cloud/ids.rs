//! Checked ids. An id reaches a URL path only through these types, so nothing but the store's
//! own id shape (`run_`/`ho_`/`team_` + 20 lowercase hex digits) is ever put into a path.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What was wrong with an id, and which kind it was meant to be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} id {value:?} is not {prefix} followed by 20 lowercase hex digits")]
pub struct BadId {
    pub kind: &'static str,
    pub prefix: &'static str,
    pub value: String,
}

fn check(kind: &'static str, prefix: &'static str, value: &str) -> Result<String, BadId> {
    let ok = value.strip_prefix(prefix).is_some_and(|hex| hex.len() == 20 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
    if ok {
        Ok(value.to_string())
    } else {
        // Cut what we echo back: a hostile value must not flood a log line.
        let value: String = value.chars().take(64).collect();
        Err(BadId { kind, prefix, value })
    }
}

macro_rules! checked_id {
    ($(#[$doc:meta])* $name:ident, $kind:literal, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            pub fn parse(value: &str) -> Result<Self, BadId> {
                check($kind, $prefix, value).map(Self)
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = BadId;
            fn try_from(value: String) -> Result<Self, BadId> {
                Self::parse(&value)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = BadId;
            fn from_str(s: &str) -> Result<Self, BadId> {
                Self::parse(s)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

checked_id!(
    /// A cloud Run: `run_` + 20 hex digits.
    RunId, "Run", "run_"
);
checked_id!(
    /// A hand-off in the hand-off store: `ho_` + 20 hex digits.
    HandoffId, "hand-off", "ho_"
);
checked_id!(
    /// A team, sent as `x-cmux-team`: `team_` + 20 hex digits.
    TeamId, "team", "team_"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_store_ids_pass() {
        assert!(RunId::parse("run_0123456789abcdef0123").is_ok());
        assert!(HandoffId::parse("ho_0123456789abcdef0123").is_ok());
        assert!(TeamId::parse("team_0123456789abcdef0123").is_ok());
        for bad in [
            "",
            "run_",
            "run_0123456789ABCDEF0123",  // upper case
            "run_0123456789abcdef012",   // 19 digits
            "run_0123456789abcdef01234", // 21 digits
            "run_0123456789abcdef012/",  // a path separator
            "run_../../../../etc/passwd1",
            "ho_0123456789abcdef0123", // another kind's prefix
            "run_0123456789abcdef012%2F",
            " run_0123456789abcdef0123",
        ] {
            let err = RunId::parse(bad).unwrap_err();
            assert_eq!(err.kind, "Run", "{bad:?}");
        }
        let err = HandoffId::parse("ho_?after=1").unwrap_err();
        assert_eq!(err.to_string(), "hand-off id \"ho_?after=1\" is not ho_ followed by 20 lowercase hex digits");
    }

    #[test]
    fn deserializing_checks_too() {
        let bad: Result<RunId, _> = serde_json::from_str("\"run_nope\"");
        assert!(bad.unwrap_err().to_string().contains("run_nope"));
    }
}
