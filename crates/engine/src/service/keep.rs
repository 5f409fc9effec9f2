//! What the engine keeps, and for how long (docs/notices.md, "What this project chose"): an ended
//! Run's card for 7 days (its banner withdrawn with it), the history for `delivery.history_days`
//! (30 by default). What is still untold, and what an item still followed said, is always kept.
//! Swept at start and then hourly, which is plenty for rules counted in days.

use std::time::Duration;

use super::Engine;
use crate::clock::DAY_MS;
use crate::notice;
use crate::store::StoreError;

/// An ended Run's card is kept this long; its banner is withdrawn with it.
pub const CARD_KEEP_MS: i64 = 7 * DAY_MS;
/// How often the sweep runs.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);

impl Engine {
    pub(super) fn spawn_sweeper(&self) {
        let this = self.clone();
        self.inner.tracker.spawn(async move {
            loop {
                if let Err(e) = this.sweep().await {
                    tracing::warn!("sweeping what is past keeping: {e}");
                }
                tokio::select! {
                    _ = this.inner.shutdown.cancelled() => return,
                    _ = tokio::time::sleep(SWEEP_EVERY) => {}
                }
            }
        });
    }

    /// Drops cards past their week (withdrawing their banners) and forgets the history past its
    /// days. Returns how many cards and rows went.
    pub async fn sweep(&self) -> Result<usize, StoreError> {
        let store = &self.inner.store;
        let now = self.inner.clock.now_ms();
        let old = store.cards_ended_before(now - CARD_KEEP_MS)?;
        for card in &old {
            let item = crate::cloud::RunId::parse(&card.run_id).ok().map(notice::Item::Run);
            if let Some(banner) = item.map(|item| store.live_banner(&item)).transpose()?.flatten() {
                self.withdraw(banner).await;
            }
            store.drop_card(&card.run_id)?;
        }
        let days = i64::from(self.delivery_settings().history_days);
        let forgotten = store.forget_before(now - days * DAY_MS)?;
        if forgotten > 0 {
            tracing::info!(forgotten, days, "forgot what is older than the history keeps");
            self.changed();
        }
        Ok(old.len() + forgotten)
    }
}
