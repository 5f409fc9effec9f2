//! One pass of the deliverer (`super::Task`): the untold notices through the delivery policy's
//! steps, a burst into one banner, the banners posted and marked told, and the summary once a
//! hold is over.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use tokio::time::Instant;

use super::settle::Verdict;
use super::{DeliverError, Looked, MAX_TRIES, Pass, Task};
use crate::desktop::{Banner, DesktopError};
use crate::lock::Locked;
use crate::notice::{AppStatus, Item, Notice, NoticeStatus, Source};
use crate::policy::{self, Candidate, Moment, Reason};
use crate::status::Problem;
use crate::store::StoredNotice;

/// While notices are held, the config file is looked at this often, so an edit that ends the
/// hold (quiet hours switched off by hand) is seen without a restart.
const HOLD_RECHECK: Duration = Duration::from_secs(30);

fn ts(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH)
}

impl Task {
    /// One pass. Returns when to look again without being woken (a burst settling, a hold ending).
    pub(super) async fn pass(&mut self, looked: &mut Looked) -> Result<Pass, DeliverError> {
        // Keys first: while a burst settles this is all a pass reads, and only the new ones.
        let whole = !std::mem::take(&mut looked.settling);
        if whole {
            looked.keys.clear();
        }
        let after = looked.keys.last().map_or(i64::MIN, |(seq, _)| *seq);
        let start = looked.keys.len();
        looked.keys.extend(self.engine.off_thread(move |o| o.untold_keys_except(Source::App, after)).await?);
        let (chain, leading) = match self.settling(&looked.keys[start..], whole) {
            Verdict::Wait(wait) => {
                looked.settling = true;
                return Ok(Pass::Settling(wait));
            }
            Verdict::Decide { chain, leading } => (chain, leading),
        };
        // What the verdict saw: a notice saved since then settles in the next pass.
        let seen = looked.keys.last().map_or(i64::MIN, |(seq, _)| *seq);
        let untold: Vec<StoredNotice> =
            self.engine.off_thread(|o| o.untold()).await?.into_iter().filter(|n| n.source() == Source::App || n.seq <= seen).collect();
        let now_ms = self.engine.inner.clock.now_ms();
        let settings = self.engine.delivery_settings();
        let tz = self.engine.time_zone(&settings);
        let moment = Moment { now: ts(now_ms), tz: &tz, pause: self.engine.paused() };
        tracing::debug!(untold = untold.len(), quiet = settings.quiet.enabled, paused = moment.paused(), "deciding");

        // Whether a refused banner waits for another try.
        let mut retry = false;
        // Steps 1–4, and the app's own banners straight through. Whether the person looks at a
        // notice is asked only of those the other steps would show (a notice quiet hours hold
        // needs no terminal asked), once per place, all together (`looking_at_all`).
        let mut eligible: BTreeMap<&'static str, (Source, Vec<StoredNotice>)> = BTreeMap::new();
        let mut may_show = Vec::new();
        for n in untold {
            let source = n.source();
            if source == Source::App {
                retry |= !self.show(&n, false, settings.attention).await?;
                continue;
            }
            let unseen = Candidate { source, urgent: n.urgent, focused: false };
            match policy::gate(&settings, &unseen, &moment) {
                Some(reason) => self.recorded_without_banner(&n, reason, now_ms).await?,
                None => may_show.push((source, n)),
            }
        }
        let looked_at = self
            .engine
            .inner
            .focus
            .looking_at_all(&may_show.iter().map(|(_, n)| n).collect::<Vec<_>>(), &self.engine.inner.store, settings.remote_tmux)
            .await;
        for ((source, n), focused) in may_show.into_iter().zip(looked_at) {
            match policy::gate(&settings, &Candidate { source, urgent: n.urgent, focused }, &moment) {
                Some(reason) => self.recorded_without_banner(&n, reason, now_ms).await?,
                None => eligible.entry(source.as_str()).or_insert_with(|| (source, Vec::new())).1.push(n),
            }
        }

        // Steps 5–6 per source: a burst becomes one banner; at most one sound per cooldown.
        for (_, (source, batch)) in eligible {
            // A notice that needs the person is never folded into a burst: a banner of its own.
            let (urgent, batch): (Vec<StoredNotice>, Vec<StoredNotice>) = batch.into_iter().partition(|n| n.urgent);
            for n in &urgent {
                let sound = self.take_sound(&settings, source, now_ms);
                retry |= !self.show(n, sound, settings.attention).await?;
            }
            if batch.is_empty() {
                continue;
            }
            let since = now_ms - settings.coalesce_window.as_millis() as i64;
            let recent = self.engine.off_thread(move |o| o.shown_since(source, since)).await?;
            let sound = self.take_sound(&settings, source, now_ms);
            if policy::coalesces(&settings, batch.len(), recent) {
                // The burst's leading notice, told alone a moment ago: its banner becomes the burst's.
                let leader = self.leader_of(source, chain).await?;
                let titles: Vec<String> = leader.iter().chain(&batch).map(|n| n.title.clone()).collect();
                let keys: Vec<String> = batch.iter().map(|n| n.key.clone()).collect();
                let burst = Item::App(format!("coalesced:{}", source.as_str()));
                let banner = app_notice(
                    burst.key_with(now_ms),
                    burst,
                    policy::coalesced_title(&self.engine.inner.lang, source, batch.len() + recent),
                    policy::list_body(&self.engine.inner.lang, &titles),
                );
                let folded = leader.as_ref().map(|l| l.key.clone());
                let stored = self
                    .engine
                    .off_thread(move |o| {
                        o.coalesce(&keys, folded.as_deref(), &banner, now_ms)?;
                        o.notice(&banner.key)
                    })
                    .await?;
                if let Some(stored) = stored {
                    let replaces = leader.and_then(|l| l.banner_id);
                    retry |= !self.show_replacing(&stored, sound, settings.attention, replaces).await?;
                }
            } else {
                for (i, n) in batch.iter().enumerate() {
                    retry |= !self.show(n, sound && i == 0, settings.attention).await?;
                }
                // Only a plain notice leads: a burst never takes an urgent banner's place.
                if leading
                    && urgent.is_empty()
                    && let [n] = batch.as_slice()
                {
                    self.leaders.insert(source, (chain, n.key.clone()));
                }
            }
        }

        // The summary, once the hold is over; or the moment to look again.
        let next = match policy::held_until(&settings, &moment) {
            Some(until) => Some(
                until
                    .map(|t| Duration::from_millis((t.as_millisecond() - now_ms).max(0) as u64 + 1))
                    .unwrap_or(HOLD_RECHECK)
                    .min(HOLD_RECHECK),
            ),
            None => {
                let held = self.engine.off_thread(|o| o.held_unsummarized()).await?;
                if !held.is_empty() {
                    let reason = if held.iter().all(|n| n.delivery == Some(Reason::Paused)) { Reason::Paused } else { Reason::QuietHours };
                    let titles: Vec<String> = held.iter().map(|n| n.title.clone()).collect();
                    let keys: Vec<String> = held.iter().map(|n| n.key.clone()).collect();
                    let summary_item = Item::App("summary".into());
                    let summary = app_notice(
                        summary_item.key_with(now_ms),
                        summary_item,
                        policy::summary_title(&self.engine.inner.lang, held.len(), reason),
                        policy::list_body(&self.engine.inner.lang, &titles),
                    );
                    let stored = self
                        .engine
                        .off_thread(move |o| {
                            o.summarize(&keys, &summary, now_ms)?;
                            o.notice(&summary.key)
                        })
                        .await?;
                    if let Some(stored) = stored {
                        retry |= !self.show(&stored, false, settings.attention).await?;
                    }
                }
                None
            }
        };
        Ok(Pass::Done(match (next, retry.then_some(self.desktop_retry)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }))
    }

    /// A notice the policy keeps from a banner, saved as decided, with why.
    async fn recorded_without_banner(&self, n: &StoredNotice, reason: Reason, now_ms: i64) -> Result<(), DeliverError> {
        let key = n.key.clone();
        self.engine.off_thread(move |o| o.mark_told(&key, None, reason, false, now_ms)).await?;
        tracing::info!(key = %n.key, reason = reason.as_str(), "recorded without a banner");
        self.engine.changed();
        Ok(())
    }

    /// Whether to decide now (`settle`); the keys are those of `fresh` that may settle: a banner
    /// the server refused waits for its own next try, not in anyone's burst. `whole`: `fresh` is
    /// every untold key, not only those saved since the last look.
    fn settling(&mut self, fresh: &[(i64, String)], whole: bool) -> Verdict {
        let tried = &self.tries;
        let keys = fresh.iter().map(|(_, key)| key.as_str()).filter(|k| !tried.contains_key(*k));
        self.settle.verdict(keys, whole, Instant::now())
    }

    /// The notice of `source` told alone at the head of `chain`, while its banner is still up.
    async fn leader_of(&mut self, source: Source, chain: u64) -> Result<Option<StoredNotice>, DeliverError> {
        let leader = self.leaders.remove(&source);
        let Some((_, key)) = leader.filter(|(c, _)| *c == chain) else { return Ok(None) };
        let n = self.engine.off_thread(move |o| o.notice(&key)).await?;
        Ok(n.filter(|n| n.banner_id.is_some() && n.read_at.is_none() && n.delivery == Some(Reason::Shown)))
    }

    /// Whether this source may ring now; if so the cooldown starts.
    fn take_sound(&mut self, settings: &policy::DeliverySettings, source: Source, now_ms: i64) -> bool {
        let last = &mut self.last_sound;
        let ring = policy::sounds(settings, source, last.get(&source).map(|ms| ts(*ms)), ts(now_ms));
        if ring {
            last.insert(source, now_ms);
        }
        ring
    }

    /// Posts a notice's banner (replacing its item's live one), then marks it told. `attention`
    /// is the setting in force for this pass (the urgency hint for `needs-you`). Returns whether
    /// it was decided (told, or set aside after its last try); `false` when the server refused it
    /// and it waits for another try. An error stops the pass: no server, or the store failing.
    async fn show(&mut self, n: &StoredNotice, sound: bool, attention: bool) -> Result<bool, DeliverError> {
        self.show_replacing(n, sound, attention, None).await
    }

    /// `show`, taking the place of banner `replaces` rather than the item's own live one.
    async fn show_replacing(
        &mut self,
        n: &StoredNotice,
        sound: bool,
        attention: bool,
        replaces: Option<u32>,
    ) -> Result<bool, DeliverError> {
        // Posted before, but not saved as told: save it now, never post it again.
        let posted = self.handle.unrecorded.locked().get(&n.key).copied();
        let id = match posted {
            Some(id) => id,
            None => {
                let banner = Banner {
                    item: n.item.clone(),
                    notice_key: n.key.clone(),
                    title: n.title.clone(),
                    body: n.body.clone(),
                    urgent: n.urgent && attention,
                    sound,
                    replaces: match replaces {
                        Some(id) => Some(id),
                        None => {
                            let item = n.item.clone();
                            self.engine.off_thread(move |o| o.live_banner(&item)).await?
                        }
                    },
                };
                match self.engine.inner.desktop.post(&banner).await {
                    Ok(id) => id,
                    Err(DesktopError::Unavailable(why)) => return Err(DeliverError::NoServer(why)),
                    Err(DesktopError::Denied(why)) => {
                        self.engine.inner.health.set_banners_off(Some(why.clone()));
                        return Err(DeliverError::BannersOff(why));
                    }
                    Err(DesktopError::Refused(why)) => return self.refused(n, &why).await,
                }
            }
        };
        self.engine.inner.health.set_banners_off(None);
        self.engine.inner.health.set_no_server(None);
        self.tries.remove(&n.key);
        // Known in memory before it is saved: a click that comes while the mark is being written
        // finds its notice (service/click.rs), and a failed save never posts it again.
        self.handle.unrecorded.locked().insert(n.key.clone(), id);
        let (key, now_ms) = (n.key.clone(), self.engine.inner.clock.now_ms());
        if let Err(e) = self.engine.off_thread(move |o| o.mark_told(&key, Some(id), Reason::Shown, sound, now_ms)).await {
            self.engine
                .inner
                .health
                .note(Problem::NotSaved { path: self.engine.inner.store.path().display().to_string(), why: e.to_string() });
            self.engine.changed();
            return Err(DeliverError::ShownNotSaved { banner: id, why: e });
        }
        self.handle.unrecorded.locked().remove(&n.key);
        tracing::info!(key = %n.key, banner = id, sound, "told");
        self.engine.changed();
        Ok(true)
    }

    /// The server refused this banner: another try with the next pass, or, after the last, set
    /// aside with why (the history and `status` say it). Returns whether it was decided.
    async fn refused(&mut self, n: &StoredNotice, why: &str) -> Result<bool, DeliverError> {
        let tries = {
            let t = self.tries.entry(n.key.clone()).or_insert(0);
            *t += 1;
            *t
        };
        if tries < MAX_TRIES {
            tracing::warn!(key = %n.key, tries, "the notification server refused the banner: {why}; will try again");
            return Ok(false);
        }
        let (key, reason, now_ms) = (n.key.clone(), why.to_string(), self.engine.inner.clock.now_ms());
        self.engine.off_thread(move |o| o.set_aside(&key, &reason, now_ms)).await?;
        self.tries.remove(&n.key);
        tracing::warn!(key = %n.key, tries, "set aside: the notification server refused the banner: {why}");
        self.engine.inner.health.note(Problem::BannerNotShown { title: n.title.clone(), why: why.to_string() });
        self.engine.changed();
        Ok(true)
    }
}

/// A banner of the app's own (a burst, a summary); its click opens the history.
fn app_notice(key: String, item: Item, title: String, body: String) -> Notice {
    Notice {
        key,
        item,
        status: NoticeStatus::App(AppStatus::Summary),
        title,
        body,
        urgent: false,
        local: None,
        session_id: None,
        host: None,
    }
}
