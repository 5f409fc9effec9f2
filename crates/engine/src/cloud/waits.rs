//! The waits' own HTTP/2 connections: 100 waits to a connection, each wait one bare h2 stream.
//!
//! Why not reqwest for these: a follow is a wait in flight nearly all the time, and 10,000 of
//! them are the point (`scripts/bench` row 2). Through reqwest each request in flight keeps about
//! 9 KiB (measured with heaptrack: hyper-util's boxed pool future, reqwest's boxed request, the
//! task hyper spawns for every HTTP/2 response); here it keeps the h2 stream and the follow's own
//! future. Every other call (lists, sign-in, cancel) stays on reqwest, and so do the waits over
//! HTTP/1.1: asked for by `[cloud] http = "1.1"`, or chosen by a server that declines `h2` by
//! ALPN (docs/cloud-api.md, "Where this project's build differs").

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, StatusCode};
use tokio::net::TcpStream;
use tokio::sync::OnceCell;
use url::Url;

use super::client::retry_after;

/// Waits one connection carries at most. RFC 9113 §6.5.2 recommends that a server allow at
/// least 100 streams at once, so at 100 no wait queues behind a server's stream limit; the next
/// wait opens another connection.
pub const WAITS_PER_CONNECTION: usize = 100;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Headers of an answer are a few hundred bytes; a larger list is refused by h2 itself.
const MAX_HEADER_LIST: u32 = 64 * 1024;

/// What a wait came back with, before the client reads it as a Run or a hand-off.
pub(super) struct Answer {
    pub status: StatusCode,
    pub retry_after: Option<Duration>,
    pub body: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub(super) enum WaitFailed {
    /// The server chose HTTP/1.1 by ALPN: this wait and the next go over reqwest.
    #[error("the server does not speak HTTP/2")]
    NoHttp2,
    #[error("could not connect ({0})")]
    Connect(String),
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
    /// `None` for plain http to loopback: HTTP/2 by prior knowledge (h2c).
    tls: Option<(tokio_rustls::TlsConnector, rustls::pki_types::ServerName<'static>)>,
    conns: Mutex<Vec<Arc<Connection>>>,
    /// Set when the server declined `h2`: from then on the waits go over reqwest.
    declined: AtomicBool,
}

struct Connection {
    sender: OnceCell<h2::client::SendRequest<Bytes>>,
    in_flight: AtomicUsize,
    /// No new wait goes to a retired connection; the waits on it finish, and it closes when the
    /// last one ends. Retired when it failed, closed, or a wait on it met its deadline.
    retired: AtomicBool,
}

/// A wait's place on a connection, given back when the wait ends (however it ends).
struct Place(Arc<Connection>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl WaitConnections {
    pub fn new(origin: &Url, tls: &rustls::ClientConfig) -> Result<Self, String> {
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
        Ok(WaitConnections { host, port, tls, conns: Mutex::new(Vec::new()), declined: AtomicBool::new(false) })
    }

    /// Whether the server declined HTTP/2, so that waits go over reqwest.
    pub fn declined(&self) -> bool {
        self.declined.load(Ordering::Relaxed)
    }

    /// Connections open or being opened, the retired ones that still carry waits included.
    pub fn count(&self) -> usize {
        self.conns.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// `GET url` with these headers, answered within `deadline`, the body read up to `cap`.
    pub async fn get(&self, url: &Url, headers: &HeaderMap, deadline: Duration, cap: usize) -> Result<Answer, WaitFailed> {
        let place = self.take();
        let conn = place.0.clone();
        let answer = tokio::time::timeout(deadline, self.exchange(&conn, url, headers, cap)).await;
        let answer = answer.unwrap_or(Err(WaitFailed::Deadline));
        if let Err(e) = &answer {
            // A stalled or broken connection must not take the next waits: they open another.
            if !matches!(e, WaitFailed::TooLarge(_)) {
                conn.retired.store(true, Ordering::Relaxed);
            }
        }
        drop(place);
        answer
    }

    /// A place on the first connection with room, or on a new one.
    fn take(&self) -> Place {
        let mut conns = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        // A retired connection leaves the list when its last wait has ended.
        conns.retain(|c| !(c.retired.load(Ordering::Relaxed) && c.in_flight.load(Ordering::Relaxed) == 0));
        let usable =
            |c: &&Arc<Connection>| !c.retired.load(Ordering::Relaxed) && c.in_flight.load(Ordering::Relaxed) < WAITS_PER_CONNECTION;
        let conn = match conns.iter().find(usable) {
            Some(conn) => conn.clone(),
            None => {
                let conn =
                    Arc::new(Connection { sender: OnceCell::new(), in_flight: AtomicUsize::new(0), retired: AtomicBool::new(false) });
                conns.push(conn.clone());
                conn
            }
        };
        conn.in_flight.fetch_add(1, Ordering::Relaxed);
        Place(conn)
    }

    /// One wait's exchange. Only what the wait needs is kept across its awaits (the request is
    /// built and sent in one step): 10,000 of these are in flight at once.
    async fn exchange(&self, conn: &Arc<Connection>, url: &Url, headers: &HeaderMap, cap: usize) -> Result<Answer, WaitFailed> {
        let sender = match conn.sender.get() {
            Some(sender) => sender.clone(),
            // The waits that arrive while the connection is being made wait for that one. Boxed: a
            // TLS handshake's future is large, and inline it would weigh on every wait in flight.
            None => Box::pin(conn.sender.get_or_try_init(|| self.connect(Arc::downgrade(conn)))).await?.clone(),
        };
        let mut sender = sender.ready().await.map_err(stream_error)?;
        let response = {
            let mut request = Request::get(url.as_str()).body(()).map_err(|e| WaitFailed::Stream(e.to_string()))?;
            *request.headers_mut() = headers.clone();
            sender.send_request(request, true).map_err(stream_error)?.0
        };
        drop(sender);
        let response = response.await.map_err(stream_error)?;
        let (status, retry_after) = (response.status(), retry_after(response.headers()));
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        while let Some(chunk) = body.data().await {
            let chunk = chunk.map_err(stream_error)?;
            let _ = body.flow_control().release_capacity(chunk.len());
            if bytes.len() + chunk.len() > cap {
                return Err(WaitFailed::TooLarge(cap));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Answer { status, retry_after, body: bytes })
    }

    async fn connect(&self, conn: Weak<Connection>) -> Result<h2::client::SendRequest<Bytes>, WaitFailed> {
        let opened = async {
            let tcp = TcpStream::connect((self.host.as_str(), self.port)).await.map_err(|e| WaitFailed::Connect(e.to_string()))?;
            let _ = tcp.set_nodelay(true);
            match &self.tls {
                None => handshake(tcp, conn).await,
                Some((connector, name)) => {
                    let tls = connector.connect(name.clone(), tcp).await.map_err(|e| WaitFailed::Connect(e.to_string()))?;
                    if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
                        self.declined.store(true, Ordering::Relaxed);
                        return Err(WaitFailed::NoHttp2);
                    }
                    handshake(tls, conn).await
                }
            }
        };
        let late = || WaitFailed::Connect(format!("no connection within {} s", CONNECT_TIMEOUT.as_secs()));
        tokio::time::timeout(CONNECT_TIMEOUT, opened).await.unwrap_or_else(|_| Err(late()))
    }
}

/// Opens HTTP/2 over `io` and drives the connection on a task of its own, which retires the
/// connection's entry when it ends (held weakly: the task must not keep its entry alive).
async fn handshake<T>(io: T, conn: Weak<Connection>) -> Result<h2::client::SendRequest<Bytes>, WaitFailed>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = h2::client::Builder::new()
        .enable_push(false)
        .max_header_list_size(MAX_HEADER_LIST)
        .handshake(io)
        .await
        .map_err(|e| WaitFailed::Connect(format!("the HTTP/2 handshake failed: {e}")))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("an HTTP/2 connection of the waits ended: {e}");
        }
        if let Some(conn) = conn.upgrade() {
            conn.retired.store(true, Ordering::Relaxed);
        }
    });
    Ok(sender)
}

fn stream_error(e: h2::Error) -> WaitFailed {
    WaitFailed::Stream(e.to_string())
}

/// `Authorization` never enters HPACK's table nor a log: a sensitive header.
pub(super) fn sensitive(value: &str) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_str(value).ok()?;
    v.set_sensitive(true);
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> WaitConnections {
        let tls = rustls::ClientConfig::builder().with_root_certificates(rustls::RootCertStore::empty()).with_no_client_auth();
        WaitConnections::new(&Url::parse("http://127.0.0.1:9").unwrap(), &tls).unwrap()
    }

    #[test]
    fn a_connection_takes_100_waits_then_the_next_opens_another() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let waits = loopback();
        let places: Vec<Place> = (0..250).map(|_| waits.take()).collect();
        assert_eq!(waits.count(), 3);
        let on_first = places.iter().filter(|p| Arc::ptr_eq(&p.0, &places[0].0)).count();
        assert_eq!(on_first, 100);
        drop(places);
        let again: Vec<Place> = (0..100).map(|_| waits.take()).collect();
        assert_eq!(waits.count(), 3, "places given back are taken again");
        drop(again);
    }

    #[test]
    fn a_retired_connection_takes_no_new_wait_and_leaves_when_its_last_wait_ends() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let waits = loopback();
        let first = waits.take();
        first.0.retired.store(true, Ordering::Relaxed);
        let second = waits.take();
        assert!(!Arc::ptr_eq(&first.0, &second.0), "a new wait goes to another connection");
        assert_eq!(waits.count(), 2, "the retired one stays while a wait is on it");
        drop(first);
        let third = waits.take();
        assert!(Arc::ptr_eq(&second.0, &third.0));
        assert_eq!(waits.count(), 1, "and leaves once its last wait ended");
    }

    /// The TLS path against a real rustls server on loopback, with a certificate made for the
    /// test: what the cloud does (ALPN `h2`), and what a server or proxy without HTTP/2 does.
    mod over_tls {
        use tokio::net::TcpListener;
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

        #[tokio::test]
        async fn a_wait_is_an_h2_stream_when_the_server_picks_h2() {
            let (origin, client) = server(&[b"h2", b"http/1.1"]).await;
            let waits = WaitConnections::new(&origin, &client).unwrap();
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
            let waits = WaitConnections::new(&origin, &client).unwrap();
            let failed = waits.get(&origin.join("v1/x/wait").unwrap(), &headers(), Duration::from_secs(10), 1024).await;
            assert!(matches!(failed, Err(WaitFailed::NoHttp2)), "{:?}", failed.err());
            assert!(waits.declined());
        }

        #[tokio::test]
        async fn a_certificate_the_client_does_not_trust_fails_the_connect_and_names_why() {
            let (origin, _) = server(&[b"h2"]).await;
            let stranger = rustls::ClientConfig::builder().with_root_certificates(rustls::RootCertStore::empty()).with_no_client_auth();
            let waits = WaitConnections::new(&origin, &stranger).unwrap();
            let failed = waits.get(&origin.join("v1/x/wait").unwrap(), &headers(), Duration::from_secs(10), 1024).await;
            match failed {
                Err(WaitFailed::Connect(why)) => assert!(why.contains("certificate"), "{why}"),
                other => panic!("{:?}", other.err()),
            }
            assert!(!waits.declined(), "a refused certificate is not a server without HTTP/2");
        }
    }
}
