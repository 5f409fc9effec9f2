//! Staying signed in: the device-code sign-in, the refresh token kept in the secret store, the
//! access token renewed a minute before it expires and after a 401, and a refused refresh that
//! signs the account out visibly (status, one banner). Sign-out forgets the secret.

use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use tokio::sync::Notify;

use super::account_state::Renewal;
use super::{Engine, EngineError};
use crate::cloud::auth::{DevicePoll, DeviceStart, Tokens};
use crate::cloud::{CloudError, Credentials, Me, TeamId};
use crate::follow::{Pacing, Session};
use crate::store::AccountProblem;

/// Renew this long before the access token expires.
const RENEW_EARLY: Duration = Duration::from_secs(60);

impl Engine {
    /// Starts a device sign-in: the code to show and the page to open.
    pub async fn device_start(&self) -> Result<DeviceStart, EngineError> {
        let start = self.inner.cloud.device_start("cmux-tray").await.map_err(EngineError::SignIn)?;
        self.inner.account.set_pending_device(Some(start.clone()));
        Ok(start)
    }

    /// The page of the device sign-in under way, to open in the browser.
    pub fn pending_device_url(&self) -> Option<String> {
        self.inner.account.pending_device().map(|s| s.verification_url)
    }

    /// Waits for the device sign-in started last: polls at the server's interval until approved
    /// (then signs in) or expired.
    pub async fn device_finish(&self, team: Option<TeamId>) -> Result<Me, EngineError> {
        let start = self.inner.account.pending_device().ok_or(EngineError::NoDeviceSignIn)?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(start.expires_in_seconds);
        let interval = Duration::from_secs(start.interval_seconds);
        loop {
            tokio::time::sleep(interval).await;
            match self.inner.cloud.device_poll(&start.device_code).await {
                Ok(DevicePoll::Approved(tokens)) => {
                    self.inner.account.set_pending_device(None);
                    return self.sign_in_with_tokens(tokens, team).await;
                }
                Ok(DevicePoll::Expired) => return Err(EngineError::DeviceExpired),
                Ok(DevicePoll::Pending) => {}
                Err(e) if e.is_retryable() => tracing::info!("device sign-in: {e}"),
                Err(e) => return Err(EngineError::SignIn(e)),
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(EngineError::DeviceExpired);
            }
        }
    }

    /// Signs in with fresh tokens: the refresh token is saved, and the access token renewed.
    /// The refresh token is saved before the sign-in is announced: whoever sees "signed in" and
    /// quits at once finds it kept.
    pub async fn sign_in_with_tokens(&self, tokens: Tokens, team: Option<TeamId>) -> Result<Me, EngineError> {
        self.sign_in_unless_signed_out(tokens, team, None).await
    }

    /// [`Self::sign_in_with_tokens`], given up (`SignedOut`) when the person signed out since
    /// `sign_outs` was read: a restore never signs an account in again after a sign-out.
    async fn sign_in_unless_signed_out(&self, tokens: Tokens, team: Option<TeamId>, sign_outs: Option<u64>) -> Result<Me, EngineError> {
        let mut cred = Credentials { access_token: tokens.access_token.clone(), team };
        let me = self.who_is(&mut cred).await?;
        let signed_out = || sign_outs.is_some_and(|n| n != self.inner.account.sign_outs());
        if signed_out() {
            return Err(EngineError::SignedOut);
        }
        if let Some(refresh) = &tokens.refresh_token {
            self.inner.account.save_secret(&me.user_id, refresh.clone()).await;
            if signed_out() {
                self.inner.account.forget_secret(&me.user_id).await; // the sign-out's delete came before this save
                return Err(EngineError::SignedOut);
            }
        }
        let me = self.activate(me, cred)?;
        if let Some(refresh) = tokens.refresh_token {
            self.spawn_renewal(&me.user_id, refresh, tokens.expires_in);
        }
        Ok(me)
    }

    /// At start, without a token given: the remembered account, signed in again with its saved
    /// refresh token. `None` when there is nothing to resume.
    pub async fn resume_saved_account(&self) -> Result<Option<Me>, EngineError> {
        // A sign-out since the sign-in at start began (from the tray, while the keyring was being
        // asked) means: stay signed out.
        let sign_outs = self.inner.account.sign_outs_at_restore();
        if self.inner.account.sign_outs() != sign_outs {
            return Ok(None);
        }
        let Some(account) = self.inner.store.account()? else { return Ok(None) };
        let Some(kept) = self.inner.account.load_secret(&account.user_id).await else {
            // Never "signed in" without a usable token: the account needs a sign-in, visibly.
            let kept = self.inner.account.secret_store().map(|s| s.describe()).unwrap_or_else(|| "nowhere".into());
            let problem = AccountProblem::NotFound { kept };
            tracing::warn!(account = %account.email, "{problem}");
            self.inner.store.set_account_problem(Some(&problem))?;
            self.changed();
            return Ok(None);
        };
        // Sent only to the cloud it came from: settings that name another are not given it.
        let here = self.inner.account.origins();
        if !kept.belongs_to(&here) {
            let from = kept.origins.unwrap_or_else(crate::secrets::Origins::built_in);
            let problem = AccountProblem::OtherCloud { from: from.auth, here: here.auth };
            tracing::warn!(account = %account.email, "{problem}");
            self.inner.store.set_account_problem(Some(&problem))?;
            self.changed();
            return Ok(None);
        }
        let refresh = kept.refresh;
        let team = account.team.as_deref().and_then(|t| TeamId::parse(t).ok());
        let mut pause = Duration::from_secs(2);
        loop {
            match self.inner.cloud.refresh(&refresh).await {
                Ok(tokens) => {
                    let tokens = Tokens { refresh_token: tokens.refresh_token.or(Some(refresh)), ..tokens };
                    return match self.sign_in_unless_signed_out(tokens, team, Some(sign_outs)).await {
                        Err(EngineError::SignedOut) => Ok(None), // signed out meanwhile: stay so
                        other => other.map(Some),
                    };
                }
                Err(e) if e.is_retryable() && !matches!(e, CloudError::Refused { .. }) => {
                    tracing::info!("signing in again: {e}; trying again in {pause:?}");
                    self.inner.health.set_offline(Some(e.to_string()));
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(60));
                }
                Err(e) => {
                    self.refresh_refused(&account.user_id, &e).await;
                    return Err(EngineError::SignIn(e));
                }
            }
        }
    }

    /// A 401 came back for this account: renew now if we can, else the account needs a sign-in.
    pub(super) fn on_stale_token(&self, account: &str) {
        let renewal = self.inner.account.renewal();
        match renewal {
            Some(r) if r.account == account => r.now.notify_one(),
            _ => self.sign_in_needed(account),
        }
    }

    fn spawn_renewal(&self, account: &str, refresh: SecretString, expires_in: Option<Duration>) {
        let Some(session) = self.session().filter(|s| s.account == account) else { return };
        let renewal = Arc::new(Renewal { account: account.into(), now: Notify::new() });
        self.inner.account.set_renewal(renewal.clone());
        let this = self.clone();
        self.inner.tracker.spawn(async move { this.renew_loop(session, renewal, refresh, expires_in).await });
    }

    async fn renew_loop(&self, session: Arc<Session>, renewal: Arc<Renewal>, mut refresh: SecretString, mut expires_in: Option<Duration>) {
        let pacing = Pacing::default();
        let mut failures = 0;
        let mut wait = expires_in.map(|d| d.saturating_sub(RENEW_EARLY).max(Duration::from_secs(5)));
        loop {
            tokio::select! {
                _ = session.stop.cancelled() => return,
                _ = renewal.now.notified() => {}
                _ = tokio::time::sleep(wait.unwrap_or(Duration::ZERO)), if wait.is_some() => {}
            }
            match self.inner.cloud.refresh(&refresh).await {
                Ok(tokens) => {
                    failures = 0;
                    let team = session.credentials().team;
                    session.renew(Credentials { access_token: tokens.access_token, team });
                    if let Some(next) = tokens.refresh_token {
                        refresh = next;
                        self.inner.account.save_secret(&session.account, refresh.clone()).await;
                    }
                    expires_in = tokens.expires_in;
                    wait = expires_in.map(|d| d.saturating_sub(RENEW_EARLY).max(Duration::from_secs(5)));
                    tracing::info!(account = %session.account, "access token renewed");
                }
                Err(e) if e.is_retryable() && !matches!(e, CloudError::Refused { .. }) => {
                    failures += 1;
                    wait = Some(pacing.after_failure(failures, e.retry_after(), Duration::ZERO, rand::random()));
                    tracing::info!("renewing the access token: {e}");
                }
                Err(e) => {
                    self.refresh_refused(&session.account, &e).await;
                    return;
                }
            }
        }
    }

    /// The refresh token was refused: it is worthless now; forget it and ask for a sign-in.
    async fn refresh_refused(&self, account: &str, e: &CloudError) {
        tracing::warn!(account, "the refresh was refused ({e}): sign in again");
        self.inner.account.forget_secret(account).await;
        self.sign_in_needed(account);
    }
}
