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

mod driver;
mod sniff;

use driver::{Settled, drive};
use sniff::Sniffed;

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

/// A wait's slot on a connection, given back when the wait ends (however it ends).
struct Slot(Arc<Connection>);

impl Drop for Slot {
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
    Placed(Slot),
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
                return Taken::Placed(Slot(conn.clone()));
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

/// `Authorization` never enters HPACK's table nor a log: a sensitive header.
pub(super) fn sensitive(value: &str) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_str(value).ok()?;
    v.set_sensitive(true);
    Some(v)
}

#[cfg(test)]
mod tests;
