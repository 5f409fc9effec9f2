//! The notices: each key saved once, untold until the deliverer decides it, and read back for
//! the deliverer, the history and `status`.

use std::sync::Arc;

use const_format::concatcp;
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{SILENT, Store, StoreError, TOLD, UNTOLD, group};
use crate::notice::{Item, Notice, NoticeStatus, Source};
use crate::policy::Reason;

crate::words::text_enum! {
    /// Where a notice is on its way to a banner: waiting (`untold`), done (`told`, whether or not
    /// a banner showed: `delivery` says), or never to be told (`silent`: it was already so when
    /// first seen).
    pub enum NoticeState {
        Untold = "untold",
        Told = "told",
        Silent = "silent",
    }
}

/// A notice as stored, with its delivery state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredNotice {
    pub seq: i64,
    pub key: String,
    pub item: Item,
    /// Where it came from and what it reports (sent as `source` and `status`).
    #[serde(flatten)]
    pub status: NoticeStatus,
    pub title: String,
    pub body: String,
    pub urgent: bool,
    pub created_at: i64,
    pub state: NoticeState,
    pub told_at: Option<i64>,
    pub banner_id: Option<u32>,
    pub read_at: Option<i64>,
    /// Local notices: the cmux id, subtitle and the surface they came from.
    pub cmux_id: Option<String>,
    pub subtitle: String,
    pub workspace_id: Option<String>,
    pub surface_id: Option<String>,
    /// Why it did or did not show a banner (`shown`, `quiet hours`, `focused` …).
    pub delivery: Option<Reason>,
    /// Whether its banner asked for a sound.
    pub sound: bool,
    pub session_id: Option<String>,
    /// A terminal's body as it sent it (one line, uncut); `None` for other notices and for
    /// local ones stored before schema 4.
    #[serde(default)]
    pub local_body: Option<String>,
    /// A hand-off's host (see `Notice::host`).
    #[serde(default)]
    pub host: Option<String>,
    /// Why its banner could not be shown (delivery `not shown`): what the server said.
    #[serde(default)]
    pub failure: Option<String>,
    /// The terminal a local notice came from (schema 6; `None` before).
    #[serde(default)]
    pub place: Option<crate::place::Place>,
    /// Why the last click opened this card rather than the terminal ("tmux pane %3 is gone").
    #[serde(default)]
    pub reveal_note: Option<String>,
}

impl StoredNotice {
    pub fn source(&self) -> Source {
        self.status.source()
    }
}

impl Store {
    /// A notice from a source without a follow (local agents). Returns whether it is new.
    pub fn record_notice(&self, n: &Notice, now: i64) -> Result<bool, StoreError> {
        self.record_notices(std::slice::from_ref(n), now).pop().unwrap_or_else(|| Err(self.err(group::lost())))
    }

    /// Several such notices in one commit, each in a savepoint of its own (one that fails fails
    /// alone). Returns, for each, whether it is new.
    pub fn record_notices(&self, notices: &[Notice], now: i64) -> Vec<Result<bool, StoreError>> {
        let writes = notices.iter().cloned().map(|n| move |c: &Connection| insert_notice(c, &n, None, now, NoticeState::Untold));
        self.group.write_each(&self.conn, writes).into_iter().map(|r| r.map_err(|e| self.err(e))).collect()
    }

    /// [`Self::record_notices`] for a caller on the async runtime: the notices queue for the
    /// group's next commit, made on the group's blocking thread, so neither the commit nor a
    /// checkpoint it triggers ever holds the runtime's thread (the daemon has one).
    pub async fn record_notices_grouped(self: &Arc<Self>, notices: Vec<Notice>, now: i64) -> Vec<Result<bool, StoreError>> {
        let (writes, answers): (Vec<_>, Vec<_>) = notices
            .into_iter()
            .map(|n| {
                let (tx, rx) = tokio::sync::oneshot::channel();
                let write = move |c: &Connection| insert_notice(c, &n, None, now, NoticeState::Untold);
                let reply = move |result| {
                    let _ = tx.send(result);
                };
                ((write, reply), rx)
            })
            .unzip();
        if self.group.queue_each(writes) {
            let store = Arc::clone(self);
            tokio::task::spawn_blocking(move || store.group.lead(&store.conn));
        }
        let mut saved = Vec::with_capacity(answers.len());
        for rx in answers {
            saved.push(rx.await.unwrap_or_else(|_| Err(group::lost())).map_err(|e| self.err(e)));
        }
        saved
    }

    /// Notices saved but not yet told, oldest first.
    pub fn untold(&self) -> Result<Vec<StoredNotice>, StoreError> {
        self.notices_where(concatcp!("state = ", UNTOLD, " ORDER BY seq"), [])
    }

    /// The keys and sequence numbers of the untold notices not of `source` saved after `seq`
    /// (all of them from `i64::MIN`), oldest first: what the deliverer looks at while a burst
    /// settles, many times a second, without whole rows. A notice saved later has a larger
    /// `seq`: the store's one connection saves them in turn.
    pub fn untold_keys_except(&self, source: Source, after: i64) -> Result<Vec<(i64, String)>, StoreError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(concatcp!("SELECT seq, key FROM notices WHERE state = ", UNTOLD, " AND source != ?1 AND seq > ?2 ORDER BY seq"))
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map(params![source, after], |r| Ok((r.get(0)?, r.get(1)?))).map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The most recent notices that are news (told or still untold), newest first.
    pub fn recent_notices(&self, limit: usize) -> Result<Vec<StoredNotice>, StoreError> {
        self.notices_where(concatcp!("state != ", SILENT, " ORDER BY seq DESC LIMIT ?1"), [limit as i64])
    }

    /// What was said about one item (a hand-off's turns, a Run's end), oldest first, silent ones
    /// (seen but not news) included: the history's card.
    pub fn notices_for_item(&self, item: &Item, limit: usize) -> Result<Vec<StoredNotice>, StoreError> {
        self.notices_where("item = ?1 ORDER BY seq LIMIT ?2", params![item, limit as i64])
    }

    /// The newest notice told about an item.
    pub fn latest_told(&self, item: &Item) -> Result<Option<StoredNotice>, StoreError> {
        Ok(self.notices_where(concatcp!("item = ?1 AND state = ", TOLD, " ORDER BY seq DESC LIMIT 1"), [item])?.pop())
    }

    /// The newest notice told with this banner id.
    pub fn notice_by_banner(&self, banner_id: u32) -> Result<Option<StoredNotice>, StoreError> {
        Ok(self.notices_where("banner_id = ?1 ORDER BY seq DESC LIMIT 1", [banner_id])?.pop())
    }

    pub fn notice(&self, key: &str) -> Result<Option<StoredNotice>, StoreError> {
        Ok(self.notices_where("key = ?1", [key])?.pop())
    }

    /// The banner id of the item's most recent banner, so a new notice replaces it.
    pub fn live_banner(&self, item: &Item) -> Result<Option<u32>, StoreError> {
        self.lock()
            .query_row("SELECT banner_id FROM notices WHERE item = ?1 AND banner_id IS NOT NULL ORDER BY seq DESC LIMIT 1", [item], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))
    }

    pub(super) fn notices_where<P: rusqlite::Params>(&self, clause: &str, p: P) -> Result<Vec<StoredNotice>, StoreError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT seq, key, item, source, status, title, body, urgent, created_at, state, told_at, banner_id, read_at,
                        cmux_id, subtitle, workspace_id, surface_id, delivery, sound, session_id, local_body, host, failure, place, reveal_note
                 FROM notices WHERE {clause}"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(p, |r| {
                Ok(StoredNotice {
                    seq: r.get(0)?,
                    key: r.get(1)?,
                    item: r.get(2)?,
                    status: read_status(r)?,
                    title: r.get(5)?,
                    body: r.get(6)?,
                    urgent: r.get(7)?,
                    created_at: r.get(8)?,
                    state: r.get(9)?,
                    told_at: r.get(10)?,
                    banner_id: r.get(11)?,
                    read_at: r.get(12)?,
                    cmux_id: r.get(13)?,
                    subtitle: r.get(14)?,
                    workspace_id: r.get(15)?,
                    surface_id: r.get(16)?,
                    delivery: r.get(17)?,
                    sound: r.get(18)?,
                    session_id: r.get(19)?,
                    local_body: r.get(20)?,
                    host: r.get(21)?,
                    failure: r.get(22)?,
                    place: read_place(r.get(23)?),
                    reveal_note: r.get(24)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }
}

pub(super) fn insert_notice(conn: &Connection, n: &Notice, account: Option<&str>, now: i64, state: NoticeState) -> rusqlite::Result<bool> {
    let local = n.local.clone().unwrap_or_default();
    let inserted = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO notices (key, item, source, status, title, body, urgent, account, created_at, state,
                                        cmux_id, subtitle, workspace_id, surface_id, session_id, local_body, host, place)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        )?
        .execute(params![
            n.key,
            n.item,
            n.source(),
            n.status,
            n.title,
            n.body,
            n.urgent,
            account,
            now,
            state,
            n.local.as_ref().map(|l| l.cmux_id.clone()),
            local.subtitle,
            local.workspace_id,
            local.surface_id,
            n.session_id,
            n.local.as_ref().map(|l| l.body.clone()),
            n.host,
            place_json(local.place.as_ref())
        ])?;
    Ok(inserted == 1)
}

/// The status column's word, read by the source column's type.
fn read_status(r: &rusqlite::Row<'_>) -> rusqlite::Result<NoticeStatus> {
    let word: String = r.get(4)?;
    NoticeStatus::read(r.get(3)?, &word).map_err(|e| rusqlite::Error::FromSqlConversionFailure(4, rusqlite::types::Type::Text, e.into()))
}

pub(super) fn place_json(place: Option<&crate::place::Place>) -> Option<String> {
    place.filter(|p| !p.is_empty()).and_then(|p| serde_json::to_string(p).ok())
}

/// A stored place; one that no longer reads (or checks) as a place is none: the click then opens
/// the card, as for a place that is gone.
pub(super) fn read_place(text: Option<String>) -> Option<crate::place::Place> {
    let place: crate::place::Place = serde_json::from_str(&text?).ok()?;
    place.check().is_ok().then_some(place)
}
