//! What a notice reports, in its own source's words: a Run's outcome and a hand-off's status in
//! the cloud's, a terminal's and the app's in ours. Stored and sent as two words, `source` and
//! `status`, and read back by the source, so "failed" is a Run's or a hand-off's as it was.

use serde::{Deserialize, Serialize};

use super::Source;
use crate::cloud::{HandoffStatus, Outcome};

crate::words::text_enum! {
    /// What a terminal's notice reports.
    pub enum LocalStatus {
        Posted = "posted",
        /// The sender waits for the person (a permission prompt, a question).
        NeedsYou = "needs-you",
    }
}

crate::words::text_enum! {
    /// What a banner of the app's own reports.
    pub enum AppStatus {
        /// A burst's banner, or the summary after quiet hours or a pause.
        Summary = "summary",
        /// The account's sign-in was refused: sign in again.
        SignInNeeded = "sign-in-needed",
    }
}

/// Where a notice came from and what it reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NoticeStatus {
    Run(Outcome),
    Handoff(HandoffStatus),
    Local(LocalStatus),
    App(AppStatus),
}

impl NoticeStatus {
    pub fn source(self) -> Source {
        match self {
            NoticeStatus::Run(_) => Source::Run,
            NoticeStatus::Handoff(_) => Source::Handoff,
            NoticeStatus::Local(_) => Source::Local,
            NoticeStatus::App(_) => Source::App,
        }
    }

    /// The status's word (`finished`, `needs-you`, `posted` …).
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeStatus::Run(o) => o.as_str(),
            NoticeStatus::Handoff(s) => s.as_str(),
            NoticeStatus::Local(s) => s.as_str(),
            NoticeStatus::App(s) => s.as_str(),
        }
    }

    /// A stored or sent status, read as its source's word; an error names the word and the type.
    pub fn read(source: Source, word: &str) -> Result<NoticeStatus, String> {
        fn or_unknown<T: Copy>(name: &str, word: &str, found: Option<T>, all: &[T], as_str: fn(T) -> &'static str) -> Result<T, String> {
            found.ok_or_else(|| crate::words::unknown(name, word, all.iter().map(|v| as_str(*v))))
        }
        Ok(match source {
            Source::Run => NoticeStatus::Run(or_unknown("Outcome", word, Outcome::parse(word), Outcome::ALL, Outcome::as_str)?),
            Source::Handoff => NoticeStatus::Handoff(or_unknown(
                "HandoffStatus",
                word,
                HandoffStatus::parse(word),
                HandoffStatus::ALL,
                HandoffStatus::as_str,
            )?),
            Source::Local => {
                NoticeStatus::Local(or_unknown("LocalStatus", word, LocalStatus::parse(word), LocalStatus::ALL, LocalStatus::as_str)?)
            }
            Source::App => NoticeStatus::App(or_unknown("AppStatus", word, AppStatus::parse(word), AppStatus::ALL, AppStatus::as_str)?),
        })
    }
}

impl std::fmt::Display for NoticeStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The two words it is sent as, side by side in a notice's JSON object.
#[derive(Serialize, Deserialize)]
struct Words<'a> {
    source: Source,
    status: std::borrow::Cow<'a, str>,
}

impl Serialize for NoticeStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Words { source: self.source(), status: self.as_str().into() }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for NoticeStatus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let words = Words::deserialize(d)?;
        NoticeStatus::read(words.source, &words.status).map_err(serde::de::Error::custom)
    }
}

/// The status column holds the word alone; the source column says whose.
impl rusqlite::ToSql for NoticeStatus {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::Borrowed(rusqlite::types::ValueRef::Text(self.as_str().as_bytes())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_read_by_its_source() {
        assert_eq!(NoticeStatus::read(Source::Run, "failed"), Ok(NoticeStatus::Run(Outcome::Failed)));
        assert_eq!(NoticeStatus::read(Source::Handoff, "failed"), Ok(NoticeStatus::Handoff(HandoffStatus::Failed)));
        assert_eq!(NoticeStatus::read(Source::Local, "needs-you"), Ok(NoticeStatus::Local(LocalStatus::NeedsYou)));
        let bad = NoticeStatus::read(Source::Run, "posted").unwrap_err();
        assert!(bad.contains("\"posted\" is not a Outcome"), "{bad}");
        for status in
            [NoticeStatus::Run(Outcome::TimedOut), NoticeStatus::Handoff(HandoffStatus::Cancelled), NoticeStatus::App(AppStatus::Summary)]
        {
            let json = serde_json::to_value(status).unwrap();
            assert_eq!(json, serde_json::json!({"source": status.source().as_str(), "status": status.as_str()}));
            assert_eq!(serde_json::from_value::<NoticeStatus>(json).unwrap(), status);
        }
    }
}
