//! The lists read at sign-in: the account's open hand-offs (and active Runs, where the cloud
//! offers them) followed from the version listed, retried until read or the session ends.

use std::sync::Arc;
use std::time::Duration;

use super::Engine;
use crate::cloud::{CloudError, Handoff};
use crate::follow::{FollowError, Pacing, Session};
use crate::notice;
use crate::status::Problem;
use crate::store::{FollowKind, HandoffStep};

impl Engine {
    /// Reads the hand-off list (and the active Runs, where offered) at sign-in and follows what
    /// is open and not yet known, from the version the list shows. Retried until it succeeds or
    /// the session ends; a new sign-in replaces it (the old session's token stops it).
    pub(super) fn spawn_listing(&self, session: Arc<Session>) {
        let this = self.clone();
        self.inner.tracker.spawn(async move {
            let pacing = Pacing::default();
            let mut failures = 0;
            loop {
                let attempt = async { this.adopt_listed(&session).await };
                let result = tokio::select! {
                    _ = session.stop.cancelled() => return,
                    r = attempt => r,
                };
                match result {
                    Ok(()) => return,
                    Err(e) => {
                        failures += 1;
                        if matches!(e, CloudError::StaleToken) {
                            // Renew (or sign out visibly) like any follow would; then read again.
                            this.on_stale_token(&session.account);
                        }
                        tracing::info!("reading the lists at sign-in: {e}");
                        let pause = pacing.after_failure(failures, e.retry_after(), Duration::ZERO, rand::random());
                        tokio::select! {
                            _ = session.stop.cancelled() => return,
                            _ = tokio::time::sleep(pause) => {}
                        }
                    }
                }
            }
        });
    }

    pub(super) async fn adopt_listed(&self, session: &Arc<Session>) -> Result<(), CloudError> {
        let cred = session.credentials();
        let handoffs = match self.inner.cloud.list_handoffs(&cred).await {
            Ok(l) => Some(l),
            // Where the store is not deployed every read is a 404: nothing to follow.
            Err(CloudError::Gone { .. }) => None,
            Err(e) => return Err(e),
        };
        let runs = self.inner.cloud.active_runs(&cred).await?;
        if let Some(listing) = handoffs {
            let (items, problems) = listing.into_parts();
            for problem in problems {
                self.inner.health.note(Problem::Listing { said: problem });
            }
            for h in items.iter().filter(|h| !h.is_closed()) {
                if let Err(e) = self.adopt_handoff(session, h) {
                    self.inner.health.not_followed(e);
                }
            }
        }
        if let Some(listing) = runs {
            let (items, problems) = listing.into_parts();
            for problem in problems {
                self.inner.health.note(Problem::Listing { said: problem });
            }
            for run in items.iter().filter(|r| !r.is_terminal()) {
                if let Err(e) = self.inner.follower.follow_run(session, &run.id, false) {
                    self.inner.health.not_followed(e);
                }
                let _ =
                    self.inner.store.set_follow_title(FollowKind::Run, run.id.as_str(), &notice::run_title(&self.inner.lang, &run.task));
            }
        }
        self.changed();
        Ok(())
    }

    /// A hand-off from the list: follow it from the listed version, its current state known but
    /// not news. One already known keeps its own cursor.
    pub(super) fn adopt_handoff(&self, session: &Arc<Session>, h: &Handoff) -> Result<(), FollowError> {
        self.inner.follower.room_for(FollowKind::Handoff, h.id.as_str())?;
        let store = &self.inner.store;
        let now = self.inner.clock.now_ms();
        if store.add_follow(FollowKind::Handoff, h.id.as_str(), &session.account, h.version, false, now)? {
            let verdict = notice::handoff_verdict(&self.inner.lang, h);
            let step = HandoffStep { id: h.id.as_str(), version: h.version, notice: verdict.notice.as_ref(), silent: true, closes: false };
            store.record_handoff(step, &session.account, now)?;
        }
        store.set_follow_title(FollowKind::Handoff, h.id.as_str(), &notice::handoff_title(&self.inner.lang, h))?;
        self.inner.follower.follow_handoff(session, &h.id, h.version, false)
    }
}
