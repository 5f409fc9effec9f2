//! Opening a TCP stream to an origin of the cloud along its route: straight, through an HTTP
//! proxy's `CONNECT` tunnel, or through a SOCKS5 proxy; what fails is said in words.
//!
//! hyper-util's parts do most of the work, as they do under reqwest: its connector (Happy
//! Eyeballs, RFC 8305, so a dead IPv6 route costs 300 ms rather than the connect timeout; TCP
//! keepalive; a connect timeout) and its SOCKS5 handshake. The proxy's own connection is opened
//! here first, so that a failure to reach the proxy keeps its cause. The `CONNECT` is written here
//! (about thirty lines): hyper-util's tunnel keeps the proxy's answer to itself (its error type is
//! not public and says "unsuccessful" for a 403 and a 502 alike), and a person behind a proxy needs
//! to be told which it was.

use std::future::{Ready, ready};
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::SocksV5;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tower_service::Service;

use super::proxy::{ProxyKind, ProxyUrl, Route};

/// How long one connection may take to open, proxy and tunnel included.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Probes on a connection left quiet this long (as reqwest's client sets it).
pub const TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// Why a connection to the cloud could not be opened, in words.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConnectFailed {
    /// The origin (or, on a route through a proxy, the proxy) could not be reached.
    #[error("could not connect to {to}: {why}")]
    Unreachable { to: String, why: String },
    /// The proxy was reached and refused to go on.
    #[error("the proxy {proxy} {why}")]
    ProxyRefused { proxy: String, why: String },
}

impl ConnectFailed {
    /// Whether the proxy said no: not a passing failure of the network, and said at once.
    pub fn is_proxy_refusal(&self) -> bool {
        matches!(self, ConnectFailed::ProxyRefused { .. })
    }
}

/// Opens streams to origins. Cheap to clone.
#[derive(Clone)]
pub struct Connector {
    tcp: HttpConnector,
}

impl Default for Connector {
    fn default() -> Self {
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false);
        tcp.set_nodelay(true);
        tcp.set_keepalive(Some(TCP_KEEPALIVE));
        tcp.set_connect_timeout(Some(CONNECT_TIMEOUT));
        tcp.set_happy_eyeballs_timeout(Some(Duration::from_millis(300)));
        Connector { tcp }
    }
}

impl Connector {
    /// A stream to `host:port` (an origin of the cloud) along `route`.
    pub async fn open(&self, route: &Route, host: &str, port: u16) -> Result<TcpStream, ConnectFailed> {
        let to = format!("{host}:{port}");
        let opened = async {
            match route.proxy() {
                None => self.tcp_to(&authority_uri(host, port), &to).await,
                Some(proxy) => self.through(proxy, host, port).await,
            }
        };
        let late = || ConnectFailed::Unreachable { to: to.clone(), why: format!("no connection within {} s", CONNECT_TIMEOUT.as_secs()) };
        tokio::time::timeout(CONNECT_TIMEOUT, opened).await.unwrap_or_else(|_| Err(late()))
    }

    async fn tcp_to(&self, uri: &Uri, to: &str) -> Result<TcpStream, ConnectFailed> {
        let mut tcp = self.tcp.clone();
        match tcp.call(uri.clone()).await {
            Ok(io) => Ok(io.into_inner()),
            Err(e) => Err(ConnectFailed::Unreachable { to: to.into(), why: in_words(&e) }),
        }
    }

    async fn through(&self, proxy: &ProxyUrl, host: &str, port: u16) -> Result<TcpStream, ConnectFailed> {
        let (proxy_host, proxy_port) = proxy.address();
        let shown_to = format!("the proxy {}", proxy.shown());
        let mut stream = self.tcp_to(&authority_uri(proxy_host, proxy_port), &shown_to).await?;
        let credentials = proxy.credentials();
        match proxy.kind() {
            ProxyKind::Connect => {
                let auth = credentials.map(|(user, password)| basic_auth(&user, &password));
                tunnel(&mut stream, host, port, auth).await.map_err(|why| refused(proxy, why))?;
                Ok(stream)
            }
            ProxyKind::Socks5 { resolves } => {
                // `socks5://`: the name is resolved here, asynchronously (the handshake's own
                // resolution would block the runtime's thread), and the proxy is given the address.
                let target = if resolves {
                    authority_uri(host, port)
                } else {
                    let mut found = tokio::net::lookup_host((host, port))
                        .await
                        .map_err(|e| ConnectFailed::Unreachable { to: format!("{host}:{port}"), why: io_in_words(&e) })?;
                    let addr = found.next().ok_or_else(|| ConnectFailed::Unreachable {
                        to: format!("{host}:{port}"),
                        why: "the name has no address".into(),
                    })?;
                    authority_uri(&addr.ip().to_string(), port)
                };
                // The handshake takes the proxy's address without credentials.
                let bare: Uri = format!("socks5://{}", authority(proxy_host, proxy_port))
                    .parse()
                    .map_err(|e| refused(proxy, format!("is not a URL here ({e})")))?;
                let mut socks = SocksV5::new(bare, Given(Some(TokioIo::new(stream))));
                if let Some((user, password)) = credentials {
                    socks = socks.with_auth(user, password);
                }
                match socks.call(target).await {
                    Ok(io) => Ok(io.into_inner()),
                    Err(e) => Err(refused(
                        proxy,
                        format!("refused to connect to {host}:{port} ({})", e.to_string().trim_start_matches("SOCKS error: ")),
                    )),
                }
            }
        }
    }
}

/// A connector that hands over a stream already open (the proxy's): the tunnel and the SOCKS
/// handshake then run over it.
struct Given(Option<TokioIo<TcpStream>>);

impl Service<Uri> for Given {
    type Response = TokioIo<TcpStream>;
    type Error = std::io::Error;
    type Future = Ready<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Uri) -> Self::Future {
        ready(self.0.take().ok_or_else(|| std::io::Error::other("the proxy's connection was used already")))
    }
}

fn authority(host: &str, port: u16) -> String {
    match host.contains(':') {
        true => format!("[{host}]:{port}"),
        false => format!("{host}:{port}"),
    }
}

fn authority_uri(host: &str, port: u16) -> Uri {
    format!("http://{}", authority(host, port)).parse().unwrap_or_else(|_| Uri::from_static("http://invalid.invalid:1"))
}

fn basic_auth(user: &str, password: &str) -> String {
    use base64::Engine as _;
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

fn refused(proxy: &ProxyUrl, why: String) -> ConnectFailed {
    ConnectFailed::ProxyRefused { proxy: proxy.shown().to_string(), why }
}

/// The longest answer to a `CONNECT` read: its status line and headers.
const TUNNEL_HEAD: usize = 8 * 1024;

/// Asks an HTTP proxy for a tunnel to `host:port` (RFC 9110 §9.3.6); the refusal in words.
async fn tunnel(stream: &mut TcpStream, host: &str, port: u16, auth: Option<String>) -> Result<(), String> {
    let to = authority(host, port);
    let mut ask = format!("CONNECT {to} HTTP/1.1\r\nHost: {to}\r\n");
    if let Some(auth) = auth {
        ask.push_str(&format!("Proxy-Authorization: {auth}\r\n"));
    }
    ask.push_str("\r\n");
    stream.write_all(ask.as_bytes()).await.map_err(|e| format!("broke off while asked for a tunnel to {to} ({})", io_in_words(&e)))?;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    loop {
        let n = stream.read(&mut buf).await.map_err(|e| format!("broke off while asked for a tunnel to {to} ({})", io_in_words(&e)))?;
        if n == 0 {
            return Err(format!("closed the connection when asked for a tunnel to {to}"));
        }
        head.extend_from_slice(&buf[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut answer = httparse::Response::new(&mut headers);
        match answer.parse(&head) {
            Ok(httparse::Status::Complete(len)) => {
                let (code, reason) = (answer.code.unwrap_or(0), answer.reason.unwrap_or_default().to_string());
                return match code {
                    // Nothing comes through a tunnel before the client's first bytes (TLS's hello).
                    200..=299 if len == head.len() => Ok(()),
                    200..=299 => Err(format!("sent data before the tunnel to {to} was used")),
                    407 => Err("asks for a user name and password (407 Proxy Authentication Required): give them in the proxy's URL, \
                         http://user:password@host:port"
                        .into()),
                    _ => Err(format!("refused a tunnel to {to}: {code} {}", crate::text::clean(&reason, false))),
                };
            }
            Ok(httparse::Status::Partial) if head.len() < TUNNEL_HEAD => {}
            Ok(httparse::Status::Partial) => {
                return Err(format!("answered a tunnel to {to} with more than {} KiB of headers", TUNNEL_HEAD / 1024));
            }
            Err(e) => return Err(format!("answered a tunnel to {to} with something other than HTTP ({e})")),
        }
    }
}

/// A failed connection's cause, as a person reads it: "no such host", "connection refused".
pub(super) fn in_words(e: &(dyn std::error::Error + 'static)) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut dns = false;
    let mut last = e.to_string();
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return match dns {
                true => format!("the name could not be resolved ({})", io_in_words(io)),
                false => io_in_words(io),
            };
        }
        let text = s.to_string();
        dns |= text.contains("dns error");
        last = text;
        source = s.source();
    }
    last
}

fn io_in_words(io: &std::io::Error) -> String {
    use std::io::ErrorKind::*;
    match io.kind() {
        ConnectionRefused => "connection refused".into(),
        TimedOut => "no answer in time".into(),
        ConnectionReset => "the connection was reset".into(),
        NetworkUnreachable => "the network is unreachable".into(),
        HostUnreachable => "the host is unreachable".into(),
        _ => {
            let text = io.to_string();
            match text.strip_prefix("failed to lookup address information: ") {
                Some("Name or service not known" | "No address associated with hostname") => "no such host".into(),
                Some(rest) => rest.to_string(),
                None => text,
            }
        }
    }
}
