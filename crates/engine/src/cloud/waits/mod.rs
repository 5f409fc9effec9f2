//! The waits' own HTTP/2 connections: each wait one bare h2 stream, as many to a connection as
//! the server allows at once (at most 100).
//!
//! Why not reqwest for these: a follow is a wait in flight nearly all the time, and 10,000 of
//! them are the point (`scripts/bench` row 2). Through reqwest each request in flight keeps about
//! 9 KiB (measured with heaptrack: hyper-util's boxed pool future, reqwest's boxed request, the
//! task hyper spawns for every HTTP/2 response); here it keeps the h2 stream and the follow's own
//! future. Every other call (lists, sign-in, cancel) stays on reqwest, and so do the waits over
//! HTTP/1.1: asked for by `[cloud] http = "1.1"`, or chosen by a server that does not speak
//! HTTP/2 (docs/cloud-api.md, "HTTP/2 as servers speak it").
//!
//! Real servers are not the simulator, and this module follows what they say:
//! - **Streams.** A connection carries no more waits than the server's
//!   `SETTINGS_MAX_CONCURRENT_STREAMS`, read before the first wait goes out (the server's SETTINGS
//!   come before its answer to a first PING) and read again at every wait, so a change is
//!   followed. The next wait opens another connection: none queues inside a connection.
//! - **GOAWAY and RST_STREAM.** A wait the server did not take, or reset, is sent again at once,
//!   never backed off: a connection that is going away takes no new wait, and the waits it took
//!   finish where they are. A stream's reset ends that wait alone; only a connection's error
//!   retires the connection.
//! - **PING.** A connection that carries waits and has been silent for [`PING_AFTER_SILENCE`] is
//!   PINGed; no answer within [`PONG_WITHIN`] and it is dropped, and its waits are sent again on a
//!   new one: a connection that died in a suspend or a change of network is found in seconds.
//! - **h2c refused.** A loopback `http://` server that answers HTTP/2's preface with HTTP/1.1 is
//!   remembered, and the waits go over reqwest (HTTP/1.1) from then on, said once in the log.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use h2::client::SendRequest;
use http::{HeaderMap, HeaderValue, Request, StatusCode};
use tokio::sync::watch;
use tokio::time::Instant;
use url::Url;

use super::answer::retry_after;
use super::connect::{CONNECT_TIMEOUT, ConnectFailed, Connector};
use super::proxy::Route;
use crate::lock::Locked;

/// Waits one connection carries at most, whatever the server allows. RFC 9113 §6.5.2
/// recommends that a server allow at least 100 streams at once.
pub const WAITS_PER_CONNECTION: usize = 100;
/// A connection that carries waits and has heard nothing this long is PINGed.
pub const PING_AFTER_SILENCE: Duration = Duration::from_secs(5);
/// How long a PING may go unanswered before its connection is taken for dead.
pub const PONG_WITHIN: Duration = Duration::from_secs(3);
/// A connection that has carried no wait this long is closed.
const IDLE_CLOSE: Duration = Duration::from_secs(90);
/// How many times one wait is sent (again at once after a server's GOAWAY or reset, or a
/// connection that died under it) before it fails back to its follow, which backs off.
const SENDS: usize = 3;
/// Headers of an answer are a few hundred bytes; a larger list is refused by h2 itself.
const MAX_HEADER_LIST: u32 = 64 * 1024;

/// What a wait came back with, before the client reads it as a Run or a hand-off.
pub(super) struct Answer {
    pub status: StatusCode,
    pub retry_after: Option<Duration>,
    pub body: Vec<u8>,
}

#[derive(Debug, Clone, thiserror::Error)]
pub(super) enum WaitFailed {
    /// The server does not speak HTTP/2 (ALPN chose HTTP/1.1, or it answered h2c's preface with
    /// HTTP/1.1): this wait and the next go over reqwest.
    #[error("the server does not speak HTTP/2")]
    NoHttp2,
    #[error("{0}")]
    Connect(ConnectFailed),
    #[error("{0}")]
    Handshake(String),
    #[error("no answer before the client's deadline")]
    Deadline,
    #[error("{0}")]
    Stream(String),
    #[error("the body is larger than {} KiB", .0 / 1024)]
    TooLarge(usize),
}

/// The connections of one origin (the API's), shared by every wait.
pub(super) struct WaitConnections {
    host: String,
    port: u16,
    route: Route,
    connector: Connector,
    /// `None` for plain http to loopback: HTTP/2 by prior knowledge (h2c).
    tls: Option<(tokio_rustls::TlsConnector, rustls::pki_types::ServerName<'static>)>,
    conns: Mutex<Vec<Arc<Connection>>>,
    /// Set when the server does not speak HTTP/2: from then on the waits go over reqwest.
    declined: AtomicBool,
    /// The stream limit the last server of this origin announced: how many waits a connection
    /// being opened is expected to take before another is opened beside it.
    expected: AtomicUsize,
    /// What the connections' `heard` times count from.
    epoch: Instant,
}

struct Connection {
    link: watch::Sender<Link>,
    /// How many waits it may carry: the server's limit (at most 100), read when it opened and
    /// again after each wait on it (h2 keeps it behind a lock; a wait's place is taken often).
    /// 0 until it is open.
    limit: AtomicUsize,
    /// Waits placed on it (sent, or about to be).
    in_flight: AtomicUsize,
    /// Waits waiting for it to open.
    queued: AtomicUsize,
    /// No new wait goes to a retired connection; the waits on it finish, and it closes when the
    /// last one ends. Retired when it failed, closed, went away, or a wait on it met its deadline.
    retired: AtomicBool,
    /// When an answer or a PING's answer last came on it (ms from the epoch).
    heard: AtomicU64,
}

#[derive(Clone)]
enum Link {
    Opening,
    /// Open, and the server's SETTINGS are in.
    Open(SendRequest<Bytes>),
    Failed(WaitFailed),
}

impl Connection {
    fn new() -> Arc<Connection> {
        Arc::new(Connection {
            link: watch::channel(Link::Opening).0,
            limit: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            queued: AtomicUsize::new(0),
            retired: AtomicBool::new(false),
            heard: AtomicU64::new(0),
        })
    }

    fn retired(&self) -> bool {
        self.retired.load(Ordering::Relaxed)
    }

    fn retire(&self) {
        self.retired.store(true, Ordering::Relaxed);
    }

    /// Reads the server's limit again (after SETTINGS that changed it).
    fn learn_limit(&self, sender: &SendRequest<Bytes>) {
        self.limit.store(sender.current_max_send_streams().min(WAITS_PER_CONNECTION), Ordering::Relaxed);
    }

    fn sender(&self) -> Option<SendRequest<Bytes>> {
        match &*self.link.borrow() {
            Link::Open(sender) => Some(sender.clone()),
            _ => None,
        }
    }
}

/// A wait's place on a connection, given back when the wait ends (however it ends).
struct Place(Arc<Connection>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A wait's turn on a connection being opened, given back once it opened (or failed).
struct Queued(Arc<Connection>);

impl Drop for Queued {
    fn drop(&mut self) {
        self.0.queued.fetch_sub(1, Ordering::Relaxed);
    }
}

enum Taken {
    Placed(Place),
    /// The connection is being opened (by this wait, when `open` is set).
    Waiting {
        queued: Queued,
        open: bool,
    },
}

/// How one send of a wait went.
enum Sent {
    Answer(Answer),
    /// Not taken, or lost with its connection: sent again at once.
    Again(WaitFailed),
    Failed(WaitFailed),
}

impl WaitConnections {
    pub fn new(origin: &Url, route: Route, tls: &rustls::ClientConfig) -> Result<Self, String> {
        // Without an IPv6 address's brackets: as TCP and TLS take it.
        let host = origin.host_str().ok_or("the API URL has no host")?.trim_start_matches('[').trim_end_matches(']').to_string();
        let port = origin.port_or_known_default().ok_or("the API URL has no port")?;
        let tls = match origin.scheme() {
            "https" => {
                let name =
                    rustls::pki_types::ServerName::try_from(host.clone()).map_err(|e| format!("{host:?} is not a TLS server name: {e}"))?;
                Some((tokio_rustls::TlsConnector::from(Arc::new(tls.clone())), name))
            }
            _ => None,
        };
        Ok(WaitConnections {
            host,
            port,
            route,
            connector: Connector::default(),
            tls,
            conns: Mutex::new(Vec::new()),
            declined: AtomicBool::new(false),
            expected: AtomicUsize::new(WAITS_PER_CONNECTION),
            epoch: Instant::now(),
        })
    }

    /// Whether the server does not speak HTTP/2, so that waits go over reqwest.
    pub fn declined(&self) -> bool {
        self.declined.load(Ordering::Relaxed)
    }

    /// Connections open or being opened, the retired ones that still carry waits included.
    pub fn count(&self) -> usize {
        self.conns().len()
    }

    fn conns(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Connection>>> {
        self.conns.locked()
    }

    /// `GET url` with these headers, answered within `deadline`, the body read up to `cap`.
    pub async fn get(self: &Arc<Self>, url: &Url, headers: &HeaderMap, deadline: Duration, cap: usize) -> Result<Answer, WaitFailed> {
        let until = Instant::now() + deadline;
        let mut last = None;
        let mut sends = 0;
        // Each turn either sends, or waits for a connection to open; a server that opens
        // connections and allows no stream on them ends it too.
        for _ in 0..SENDS * 4 {
            if sends == SENDS {
                break;
            }
            let place = match self.take() {
                Taken::Placed(place) => place,
                Taken::Waiting { queued, open } => {
                    if open {
                        let this = self.clone();
                        let conn = Arc::downgrade(&queued.0);
                        tokio::spawn(async move { this.open(conn).await });
                    }
                    let mut link = queued.0.link.subscribe();
                    let opened = tokio::time::timeout_at(until, link.wait_for(|l| !matches!(l, Link::Opening))).await;
                    match opened.map(|l| l.map(|l| l.clone())) {
                        Err(_) => return Err(WaitFailed::Deadline),
                        Ok(Ok(Link::Failed(e))) => return Err(e),
                        Ok(Ok(_)) => continue,
                        Ok(Err(_)) => return Err(WaitFailed::Handshake("the connection was dropped while opening".into())),
                    }
                }
            };
            sends += 1;
            // Boxed: only what the wait needs is kept across its awaits (10,000 are in flight).
            match tokio::time::timeout_at(until, Box::pin(self.exchange(&place.0, url, headers, cap))).await {
                Ok(Sent::Answer(answer)) => return Ok(answer),
                Ok(Sent::Again(why)) => {
                    tracing::debug!("a wait is sent again at once: {why}");
                    last = Some(why);
                }
                Ok(Sent::Failed(why)) => return Err(why),
                Err(_) => {
                    // A stalled server must not take the next waits: they open another connection.
                    place.0.retire();
                    return Err(WaitFailed::Deadline);
                }
            }
        }
        Err(last.unwrap_or_else(|| WaitFailed::Stream("the server allows no stream on its connections".into())))
    }

    /// A place on an open connection with room, or a turn on one being opened (a new one when
    /// those expected to take it are full).
    fn take(&self) -> Taken {
        let mut conns = self.conns();
        // A retired connection leaves the list when its last wait has ended.
        conns.retain(|c| !(c.retired() && c.in_flight.load(Ordering::Relaxed) == 0 && c.queued.load(Ordering::Relaxed) == 0));
        for conn in conns.iter().filter(|c| !c.retired()) {
            if conn.in_flight.load(Ordering::Relaxed) < conn.limit.load(Ordering::Relaxed) {
                conn.in_flight.fetch_add(1, Ordering::Relaxed);
                return Taken::Placed(Place(conn.clone()));
            }
        }
        let expected = self.expected.load(Ordering::Relaxed).max(1);
        let opening = conns
            .iter()
            .find(|c| !c.retired() && matches!(&*c.link.borrow(), Link::Opening) && c.queued.load(Ordering::Relaxed) < expected);
        let (conn, open) = match opening {
            Some(conn) => (conn.clone(), false),
            None => {
                let conn = Connection::new();
                conns.push(conn.clone());
                (conn, true)
            }
        };
        conn.queued.fetch_add(1, Ordering::Relaxed);
        Taken::Waiting { queued: Queued(conn), open }
    }

    /// One send of a wait on its connection.
    async fn exchange(&self, conn: &Arc<Connection>, url: &Url, headers: &HeaderMap, cap: usize) -> Sent {
        let Some(sender) = conn.sender() else { return Sent::Again(WaitFailed::Stream("the connection closed".into())) };
        // A limit the server changed since is followed from the next wait on.
        conn.learn_limit(&sender);
        let response = async {
            let mut sender = sender.ready().await?;
            let mut request = Request::get(url.as_str()).body(()).expect("a URL and a method make a request");
            *request.headers_mut() = headers.clone();
            let (response, _) = sender.send_request(request, true)?;
            drop(sender);
            response.await
        };
        let response = match response.await {
            Ok(response) => response,
            Err(e) => return self.lost(conn, e),
        };
        self.heard(conn);
        let (status, retry_after) = (response.status(), retry_after(response.headers()));
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        while let Some(chunk) = body.data().await {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(e) => return self.lost(conn, e),
            };
            let _ = body.flow_control().release_capacity(chunk.len());
            if bytes.len() + chunk.len() > cap {
                return Sent::Failed(WaitFailed::TooLarge(cap));
            }
            bytes.extend_from_slice(&chunk);
        }
        Sent::Answer(Answer { status, retry_after, body: bytes })
    }

    /// A send the stream or its connection lost: sent again at once. A stream's reset leaves
    /// the connection as it is; anything else (GOAWAY, a broken or dropped connection) retires it.
    fn lost(&self, conn: &Connection, e: h2::Error) -> Sent {
        if !e.is_reset() {
            conn.retire();
        }
        let why = match (e.is_go_away(), e.is_reset(), e.reason()) {
            (true, _, _) if e.is_remote() => "the server is closing the connection (GOAWAY)".to_string(),
            (_, true, Some(h2::Reason::REFUSED_STREAM)) => "the server refused the stream (REFUSED_STREAM)".to_string(),
            (_, true, Some(reason)) => format!("the server reset the stream ({reason:?})"),
            _ => format!("the connection failed ({e})"),
        };
        Sent::Again(WaitFailed::Stream(why))
    }

    fn heard(&self, conn: &Connection) {
        conn.heard.store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// Opens a connection and tells the waits waiting for it; on failure it is retired.
    async fn open(self: Arc<Self>, conn: Weak<Connection>) {
        let link = match self.connect(conn.clone()).await {
            Ok(sender) => {
                let limit = sender.current_max_send_streams();
                self.expected.store(limit.clamp(1, WAITS_PER_CONNECTION), Ordering::Relaxed);
                if limit < WAITS_PER_CONNECTION {
                    tracing::debug!("the server allows {limit} streams a connection");
                }
                Link::Open(sender)
            }
            Err(e) => {
                if let WaitFailed::NoHttp2 = e
                    && !self.declined.swap(true, Ordering::Relaxed)
                {
                    tracing::warn!(
                        "the cloud at {}:{} does not speak HTTP/2: the waits go over HTTP/1.1, a connection each",
                        self.host,
                        self.port
                    );
                }
                Link::Failed(e)
            }
        };
        if let Some(conn) = conn.upgrade() {
            match &link {
                Link::Open(sender) => {
                    conn.learn_limit(sender);
                    self.heard(&conn);
                }
                _ => conn.retire(),
            }
            conn.link.send_replace(link);
        }
    }

    async fn connect(&self, conn: Weak<Connection>) -> Result<SendRequest<Bytes>, WaitFailed> {
        let opened = async {
            let tcp = self.connector.open(&self.route, &self.host, self.port).await.map_err(WaitFailed::Connect)?;
            match &self.tls {
                None => {
                    let (sniffed, first) = Sniffed::new(tcp);
                    match self.handshake(sniffed, conn, false).await {
                        // An HTTP/1.1 server's answer to the preface ("HTTP/1.1 400 …"), read by h2
                        // or, when the server's close failed a write first, by the sniffer.
                        Err(WaitFailed::Handshake(_)) if first.locked().starts_with(b"HTTP/") => Err(WaitFailed::NoHttp2),
                        done => done,
                    }
                }
                Some((connector, name)) => {
                    let tls = connector.connect(name.clone(), tcp).await.map_err(|e| {
                        WaitFailed::Connect(ConnectFailed::Unreachable {
                            to: format!("{}:{}", self.host, self.port),
                            why: format!("TLS: {e}"),
                        })
                    })?;
                    if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
                        return Err(WaitFailed::NoHttp2);
                    }
                    self.handshake(tls, conn, true).await
                }
            }
        };
        let late = || WaitFailed::Handshake(format!("no HTTP/2 connection within {} s", CONNECT_TIMEOUT.as_secs()));
        tokio::time::timeout(CONNECT_TIMEOUT, opened).await.unwrap_or_else(|_| Err(late()))
    }

    /// Opens HTTP/2 over `io`, drives the connection on a task of its own, and returns once the
    /// server's SETTINGS are in.
    async fn handshake<T>(&self, io: T, conn: Weak<Connection>, over_tls: bool) -> Result<SendRequest<Bytes>, WaitFailed>
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (sender, mut connection) = h2::client::Builder::new()
            .enable_push(false)
            .max_header_list_size(MAX_HEADER_LIST)
            .handshake(io)
            .await
            .map_err(|e| WaitFailed::Handshake(format!("the HTTP/2 handshake failed: {e}")))?;
        let pings = connection.ping_pong().expect("a new connection's pings are taken once, here");
        let (settled, learnt) = tokio::sync::oneshot::channel::<Settled>();
        drive(connection, pings, conn, settled, self.epoch);
        match learnt.await {
            Ok(Settled::Yes) => Ok(sender),
            // Over h2c, a server that answers the preface with bytes that are not HTTP/2 (HTTP/1.1's
            // "400 Bad Request") does not speak it; one that closes may be a passing failure.
            Ok(Settled::NotHttp2(_)) if !over_tls => Err(WaitFailed::NoHttp2),
            Ok(Settled::NotHttp2(why) | Settled::Closed(why)) => {
                Err(WaitFailed::Handshake(format!("the server ended the connection before its HTTP/2 settings ({why})")))
            }
            Err(_) => Err(WaitFailed::Handshake("the server ended the connection before its HTTP/2 settings".into())),
        }
    }
}

/// An h2c connection's TCP stream, keeping the first bytes the server sent: an HTTP/1.1 server
/// answers the preface and closes at once, and its close can fail the client's next write
/// before h2 reads the answer; a failed write then reads what came, so the answer is not lost.
struct Sniffed {
    tcp: tokio::net::TcpStream,
    first: Arc<Mutex<Vec<u8>>>,
}

const SNIFFED: usize = 16;

impl Sniffed {
    fn new(tcp: tokio::net::TcpStream) -> (Sniffed, Arc<Mutex<Vec<u8>>>) {
        let first = Arc::new(Mutex::new(Vec::new()));
        (Sniffed { tcp, first: first.clone() }, first)
    }

    fn keep(&self, bytes: &[u8]) {
        let mut first = self.first.locked();
        let room = SNIFFED.saturating_sub(first.len());
        first.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl tokio::io::AsyncRead for Sniffed {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let read = std::pin::Pin::new(&mut self.tcp).poll_read(cx, buf);
        if before < SNIFFED {
            self.keep(&buf.filled()[before..]);
        }
        read
    }
}

impl tokio::io::AsyncWrite for Sniffed {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bytes: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let written = std::pin::Pin::new(&mut self.tcp).poll_write(cx, bytes);
        if let std::task::Poll::Ready(Err(_)) = &written
            && self.first.locked().is_empty()
        {
            let mut came = [0u8; SNIFFED];
            if let Ok(n) = self.tcp.try_read(&mut came) {
                self.keep(&came[..n]);
            }
        }
        written
    }

    fn poll_flush(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

/// How a new connection's first exchange went.
enum Settled {
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
fn drive<T>(
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

/// `Authorization` never enters HPACK's table nor a log: a sensitive header.
pub(super) fn sensitive(value: &str) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_str(value).ok()?;
    v.set_sensitive(true);
    Some(v)
}

#[cfg(test)]
mod tests {
    //! Against real h2 servers on loopback, each told how to behave as a real front does: a low
    //! stream limit, GOAWAY after some requests, streams reset, PINGs that stop being answered,
    //! HTTP/1.1 only; and over TLS with ALPN.

    use std::sync::atomic::AtomicUsize;

    use tokio::net::{TcpListener, TcpStream};
    use tokio::sync::Notify;

    use super::*;
    use crate::cloud::proxy::Straight;

    /// How a test server behaves.
    #[derive(Clone, Default)]
    struct Front {
        /// SETTINGS_MAX_CONCURRENT_STREAMS (h2's default, unlimited, when `None`).
        streams: Option<u32>,
        /// Answer only once released (a held wait), rather than at once.
        hold: bool,
        /// After this many requests on a connection, GOAWAY (as nginx's `keepalive_requests`).
        goaway_after: Option<usize>,
        /// Reset this many of the first streams with REFUSED_STREAM.
        refuse_first: usize,
    }

    /// What the server saw.
    #[derive(Default)]
    struct Seen {
        /// Requests being held right now, over all connections.
        held: AtomicUsize,
        /// The most ever held on one connection at once.
        most_on_one: AtomicUsize,
        connections: AtomicUsize,
        requests: AtomicUsize,
        release: Notify,
    }

    async fn serve(front: Front) -> (Url, Arc<Seen>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = Url::parse(&format!("http://127.0.0.1:{}/", listener.local_addr().unwrap().port())).unwrap();
        let seen = Arc::new(Seen::default());
        let refused = Arc::new(AtomicUsize::new(0));
        let s = seen.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                s.connections.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(connection(tcp, front.clone(), s.clone(), refused.clone()));
            }
        });
        (url, seen)
    }

    async fn connection<T>(io: T, front: Front, seen: Arc<Seen>, refused: Arc<AtomicUsize>)
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let mut builder = h2::server::Builder::new();
        if let Some(n) = front.streams {
            builder.max_concurrent_streams(n);
        }
        let Ok(mut conn) = builder.handshake::<_, Bytes>(io).await else { return };
        let on_this = Arc::new(AtomicUsize::new(0));
        let mut taken = 0;
        while let Some(Ok((_request, mut respond))) = conn.accept().await {
            taken += 1;
            seen.requests.fetch_add(1, Ordering::Relaxed);
            if refused.fetch_add(1, Ordering::Relaxed) < front.refuse_first {
                respond.send_reset(h2::Reason::REFUSED_STREAM);
                continue;
            }
            let (seen, on_this) = (seen.clone(), on_this.clone());
            let hold = front.hold;
            tokio::spawn(async move {
                if hold {
                    seen.held.fetch_add(1, Ordering::Relaxed);
                    let now = on_this.fetch_add(1, Ordering::Relaxed) + 1;
                    seen.most_on_one.fetch_max(now, Ordering::Relaxed);
                    seen.release.notified().await;
                    on_this.fetch_sub(1, Ordering::Relaxed);
                    seen.held.fetch_sub(1, Ordering::Relaxed);
                }
                if let Ok(mut body) = respond.send_response(http::Response::new(()), false) {
                    let _ = body.send_data(Bytes::from_static(b"{}"), true);
                }
            });
            if front.goaway_after == Some(taken) {
                conn.graceful_shutdown();
            }
        }
    }

    fn waits(origin: &Url) -> Arc<WaitConnections> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let tls = rustls::ClientConfig::builder().with_root_certificates(rustls::RootCertStore::empty()).with_no_client_auth();
        Arc::new(WaitConnections::new(origin, Route::Straight(Straight::Loopback), &tls).unwrap())
    }

    fn spawn_waits(waits: &Arc<WaitConnections>, origin: &Url, n: usize) -> Vec<tokio::task::JoinHandle<Result<Answer, WaitFailed>>> {
        (0..n)
            .map(|_| {
                let (waits, url) = (waits.clone(), origin.join("v1/x/wait").unwrap());
                tokio::spawn(async move { waits.get(&url, &HeaderMap::new(), Duration::from_secs(25), 1024).await })
            })
            .collect()
    }

    /// Polls `cond` every 10 ms (of tokio's clock, paused in one test) for up to 30 s.
    async fn until(what: &str, mut cond: impl FnMut() -> bool) {
        for _ in 0..3000 {
            if cond() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("not within 30 s: {what}");
    }

    #[tokio::test]
    async fn a_connection_carries_no_more_waits_than_the_server_allows_and_none_queues() {
        let (origin, seen) = serve(Front { streams: Some(16), hold: true, ..Default::default() }).await;
        let waits = waits(&origin);
        let held = spawn_waits(&waits, &origin, 40);
        until("all 40 held at the server at once", || seen.held.load(Ordering::Relaxed) == 40).await;
        assert_eq!(seen.most_on_one.load(Ordering::Relaxed), 16, "never more than the server's 16 on a connection");
        assert_eq!(waits.count(), 3, "16, 16 and 8");
        seen.release.notify_waiters();
        for wait in held {
            assert_eq!(wait.await.unwrap().unwrap().status, StatusCode::OK);
        }
        // Places given back are taken again: 40 more need no fourth connection.
        let again = spawn_waits(&waits, &origin, 40);
        until("40 more held", || seen.held.load(Ordering::Relaxed) == 40).await;
        assert_eq!(waits.count(), 3);
        seen.release.notify_waiters();
        for wait in again {
            wait.await.unwrap().unwrap();
        }
    }

    #[tokio::test]
    async fn without_a_limit_from_the_server_a_connection_takes_100() {
        let (origin, seen) = serve(Front { hold: true, ..Default::default() }).await;
        let waits = waits(&origin);
        let held = spawn_waits(&waits, &origin, 250);
        until("all 250 held", || seen.held.load(Ordering::Relaxed) == 250).await;
        assert_eq!(seen.most_on_one.load(Ordering::Relaxed), WAITS_PER_CONNECTION);
        assert_eq!(waits.count(), 3);
        seen.release.notify_waiters();
        for wait in held {
            wait.await.unwrap().unwrap();
        }
    }

    #[tokio::test]
    async fn after_a_goaway_every_wait_is_answered_on_another_connection_without_an_error() {
        let (origin, seen) = serve(Front { goaway_after: Some(5), ..Default::default() }).await;
        let waits = waits(&origin);
        let url = origin.join("v1/x/wait").unwrap();
        let started = Instant::now();
        for i in 0..40 {
            let answer = waits.get(&url, &HeaderMap::new(), Duration::from_secs(25), 1024).await;
            assert!(answer.is_ok(), "wait {i}: {:?}", answer.err());
        }
        assert!(seen.connections.load(Ordering::Relaxed) >= 8, "a connection each 5 requests");
        // Sent again at once, never backed off: 40 on loopback take well under one backoff (2 s).
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn a_refused_stream_is_sent_again_at_once_and_its_connection_kept() {
        let (origin, seen) = serve(Front { refuse_first: 2, ..Default::default() }).await;
        let waits = waits(&origin);
        let answer = waits.get(&origin.join("v1/x/wait").unwrap(), &HeaderMap::new(), Duration::from_secs(25), 1024).await;
        assert_eq!(answer.unwrap().status, StatusCode::OK, "answered at the third send");
        assert_eq!(seen.requests.load(Ordering::Relaxed), 3);
        assert_eq!(seen.connections.load(Ordering::Relaxed), 1, "a stream's reset leaves the connection");
        assert_eq!(waits.count(), 1);
    }

    #[tokio::test]
    async fn a_server_that_refuses_every_stream_fails_the_wait_after_three_sends() {
        let (origin, seen) = serve(Front { refuse_first: usize::MAX, ..Default::default() }).await;
        let waits = waits(&origin);
        let failed = waits.get(&origin.join("v1/x/wait").unwrap(), &HeaderMap::new(), Duration::from_secs(25), 1024).await;
        match failed {
            Err(WaitFailed::Stream(why)) => assert!(why.contains("REFUSED_STREAM"), "{why}"),
            other => panic!("{:?}", other.err()),
        }
        assert_eq!(seen.requests.load(Ordering::Relaxed), SENDS);
    }

    /// A connection whose packets stop (a suspend, a network that changed) answers no PING: it is
    /// dropped within the PING's limits, and its wait sent again on a new connection, long before
    /// the wait's own deadline (25 s).
    #[tokio::test(start_paused = true)]
    async fn a_connection_that_answers_no_ping_is_dropped_and_its_wait_sent_again() {
        let (origin, seen) = serve(Front { hold: true, ..Default::default() }).await;
        // A relay whose first connection goes silent on demand, both ways, closing nothing.
        let relay = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let relayed = Url::parse(&format!("http://127.0.0.1:{}/", relay.local_addr().unwrap().port())).unwrap();
        let silent = Arc::new(AtomicBool::new(false));
        let (to, first) = (origin.clone(), silent.clone());
        tokio::spawn(async move {
            let mut cut = Some(first);
            while let Ok((client, _)) = relay.accept().await {
                let server = TcpStream::connect((to.host_str().unwrap(), to.port().unwrap())).await.unwrap();
                tokio::spawn(pipe(client, server, cut.take().unwrap_or_default()));
            }
        });
        let waits = waits(&relayed);
        let wait = spawn_waits(&waits, &relayed, 1).pop().unwrap();
        until("the wait held", || seen.held.load(Ordering::Relaxed) == 1).await;
        silent.store(true, Ordering::Relaxed);
        let cut_at = Instant::now();
        // New connections pass again; the first is dead.
        until("a second connection", || seen.connections.load(Ordering::Relaxed) == 2).await;
        let found = cut_at.elapsed();
        // docs/cloud-api.md, "PING": found within 8 s (5 s of silence, 3 s for the answer).
        assert!(found <= Duration::from_secs(9), "dropped {found:?} after the cut");
        // The server still holds the first (nothing told it the client went), and now the second.
        until("held again on the new connection", || seen.held.load(Ordering::Relaxed) == 2).await;
        seen.release.notify_waiters();
        assert_eq!(wait.await.unwrap().unwrap().status, StatusCode::OK);
    }

    /// Copies both ways while `silent` is false; while true, reads and drops (packets lost).
    async fn pipe(a: TcpStream, b: TcpStream, silent: Arc<AtomicBool>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut ar, mut aw) = a.into_split();
        let (mut br, mut bw) = b.into_split();
        let s = silent.clone();
        let up = async move {
            let mut buf = [0u8; 16384];
            while let Ok(n @ 1..) = ar.read(&mut buf).await {
                if !s.load(Ordering::Relaxed) && bw.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        };
        let down = async move {
            let mut buf = [0u8; 16384];
            while let Ok(n @ 1..) = br.read(&mut buf).await {
                if !silent.load(Ordering::Relaxed) && aw.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        };
        tokio::join!(up, down);
    }

    #[tokio::test]
    async fn an_http_1_1_server_over_h2c_is_remembered_and_left_to_reqwest() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = Url::parse(&format!("http://127.0.0.1:{}/", listener.local_addr().unwrap().port())).unwrap();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            while let Ok((mut tcp, _)) = listener.accept().await {
                let mut buf = [0u8; 1024];
                let _ = tcp.read(&mut buf).await;
                let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await;
            }
        });
        let waits = waits(&origin);
        let failed = waits.get(&origin.join("v1/x/wait").unwrap(), &HeaderMap::new(), Duration::from_secs(25), 1024).await;
        assert!(matches!(failed, Err(WaitFailed::NoHttp2)), "{:?}", failed.err());
        assert!(waits.declined());
    }

    /// The TLS path against a real rustls server on loopback, with a certificate made for the
    /// test: what the cloud does (ALPN `h2`), and what a server or proxy without HTTP/2 does.
    mod over_tls {
        use tokio_rustls::TlsAcceptor;

        use super::*;

        /// A server for `localhost` that offers `alpn` and answers every HTTP/2 request with
        /// 200 and the `authorization` it was sent; and a client config that trusts it.
        async fn server(alpn: &[&[u8]]) -> (Url, rustls::ClientConfig) {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let made = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
            let key = rustls::pki_types::PrivateKeyDer::Pkcs8(made.signing_key.serialize_der().into());
            let mut config =
                rustls::ServerConfig::builder().with_no_client_auth().with_single_cert(vec![made.cert.der().clone()], key).unwrap();
            config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
            let acceptor = TlsAcceptor::from(Arc::new(config));
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            tokio::spawn(async move {
                while let Ok((tcp, _)) = listener.accept().await {
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(tcp).await else { return };
                        if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
                            return; // an HTTP/1.1 server: the client must not speak HTTP/2 to it
                        }
                        let mut conn = h2::server::handshake(tls).await.unwrap();
                        while let Some(Ok((request, mut respond))) = conn.accept().await {
                            let auth = request.headers().get("authorization").map(|v| v.as_bytes().to_vec()).unwrap_or_default();
                            let mut body = respond.send_response(http::Response::new(()), false).unwrap();
                            body.send_data(Bytes::from(auth), true).unwrap();
                        }
                    });
                }
            });
            let mut roots = rustls::RootCertStore::empty();
            roots.add(made.cert.der().clone()).unwrap();
            let mut client = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
            // As `CloudClient` offers them (client.rs).
            client.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
            (Url::parse(&format!("https://localhost:{port}/")).unwrap(), client)
        }

        fn headers() -> HeaderMap {
            let mut headers = HeaderMap::new();
            headers.insert("authorization", sensitive("Bearer t0ken").unwrap());
            headers
        }

        fn over(origin: &Url, tls: &rustls::ClientConfig) -> Arc<WaitConnections> {
            Arc::new(WaitConnections::new(origin, Route::Straight(Straight::Loopback), tls).unwrap())
        }

        #[tokio::test]
        async fn a_wait_is_an_h2_stream_when_the_server_picks_h2() {
            let (origin, client) = server(&[b"h2", b"http/1.1"]).await;
            let waits = over(&origin, &client);
            for _ in 0..2 {
                let answer = waits.get(&origin.join("v1/x/wait").unwrap(), &headers(), Duration::from_secs(10), 1024).await.unwrap();
                assert_eq!(answer.status, StatusCode::OK);
                assert_eq!(answer.body, b"Bearer t0ken");
            }
            assert!(!waits.declined());
            assert_eq!(waits.count(), 1, "both waits went over the one TLS connection");
        }

        #[tokio::test]
        async fn a_server_that_picks_http_1_1_is_remembered_and_left_to_reqwest() {
            let (origin, client) = server(&[b"http/1.1"]).await;
            let waits = over(&origin, &client);
            let failed = waits.get(&origin.join("v1/x/wait").unwrap(), &headers(), Duration::from_secs(10), 1024).await;
            assert!(matches!(failed, Err(WaitFailed::NoHttp2)), "{:?}", failed.err());
            assert!(waits.declined());
        }

        #[tokio::test]
        async fn a_certificate_the_client_does_not_trust_fails_the_connect_and_names_why() {
            let (origin, _) = server(&[b"h2"]).await;
            let stranger = rustls::ClientConfig::builder().with_root_certificates(rustls::RootCertStore::empty()).with_no_client_auth();
            let waits = over(&origin, &stranger);
            let failed = waits.get(&origin.join("v1/x/wait").unwrap(), &headers(), Duration::from_secs(10), 1024).await;
            match failed {
                Err(WaitFailed::Connect(why)) => assert!(why.to_string().contains("certificate"), "{why}"),
                other => panic!("{:?}", other.err()),
            }
            assert!(!waits.declined(), "a refused certificate is not a server without HTTP/2");
        }
    }
}
