//! The HTTP client of the cmux cloud, shared by every follow: over HTTP/2, 100 waits to a connection.
//!
//! It sends `Authorization` and, when a team is chosen, `x-cmux-team` — nothing else that
//! identifies the user (no cookies, no user agent). It refuses redirects (a
//! redirect would carry the token elsewhere), plain `http://` except to loopback, and ids that are
//! not the store's own shape. Bodies are read up to a cap.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use serde_json::Value;
use url::Url;

use super::answer::{parse, read_answer, retry_after, unreadable};
use super::connect::{CONNECT_TIMEOUT, Connector, TCP_KEEPALIVE, in_words};
use super::error::CloudError;
use super::ids::{HandoffId, RunId, TeamId};
pub use super::listing::{LIST_ITEMS_CAP, LIST_PROBLEMS_KEPT, Listing};
use super::proxy::{ProxyEnv, ProxySetting, ProxyUrl, Route};
use super::types::{Handoff, Me, Run};
pub use super::waits::WAITS_PER_CONNECTION;
use super::waits::{self, WaitConnections, WaitFailed};

/// How long the Run API holds a wait, and the hand-off store.
pub const RUN_HOLD: Duration = Duration::from_secs(10);
pub const HANDOFF_HOLD: Duration = Duration::from_secs(25);
/// The client's own deadline on a wait is the hold plus this: a stalled server cannot hang a follow.
pub const WAIT_MARGIN: Duration = Duration::from_secs(15);
/// Any other call.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// A look at whether the cloud answers at all, while it seems unreachable.
pub const LOOK_TIMEOUT: Duration = Duration::from_secs(5);
/// A snapshot is a few hundred bytes; a list page a few hundred kilobytes at most.
pub const SNAPSHOT_CAP: usize = 256 * 1024;
pub const PAGE_CAP: usize = 4 * 1024 * 1024;
/// A list is read page after page, but never forever (a store repeating a cursor).
pub const MAX_PAGES: usize = 200;

/// Bad configuration of the client itself.
#[derive(Debug, thiserror::Error)]
pub enum ClientConfigError {
    #[error("{what} {url:?} is not a URL: {reason}")]
    NotAUrl { what: &'static str, url: String, reason: String },
    #[error("{what} {url:?} must use https (plain http is accepted for loopback hosts only)")]
    NotHttps { what: &'static str, url: String },
    #[error("could not build the HTTP client: {0}")]
    Build(String),
}

/// The credentials a call is made with.
#[derive(Clone)]
pub struct Credentials {
    pub access_token: SecretString,
    pub team: Option<TeamId>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("access_token", &"[redacted]").field("team", &self.team).finish()
    }
}

/// Checks an origin: https, or http to a loopback host.
pub fn checked_origin(what: &'static str, url: &str) -> Result<Url, ClientConfigError> {
    let parsed = Url::parse(url).map_err(|e| ClientConfigError::NotAUrl { what, url: url.into(), reason: e.to_string() })?;
    let loopback = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    };
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err(ClientConfigError::NotHttps { what, url: url.into() }),
    }
}

/// How the client speaks HTTP (docs/cloud-api.md, "Where this project's build differs").
///
/// HTTP/2 by default: the waits share connections, [`WAITS_PER_CONNECTION`] to a connection, so
/// none queues behind a server's stream limit, and 10,000 follows hold 100 sockets and a fraction
/// of the memory they hold over HTTP/1.1, where every held wait is a connection of its own
/// (`scripts/bench` row 2 measures both side by side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    /// HTTP/1.1 only: a connection per wait in flight.
    Http1,
    /// HTTP/2: offered by ALPN over TLS (a server that declines is spoken to over HTTP/1.1),
    /// prior knowledge (h2c) for the waits over loopback `http://` (a server that answers it
    /// with HTTP/1.1 is spoken to over HTTP/1.1).
    #[default]
    Http2,
}

impl Transport {
    /// `"1.1"` or `"2"`, as `[cloud] http` and `CMUX_TRAY_HTTP` say it.
    pub fn parse(s: &str) -> Option<Transport> {
        match s {
            "1.1" => Some(Transport::Http1),
            "2" => Some(Transport::Http2),
            _ => None,
        }
    }
}

/// How the client reaches the cloud: the HTTP version it speaks and the proxy it goes through.
#[derive(Clone, Debug, Default)]
pub struct Network {
    pub transport: Transport,
    /// `[cloud] proxy`, over the environment's variables.
    pub proxy: ProxySetting,
    /// The environment's proxy variables, read at start.
    pub proxy_env: ProxyEnv,
}

/// The cloud client. Cheap to clone: clones share its connections.
#[derive(Clone)]
pub struct CloudClient {
    /// Every call but the waits over HTTP/2; all of them over HTTP/1.1.
    http: reqwest::Client,
    /// The waits over HTTP/2 (see [`waits`](super::waits) for why they have connections of their own).
    waits: Option<Arc<WaitConnections>>,
    api: Url,
    auth: Url,
    /// How each origin is reached (`status` shows the API's).
    routes: Arc<[(Url, Route); 2]>,
    /// Asks a proxy again when reqwest could not pass it, to say why (reqwest does not).
    connector: Connector,
    /// The proxy's setting and the environment's variables, for an origin not the cloud's.
    proxies: Arc<(ProxySetting, ProxyEnv)>,
}

impl CloudClient {
    pub fn new(api_url: &str, auth_url: &str, network: &Network) -> Result<Self, ClientConfigError> {
        use rustls_platform_verifier::BuilderVerifierExt;
        let api = checked_origin("API URL", api_url)?;
        let auth = checked_origin("auth URL", auth_url)?;
        // One process-wide provider; a second install is a no-op error we can ignore.
        let _ = rustls::crypto::ring::default_provider().install_default();
        // Built once and shared by reqwest and the waits' connections: the system's roots, read once.
        let mut tls = rustls::ClientConfig::builder()
            .with_platform_verifier()
            .map_err(|e| ClientConfigError::Build(format!("the system's certificates: {e}")))?
            .with_no_client_auth();
        tls.alpn_protocols = match network.transport {
            Transport::Http1 => vec![b"http/1.1".to_vec()],
            // A server that does not speak HTTP/2 is still spoken to, over HTTP/1.1.
            Transport::Http2 => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        };
        let mut headers = HeaderMap::new();
        headers.insert("accept", HeaderValue::from_static("application/json"));
        let builder = match network.transport {
            Transport::Http1 => reqwest::Client::builder().http1_only(),
            // Over loopback `http://` these calls speak HTTP/1.1, which every server speaks; over
            // TLS, HTTP/2 where ALPN offers it.
            Transport::Http2 => reqwest::Client::builder(),
        };
        let api_route = Route::to(&api, &network.proxy, &network.proxy_env);
        let auth_route = Route::to(&auth, &network.proxy, &network.proxy_env);
        let routes: Arc<[(Url, Route); 2]> = Arc::new([(api.clone(), api_route.clone()), (auth.clone(), auth_route)]);
        let by_origin = routes.clone();
        let proxies = Arc::new((network.proxy.clone(), network.proxy_env.clone()));
        let elsewhere = proxies.clone();
        // Any other origin (the release feed) takes the same rules: the setting, then the
        // environment with NO_PROXY, then the system's.
        let proxy = reqwest::Proxy::custom(move |url: &Url| {
            let same = |origin: &Url| origin.host() == url.host() && origin.port_or_known_default() == url.port_or_known_default();
            match by_origin.iter().find(|(origin, _)| same(origin)) {
                Some((_, route)) => route.proxy().map(|p| p.expose().to_string()),
                None => Route::to(url, &elsewhere.0, &elsewhere.1).proxy().map(|p| p.expose().to_string()),
            }
        });
        let http = builder
            .tls_backend_preconfigured(tls.clone())
            .default_headers(headers)
            .redirect(reqwest::redirect::Policy::none())
            .https_only(false) // checked_origin already allows http for loopback alone
            .connect_timeout(CONNECT_TIMEOUT)
            .pool_idle_timeout(Duration::from_secs(90))
            .tcp_keepalive(TCP_KEEPALIVE)
            // No adaptive HTTP/2 window: its PING after answers measures bandwidth that answers of
            // a few hundred bytes never need (hyper's fixed windows are 2 MiB a stream), and on
            // tokio's paused clock its zero round trip stalled the next call on the connection.
            // The proxy is the route's (proxy.rs), never reqwest's own reading of the environment.
            .proxy(proxy)
            .build()
            .map_err(|e| ClientConfigError::Build(e.to_string()))?;
        let waits = match network.transport {
            Transport::Http1 => None,
            Transport::Http2 => Some(Arc::new(WaitConnections::new(&api, api_route, &tls).map_err(ClientConfigError::Build)?)),
        };
        Ok(CloudClient { http, waits, api, auth, routes, connector: Connector::default(), proxies })
    }

    /// The proxy a request to `url` goes through (the release feed's, for the installer's own
    /// download on macOS and Windows), by the rules every request of this client follows.
    pub fn proxy_for(&self, url: &Url) -> Option<ProxyUrl> {
        Route::to(url, &self.proxies.0, &self.proxies.1).proxy().cloned()
    }

    /// How the API's origin is reached, in words: "through http://proxy:3128 (HTTPS_PROXY)".
    pub fn route(&self) -> String {
        self.routes[0].1.describe()
    }

    /// How many connections the waits hold over HTTP/2 (one per [`WAITS_PER_CONNECTION`] waits
    /// in flight); 0 over HTTP/1.1, where each wait is a connection of reqwest's.
    pub fn wait_connections(&self) -> usize {
        self.waits.as_ref().map_or(0, |w| w.count())
    }

    pub fn api_url(&self) -> &Url {
        &self.api
    }

    pub fn auth_url(&self) -> &Url {
        &self.auth
    }

    fn url(base: &Url, path: &str) -> Url {
        let mut url = base.clone();
        let joined = format!("{}{}", url.path().trim_end_matches('/'), path);
        url.set_path(&joined);
        url
    }

    /// `GET /api/runs/{id}/wait`: held by the server up to 10 s, or `hold` if shorter
    /// (`timeoutMs`). The client's deadline is the full hold's: a server that ignores
    /// `timeoutMs` is not cut short.
    pub async fn wait_run(&self, cred: &Credentials, id: &RunId, hold: Duration) -> Result<Run, CloudError> {
        let mut url = Self::url(&self.api, &format!("/api/runs/{id}/wait"));
        if hold < RUN_HOLD {
            url.query_pairs_mut().append_pair("timeoutMs", &hold.as_millis().to_string());
        }
        let what = format!("wait on {id}");
        let body = self.wait(url, cred, RUN_HOLD + WAIT_MARGIN, &what).await?;
        let run: Run = parse(&what, body)?;
        if &run.id != id {
            return Err(unreadable(&what, format!("the answer is about {} instead", run.id)));
        }
        Ok(run)
    }

    /// `GET /v1/handoffs/{id}/wait?after=&timeoutMs=`: held by the store up to 25 s, or `hold`
    /// if shorter.
    pub async fn wait_handoff(&self, cred: &Credentials, id: &HandoffId, after: u64, hold: Duration) -> Result<Handoff, CloudError> {
        let mut url = Self::url(&self.api, &format!("/v1/handoffs/{id}/wait"));
        let hold = hold.min(HANDOFF_HOLD);
        url.query_pairs_mut().append_pair("after", &after.to_string()).append_pair("timeoutMs", &hold.as_millis().to_string());
        let what = format!("wait on {id}");
        let body = self.wait(url, cred, HANDOFF_HOLD + WAIT_MARGIN, &what).await?;
        let h: Handoff = parse(&what, body)?;
        if &h.id != id {
            return Err(unreadable(&what, format!("the answer is about {} instead", h.id)));
        }
        Ok(h)
    }

    /// Every page of `GET /v1/handoffs`. Entries that do not parse (a bad id, an unknown status)
    /// are returned as problems beside the good ones, never dropping the page; past
    /// [`LIST_ITEMS_CAP`] entries the rest are counted, not read.
    pub async fn list_handoffs(&self, cred: &Credentials) -> Result<Listing<Handoff>, CloudError> {
        let mut listing = Listing::default();
        let mut cursor: Option<String> = None;
        for page in 1..=MAX_PAGES {
            let mut url = Self::url(&self.api, "/v1/handoffs");
            {
                let mut q = url.query_pairs_mut();
                q.append_pair("limit", "100");
                if let Some(c) = &cursor {
                    q.append_pair("cursor", c);
                }
            }
            let what = format!("hand-off list page {page}");
            let body = self.call(Method::GET, url, Some(cred), None, CALL_TIMEOUT, PAGE_CAP, &what).await?;
            let next = listing.read_page(&what, &body, "handoffs")?;
            if listing.full() {
                return Ok(listing);
            }
            match next {
                None | Some(Value::Null) => return Ok(listing),
                Some(Value::String(next)) if Some(&next) != cursor.as_ref() => cursor = Some(next),
                Some(other) => return Err(unreadable(&what, format!("nextCursor {other} does not move on"))),
            }
        }
        Err(unreadable("hand-off list", format!("more than {MAX_PAGES} pages")))
    }

    /// `GET /api/runs?active=1`; `None` when the list is not offered (404).
    pub async fn active_runs(&self, cred: &Credentials) -> Result<Option<Listing<Run>>, CloudError> {
        let mut url = Self::url(&self.api, "/api/runs");
        url.query_pairs_mut().append_pair("active", "1");
        let what = "active Run list".to_string();
        match self.call(Method::GET, url, Some(cred), None, CALL_TIMEOUT, PAGE_CAP, &what).await {
            Ok(body) => {
                let mut listing = Listing::default();
                listing.read_page(&what, &body, "runs")?;
                Ok(Some(listing))
            }
            Err(CloudError::Gone { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `POST /api/runs/{id}/cancel`.
    pub async fn cancel_run(&self, cred: &Credentials, id: &RunId) -> Result<(), CloudError> {
        let url = Self::url(&self.api, &format!("/api/runs/{id}/cancel"));
        let what = format!("cancel {id}");
        self.call(Method::POST, url, Some(cred), Some(serde_json::json!({})), CALL_TIMEOUT, SNAPSHOT_CAP, &what).await.map(drop)
    }

    /// `GET /v1/me`.
    pub async fn me(&self, cred: &Credentials) -> Result<Me, CloudError> {
        let url = Self::url(&self.api, "/v1/me");
        let body = self.call(Method::GET, url, Some(cred), None, CALL_TIMEOUT, SNAPSHOT_CAP, "who am I").await?;
        parse("who am I", body)
    }

    /// The release feed (docs/configuration.md, "Updates"): the newest version out. Through the
    /// same proxy and TLS as the cloud; no credentials are sent.
    pub async fn release(&self, feed: &Url) -> Result<super::types::Release, CloudError> {
        let body = self.call(Method::GET, feed.clone(), None, None, CALL_TIMEOUT, SNAPSHOT_CAP, "the release feed").await?;
        parse("the release feed", body)
    }

    /// `GET /v1/me` within [`LOOK_TIMEOUT`]: whether the cloud answers at all (the follower's
    /// scout while it seems unreachable).
    pub async fn look(&self, cred: &Credentials) -> Result<(), CloudError> {
        let url = Self::url(&self.api, "/v1/me");
        self.call(Method::GET, url, Some(cred), None, LOOK_TIMEOUT, SNAPSHOT_CAP, "a look at the cloud").await.map(drop)
    }

    /// A POST to the auth origin (device-code sign-in, refresh), with no credentials.
    pub async fn auth_post<T: DeserializeOwned>(&self, path: &str, body: Value) -> Result<T, CloudError> {
        let bytes = self.auth_post_bytes(path, body).await?;
        parse(&format!("POST {path}"), bytes)
    }

    /// The same, the answer's body as it came (for readers that check more than its shape).
    pub(super) async fn auth_post_bytes(&self, path: &str, body: Value) -> Result<Vec<u8>, CloudError> {
        let url = Self::url(&self.auth, path);
        let what = format!("POST {path}");
        self.call(Method::POST, url, None, Some(body), CALL_TIMEOUT, SNAPSHOT_CAP, &what).await
    }

    /// A wait (`GET`, held by the server): over HTTP/2 on the waits' own connections, else over
    /// reqwest like any other call.
    async fn wait(&self, url: Url, cred: &Credentials, deadline: Duration, what: &str) -> Result<Vec<u8>, CloudError> {
        if let Some(waits) = self.waits.as_ref().filter(|w| !w.declined()) {
            let mut headers = HeaderMap::new();
            headers.insert("accept", HeaderValue::from_static("application/json"));
            let token = waits::sensitive(&format!("Bearer {}", cred.access_token.expose_secret()));
            let team = cred.team.as_ref().map(|t| HeaderValue::from_str(t.as_str()));
            match (token, team.transpose()) {
                (Some(token), Ok(team)) => {
                    headers.insert(AUTHORIZATION, token);
                    if let Some(team) = team {
                        headers.insert("x-cmux-team", team);
                    }
                }
                _ => {
                    return Err(CloudError::RetryLater {
                        what: what.into(),
                        reason: "the credentials cannot be sent as headers".into(),
                        retry_after: None,
                    });
                }
            }
            match waits.get(&url, &headers, deadline, SNAPSHOT_CAP).await {
                Ok(answer) => return read_answer(what, answer.status, answer.retry_after, answer.body),
                // Declined by ALPN: this wait and the next go over reqwest, which speaks HTTP/1.1 to it.
                Err(WaitFailed::NoHttp2) => {}
                Err(WaitFailed::TooLarge(cap)) => return Err(unreadable(what, format!("the body is larger than {} KiB", cap / 1024))),
                Err(WaitFailed::Connect(e)) if e.is_proxy_refusal() => {
                    return Err(CloudError::ProxyRefused { what: what.into(), reason: e.to_string() });
                }
                Err(e) => return Err(CloudError::Unreachable { what: what.into(), reason: e.to_string() }),
            }
        }
        // Boxed: reqwest's future is kilobytes, and inline it would weigh on every wait in flight.
        Box::pin(self.call(Method::GET, url, Some(cred), None, deadline, SNAPSHOT_CAP, what)).await
    }

    #[allow(clippy::too_many_arguments)]
    async fn call(
        &self,
        method: Method,
        url: Url,
        cred: Option<&Credentials>,
        body: Option<Value>,
        timeout: Duration,
        cap: usize,
        what: &str,
    ) -> Result<Vec<u8>, CloudError> {
        let route = self.routes.iter().find(|(origin, _)| origin.host() == url.host() && origin.port() == url.port()).map(|(_, r)| r);
        let mut req = self.http.request(method, url).timeout(timeout);
        if let Some(cred) = cred {
            req = req.bearer_auth(cred.access_token.expose_secret());
            if let Some(team) = &cred.team {
                req = req.header("x-cmux-team", team.as_str());
            }
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let mut resp = match req.send().await {
            Ok(resp) => resp,
            Err(e) => return Err(self.failed(what, &e, route).await),
        };
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| network(what, &e, None))? {
            if bytes.len() + chunk.len() > cap {
                return Err(unreadable(what, format!("the body is larger than {} KiB", cap / 1024)));
            }
            bytes.extend_from_slice(&chunk);
        }
        read_answer(what, resp.status(), retry_after(resp.headers()), bytes)
    }
}

impl CloudClient {
    /// A call reqwest could not make. Through a proxy, reqwest does not say what the proxy
    /// answered: the proxy is asked again, by this client's own connector, to say it.
    async fn failed(&self, what: &str, e: &reqwest::Error, route: Option<&Route>) -> CloudError {
        let proxy = route.and_then(Route::proxy);
        if let (true, Some(route), Some(url)) = (e.is_connect() && proxy.is_some(), route, e.url()) {
            let (host, port) = (url.host_str().unwrap_or_default(), url.port_or_known_default().unwrap_or(443));
            if let Err(refusal) = self.connector.open(route, host, port).await
                && refusal.is_proxy_refusal()
            {
                return CloudError::ProxyRefused { what: what.into(), reason: refusal.to_string() };
            }
        }
        network(what, e, proxy)
    }
}

fn network(what: &str, e: &reqwest::Error, proxy: Option<&ProxyUrl>) -> CloudError {
    let reason = if e.is_timeout() {
        "no answer before the client's deadline".to_string()
    } else if e.is_connect() {
        let through = proxy.map(|p| format!(" through the proxy {}", p.shown())).unwrap_or_default();
        format!("could not connect{through} ({})", in_words(e))
    } else {
        let mut msg = e.to_string();
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            msg = format!("{msg}: {s}");
            src = s.source();
        }
        msg
    };
    CloudError::Unreachable { what: what.into(), reason }
}
