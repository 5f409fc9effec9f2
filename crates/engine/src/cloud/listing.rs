//! A list the cloud answers (the hand-off list, the active Runs), read page by page into what
//! parsed and what did not, bounded whatever the server sends.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::answer::unreadable;
use super::error::CloudError;

/// Entries one list may bring, all its pages together (the follows' own limit, 20,000): past it
/// the rest of the page is skipped unread and no further page is asked for.
pub const LIST_ITEMS_CAP: usize = 20_000;
/// Unreadable entries kept as problems, each with what was wrong; the rest are counted.
pub const LIST_PROBLEMS_KEPT: usize = 20;

/// Items of a list that parsed, and the ones that did not, each with what was wrong. Bounded
/// whatever the server sends: [`LIST_ITEMS_CAP`] items, [`LIST_PROBLEMS_KEPT`] problems.
#[derive(Debug)]
pub struct Listing<T> {
    items: Vec<T>,
    /// The first unreadable entries, each with what was wrong.
    problems: Vec<String>,
    /// Entries read, good and bad.
    read: usize,
    /// Unreadable entries past the problems kept.
    unreadable_untold: usize,
    /// Entries past the cap, not read.
    left_out: usize,
}

impl<T> Default for Listing<T> {
    fn default() -> Self {
        Listing { items: Vec::new(), problems: Vec::new(), read: 0, unreadable_untold: 0, left_out: 0 }
    }
}

impl<T: DeserializeOwned> Listing<T> {
    /// Reads one page's `key` array into the listing, an entry at a time (a page is never held
    /// whole as JSON values), and returns its `nextCursor`.
    pub fn read_page(&mut self, what: &str, body: &[u8], key: &'static str) -> Result<Option<Value>, CloudError> {
        let mut de = serde_json::Deserializer::from_slice(body);
        let page = serde::de::DeserializeSeed::deserialize(Page { listing: self, what, key }, &mut de)
            .and_then(|page| de.end().map(|()| page))
            .map_err(|e| unreadable(what, e.to_string()))?;
        let (found, next) = page;
        if !found {
            return Err(unreadable(what, format!("no \"{key}\" array")));
        }
        Ok(next)
    }

    fn take(&mut self, what: &str, position: usize, entry: Value) {
        self.read += 1;
        match serde_json::from_value::<T>(entry) {
            Ok(v) => self.items.push(v),
            Err(_) if self.problems.len() >= LIST_PROBLEMS_KEPT => self.unreadable_untold += 1,
            Err(e) => self.problems.push(format!("{what}, entry {position}: {e}")),
        }
    }
}

impl<T> Listing<T> {
    /// Whether the list holds as many entries as it may: no further page is read.
    pub fn full(&self) -> bool {
        self.read >= LIST_ITEMS_CAP
    }

    /// The items, and what was wrong with the list: the first unreadable entries, then a line
    /// for the rest.
    pub fn into_parts(self) -> (Vec<T>, Vec<String>) {
        let mut problems = self.problems;
        if self.unreadable_untold > 0 {
            problems.push(format!("and {} more entries could not be read", self.unreadable_untold));
        }
        if self.left_out > 0 {
            problems.push(format!("{} entries past the first {LIST_ITEMS_CAP} were not read", self.left_out));
        }
        (self.items, problems)
    }
}

/// A list page: `{ KEY: [entries…], "nextCursor": … }`, every other key skipped unread.
struct Page<'a, T> {
    listing: &'a mut Listing<T>,
    what: &'a str,
    key: &'static str,
}

impl<'de, T: DeserializeOwned> serde::de::DeserializeSeed<'de> for Page<'_, T> {
    type Value = (bool, Option<Value>);

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de, T: DeserializeOwned> serde::de::Visitor<'de> for Page<'_, T> {
    type Value = (bool, Option<Value>);

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "an object with a \"{}\" array", self.key)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut found, mut next) = (false, None);
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if k == self.key {
                map.next_value_seed(Entries { listing: &mut *self.listing, what: self.what })?;
                found = true;
            } else if k == "nextCursor" {
                next = Some(map.next_value::<Value>()?);
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok((found, next))
    }
}

/// A page's entries, each read and dropped in turn.
struct Entries<'a, T> {
    listing: &'a mut Listing<T>,
    what: &'a str,
}

impl<'de, T: DeserializeOwned> serde::de::DeserializeSeed<'de> for Entries<'_, T> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de, T: DeserializeOwned> serde::de::Visitor<'de> for Entries<'_, T> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of entries")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut position = 0;
        loop {
            // Past the cap an entry is skipped unread.
            if self.listing.full() {
                match seq.next_element::<serde::de::IgnoredAny>()? {
                    Some(_) => self.listing.left_out += 1,
                    None => return Ok(()),
                }
                continue;
            }
            let Some(entry) = seq.next_element::<Value>()? else { return Ok(()) };
            position += 1;
            self.listing.take(self.what, position, entry);
        }
    }
}
