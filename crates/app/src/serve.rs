//! The app's channel, served: a second launch's arguments, and the windows process's attach,
//! detach and page calls (docs/architecture.md "Two processes"). Each connection is read in a
//! task of its own; a page's call is answered as soon as the engine has, in any order.
//!
//! Any process of the user's may hand over a launch (one a connection); only a windows process
//! of this tray's (one it started, or the one that started it) that shows this launch's key
//! (given to it on its standard input) may attach and call. Connections, the
//! calls a connection has under way and the line a connection may send are capped, so no peer
//! holds more than a bounded share of the tray.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use cmux_tray_channel::{self as channel, FromTray, ToTray};
use cmux_tray_engine::local::{self, endpoint::Accepted};
use tokio::io::BufReader;
use tokio::sync::{Semaphore, mpsc};

use crate::App;

/// Connections served at once (the windows process and launches handing over need a few).
const CONNECTIONS: usize = 16;
/// A page's calls under way on one connection; the next line is read when one ends.
const CALLS: usize = 16;
/// How long a peer that has not shown the key may stay silent before it is let go.
const UNKNOWN_IDLE: Duration = Duration::from_secs(10);

/// The channel while it is served; `stop` ends it and removes its socket.
pub struct Serving {
    listener: Arc<local::Listener>,
    accepting: tokio::task::JoinHandle<()>,
}

impl Serving {
    /// Stops answering and removes the socket, so that a tray started next (a restart) binds
    /// it at once.
    pub async fn stop(self) {
        self.accepting.abort();
        let _ = self.accepting.await;
        self.listener.remove();
    }
}

pub fn start(app: Arc<App>, listener: local::Listener) -> Serving {
    let listener = Arc::new(listener);
    let serving = listener.clone();
    let accepting = tokio::spawn(async move {
        let next = AtomicU64::new(1);
        let connections = Arc::new(Semaphore::new(CONNECTIONS));
        loop {
            match listener.accept().await {
                Ok(Accepted::Peer(stream)) => match connections.clone().try_acquire_owned() {
                    Ok(permit) => {
                        let app = app.clone();
                        let id = next.fetch_add(1, Ordering::Relaxed);
                        tokio::spawn(async move {
                            connection(app, stream, id).await;
                            drop(permit);
                        });
                    }
                    Err(_) => tracing::warn!("the app's channel refused a connection: {CONNECTIONS} are open already"),
                },
                Ok(Accepted::Refused(why)) => tracing::warn!("the app's channel refused {why}"),
                Err(e) => {
                    tracing::error!("the app's channel: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        }
    });
    Serving { listener: serving, accepting }
}

/// Who is at the other end, as far as the channel knows.
#[derive(Clone, Copy, PartialEq)]
enum Peer {
    /// Any process of the user's: it may hand over a launch, nothing more.
    Unknown,
    /// The windows process this tray started (or that started it): it showed the key.
    Windows,
}

async fn connection(app: Arc<App>, stream: local::endpoint::ServerStream, id: u64) {
    let pid = local::endpoint::peer_pid(&stream);
    let (read, mut write) = tokio::io::split(stream);
    let mut reader = BufReader::new(read);
    let (send, mut outgoing) = mpsc::unbounded_channel::<FromTray>();
    let writer = tokio::spawn(async move {
        while let Some(message) = outgoing.recv().await {
            if let Err(e) = channel::write(&mut write, &message).await {
                tracing::debug!("the app's channel: {e}");
                return;
            }
        }
    });
    let calls = Arc::new(Semaphore::new(CALLS));
    let mut peer = Peer::Unknown;
    loop {
        let next = channel::read_within::<ToTray>(&mut reader, channel::MAX_LINE_TO_TRAY);
        let read = match peer {
            Peer::Windows => next.await,
            Peer::Unknown => match tokio::time::timeout(UNKNOWN_IDLE, next).await {
                Ok(read) => read,
                Err(_) => break,
            },
        };
        match read {
            Ok(Some(ToTray::Launched { argv })) => {
                crate::links::launched(&app, &argv);
                // One launch a connection: a peer without the key holds no slot for long.
                if peer == Peer::Unknown {
                    break;
                }
            }
            Ok(Some(ToTray::Attach { page, query, key })) => {
                // The key, from the very process it was given to: one that read it out of that
                // process's pipe (/proc/PID/fd/0) is another process.
                if peer == Peer::Windows || (app.key.admits(key.as_ref()) && app.windows.is_own(pid)) {
                    peer = Peer::Windows;
                    let chosen = app.windows.attach(id, send.clone(), page, query);
                    let _ = send.send(FromTray::Attached { chosen });
                } else {
                    // A windows program started by hand while the tray runs (or any program):
                    // the page is shown in the tray's own windows process, and this one ends.
                    tracing::info!(%page, "a window was asked for without this launch's key: shown by the tray's own windows");
                    app.windows.open(&app, page, query);
                    let _ = send.send(FromTray::Attached { chosen: false });
                    break;
                }
            }
            Ok(Some(ToTray::Detach)) if peer == Peer::Windows => {
                app.windows.detach(&app, id);
                let _ = send.send(FromTray::Detached);
            }
            Ok(Some(ToTray::Call { id, call })) if peer == Peer::Windows => {
                let Ok(permit) = calls.clone().acquire_owned().await else { break };
                let (app, send) = (app.clone(), send.clone());
                tokio::spawn(async move {
                    let command = call.command();
                    let result = crate::pages::run(&app, call).await;
                    if let Err(e) = &result {
                        tracing::debug!("{command}: {e}");
                    }
                    let _ = send.send(FromTray::Answer { id, result });
                    drop(permit);
                });
            }
            Ok(Some(ToTray::Call { id, call })) => {
                tracing::warn!(command = call.command(), "the app's channel refused a call from a process that is not the tray's windows");
                let _ = send.send(FromTray::Answer { id, result: Err(REFUSED.into()) });
                break;
            }
            Ok(Some(ToTray::Detach)) => break,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!("{e}");
                break;
            }
        }
    }
    // A windows process that went away (closed, killed, crashed) shows nothing any more.
    app.windows.detach(&app, id);
    drop(send);
    let _ = writer.await;
}

/// The answer to a call from a peer without the key.
const REFUSED: &str = "refused: only the windows cmux-tray started may ask this of it";
