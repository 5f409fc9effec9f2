//! What passes between the tray and its windows (docs/architecture.md "Two processes": one
//! JSON object a line, as its table writes them).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::Call;
use crate::key::ChannelKey;
use crate::page::Page;

/// A proxy's whole URL, credentials included, for the one client that uses it. Its `Debug`
/// never shows it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProxyLine(String);

impl std::fmt::Debug for ProxyLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProxyLine(..)")
    }
}

impl ProxyLine {
    pub fn new(url: &str) -> ProxyLine {
        ProxyLine(url.to_string())
    }

    /// The URL, for the client that connects through it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// What reaches the tray.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToTray {
    /// A second launch of the app hands over its arguments (a `cmux-tray://` link, `--open`).
    Launched { argv: Vec<String> },
    /// A windows process started to show `page`: the tray takes it as its windows process, or
    /// shows the page in the one it has (and this one ends). Without the launch's key it is
    /// only a launch: the tray shows the page in a windows process of its own.
    Attach {
        page: Page,
        query: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<ChannelKey>,
    },
    /// The windows process has no window left and would end: the tray stops sending it pages
    /// and answers `Detached` (a page sent before that answer still opens there).
    Detach,
    /// A page's call, typed (its `command` and `args` on the line), answered by `Answer` with
    /// the same id.
    Call {
        id: u64,
        #[serde(flatten)]
        call: Call,
    },
}

/// What the tray sends to its windows process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromTray {
    /// The answer to `Attach`: false when another windows process was shown the page instead.
    Attached { chosen: bool },
    /// A call's answer: its value (`ok` on the line), or why it failed in words the page shows
    /// (`error`).
    Answer {
        id: u64,
        #[serde(flatten, with = "answer")]
        result: Result<Value, String>,
    },
    /// Something the windows show changed: they redraw.
    Changed,
    /// Show this page (the tray's menu, a link, a click on a banner asked for it).
    Open { page: Page, query: Option<String> },
    /// The answer to `Detach`: nothing more is sent to this windows process.
    Detached,
    /// Install the update the release feed offers (its signed manifest at `feed`), on the
    /// platforms whose installers update themselves (macOS, Windows), through `proxy` when the
    /// settings or the environment route the feed through one.
    Install {
        feed: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proxy: Option<ProxyLine>,
    },
}

/// An answer's `Result` on the line: `"ok": value` or `"error": "words"`.
mod answer {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Line {
        Ok(Value),
        Error(String),
    }

    pub fn serialize<S: Serializer>(result: &Result<Value, String>, s: S) -> Result<S::Ok, S::Error> {
        match result {
            Ok(value) => Line::Ok(value.clone()),
            Err(words) => Line::Error(words.clone()),
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Result<Value, String>, D::Error> {
        Ok(match Line::deserialize(d)? {
            Line::Ok(value) => Ok(value),
            Line::Error(words) => Err(words),
        })
    }
}
