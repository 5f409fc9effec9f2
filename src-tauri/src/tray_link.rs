//! The windows process's end of the app's channel (`cmux_tray_channel`): a page's call
//! sent to the tray and its answer awaited; what the tray sends (redraw, show a page, the
//! answer to detach) handed to the windows. When the channel ends, the tray has gone, and the
//! windows go with it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use cmux_tray_channel::{self as channel, Call, ChannelKey, FromTray, Page, Program, ToTray, endpoint, handover};
use serde_json::Value;
use tokio::io::{BufReader, ReadHalf};
use tokio::sync::{mpsc, oneshot};

/// How long a windows process started by hand waits for the tray it started.
const TRAY_START: Duration = Duration::from_secs(15);

/// What was asked and is waiting for its answer.
type Waiting = Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>;

#[derive(Clone)]
pub struct TrayLink {
    send: mpsc::UnboundedSender<ToTray>,
    waiting: Arc<Waiting>,
    next: Arc<AtomicU64>,
    /// What lets this process attach: the key of the tray that started it, or of the tray it
    /// started.
    key: Option<ChannelKey>,
    /// A `Detach` was sent and its `Detached` has not come: one at a time.
    detaching: Arc<AtomicBool>,
}

/// The tray's side, read as it comes.
pub type Incoming = BufReader<ReadHalf<endpoint::ClientStream>>;

impl TrayLink {
    /// Reaches the tray at `path`; when none answers (a window opened by hand, a test's
    /// WebDriver), starts it with `environment`, the secrets (the tray is their user) and a key
    /// made here on its standard input, and waits for it.
    pub async fn connect(
        path: &Path,
        environment: &std::collections::BTreeMap<String, String>,
        mut key: Option<ChannelKey>,
    ) -> anyhow::Result<(TrayLink, Incoming)> {
        let stream = match endpoint::connect(path).await {
            Ok(stream) => stream,
            Err(_) => {
                let tray = channel::program(Program::Tray).ok_or_else(|| {
                    anyhow::anyhow!("no tray answers at {} and cmux-tray-app is not installed beside this program", path.display())
                })?;
                tracing::info!("no tray runs: starting {}", tray.display());
                let mut command = std::process::Command::new(&tray);
                command
                    .args(["--hidden", handover::SECRETS_ON_STDIN, "--key-on-stdin"])
                    .env_clear()
                    .envs(handover::without_secrets(environment))
                    .stdin(std::process::Stdio::piped());
                // A group of its own: a terminal's Ctrl-C to these windows leaves the tray running.
                #[cfg(unix)]
                std::os::unix::process::CommandExt::process_group(&mut command, 0);
                let mut started_tray = command.spawn()?;
                let made = ChannelKey::generate();
                if let Some(mut stdin) = started_tray.stdin.take() {
                    use std::io::Write;
                    stdin.write_all(handover::secrets_block(environment).as_bytes())?;
                    stdin.write_all(made.line().as_bytes())?;
                }
                key = Some(made);
                let started = Instant::now();
                loop {
                    match endpoint::connect(path).await {
                        Ok(stream) => break stream,
                        Err(e) if started.elapsed() > TRAY_START => {
                            anyhow::bail!("the tray did not answer at {} within {TRAY_START:?}: {e}", path.display())
                        }
                        // A tray that could not start has said why (its stderr, the log); one that
                        // found another starting handed over and ended well, and that one answers.
                        Err(_) => match started_tray.try_wait()? {
                            Some(status) if !status.success() => {
                                anyhow::bail!("the tray it started ended ({status}) without answering at {}", path.display())
                            }
                            _ => tokio::time::sleep(Duration::from_millis(50)).await,
                        },
                    }
                }
            }
        };
        let (read, mut write) = tokio::io::split(stream);
        let (send, mut outgoing) = mpsc::unbounded_channel::<ToTray>();
        tokio::spawn(async move {
            while let Some(message) = outgoing.recv().await {
                if let Err(e) = channel::write(&mut write, &message).await {
                    tracing::warn!("{e}");
                    return;
                }
            }
        });
        let link = TrayLink { send, waiting: Arc::default(), next: Arc::new(AtomicU64::new(1)), key, detaching: Arc::default() };
        Ok((link, BufReader::new(read)))
    }

    /// Says which page this process shows; the tray's `Attached` comes back on `Incoming`.
    pub fn attach(&self, page: Page, query: Option<String>) {
        let _ = self.send.send(ToTray::Attach { page, query, key: self.key.clone() });
    }

    /// No window is left: the tray stops sending pages here and answers `Detached`. Once until
    /// that answer: a second `Detached` would be answered with a second `attach`, which the tray
    /// refuses, and the process would end with a window asked for meanwhile.
    pub fn detach(&self) {
        if !self.detaching.swap(true, Ordering::SeqCst) {
            let _ = self.send.send(ToTray::Detach);
        }
    }

    /// The tray answered `Detached`.
    pub fn detached(&self) {
        self.detaching.store(false, Ordering::SeqCst);
    }

    /// A page's call, answered by the tray from the engine.
    pub async fn call(&self, call: Call) -> Result<Value, String> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        locked(&self.waiting).insert(id, answer);
        if self.send.send(ToTray::Call { id, call }).is_err() {
            locked(&self.waiting).remove(&id);
            return Err("cmux-tray has stopped".into());
        }
        answered.await.unwrap_or_else(|_| Err("cmux-tray has stopped".into()))
    }

    /// Hands the tray's answer to the call that waits for it; anything else is returned.
    pub fn answered(&self, message: FromTray) -> Option<FromTray> {
        match message {
            FromTray::Answer { id, result } => {
                if let Some(waiting) = locked(&self.waiting).remove(&id) {
                    let _ = waiting.send(result);
                }
                None
            }
            other => Some(other),
        }
    }
}

/// A mutex taken even when a panic elsewhere poisoned it, as the engine's `lock::Locked` takes
/// its own (this program links no engine): each section leaves its data whole.
pub fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
