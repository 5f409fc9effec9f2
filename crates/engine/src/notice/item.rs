//! What a notice is about, as one type: a cloud Run, a hand-off, a place in this machine's
//! terminals, or the app itself. One live banner per item: a later notice for the same item
//! replaces the last one's banner. Stored and sent as `<source>:<rest>` (`run:run_…`,
//! `handoff:ho_…`, `local:W1:S1`, `app:burst`), the source's word from [`Source`]; notice keys
//! are built here too, so no other file spells or splits an item.

use std::fmt;

use crate::cloud::{BadId, HandoffId, RunId};

use super::Source;

/// The item of the account's "sign in again" banner (one per account), an app banner of its own
/// word since its first version, kept so stored banners are still replaced.
const ACCOUNT: &str = "account";

/// What a notice is about.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    Run(RunId),
    Handoff(HandoffId),
    /// A terminal's surface, pane or single notice: what follows `local:`.
    Local(String),
    /// The app's own banners (a burst, a summary, "cannot start"): what follows `app:`.
    App(String),
    /// The account's "sign in again": the account.
    Account(String),
}

/// A stored or sent item that is not one: what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadItem {
    #[error("item {0:?} has no source (run:, handoff:, local:, app:)")]
    NoSource(String),
    #[error(transparent)]
    Id(#[from] BadId),
}

impl Item {
    /// The source whose settings and banner words its notices take.
    pub fn source(&self) -> Source {
        match self {
            Item::Run(_) => Source::Run,
            Item::Handoff(_) => Source::Handoff,
            Item::Local(_) => Source::Local,
            Item::App(_) | Item::Account(_) => Source::App,
        }
    }

    /// A Run or a hand-off: what the cloud tells, and what a card shows.
    pub fn is_cloud(&self) -> bool {
        matches!(self, Item::Run(_) | Item::Handoff(_))
    }

    fn word(&self) -> &'static str {
        match self {
            Item::Account(_) => ACCOUNT,
            other => other.source().as_str(),
        }
    }

    fn rest(&self) -> &str {
        match self {
            Item::Run(id) => id.as_str(),
            Item::Handoff(id) => id.as_str(),
            Item::Local(rest) | Item::App(rest) | Item::Account(rest) => rest,
        }
    }

    /// Reads a stored or sent item; a Run's or hand-off's id is checked.
    pub fn parse(text: &str) -> Result<Item, BadItem> {
        let no_source = || BadItem::NoSource(text.chars().take(64).collect());
        let (word, rest) = text.split_once(':').ok_or_else(no_source)?;
        if word == ACCOUNT {
            return Ok(Item::Account(rest.into()));
        }
        Ok(match Source::parse(word).ok_or_else(no_source)? {
            Source::Run => Item::Run(RunId::parse(rest)?),
            Source::Handoff => Item::Handoff(HandoffId::parse(rest)?),
            Source::Local => Item::Local(rest.into()),
            Source::App => Item::App(rest.into()),
        })
    }

    /// The key of a notice that is one of several about this item: the item, then what sets it
    /// apart (a hand-off's turn and status; a sign-in's moment).
    pub fn key_with(&self, detail: impl fmt::Display) -> String {
        format!("{self}:{detail}")
    }

    /// The key of the notice that is the item's only one (a Run's end; a terminal's notice,
    /// whose item is its cmux id; an app banner).
    pub fn key(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.word(), self.rest())
    }
}

impl std::str::FromStr for Item {
    type Err = BadItem;
    fn from_str(s: &str) -> Result<Item, BadItem> {
        Item::parse(s)
    }
}

impl serde::Serialize for Item {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Item {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Item::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl rusqlite::ToSql for Item {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::from(self.to_string()))
    }
}

impl rusqlite::types::FromSql for Item {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        Item::parse(value.as_str()?).map_err(|e| rusqlite::types::FromSqlError::Other(e.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "run_0123456789abcdef0123";
    const HANDOFF: &str = "ho_0123456789abcdef0123";

    #[test]
    fn each_item_reads_back_as_it_was_written() {
        for item in [
            Item::Run(RunId::parse(RUN).unwrap()),
            Item::Handoff(HandoffId::parse(HANDOFF).unwrap()),
            Item::Local("W1:S1".into()),
            Item::Local("run:run_0123456789abcdef0123".into()),
            Item::App("burst".into()),
            Item::Account("a@example.com".into()),
        ] {
            assert_eq!(Item::parse(&item.to_string()), Ok(item.clone()), "{item}");
            let json = serde_json::to_string(&item).unwrap();
            assert_eq!(serde_json::from_str::<Item>(&json).unwrap(), item);
        }
    }

    #[test]
    fn the_stored_words_are_the_documented_ones() {
        // docs/architecture.md "Exactly once": `run:<id>`, `handoff:<id>:<turn>:<status>`.
        let run = Item::Run(RunId::parse(RUN).unwrap());
        assert_eq!(run.to_string(), format!("run:{RUN}"));
        let handoff = Item::Handoff(HandoffId::parse(HANDOFF).unwrap());
        assert_eq!(handoff.key_with("2:done"), format!("handoff:{HANDOFF}:2:done"));
        assert_eq!(Item::Account("a".into()).source(), Source::App);
        assert_eq!(Item::Account("a".into()).to_string(), "account:a");
    }

    #[test]
    fn a_bad_item_is_named() {
        assert!(matches!(Item::parse("runrun_1"), Err(BadItem::NoSource(_))));
        assert!(matches!(Item::parse("cloud:x"), Err(BadItem::NoSource(_))));
        let bad = Item::parse("run:run_nope").unwrap_err();
        assert!(bad.to_string().contains("run_nope"), "{bad}");
    }
}
