//! A fault relay between the engine and the cloud: a TCP relay on loopback that a test tells what
//! the network does, as Toxiproxy's toxics do (latency with jitter, a bandwidth limit, a reset in
//! the middle of a body, a server that accepts and never answers, a slow close, the link cut).
//!
//! Written here rather than taken from noxious (the Rust port of Toxiproxy): noxious 1.0.4
//! (2021) brings tokio-util 0.6 and rand 0.8 beside this project's own versions, has no reset
//! toxic, and changes its toxics at run time only through the state machinery its HTTP server
//! drives; the relay a test needs is the hundred lines below.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::watch;

/// What the network does now; changed at any time with [`FaultRelay::set`].
#[derive(Clone, Debug, Default)]
pub struct Toxics {
    /// Each chunk waits this long, plus up to `jitter` more, each way.
    pub latency: Duration,
    pub jitter: Duration,
    /// Bytes a second towards the engine (0: no limit).
    pub bandwidth: usize,
    /// A connection is reset (RST) once this many bytes went towards the engine.
    pub reset_after: Option<usize>,
    /// Nothing passes, either way, on any connection; new ones are accepted and held (a server
    /// that accepts and never answers).
    pub silent: bool,
    /// The link is cut: nothing passes on the connections there are, and no new connection is
    /// accepted (the listening queue holds one; further attempts go unanswered, as SYNs to a cut
    /// link do). Everything flows again when it is mended.
    pub cut: bool,
    /// When one side closes, the other is closed this much later.
    pub slow_close: Duration,
}

/// The relay: listens on loopback, forwards to `upstream` through the toxics.
pub struct FaultRelay {
    pub port: u16,
    toxics: watch::Sender<Toxics>,
    /// Bumped to end every connection there is (FIN, after any slow close).
    closing: watch::Sender<u64>,
    /// Connections accepted before this many were counted go silent for good (stranded).
    stranded_before: Arc<std::sync::atomic::AtomicUsize>,
    pub accepted: Arc<AtomicUsize>,
    pub resets: Arc<AtomicUsize>,
    _rt: tokio::runtime::Runtime,
    log: Arc<Mutex<Vec<String>>>,
}

impl FaultRelay {
    pub fn start(upstream: SocketAddr) -> FaultRelay {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let socket = rt.block_on(async { TcpSocket::new_v4() }).unwrap();
        socket.set_reuseaddr(true).unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let port = socket.local_addr().unwrap().port();
        // A queue of one: while the relay does not accept, connection attempts past it get no
        // answer at all.
        let listener = {
            let _enter = rt.enter();
            socket.listen(1).unwrap()
        };
        let (toxics, _) = watch::channel(Toxics::default());
        let (closing, _) = watch::channel(0u64);
        let (accepted, resets) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let log = Arc::new(Mutex::new(Vec::new()));
        let stranded_before = Arc::new(AtomicUsize::new(0));
        let (t, c, a, r, sb) = (toxics.clone(), closing.clone(), accepted.clone(), resets.clone(), stranded_before.clone());
        rt.spawn(async move {
            loop {
                let mut now = t.subscribe();
                let _ = now.wait_for(|t| !t.cut).await;
                let Ok((client, _)) = listener.accept().await else { return };
                let number = a.fetch_add(1, Ordering::Relaxed);
                let Ok(server) = TcpStream::connect(upstream).await else { continue };
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                let stranded = Stranded { number, before: sb.clone() };
                tokio::spawn(relay(client, server, t.subscribe(), c.subscribe(), r.clone(), stranded));
            }
        });
        FaultRelay { port, toxics, closing, stranded_before, accepted, resets, _rt: rt, log }
    }

    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn set(&self, toxics: Toxics) {
        self.log.lock().unwrap().push(format!("{toxics:?}"));
        self.toxics.send_replace(toxics);
    }

    pub fn toxics(&self) -> Toxics {
        self.toxics.borrow().clone()
    }

    /// Ends every connection there is, as a server closing them does (FIN, after any slow close).
    pub fn close_all(&self) {
        self.closing.send_modify(|n| *n += 1);
    }

    /// Every connection there is goes silent for good, both ways, and is never closed: what a
    /// machine that slept finds of the connections the network forgot meanwhile. New
    /// connections pass.
    pub fn strand_all(&self) {
        self.stranded_before.store(self.accepted.load(Ordering::Relaxed), Ordering::Relaxed);
        // Wakes every pipe to look again.
        self.toxics.send_modify(|_| {});
    }
}

/// Whether a connection was stranded.
#[derive(Clone)]
struct Stranded {
    number: usize,
    before: Arc<AtomicUsize>,
}

impl Stranded {
    fn now(&self) -> bool {
        self.number < self.before.load(Ordering::Relaxed)
    }
}

/// Both directions of one connection.
async fn relay(
    client: TcpStream,
    server: TcpStream,
    toxics: watch::Receiver<Toxics>,
    closing: watch::Receiver<u64>,
    resets: Arc<AtomicUsize>,
    stranded: Stranded,
) {
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let sent_down = Arc::new(AtomicUsize::new(0));
    let end = Arc::new(tokio::sync::Notify::new());
    let up = pipe(client_read, server_write, toxics.clone(), closing.clone(), None, end.clone(), stranded.clone());
    let down = pipe(server_read, client_write, toxics, closing, Some(sent_down), end, stranded);
    let (up, down) = tokio::join!(up, down);
    if up == Ended::Reset || down == Ended::Reset {
        resets.fetch_add(1, Ordering::Relaxed);
    }
}

#[derive(PartialEq, Eq)]
enum Ended {
    Closed,
    Reset,
}

/// One direction. `towards_engine` counts the bytes sent, for `bandwidth` and `reset_after`.
async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut toxics: watch::Receiver<Toxics>,
    mut closing: watch::Receiver<u64>,
    towards_engine: Option<Arc<AtomicUsize>>,
    end: Arc<tokio::sync::Notify>,
    stranded: Stranded,
) -> Ended {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        // Silent, cut or stranded: nothing is read, so nothing passes (TCP holds it, as on a
        // dead link).
        let _ = toxics.wait_for(|t| !t.silent && !t.cut && !stranded.now()).await;
        let n = tokio::select! {
            read = from.read(&mut buf) => read.unwrap_or(0),
            _ = closing.changed() => 0,
            _ = toxics.changed() => continue,
            // The other direction reset the connection: let go of this half too.
            _ = end.notified() => return Ended::Reset,
        };
        let t = toxics.borrow().clone();
        if n == 0 {
            tokio::time::sleep(t.slow_close).await;
            let _ = to.shutdown().await;
            return Ended::Closed;
        }
        let wait = t.latency + t.jitter.mul_f64(rand::random());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        if let Some(sent) = &towards_engine {
            if t.bandwidth > 0 {
                tokio::time::sleep(Duration::from_secs_f64(n as f64 / t.bandwidth as f64)).await;
            }
            let total = sent.fetch_add(n, Ordering::Relaxed) + n;
            if let Some(limit) = t.reset_after
                && total > limit
            {
                // Part of the body, then a reset: with SO_LINGER 0 the engine's side closes with
                // an RST once both halves are gone (the other direction is told to let go).
                let cut = n - (total - limit).min(n);
                let _ = to.write_all(&buf[..cut]).await;
                let _ = to.as_ref().set_zero_linger();
                to.forget();
                end.notify_waiters();
                end.notify_one();
                return Ended::Reset;
            }
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return Ended::Closed;
        }
    }
}
