//! The app's channel, served: a second launch's arguments, and the windows process's attach,
//! detach and page calls (docs/architecture.md "Two processes"). Each connection is read in a
//! task of its own; a page's call is answered as soon as the engine has, in any order.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cmux_tray_engine::channel::{self, FromTray, ToTray};
use cmux_tray_engine::local::{self, endpoint::Accepted};
use tokio::io::BufReader;
use tokio::sync::mpsc;

use crate::App;

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
        loop {
            match listener.accept().await {
                Ok(Accepted::Peer(stream)) => {
                    tokio::spawn(connection(app.clone(), stream, next.fetch_add(1, Ordering::Relaxed)));
                }
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

async fn connection(app: Arc<App>, stream: local::endpoint::ServerStream, id: u64) {
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
    loop {
        match channel::read::<ToTray>(&mut reader).await {
            Ok(Some(ToTray::Launched { argv })) => crate::links::launched(&app, &argv),
            Ok(Some(ToTray::Attach { page, query })) => {
                let chosen = app.windows.attach(id, send.clone(), page, query);
                let _ = send.send(FromTray::Attached { chosen });
            }
            Ok(Some(ToTray::Detach)) => {
                app.windows.detach(&app, id);
                let _ = send.send(FromTray::Detached);
            }
            Ok(Some(ToTray::Call { id: call, command, args })) => {
                let (app, send) = (app.clone(), send.clone());
                tokio::spawn(async move {
                    let result = crate::pages::call(&app, &command, args).await;
                    if let Err(e) = &result {
                        tracing::debug!("{command}: {e}");
                    }
                    let _ = send.send(FromTray::answer(call, result));
                });
            }
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
