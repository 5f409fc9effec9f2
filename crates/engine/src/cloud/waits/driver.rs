//! One connection's life: driven on a task of its own, its SETTINGS learnt, PINGed while it
//! carries waits and is silent, ended when a PING goes unanswered or it idles.

use std::sync::Weak;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;

use super::{Connection, IDLE_CLOSE, PING_AFTER_SILENCE, PONG_WITHIN};

/// How a new connection's first exchange went.
pub(super) enum Settled {
    /// The server's SETTINGS are in.
    Yes,
    /// The server answered with bytes that are not HTTP/2.
    NotHttp2(String),
    /// The connection ended first (closed, reset).
    Closed(String),
}

/// Drives one connection on a task of its own (nothing else is polled with it: its frames are
/// most of the daemon's work), and watches it from another: learns the server's SETTINGS (before
/// its answer to a first PING), then PINGs it whenever it carries waits and has been silent, and
/// ends it when a PING goes unanswered or it carried no wait for [`IDLE_CLOSE`]. Held weakly: the
/// tasks must not keep the entry alive. Ending the connection fails the waits still on it, which
/// are then sent again.
pub(super) fn drive<T>(
    connection: h2::client::Connection<T, Bytes>,
    pings: h2::PingPong,
    conn: Weak<Connection>,
    settled: tokio::sync::oneshot::Sender<Settled>,
    epoch: Instant,
) where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (ended_tx, ended) = tokio::sync::oneshot::channel();
    let running = tokio::spawn(async move {
        let ended = connection.await;
        if let Err(e) = &ended {
            tracing::debug!("an HTTP/2 connection of the waits ended: {e}");
        }
        let _ = ended_tx.send(ended.err());
    });
    tokio::spawn(watch(running, ended, pings, conn, settled, epoch));
}

async fn watch(
    running: tokio::task::JoinHandle<()>,
    mut ended: tokio::sync::oneshot::Receiver<Option<h2::Error>>,
    mut pings: h2::PingPong,
    conn: Weak<Connection>,
    settled: tokio::sync::oneshot::Sender<Settled>,
    epoch: Instant,
) {
    let first = tokio::select! {
        e = &mut ended => Err(e.ok().flatten()),
        pong = pings.ping(h2::Ping::opaque()) => pong.map_err(Some),
    };
    let outcome = match first {
        Ok(_) => Settled::Yes,
        // h2 itself found the peer's bytes wrong: what it read was not HTTP/2.
        Err(Some(e)) if e.is_library() => Settled::NotHttp2(e.to_string()),
        Err(Some(e)) => Settled::Closed(e.to_string()),
        Err(None) => Settled::Closed("closed".into()),
    };
    let yes = matches!(outcome, Settled::Yes);
    let _ = settled.send(outcome);
    if yes {
        keep_alive(&mut ended, &mut pings, &conn, epoch).await;
    }
    // Ended, dead, or idle: what is still on it fails and is sent again elsewhere.
    running.abort();
    if let Some(c) = conn.upgrade() {
        c.retire();
    }
}

/// Returns when the connection ended, answered no PING, or carried no wait for [`IDLE_CLOSE`].
async fn keep_alive(
    ended: &mut tokio::sync::oneshot::Receiver<Option<h2::Error>>,
    pings: &mut h2::PingPong,
    conn: &Weak<Connection>,
    epoch: Instant,
) {
    let mut idle_since = None;
    while let Some(heard) = conn.upgrade().map(|c| c.heard.load(Ordering::Relaxed)) {
        let due = epoch + Duration::from_millis(heard) + PING_AFTER_SILENCE;
        tokio::select! {
            _ = &mut *ended => return,
            _ = tokio::time::sleep_until(due.max(Instant::now() + Duration::from_millis(100))) => {}
        }
        let Some(c) = conn.upgrade() else { return };
        let now = epoch.elapsed();
        if Duration::from_millis(c.heard.load(Ordering::Relaxed)) + PING_AFTER_SILENCE > now {
            continue;
        }
        if c.in_flight.load(Ordering::Relaxed) == 0 {
            let since = *idle_since.get_or_insert(now);
            if now - since >= IDLE_CLOSE {
                tracing::debug!("an HTTP/2 connection of the waits closed after {} s without a wait", IDLE_CLOSE.as_secs());
                return;
            }
            c.heard.store(now.as_millis() as u64, Ordering::Relaxed);
            continue;
        }
        idle_since = None;
        drop(c);
        let answered = tokio::select! {
            _ = &mut *ended => return,
            pong = tokio::time::timeout(PONG_WITHIN, pings.ping(h2::Ping::opaque())) => pong,
        };
        match answered {
            Ok(Ok(_)) => {
                if let Some(c) = conn.upgrade() {
                    c.heard.store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
                }
            }
            Ok(Err(e)) => {
                tracing::debug!("a PING on a connection of the waits failed: {e}");
                return;
            }
            Err(_) => {
                tracing::info!(
                    "a connection of the waits answered no PING within {} s: it is dropped, its waits sent again",
                    PONG_WITHIN.as_secs()
                );
                return;
            }
        }
    }
}
