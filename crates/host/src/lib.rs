//! Hosting the engine in a process: the daemon and the tray app both do it this way, so they
//! behave the same. Settings from the config file and the environment, one engine per data
//! directory (a lock file), the freedesktop desktop, the secret store, the local socket, and the
//! sign-in at start (`CMUX_TRAY_TOKEN`, else the saved sign-in). `stop` undoes it all.

mod limits;
pub mod logging;
mod stopping;

pub use stopping::stop_requested;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use cmux_tray_engine::cloud::CloudError;
use cmux_tray_engine::config::{Paths, Settings};
use cmux_tray_engine::desktop::{Desktop, Hearing};
use cmux_tray_engine::follow::StopToken;
use cmux_tray_engine::secrets::SecretStore;
use cmux_tray_engine::{Engine, EngineError, EngineOptions, local};

/// Another engine holds this person's data (the tray app, or a daemon already running).
#[derive(Debug, thiserror::Error)]
#[error("another cmux-tray engine is running for {} (it holds {})", data.display(), lock.display())]
pub struct AlreadyRunning {
    data: std::path::PathBuf,
    lock: std::path::PathBuf,
}

pub struct Host {
    pub engine: Engine,
    pub paths: Paths,
    stop: StopToken,
    server: tokio::task::JoinHandle<()>,
    sign_in: tokio::task::JoinHandle<()>,
    _lock: std::fs::File,
}

impl Host {
    /// Starts the engine with the platform's banners; `hearing` says whether this process can
    /// hear their clicks where that takes a main run loop (the app can, the daemon cannot).
    pub async fn start(paths: &Paths, env: &BTreeMap<String, String>, hearing: Hearing) -> anyhow::Result<Host> {
        Self::start_with(paths, env, cmux_tray_engine::desktop::system("cmux-tray", hearing, &paths.data_dir)).await
    }

    pub async fn start_with(paths: &Paths, env: &BTreeMap<String, String>, desktop: Arc<dyn Desktop>) -> anyhow::Result<Host> {
        let settings = Settings::load(&paths.config_file, env)?;
        for w in &settings.warnings {
            tracing::warn!("{w}");
        }
        cmux_tray_engine::private::create_dir(&paths.data_dir).with_context(|| format!("making {} private", paths.data_dir.display()))?;
        let lock_path = paths.lock_file();
        let lock = cmux_tray_engine::private::open_lock(&lock_path).with_context(|| format!("opening {}", lock_path.display()))?;
        if lock.try_lock().is_err() {
            return Err(AlreadyRunning { data: paths.data_dir.clone(), lock: lock_path }.into());
        }
        crate::limits::raise_descriptor_limit();
        let mut opts = EngineOptions::new(&settings.api_url, &settings.auth_url, paths.database(), desktop);
        opts.config_file = Some(paths.config_file.clone());
        opts.network = settings.network();
        // Checked when the settings were read: an https URL, or http on loopback.
        opts.update_feed = settings.update_feed.as_deref().and_then(|u| url::Url::parse(u).ok());
        opts.lang = Arc::new(cmux_tray_engine::lang::Lang::of_system(&cmux_tray_engine::lang::SystemLocale::from_env(), settings.language));
        if let Some(retry) = settings.desktop_retry {
            opts.desktop_retry = retry;
        }
        let engine = Engine::start(opts).await?;
        let stop = StopToken::new();
        // Said before the socket answers, so a request right after start waits for the account.
        let (restoring, engine_for_sign_in) = (engine.restoring_sign_in(), engine.clone());
        let listener = local::bind(&paths.socket()).await?;
        let options = local::ServerOptions { password: settings.socket_password.clone() };
        let server = tokio::spawn(local::serve(listener, engine.clone(), options, stop.clone(), Default::default()));
        tracing::info!(api = %settings.api_url, route = %engine.cloud_route(), socket = %paths.socket().display(), "engine running");
        let paths_for_sign_in = paths.clone();
        let sign_in = tokio::spawn(async move {
            let _restoring = restoring;
            let probe = settings.keyring_probe.unwrap_or(KEYRING_PROBE);
            let store = choose_secret_store(&paths_for_sign_in, &engine_for_sign_in, settings.token.is_some(), probe).await;
            engine_for_sign_in.set_secret_store(store);
            sign_in_at_start(engine_for_sign_in, settings).await
        });
        Ok(Host { engine, paths: paths.clone(), stop, server, sign_in, _lock: lock })
    }

    /// Stops the socket and the engine, and waits for them (at most 10 s for the engine).
    pub async fn stop(self) {
        self.sign_in.abort();
        self.stop.cancel();
        // The server removes its socket as it stops (only while it is still the one it made).
        let _ = self.server.await;
        if tokio::time::timeout(Duration::from_secs(10), self.engine.shutdown()).await.is_err() {
            tracing::warn!("some tasks did not stop within 10 s");
        }
    }
}

/// How long the keyring may take to answer before the start-up says it is still asking
/// (`CMUX_TRAY_KEYRING_PROBE_MS` changes it, for the tests).
const KEYRING_PROBE: Duration = Duration::from_secs(5);
/// How long the keyring is asked, when the remembered account's sign-in can only be there: right
/// after login a Secret Service often answers late, and deciding early reads as signed out.
const KEYRING_PATIENCE: Duration = Duration::from_secs(60);
/// Between two probes that were answered "no keyring here" (none on the bus yet).
const KEYRING_ASK_AGAIN: Duration = Duration::from_secs(2);

/// The keyring when it answers; else the visible file fallback. When the account remembered here
/// has no sign-in in the file (and no token was given), the keyring is asked for up to
/// `KEYRING_PATIENCE` first (a slow or late Secret Service at login), since the file could only
/// say "signed out".
async fn choose_secret_store(paths: &Paths, engine: &Engine, token_given: bool, answer_within: Duration) -> SecretStore {
    let data_dir = &paths.data_dir;
    let remembered = engine.store().account().ok().flatten().map(|a| a.user_id);
    // A token given at start signs in by itself: nothing to wait for.
    let patient = !token_given && remembered.is_some_and(|a| !SecretStore::file_holds(data_dir, &a));
    let start = tokio::time::Instant::now();
    let deadline = start + if patient { KEYRING_PATIENCE } else { answer_within };
    let mut said = false;
    loop {
        // Blocking D-Bus calls: off the async workers. A probe that hangs is waited for, not
        // started again beside itself.
        let mut probe = tokio::task::spawn_blocking(cmux_tray_engine::secrets::probe_keyring);
        let answer = loop {
            let until = deadline.min(tokio::time::Instant::now() + answer_within);
            match tokio::time::timeout_at(until, &mut probe).await {
                Ok(answer) => break Some(answer.map_err(|e| e.to_string()).and_then(|a| a)),
                Err(_) if tokio::time::Instant::now() >= deadline => break None,
                Err(_) if !said => {
                    said = true;
                    tracing::warn!("the keyring has not answered within {} ms; still asking before deciding", answer_within.as_millis());
                }
                Err(_) => {}
            }
        };
        match answer {
            Some(Ok(())) => return SecretStore::Keyring,
            None => {
                let waited = start.elapsed().as_secs();
                return SecretStore::file(data_dir, format!("the keyring did not answer within {waited} s"));
            }
            Some(Err(why)) if !patient || tokio::time::Instant::now() + KEYRING_ASK_AGAIN >= deadline => {
                return SecretStore::file(data_dir, why);
            }
            Some(Err(why)) => {
                if !said {
                    said = true;
                    tracing::warn!("no keyring answered yet ({why}); asking again for up to {} s", KEYRING_PATIENCE.as_secs());
                }
                tokio::time::sleep(KEYRING_ASK_AGAIN).await;
            }
        }
    }
}

/// Signs in with `CMUX_TRAY_TOKEN` when given, retrying while the cloud cannot be reached;
/// else with the remembered account's saved sign-in.
async fn sign_in_at_start(engine: Engine, settings: Settings) {
    let Some(token) = settings.token else {
        match engine.resume_saved_account().await {
            Ok(Some(me)) => tracing::info!(email = %me.email, "signed in again with the saved sign-in"),
            Ok(None) => tracing::info!("not signed in (cmux-tray login): nothing to follow"),
            Err(e) => tracing::error!("{e}"),
        }
        return;
    };
    let mut pause = Duration::from_secs(2);
    loop {
        match engine.sign_in_with_token(token.clone(), settings.team.clone()).await {
            Ok(me) => {
                tracing::info!(email = %me.email, "signed in");
                return;
            }
            Err(EngineError::SignIn(e)) if e.is_retryable() => {
                tracing::warn!("signing in: {e}; trying again in {pause:?}");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(60));
            }
            Err(EngineError::SignIn(CloudError::StaleToken)) => {
                tracing::error!("CMUX_TRAY_TOKEN was refused by the cloud: sign in again");
                let _ = engine.store().set_account_problem(Some(&cmux_tray_engine::store::AccountProblem::EnvTokenRefused));
                return;
            }
            Err(e) => {
                tracing::error!("{e}");
                return;
            }
        }
    }
}
