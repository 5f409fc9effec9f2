//! The app's windows, each a page of its own: read by the calls and the messages alike.

use serde::{Deserialize, Serialize};

/// The app's windows, each a page of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Page {
    #[serde(rename = "history")]
    History,
    #[serde(rename = "settings")]
    Settings,
    #[serde(rename = "signin")]
    SignIn,
}

impl Page {
    pub const ALL: &'static [Page] = &[Page::History, Page::Settings, Page::SignIn];

    /// Its word: the page's file (`history.html`), `--open`'s argument, the window's label.
    pub const fn as_str(self) -> &'static str {
        match self {
            Page::History => "history",
            Page::Settings => "settings",
            Page::SignIn => "signin",
        }
    }

    pub fn parse(word: &str) -> Option<Page> {
        Page::ALL.iter().copied().find(|p| p.as_str() == word)
    }
}

impl std::fmt::Display for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
