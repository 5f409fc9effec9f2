//! Hosting the engine in a process: the daemon and the tray app both do it this way, so they
//! behave the same. Settings from the config file and the environment, one engine per data
//! directory (a lock file), the freedesktop desktop, the secret store, the local socket, and the
//! sign-in at start (`CMUX_TRAY_TOKEN`, else the saved sign-in). `stop` undoes it all.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};

use cmux_tray_engine::cloud::CloudError;
use cmux_tray_engine::config::{Paths, Settings};
use cmux_tray_engine::desktop::Desktop;
use cmux_tray_engine::desktop::freedesktop::Freedesktop;
use cmux_tray_engine::follow::StopToken;
use cmux_tray_engine::secrets::SecretStore;
use cmux_tray_engine::{Engine, EngineError, EngineOptions, local};

pub struct Host {
    pub engine: Engine,
    pub paths: Paths,
    stop: StopToken,
    server: tokio::task::JoinHandle<()>,
    sign_in: tokio::task::JoinHandle<()>,
    _lock: std::fs::File,
}

impl Host {
    /// Starts the engine with the freedesktop desktop.
    pub async fn start(paths: &Paths, env: &BTreeMap<String, String>) -> anyhow::Result<Host> {
        Self::start_with(paths, env, Arc::new(Freedesktop::new("cmux-tray"))).await
    }

    pub async fn start_with(paths: &Paths, env: &BTreeMap<String, String>, desktop: Arc<dyn Desktop>) -> anyhow::Result<Host> {
        let settings = Settings::load(&paths.config_file, env)?;
        for w in &settings.warnings {
            tracing::warn!("{w}");
        }
        cmux_tray_engine::private::create_dir(&paths.data_dir).with_context(|| format!("making {} private", paths.data_dir.display()))?;
        let lock_path = paths.lock_file();
        let lock = std::fs::File::create(&lock_path).with_context(|| format!("opening {}", lock_path.display()))?;
        if lock.try_lock().is_err() {
            bail!("another cmux-tray engine is running for {} (it holds {})", paths.data_dir.display(), lock_path.display());
        }
        let mut opts = EngineOptions::new(&settings.api_url, &settings.auth_url, paths.database(), desktop);
        opts.config_file = Some(paths.config_file.clone());
        opts.secrets = Some(choose_secret_store(paths).await);
        let engine = Engine::start(opts).await?;
        let stop = StopToken::new();
        let listener = local::bind(&paths.socket()).await?;
        let options = local::ServerOptions { password: settings.socket_password.clone() };
        let server = tokio::spawn(local::serve(listener, engine.clone(), options, stop.clone(), Default::default()));
        tracing::info!(api = %settings.api_url, socket = %paths.socket().display(), "engine running");
        let sign_in = tokio::spawn(sign_in_at_start(engine.clone(), settings));
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

/// How long the keyring may take to answer its probe. A bus that can only start a locked keyring
/// by activation (no prompt can show) would otherwise hold the start-up for D-Bus's 25 s.
const KEYRING_PROBE: Duration = Duration::from_secs(5);

/// The keyring when it answers in time, else the visible file fallback.
async fn choose_secret_store(paths: &Paths) -> SecretStore {
    let data_dir = paths.data_dir.clone();
    // Blocking D-Bus calls: off the async workers.
    let probe = tokio::task::spawn_blocking(move || SecretStore::choose(&data_dir));
    match tokio::time::timeout(KEYRING_PROBE, probe).await {
        Ok(Ok(store)) => store,
        _ => {
            let path = paths.data_dir.join("secrets.json");
            let why = format!("the keyring did not answer within {} s", KEYRING_PROBE.as_secs());
            tracing::warn!("{why}: the refresh token is kept in {}, readable by you alone", path.display());
            SecretStore::File { path, why }
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
                let _ = engine.outbox().set_account_problem(Some("The cloud refused CMUX_TRAY_TOKEN: sign in again."));
                return;
            }
            Err(e) => {
                tracing::error!("{e}");
                return;
            }
        }
    }
}
