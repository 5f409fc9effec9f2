//! The system's proxy settings, where a process can read them: macOS's network settings and
//! Windows's Internet settings, through hyper-util's reader (the one reqwest uses). Linux has no
//! such setting below the desktop: GNOME keeps its own in GSettings, which only GLib reads, and no
//! well-kept crate reads it without linking GLib (docs/cloud-api.md, "Proxies").

use url::Url;

use super::ProxyUrl;

#[cfg(any(target_os = "macos", windows))]
pub fn proxy_for(origin: &Url) -> Option<ProxyUrl> {
    let uri = origin.as_str().parse::<http::Uri>().ok()?;
    let found = hyper_util::client::proxy::matcher::Matcher::from_system().intercept(&uri)?;
    ProxyUrl::parse(&found.uri().to_string()).ok()
}

#[cfg(not(any(target_os = "macos", windows)))]
pub fn proxy_for(_origin: &Url) -> Option<ProxyUrl> {
    None
}
