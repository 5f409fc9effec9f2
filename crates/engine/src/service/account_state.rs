//! Who is signed in, as the engine holds it: the session, where its sign-in is kept (and its
//! saves, reads and deletes there, in order), its renewal, a device sign-in under way, what `/v1/me` said, and the sign-in at start. The sign-in
//! flows (`sign_in`, `account`) read and change it only through these methods. Asked by every
//! request that needs the account and changed by the sign-in, the renewal and sign-out, which run
//! on different tasks: each field is behind its own lock or watch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use secrecy::SecretString;

use super::health::Health;
use super::{EngineError, RestoringSignIn};
use crate::cloud::auth::DeviceStart;
use crate::cloud::{Credentials, Me};
use crate::follow::Session;
use crate::lock::Locked;
use crate::secrets::{KeptSignIn, Origins, SecretError, SecretStore};
use crate::status::Problem;

/// How long a sign-in waits for the host to choose where to keep it (the keyring asked at start).
const SECRET_STORE_WAIT: Duration = Duration::from_secs(90);

/// The renewal of one session's access token.
pub(super) struct Renewal {
    pub(super) account: String,
    /// Asked to renew now (a 401 came back).
    pub(super) now: Notify,
}

/// What a sign-in did to the session in place.
pub(super) enum TakeOver {
    /// The same account and team: only its token was renewed.
    Renewed,
    /// A new session; `switched_from`: the other account signed in before, if any.
    New { session: Arc<Session>, switched_from: Option<String> },
}

pub(super) struct AccountState {
    /// The cloud's origins, kept with a sign-in: it is sent to no other.
    origins: Origins,
    /// Where a sign-in that cannot be kept, read or deleted is said.
    health: Arc<Health>,
    session: Mutex<Option<Arc<Session>>>,
    /// Where the refresh token is kept; chosen by the host once the keyring answered (or not).
    secrets: watch::Sender<Option<SecretStore>>,
    renewal: Mutex<Option<Arc<Renewal>>>,
    pending_device: Mutex<Option<DeviceStart>>,
    /// Who the signed-in account is and its teams, as `/v1/me` last said.
    me: Mutex<Option<Me>>,
    /// True while the sign-in at start (the saved one, or a given token) is under way.
    restoring: watch::Sender<bool>,
    /// Counts sign-outs: a restore that began before one never signs the account in again.
    sign_outs: AtomicU64,
    /// Saves and deletes of the saved sign-in, one at a time and in order.
    secret_writes: tokio::sync::Mutex<()>,
    /// `sign_outs` when the sign-in at start began.
    restore_began: AtomicU64,
}

impl AccountState {
    pub(super) fn new(secrets: Option<SecretStore>, origins: Origins, health: Arc<Health>) -> Self {
        AccountState {
            origins,
            health,
            session: Mutex::new(None),
            secrets: watch::Sender::new(secrets),
            renewal: Mutex::new(None),
            pending_device: Mutex::new(None),
            me: Mutex::new(None),
            restoring: watch::Sender::new(false),
            sign_outs: Default::default(),
            secret_writes: Default::default(),
            restore_began: Default::default(),
        }
    }

    // ── the session ──────────────────────────────────────────────────────────────────────────

    pub(super) fn session(&self) -> Option<Arc<Session>> {
        self.session.locked().clone()
    }

    /// The session, or why there is none: `offline` is why the cloud cannot be reached, if so.
    pub(super) fn signed_in(&self, offline: impl FnOnce() -> Option<String>) -> Result<Arc<Session>, EngineError> {
        if let Some(session) = self.session() {
            return Ok(session);
        }
        // The sign-in at start is still being tried: say why it has not come through.
        match (*self.restoring.borrow(), offline()) {
            (true, Some(why)) => Err(EngineError::NotSignedInYet { why }),
            _ => Err(EngineError::SignedOut),
        }
    }

    /// Makes `account` with `cred` the session. The same account and team only renews its token;
    /// otherwise the session before stops, and a new one (stopped by `stop`) takes its place.
    pub(super) fn take_over(&self, account: &str, cred: Credentials, stop: impl FnOnce() -> CancellationToken) -> TakeOver {
        let mut slot = self.session.locked();
        let mut switched_from = None;
        match slot.as_ref() {
            Some(s) if s.account == account && s.credentials().team == cred.team => {
                s.renew(cred);
                return TakeOver::Renewed;
            }
            Some(old) => {
                old.stop.cancel();
                if old.account != account {
                    switched_from = Some(old.account.clone());
                }
            }
            None => {}
        }
        let session = Session::new(account, cred, stop());
        *slot = Some(session.clone());
        TakeOver::New { session, switched_from }
    }

    /// Stops the session of `account` (a refused token). False when another account is signed
    /// in now, which is left alone.
    pub(super) fn stop_session_of(&self, account: &str) -> bool {
        let session = {
            let mut slot = self.session.locked();
            match slot.as_ref() {
                Some(s) if s.account != account => return false,
                Some(_) => slot.take(),
                None => None, // not signed in yet (a refused refresh at start): nothing to stop
            }
        };
        if let Some(s) = session {
            s.stop.cancel();
        }
        true
    }

    /// A sign-out: counted, the session stopped and its renewal dropped. Returns the account
    /// that was signed in, if any.
    pub(super) fn sign_out(&self) -> Option<String> {
        self.sign_outs.fetch_add(1, Ordering::SeqCst);
        let session = self.session.locked().take();
        if let Some(s) = &session {
            s.stop.cancel();
        }
        self.renewal.locked().take();
        session.map(|s| s.account.clone())
    }

    /// How many sign-outs there were so far.
    pub(super) fn sign_outs(&self) -> u64 {
        self.sign_outs.load(Ordering::SeqCst)
    }

    /// The sign-outs a restore under way is measured against: those before the sign-in at start
    /// began (a sign-out since means: stay signed out), else those so far.
    pub(super) fn sign_outs_at_restore(&self) -> u64 {
        match *self.restoring.borrow() {
            true => self.restore_began.load(Ordering::SeqCst),
            false => self.sign_outs(),
        }
    }

    // ── who, and the device sign-in ─────────────────────────────────────────────────────────

    pub(super) fn me(&self) -> Option<Me> {
        self.me.locked().clone()
    }

    pub(super) fn set_me(&self, me: Option<Me>) {
        *self.me.locked() = me;
    }

    pub(super) fn set_pending_device(&self, start: Option<DeviceStart>) {
        *self.pending_device.locked() = start;
    }

    pub(super) fn pending_device(&self) -> Option<DeviceStart> {
        self.pending_device.locked().clone()
    }

    // ── the renewal ─────────────────────────────────────────────────────────────────────────

    pub(super) fn renewal(&self) -> Option<Arc<Renewal>> {
        self.renewal.locked().clone()
    }

    pub(super) fn set_renewal(&self, renewal: Arc<Renewal>) {
        *self.renewal.locked() = Some(renewal);
    }

    // ── where the sign-in is kept, and the sign-in at start ────────────────────────────────

    /// Where the refresh token is kept from now on.
    pub(super) fn set_secret_store(&self, store: SecretStore) {
        self.secrets.send_replace(Some(store));
    }

    pub(super) fn secret_store(&self) -> Option<SecretStore> {
        self.secrets.borrow().clone()
    }

    /// The store, waiting for the host's choice while the sign-in at start is under way (a sign-in
    /// made meanwhile is kept in the store chosen, not lost).
    pub(super) async fn secret_store_ready(&self) -> Option<SecretStore> {
        if self.secret_store().is_none() && *self.restoring.borrow() {
            let mut chosen = self.secrets.subscribe();
            let _ = tokio::time::timeout(SECRET_STORE_WAIT, chosen.wait_for(Option::is_some)).await;
        }
        self.secret_store()
    }

    /// The origins this engine's cloud speaks to, kept with a sign-in.
    pub(super) fn origins(&self) -> Origins {
        self.origins.clone()
    }

    /// Keeps `account`'s refresh token where the host chose (a failure is a problem shown).
    pub(super) async fn save_secret(&self, account: &str, secret: SecretString) {
        let Some(store) = self.secret_store_ready().await else { return };
        let secret = KeptSignIn { refresh: secret, origins: Some(self.origins()) };
        let account = account.to_string();
        tracing::debug!(%account, "keeping the sign-in");
        let _in_order = self.secret_writes.lock().await;
        let saved = tokio::task::spawn_blocking(move || store.save(&account, &secret)).await;
        if let Ok(Err(e)) | Err(e) = saved.map_err(|e| SecretError::Keyring(e.to_string())) {
            self.health.note(Problem::SignInNotKept { why: e.to_string() });
        }
    }

    /// `account`'s kept sign-in, if the store has one (a failure to read it is a problem shown).
    pub(super) async fn load_secret(&self, account: &str) -> Option<KeptSignIn> {
        let store = self.secret_store()?;
        let account = account.to_string();
        match tokio::task::spawn_blocking(move || store.load(&account)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                self.health.note(Problem::SignInNotRead { why: e.to_string() });
                None
            }
            Err(_) => None,
        }
    }

    /// Deletes `account`'s kept sign-in (a failure is a problem shown).
    pub(super) async fn forget_secret(&self, account: &str) {
        // A sign-out right after start waits for the store to be chosen, so it deletes for real.
        let Some(store) = self.secret_store_ready().await else { return };
        let account = account.to_string();
        tracing::debug!(%account, "deleting the saved sign-in");
        // After any save under way: a sign-out's delete is the last word, not overtaken by it.
        let _in_order = self.secret_writes.lock().await;
        if let Ok(Err(e)) = tokio::task::spawn_blocking(move || store.delete(&account)).await {
            self.health.note(Problem::SignInNotRemoved { why: e.to_string() });
        }
    }

    /// The sign-in at start is under way until the guard is dropped.
    pub(super) fn restoring_sign_in(&self) -> RestoringSignIn {
        self.restore_began.store(self.sign_outs(), Ordering::SeqCst);
        self.restoring.send_replace(true);
        RestoringSignIn(self.restoring.clone())
    }

    /// Each change of whether the sign-in at start is under way.
    pub(super) fn watch_restoring(&self) -> watch::Receiver<bool> {
        self.restoring.subscribe()
    }
}
