//! One follow's task: ask, read the answer, save it with its notice, pace, and say when the
//! cloud cannot be reached; until the item ends or the follow is stopped.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{FollowEnd, Follower, FollowerEvent, Progress, SCOUT_EVERY, Session, UNREACHABLE_AFTER, WAKE_SPREAD};
use crate::cloud::{CloudError, Credentials, HANDOFF_HOLD, Handoff, HandoffId, RUN_HOLD, Run, RunId};
use crate::notice::{self, RunVerdict};
use crate::status::Problem;
use crate::store::{FollowKind, FollowRow, Grouped, HandoffStep, StoreError};

impl Follower {
    pub(super) async fn follow_loop(&self, session: &Session, row: FollowRow, stop: &CancellationToken) -> FollowEnd {
        let inner = &self.inner;
        let mut progress = Progress { cursor: row.cursor, changed_at: row.changed_at, failures: 0, title: row.title.clone() };
        let full = match row.kind {
            FollowKind::Run => RUN_HOLD,
            FollowKind::Handoff => HANDOFF_HOLD,
        };
        // docs/cloud-api.md, "Pacing": the first hold is drawn, so that follows started together
        // spread over the beats, and every hold ends on a beat, so that one wake-up serves many.
        let mut hold = inner.pacing.first_hold(full, rand::random());
        loop {
            let now = inner.clock.now_ms();
            let expired = match row.kind {
                FollowKind::Run => now - row.started_at >= inner.limits.run_age_ms,
                FollowKind::Handoff => now - progress.changed_at >= inner.limits.handoff_idle_ms,
            };
            if expired {
                self.end_in_store(&row, "expired");
                return FollowEnd::Expired;
            }
            let asked = tokio::time::Instant::now();
            // The wait, and what is done with its answer, are boxed: a follow's task then weighs
            // only what it keeps between asks, and the wait in flight only what a wait needs
            // (10,000 follows are 10,000 of each; `scripts/bench` row 2, memory).
            let on_beat = inner.pacing.on_beat(hold, now);
            let asking = Box::pin(self.ask(&row, session.credentials(), progress.cursor, on_beat));
            hold = full;
            let answer = tokio::select! {
                biased;
                _ = stop.cancelled() => return FollowEnd::Stopped(stop_reason(session)),
                a = asking => a,
            };
            let pause = match Box::pin(self.take_answer(&row, session, &mut progress, answer, asked.elapsed())).await {
                Ok(pause) => pause,
                Err(end) => return end,
            };
            if progress.failures > 0 {
                // Backing off: until the pause is over, or the cloud is seen again.
                tokio::select! {
                    biased;
                    _ = stop.cancelled() => return FollowEnd::Stopped(stop_reason(session)),
                    _ = tokio::time::sleep(pause) => {}
                    _ = inner.back.notified() => {
                        tokio::time::sleep(WAKE_SPREAD.mul_f64(rand::random())).await;
                    }
                }
            } else if !pause.is_zero() {
                tokio::select! {
                    biased;
                    _ = stop.cancelled() => return FollowEnd::Stopped(stop_reason(session)),
                    _ = tokio::time::sleep(pause) => {}
                }
            }
        }
    }

    /// What an answer (or a failure) means for the follow: the pause before the next ask, or
    /// the follow's end.
    async fn take_answer(
        &self,
        row: &FollowRow,
        session: &Session,
        progress: &mut Progress,
        answer: Result<Answer, CloudError>,
        elapsed: std::time::Duration,
    ) -> Result<std::time::Duration, FollowEnd> {
        let inner = &self.inner;
        Ok(match answer {
            Ok(answer) => {
                progress.failures = 0;
                self.reachable(None);
                let named = match &answer {
                    Answer::Run(run) => notice::run_title(&inner.lang, &run.task),
                    Answer::Handoff(h) => notice::handoff_title(&inner.lang, h),
                };
                if progress.title.as_ref() != Some(&named) {
                    let (kind, id, name) = (row.kind, row.id.clone(), named.clone());
                    match self.on_store(move |o| o.set_follow_title(kind, &id, &name)).await {
                        Ok(changed) => {
                            if changed {
                                let _ = inner.events.send(FollowerEvent::Named);
                            }
                            progress.title = Some(named);
                        }
                        Err(e) => tracing::info!(id = %row.id, "naming the follow: {e}"),
                    }
                }
                let recorded = match answer {
                    Answer::Run(run) => self.record_run(row, session, run).await,
                    Answer::Handoff(h) => self.record_handoff(row, session, &mut progress.cursor, &mut progress.changed_at, h).await,
                };
                match recorded {
                    Ok(Some(end)) => return Err(end),
                    Ok(None) => inner.pacing.after_answer(elapsed),
                    // The store could not save it: ask again later, the server still has it.
                    Err(e) => {
                        progress.failures += 1;
                        self.problem(Problem::AnswerNotSaved { id: row.id.clone(), end: false, why: e.to_string() });
                        inner.pacing.after_failure(progress.failures, None, elapsed, rand::random())
                    }
                }
            }
            Err(CloudError::Gone { status, .. }) => {
                self.end_in_store(row, &format!("gone ({status})"));
                return Err(FollowEnd::Gone(status));
            }
            Err(CloudError::StaleToken) => {
                let _ = inner.events.send(FollowerEvent::StaleToken { account: session.account.clone() });
                // The engine renews the token (the next request uses it) or signs out (stop).
                progress.failures += 1;
                inner.pacing.after_failure(progress.failures, None, elapsed, rand::random())
            }
            Err(e) => {
                progress.failures += 1;
                if matches!(e, CloudError::Unreadable { .. }) {
                    self.problem(Problem::Unreadable { why: e.to_string() });
                } else {
                    // A proxy's refusal is no passing hiccup: said at once.
                    let unreachable = match e {
                        CloudError::ProxyRefused { .. } => true,
                        CloudError::RetryLater { .. } | CloudError::Unreachable { .. } => progress.failures >= UNREACHABLE_AFTER,
                        _ => false,
                    };
                    if unreachable {
                        self.reachable(Some(e.to_string()));
                        // A server that answers with errors is not looked for: it answers.
                        if e.is_unreachable() {
                            self.scout(session);
                        }
                    }
                }
                let pause = inner.pacing.after_failure(progress.failures, e.retry_after(), elapsed, rand::random());
                if !matches!(e, CloudError::Unreadable { .. }) {
                    tracing::info!(id = %row.id, failures = progress.failures, backoff_ms = pause.as_millis() as u64, "{e}");
                }
                pause
            }
        })
    }

    async fn ask(&self, row: &FollowRow, cred: Credentials, cursor: u64, hold: Duration) -> Result<Answer, CloudError> {
        let cloud = &self.inner.cloud;
        match row.kind {
            FollowKind::Run => {
                let id = RunId::parse(&row.id).map_err(|e| bad_stored_id(&row.id, e))?;
                cloud.wait_run(&cred, &id, hold).await.map(Answer::Run)
            }
            FollowKind::Handoff => {
                let id = HandoffId::parse(&row.id).map_err(|e| bad_stored_id(&row.id, e))?;
                cloud.wait_handoff(&cred, &id, cursor, hold).await.map(Answer::Handoff)
            }
        }
    }

    async fn record_run(&self, row: &FollowRow, session: &Session, run: Run) -> Result<Option<FollowEnd>, StoreError> {
        // A Run still going is the common answer (every hold that ends unchanged): no store read.
        if !run.is_terminal() {
            return Ok(None);
        }
        let (run, id, account, now) = (Box::new(run), row.id.clone(), session.account.clone(), self.inner.clock.now_ms());
        let lang = self.inner.lang.clone();
        // The cancel note is read in the write's commit, not on a runtime worker, which would
        // wait for the connection while a burst of ends commits and hold up the answers still
        // coming in.
        let (told, run) = self
            .on_store(move |o| {
                let notice = match notice::run_verdict(&lang, &run, o.cancel_noted(&id)?) {
                    RunVerdict::Going | RunVerdict::EndedQuietly => None,
                    RunVerdict::Ended(n) => Some(n),
                };
                Ok((o.record_run_end(&run, notice.as_deref(), &account, now)?, run))
            })
            .await?;
        if told {
            self.inner.deliver.notify_one();
        }
        Ok(Some(FollowEnd::RunEnded(run)))
    }

    /// A store write in the store's next group commit: the follows' writes wait there
    /// together, without a thread each, and do not hold the runtime's few workers through
    /// the commit.
    async fn on_store<T: Send + 'static>(
        &self,
        write: impl FnOnce(&Grouped) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.inner.store.write_grouped(write).await
    }

    async fn record_handoff(
        &self,
        row: &FollowRow,
        session: &Session,
        cursor: &mut u64,
        changed_at: &mut i64,
        h: Handoff,
    ) -> Result<Option<FollowEnd>, StoreError> {
        let verdict = notice::handoff_verdict(&self.inner.lang, &h);
        // An answer at the hold's end with nothing new is no change (and no age reset).
        if h.version <= *cursor && !verdict.closes {
            return Ok(None);
        }
        let now = self.inner.clock.now_ms();
        let (id, version, notice, closes, account) =
            (row.id.clone(), h.version, verdict.notice.clone(), verdict.closes, session.account.clone());
        let told = self
            .on_store(move |o| {
                o.record_handoff(HandoffStep { id: &id, version, notice: notice.as_ref(), silent: false, closes }, &account, now)
            })
            .await?;
        if told {
            self.inner.deliver.notify_one();
        }
        *cursor = (*cursor).max(h.version);
        *changed_at = now;
        Ok(verdict.closes.then(|| FollowEnd::HandoffClosed(Box::new(h))))
    }

    fn end_in_store(&self, row: &FollowRow, reason: &str) {
        if let Err(e) = self.inner.store.end_follow(row.kind, &row.id, reason, self.inner.clock.now_ms()) {
            self.problem(Problem::AnswerNotSaved { id: row.id.clone(), end: true, why: e.to_string() });
        }
    }

    /// Tells the engine when the cloud goes unreachable (`Some(why)`) or answers again (`None`),
    /// once per change.
    fn reachable(&self, unreachable: Option<String>) {
        use std::sync::atomic::Ordering;
        let was = self.inner.unreachable.swap(unreachable.is_some(), Ordering::Relaxed);
        match unreachable {
            Some(why) if !was => {
                tracing::warn!("the cloud cannot be reached: {why}");
                let _ = self.inner.events.send(FollowerEvent::Unreachable(why));
            }
            None if was => {
                tracing::info!("the cloud answers again: the follows backing off ask at once");
                self.inner.back.notify_waiters();
                let _ = self.inner.events.send(FollowerEvent::Reachable);
            }
            _ => {}
        }
    }

    /// Looks for the cloud every [`SCOUT_EVERY`] while it is unreachable (one scout at a time,
    /// for the session's account), and says when it answers again.
    fn scout(&self, session: &Session) {
        use std::sync::atomic::Ordering;
        if self.inner.scouting.swap(true, Ordering::Relaxed) {
            return;
        }
        let (this, stop, credentials) = (self.clone(), session.stop.clone(), session.credentials());
        self.inner.tracker.spawn(async move {
            while this.inner.unreachable.load(Ordering::Relaxed) {
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(SCOUT_EVERY) => {}
                }
                // Any answer is the cloud's; only a failure to reach it keeps looking.
                match this.inner.cloud.look(&credentials).await {
                    Err(e) if e.is_unreachable() => {}
                    _ => this.reachable(None),
                }
            }
            this.inner.scouting.store(false, Ordering::Relaxed);
        });
    }

    fn problem(&self, problem: Problem) {
        tracing::warn!("{problem}");
        let _ = self.inner.events.send(FollowerEvent::Problem(problem));
    }
}

enum Answer {
    Run(Run),
    Handoff(Handoff),
}

fn stop_reason(session: &Session) -> String {
    format!("stopped (account {} signed out, switched, or the app quit)", session.account)
}

fn bad_stored_id(id: &str, e: crate::cloud::BadId) -> CloudError {
    CloudError::Unreadable { what: format!("stored follow {id:?}"), detail: e.to_string() }
}
