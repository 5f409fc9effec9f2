//! Which way each origin of the cloud is reached: straight, or through a proxy (docs/cloud-api.md,
//! "Proxies").
//!
//! The order, as desktop apps take it: `[cloud] proxy` (a URL, or `none`), then the environment's
//! `HTTPS_PROXY`/`https_proxy`, `HTTP_PROXY`/`http_proxy` and `ALL_PROXY`/`all_proxy` with
//! `NO_PROXY`/`no_proxy` (curl's rules, through hyper-util's matcher), then the system's settings
//! where the platform has them (`system.rs`). A loopback origin is never proxied: a proxy elsewhere
//! cannot reach this machine's loopback. The route is chosen once per origin, at start, and
//! reqwest and the waits' own connections both take it from here.

mod system;

use std::collections::BTreeMap;

use hyper_util::client::proxy::matcher::Matcher;
use secrecy::{ExposeSecret, SecretString};
use url::Url;

/// The environment's proxy variables, in the order each role reads them (lower case last, as
/// curl reads them; `HTTP_PROXY` is upper case too, since the daemon is not a CGI program).
const ALL: [&str; 2] = ["ALL_PROXY", "all_proxy"];
const HTTPS: [&str; 2] = ["HTTPS_PROXY", "https_proxy"];
const HTTP: [&str; 2] = ["HTTP_PROXY", "http_proxy"];
const NO: [&str; 2] = ["NO_PROXY", "no_proxy"];

/// `[cloud] proxy`: what the person set, which wins over the environment.
#[derive(Clone, Debug, Default)]
pub enum ProxySetting {
    /// Not set: the environment, else the system's settings.
    #[default]
    Auto,
    /// `none`: never a proxy, whatever the environment says.
    Off,
    /// Every request to the cloud through this proxy.
    Through(ProxyUrl),
}

impl ProxySetting {
    /// `""` (not set), `none`, or a proxy URL.
    pub fn parse(text: &str) -> Result<ProxySetting, String> {
        match text.trim() {
            "" => Ok(ProxySetting::Auto),
            t if t.eq_ignore_ascii_case("none") => Ok(ProxySetting::Off),
            t => ProxyUrl::parse(t).map(ProxySetting::Through),
        }
    }
}

/// A proxy's URL: `http://`, `socks5://` or `socks5h://` (a name resolved at the proxy), with
/// credentials in it when the proxy asks for them. The credentials never reach a log or `status`.
#[derive(Clone)]
pub struct ProxyUrl {
    full: SecretString,
    shown: String,
    kind: ProxyKind,
    host: String,
    port: u16,
}

/// How the proxy is spoken to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyKind {
    /// HTTP `CONNECT` to the origin's host and port.
    Connect,
    /// SOCKS5; `resolves` when the proxy resolves the origin's name (`socks5h`).
    Socks5 { resolves: bool },
}

impl ProxyUrl {
    /// A proxy URL as curl takes it (no scheme means `http://`); a path is ignored.
    pub fn parse(text: &str) -> Result<ProxyUrl, String> {
        let text = text.trim();
        let with_scheme = if text.contains("://") { text.to_string() } else { format!("http://{text}") };
        let url = Url::parse(&with_scheme).map_err(|e| format!("not a proxy URL ({e})"))?;
        let kind = match url.scheme() {
            "http" => ProxyKind::Connect,
            "socks5" => ProxyKind::Socks5 { resolves: false },
            "socks5h" => ProxyKind::Socks5 { resolves: true },
            "https" => return Err("a proxy spoken to over TLS (https://) is not supported; use http://".into()),
            other => return Err(format!("a {other}:// proxy is not supported; use http://, socks5:// or socks5h://")),
        };
        if url.host_str().is_none_or(str::is_empty) {
            return Err("no proxy host is named".into());
        }
        let port = url.port_or_known_default().or(matches!(kind, ProxyKind::Socks5 { .. }).then_some(1080));
        let Some(port) = port else { return Err("no port is named".into()) };
        let mut bare = url.clone();
        let _ = bare.set_username("");
        let _ = bare.set_password(None);
        let host = url.host_str().unwrap_or_default().to_string();
        let shown = format!("{}://{host}:{port}", bare.scheme());
        let mut full = url;
        let _ = full.set_port(Some(port));
        full.set_path("");
        let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
        Ok(ProxyUrl { full: SecretString::from(full.to_string()), shown, kind, host, port })
    }

    /// The proxy without its credentials: `http://proxy.example:3128`.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    pub fn kind(&self) -> ProxyKind {
        self.kind
    }

    /// The proxy's host (an IPv6 address without brackets) and port.
    pub fn address(&self) -> (&str, u16) {
        (&self.host, self.port)
    }

    /// The user name and password in the URL, percent-decoded.
    pub(crate) fn credentials(&self) -> Option<(String, String)> {
        let url = Url::parse(self.expose()).ok()?;
        let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
        match url.username() {
            "" => None,
            user => Some((decode(user), url.password().map(decode).unwrap_or_default())),
        }
    }

    /// The whole URL, credentials included: only for the connection that uses it.
    pub(crate) fn expose(&self) -> &str {
        self.full.expose_secret()
    }
}

impl std::fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// A proxy URL as it may be shown: without what is before an `@` (credentials).
pub fn redacted(text: &str) -> String {
    match (text.find("://"), text.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://…@{}", &text[..s], &text[at + 1..]),
        (None, Some(at)) => format!("…@{}", &text[at + 1..]),
        _ => text.to_string(),
    }
}

/// The environment's proxy variables, read once at start (from the settings' environment).
/// Its `Debug` shows each value without the credentials it may carry.
#[derive(Clone, Default)]
pub struct ProxyEnv {
    all: Option<(&'static str, String)>,
    http: Option<(&'static str, String)>,
    https: Option<(&'static str, String)>,
    no: String,
}

impl std::fmt::Debug for ProxyEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |v: &Option<(&'static str, String)>| v.as_ref().map(|(name, value)| (*name, redacted(value)));
        f.debug_struct("ProxyEnv")
            .field("all", &shown(&self.all))
            .field("http", &shown(&self.http))
            .field("https", &shown(&self.https))
            .field("no", &self.no)
            .finish()
    }
}

impl ProxyEnv {
    pub fn from_env(env: &BTreeMap<String, String>) -> ProxyEnv {
        let first = |names: [&'static str; 2]| {
            names.into_iter().find_map(|n| env.get(n).map(|v| v.trim()).filter(|v| !v.is_empty()).map(|v| (n, v.to_string())))
        };
        ProxyEnv { all: first(ALL), http: first(HTTP), https: first(HTTPS), no: first(NO).map(|(_, v)| v).unwrap_or_default() }
    }

    /// The variable a request to an origin of this scheme reads, if one is set.
    fn for_scheme(&self, scheme: &str) -> Option<&(&'static str, String)> {
        match scheme {
            "https" => self.https.as_ref().or(self.all.as_ref()),
            _ => self.http.as_ref().or(self.all.as_ref()),
        }
    }

    /// What is wrong with the variables set, for the settings' warnings (a bad one is skipped).
    pub fn problems(&self) -> Vec<String> {
        [&self.all, &self.http, &self.https]
            .into_iter()
            .flatten()
            .filter_map(|(name, value)| ProxyUrl::parse(value).err().map(|e| format!("{name}={:?}: {e} (ignored)", redacted(value))))
            .collect()
    }
}

/// Where the route's proxy came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyFrom {
    /// `[cloud] proxy`.
    Setting,
    /// An environment variable, by name.
    Variable(&'static str),
    /// The system's proxy settings (macOS, Windows).
    System,
}

/// Why an origin is reached straight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Straight {
    /// A loopback origin (the simulator, a local development server).
    Loopback,
    /// `[cloud] proxy = "none"`.
    Setting,
    /// `NO_PROXY` names it.
    NoProxy,
    /// No proxy is set anywhere.
    Unset,
}

/// How one origin is reached.
#[derive(Clone, Debug)]
pub enum Route {
    Straight(Straight),
    Proxy { proxy: ProxyUrl, from: ProxyFrom },
}

impl Route {
    /// The route to `origin` under this setting and environment.
    pub fn to(origin: &Url, setting: &ProxySetting, env: &ProxyEnv) -> Route {
        if is_loopback(origin) {
            return Route::Straight(Straight::Loopback);
        }
        match setting {
            ProxySetting::Off => return Route::Straight(Straight::Setting),
            ProxySetting::Through(proxy) => return Route::Proxy { proxy: proxy.clone(), from: ProxyFrom::Setting },
            ProxySetting::Auto => {}
        }
        if let Some((name, value)) = env.for_scheme(origin.scheme()) {
            let Ok(proxy) = ProxyUrl::parse(value) else { return Route::Straight(Straight::Unset) };
            return match excluded(origin, &env.no) {
                true => Route::Straight(Straight::NoProxy),
                false => Route::Proxy { proxy, from: ProxyFrom::Variable(name) },
            };
        }
        match system::proxy_for(origin) {
            Some(proxy) => Route::Proxy { proxy, from: ProxyFrom::System },
            None => Route::Straight(Straight::Unset),
        }
    }

    pub fn proxy(&self) -> Option<&ProxyUrl> {
        match self {
            Route::Proxy { proxy, .. } => Some(proxy),
            Route::Straight(_) => None,
        }
    }

    /// In words, for `status` and the log: "through http://proxy:3128 (HTTPS_PROXY)".
    pub fn describe(&self) -> String {
        match self {
            Route::Straight(Straight::Loopback) => "direct (a loopback address is never proxied)".into(),
            Route::Straight(Straight::Setting) => "direct ([cloud] proxy = \"none\")".into(),
            Route::Straight(Straight::NoProxy) => "direct (NO_PROXY names it)".into(),
            Route::Straight(Straight::Unset) => "direct (no proxy is set)".into(),
            Route::Proxy { proxy, from } => {
                let from = match from {
                    ProxyFrom::Setting => "[cloud] proxy".to_string(),
                    ProxyFrom::Variable(name) => (*name).to_string(),
                    ProxyFrom::System => "the system's proxy settings".to_string(),
                };
                format!("through {} ({from})", proxy.shown())
            }
        }
    }
}

/// Whether `NO_PROXY` names the origin, by curl's rules (hyper-util's matcher: domains and their
/// subdomains, addresses and networks, `*`).
fn excluded(origin: &Url, no_proxy: &str) -> bool {
    if no_proxy.is_empty() {
        return false;
    }
    let Ok(uri) = origin.as_str().parse::<http::Uri>() else { return false };
    // Only the exclusion list is asked: the proxy given here is a placeholder.
    Matcher::builder().all("http://proxy.invalid:1").no(no_proxy).build().intercept(&uri).is_none()
}

fn is_loopback(origin: &Url) -> bool {
    match origin.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> ProxyEnv {
        ProxyEnv::from_env(&pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    fn route(origin: &str, setting: &str, vars: &[(&str, &str)]) -> String {
        Route::to(&Url::parse(origin).unwrap(), &ProxySetting::parse(setting).unwrap(), &env(vars)).describe()
    }

    const API: &str = "https://cloud-api.cmux.dev";

    /// A log line that prints the environment's proxies (`{:?}`) never prints a password.
    #[test]
    fn the_environments_proxies_are_printed_without_their_credentials() {
        let shown = format!("{:?}", env(&[("HTTPS_PROXY", "http://alice:s3cret@proxy:3128"), ("ALL_PROXY", "socks5://bob:hunter2@gate")]));
        assert!(!shown.contains("s3cret") && !shown.contains("hunter2") && !shown.contains("alice"), "{shown}");
        assert!(shown.contains("proxy:3128") && shown.contains("HTTPS_PROXY"), "{shown}");
    }

    #[test]
    fn the_environment_is_read_as_curl_reads_it() {
        assert_eq!(route(API, "", &[]), "direct (no proxy is set)");
        assert_eq!(route(API, "", &[("HTTPS_PROXY", "http://proxy:3128")]), "through http://proxy:3128 (HTTPS_PROXY)");
        assert_eq!(route(API, "", &[("https_proxy", "proxy:3128")]), "through http://proxy:3128 (https_proxy)", "no scheme: http");
        assert_eq!(route(API, "", &[("HTTP_PROXY", "http://proxy:3128")]), "direct (no proxy is set)", "https reads HTTPS_PROXY");
        assert_eq!(route(API, "", &[("ALL_PROXY", "socks5h://gate:1080")]), "through socks5h://gate:1080 (ALL_PROXY)");
        assert_eq!(
            route(API, "", &[("ALL_PROXY", "socks5://gate"), ("HTTPS_PROXY", "http://proxy:8080")]),
            "through http://proxy:8080 (HTTPS_PROXY)",
            "the scheme's own variable before ALL_PROXY"
        );
        assert_eq!(route(API, "", &[("ALL_PROXY", "socks5://gate")]), "through socks5://gate:1080 (ALL_PROXY)", "SOCKS's port");
    }

    #[test]
    fn no_proxy_names_hosts_domains_and_everything() {
        let through = &[("HTTPS_PROXY", "http://proxy:3128")];
        for no in ["cmux.dev", ".cmux.dev", "cloud-api.cmux.dev", "example.com, cmux.dev", "*"] {
            let vars = [through[0], ("NO_PROXY", no)];
            assert_eq!(route(API, "", &vars), "direct (NO_PROXY names it)", "NO_PROXY={no}");
        }
        let vars = [through[0], ("no_proxy", "notcmux.dev,10.0.0.0/8")];
        assert_eq!(route(API, "", &vars), "through http://proxy:3128 (HTTPS_PROXY)");
        let vars = [through[0], ("NO_PROXY", "10.0.0.0/8")];
        assert_eq!(route("https://10.1.2.3:8443", "", &vars), "direct (NO_PROXY names it)");
    }

    #[test]
    fn the_setting_wins_and_none_turns_it_off_and_loopback_is_never_proxied() {
        let vars = &[("HTTPS_PROXY", "http://proxy:3128")];
        assert_eq!(route(API, "none", vars), "direct ([cloud] proxy = \"none\")");
        assert_eq!(route(API, "NONE", vars), "direct ([cloud] proxy = \"none\")");
        assert_eq!(route(API, "http://corp:8080", vars), "through http://corp:8080 ([cloud] proxy)");
        for origin in ["http://127.0.0.1:8080", "https://localhost", "http://[::1]:9"] {
            assert_eq!(route(origin, "http://corp:8080", &[("ALL_PROXY", "http://p:1")]), "direct (a loopback address is never proxied)");
        }
    }

    #[test]
    fn credentials_are_kept_for_the_proxy_and_shown_nowhere() {
        let proxy = ProxyUrl::parse("http://alice:s%40cret@proxy.corp:3128/ignored").unwrap();
        assert_eq!(proxy.shown(), "http://proxy.corp:3128");
        assert_eq!(format!("{proxy:?}"), "http://proxy.corp:3128");
        assert_eq!(proxy.expose(), "http://alice:s%40cret@proxy.corp:3128/");
        assert_eq!(proxy.credentials(), Some(("alice".into(), "s@cret".into())));
        assert_eq!(proxy.address(), ("proxy.corp", 3128));
        assert_eq!(ProxyUrl::parse("socks5h://[::1]").unwrap().address(), ("::1", 1080));
        let r = route(API, "", &[("HTTPS_PROXY", "http://alice:secret@proxy.corp:3128")]);
        assert!(!r.contains("secret") && !r.contains("alice"), "{r}");
        assert_eq!(redacted("ftp://bob:hunter2@proxy:21"), "ftp://…@proxy:21");
        let vars = env(&[("ALL_PROXY", "ftp://bob:hunter2@proxy:21")]);
        assert!(vars.problems()[0].contains("ftp://…@proxy:21") && !vars.problems()[0].contains("hunter2"), "{:?}", vars.problems());
    }

    #[test]
    fn a_bad_proxy_says_what_is_wrong_and_the_environment_skips_it() {
        for (text, says) in [
            ("https://proxy:443", "over TLS (https://) is not supported"),
            ("socks4://proxy", "socks4:// proxy is not supported"),
            ("http://", "not a proxy URL"),
        ] {
            let e = ProxySetting::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        let vars = env(&[("HTTPS_PROXY", "ftp://proxy")]);
        assert_eq!(
            vars.problems(),
            ["HTTPS_PROXY=\"ftp://proxy\": a ftp:// proxy is not supported; use http://, socks5:// or socks5h:// (ignored)"]
        );
        assert_eq!(route(API, "", &[("HTTPS_PROXY", "ftp://proxy")]), "direct (no proxy is set)");
    }
}
