//! Who is signed in: a sign-in with an access token, the account's teams and the one chosen,
//! a switch of account, signing out, and a token the cloud refused (`account` keeps a sign-in
//! going: the device code, renewal, the saved sign-in).

use crate::lang::say;
use std::sync::Arc;

use secrecy::SecretString;

use super::account_state::TakeOver;
use super::{Engine, EngineError};
use crate::cloud::{CloudError, Credentials, Me, Team, TeamId};
use crate::notice::{AppStatus, Notice, NoticeStatus};
use crate::status::Problem;
use crate::store::AccountProblem;
use crate::store::AccountRow;

/// Where the team an account chose is kept: per account, across sign-outs.
fn team_key(account: &str) -> String {
    format!("team.{account}")
}

impl Engine {
    /// Signs in with an access token. The same account again only renews the token; another
    /// account stops the follows of the one before (they stay saved under it) and resumes its own.
    /// Then the hand-off list (and the active Run list, where offered) is read in the background.
    pub async fn sign_in_with_token(&self, token: SecretString, team: Option<TeamId>) -> Result<Me, EngineError> {
        let mut cred = Credentials { access_token: token, team };
        let me = match self.who_is(&mut cred).await {
            Ok(me) => me,
            // Said while it lasts (the tray, `status`, a request waiting for the account).
            Err(EngineError::SignIn(e)) if e.is_unreachable() || matches!(e, CloudError::RetryLater { .. }) => {
                self.inner.health.set_offline(Some(e.to_string()));
                return Err(EngineError::SignIn(e));
            }
            Err(e) => return Err(e),
        };
        self.activate(me, cred)
    }

    /// Who the token belongs to, and whether the chosen team is theirs. With no team given, the
    /// team this account chose last (kept across sign-outs) is filled in while it is still theirs.
    pub(super) async fn who_is(&self, cred: &mut Credentials) -> Result<Me, EngineError> {
        let me = self.inner.cloud.me(&Credentials { team: None, ..cred.clone() }).await.map_err(EngineError::SignIn)?;
        if cred.team.is_none() {
            let remembered = self.inner.store.get(&team_key(&me.user_id))?.and_then(|t| TeamId::parse(&t).ok());
            cred.team = remembered.filter(|t| me.teams.iter().any(|m| &m.id == t));
        }
        if let Some(team) = &cred.team
            && !me.teams.iter().any(|t| &t.id == team)
        {
            let available = me.teams.iter().map(|t| t.id.to_string()).collect::<Vec<_>>().join(", ");
            return Err(EngineError::NoSuchTeam { team: team.to_string(), available });
        }
        self.inner.account.set_me(Some(me.clone()));
        Ok(me)
    }

    /// The signed-in account's teams (personal first), asked of the cloud now so a team joined
    /// since the sign-in shows; the list from the sign-in when the cloud cannot be asked.
    pub async fn teams(&self) -> Result<Vec<Team>, EngineError> {
        let session = self.signed_in()?;
        match self.who_is(&mut session.credentials()).await {
            Ok(me) => Ok(me.teams),
            Err(e) => {
                let me = self.inner.account.me();
                me.filter(|me| me.user_id == session.account).map(|me| me.teams).ok_or(e)
            }
        }
    }

    /// Chooses the team whose Runs and hand-offs this account follows, and remembers it for the
    /// account. Follows under way go on (their next request carries the team); the lists are
    /// read again so the team's open items are adopted.
    pub async fn choose_team(&self, team: TeamId) -> Result<(), EngineError> {
        let session = self.signed_in()?;
        let mut cred = Credentials { team: Some(team.clone()), ..session.credentials() };
        self.who_is(&mut cred).await?;
        if self.session().is_none_or(|s| !Arc::ptr_eq(&s, &session)) {
            return Err(EngineError::SignedOut); // signed out or switched while asking
        }
        session.renew(cred);
        if let Some(mut row) = self.inner.store.account()?.filter(|a| a.user_id == session.account) {
            row.team = Some(team.to_string());
            self.inner.store.set_account(&row)?;
        }
        self.inner.store.set(&team_key(&session.account), Some(team.as_str()))?;
        tracing::info!(%team, "team chosen");
        self.spawn_listing(session);
        self.changed();
        Ok(())
    }

    /// Makes `me` the signed-in account with these credentials (see [`Self::sign_in_with_token`]).
    pub(super) fn activate(&self, me: Me, cred: Credentials) -> Result<Me, EngineError> {
        // The cloud just answered: whatever said "offline" is over.
        self.inner.health.set_offline(None);
        let team = cred.team.clone();
        let row = AccountRow {
            user_id: me.user_id.clone(),
            email: me.email.clone(),
            team: team.as_ref().map(|t| t.to_string()),
            signed_in_at: self.inner.clock.now_ms(),
            problem: None,
        };
        let session = match self.inner.account.take_over(&me.user_id, cred, || self.inner.shutdown.child_token()) {
            TakeOver::Renewed => {
                self.inner.store.set_account(&row)?;
                self.changed();
                return Ok(me);
            }
            TakeOver::New { session, switched_from } => {
                if let Some(account) = switched_from {
                    // A switch of account: the one before keeps its follows (parked under it)
                    // but not its saved sign-in.
                    let this = self.clone();
                    self.inner.tracker.spawn(async move { this.inner.account.forget_secret(&account).await });
                }
                session
            }
        };
        self.inner.store.set_account(&row)?;
        let resumed = self.inner.follower.resume(&session)?;
        tracing::info!(account = %me.email, resumed, "signed in");
        self.spawn_listing(session);
        self.changed();
        Ok(me)
    }

    /// Signs out: every follow of the account stops (they stay saved under it), its saved
    /// sign-in is deleted and the account is forgotten.
    pub async fn sign_out(&self) -> Result<(), EngineError> {
        let account = self.inner.account.sign_out().or(self.inner.store.account()?.map(|a| a.user_id));
        if let Some(account) = account {
            self.inner.account.forget_secret(&account).await;
        }
        self.inner.store.clear_account()?;
        self.inner.account.set_me(None);
        tracing::info!("signed out");
        self.changed();
        Ok(())
    }

    /// The token was refused and cannot be renewed: stop, say so (tray state and one banner).
    pub(super) fn sign_in_needed(&self, account: &str) {
        if !self.inner.account.stop_session_of(account) {
            return; // another account is signed in now
        }
        let _ = self.inner.store.set_account_problem(Some(&AccountProblem::TokenRefused));
        let now = self.inner.clock.now_ms();
        let item = crate::notice::Item::Account(account.into());
        let notice = Notice {
            key: item.key_with(format_args!("sign-in-needed:{now}")),
            item,
            status: NoticeStatus::App(AppStatus::SignInNeeded),
            title: say!(self.inner.lang, "sign-in-again-title"),
            body: say!(self.inner.lang, "sign-in-again-body"),
            urgent: false,
            local: None,
            session_id: None,
            host: None,
        };
        if self.inner.store.record_notice(&notice, now).unwrap_or(false) {
            self.inner.deliverer.wake();
        }
        self.inner.health.note(Problem::TokenRefused);
        self.changed();
    }
}
