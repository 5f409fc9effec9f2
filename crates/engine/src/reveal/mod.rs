//! What a banner click opens (docs/notices.md §4), and opening it.
//!
//! Links are built only from checked ids (cmux's workspace and surface ids are UUIDs) and only
//! with the `cmux://` scheme; no text from a server or an agent ever reaches a shell or is
//! opened as a path. Opening goes through the platform's [`opener`] with the URL as one argument.

mod opener;

/// A cmux id: a UUID, any case.
pub fn is_cmux_id(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5 && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `cmux://workspace/<ws>/surface/<sf>`, or the workspace alone; `None` unless the ids check out.
pub fn surface_link(workspace: Option<&str>, surface: Option<&str>) -> Option<String> {
    let ws = workspace.filter(|w| is_cmux_id(w))?;
    Some(match surface.filter(|s| is_cmux_id(s)) {
        Some(sf) => format!("cmux://workspace/{ws}/surface/{sf}"),
        None => format!("cmux://workspace/{ws}"),
    })
}

/// A host name as a deep link may carry it: DNS labels (letters, digits, `-`), dots, and an
/// optional `:port`; no user, path or anything a shell or a URL would read as more.
pub fn is_host(s: &str) -> bool {
    let (name, port) = match s.rsplit_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (s, None),
    };
    let label_ok =
        |l: &str| !l.is_empty() && l.len() <= 63 && !l.starts_with('-') && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(label_ok)
        && port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// `cmux://ssh?host=<host>&title=<title>`: cmux opens a workspace on that host. `None` unless the
/// host checks out; the title is percent-encoded.
pub fn ssh_link(host: &str, title: &str) -> Option<String> {
    if !is_host(host) {
        return None;
    }
    let mut url = url::Url::parse("cmux://ssh").expect("a constant URL");
    url.query_pairs_mut().append_pair("host", host).append_pair("title", title);
    Some(url.to_string().replace('+', "%20"))
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("not a link this app opens: {0:?}")]
    NotAllowed(String),
    #[error("the opener {program} could not run: {source}")]
    Spawn { program: &'static str, source: std::io::Error },
    #[error("the opener {program} failed ({status}) for {url}")]
    Failed { program: &'static str, status: String, url: String },
    #[error("the opener {program} did not finish within {OPEN_TIMEOUT:?} for {url}")]
    TimedOut { program: &'static str, url: String },
}

/// How long an opener may take to hand a link over (xdg-open returns once the handler started).
pub const OPEN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// Opens a `cmux://` link with the platform's opener; `Ok` only when the opener said it did.
/// `activation` (the token a Wayland notification server sent with the click) is handed to the
/// opener as `XDG_ACTIVATION_TOKEN`, so the app it starts may take the focus.
pub async fn open_link(url: &str, activation: Option<&str>) -> Result<(), OpenError> {
    if !url.starts_with("cmux://") {
        return Err(OpenError::NotAllowed(url.into()));
    }
    open(url, activation).await
}

/// Opens the sign-in page in the browser: an https page, or http on loopback (the simulator).
pub async fn open_sign_in_page(url: &str) -> Result<(), OpenError> {
    let allowed = url::Url::parse(url).is_ok_and(|u| {
        u.scheme() == "https" || (u.scheme() == "http" && matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]")))
    });
    if !allowed {
        return Err(OpenError::NotAllowed(url.into()));
    }
    open(url, None).await
}

/// Opens one of the app's own folders (the log folder, from the tray's About) in the person's
/// file manager.
pub async fn open_folder(dir: &std::path::Path) -> Result<(), OpenError> {
    let url = url::Url::from_directory_path(dir).map_err(|()| OpenError::NotAllowed(dir.display().to_string()))?;
    open(url.as_str(), None).await
}

/// Hands `url` to the platform's [`opener`], once it is known to hold no space or control
/// character.
async fn open(url: &str, activation: Option<&str>) -> Result<(), OpenError> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(OpenError::NotAllowed(url.into()));
    }
    opener::open(url, activation).await
}

#[cfg(test)]
mod tests {
    use super::*;

    const WS: &str = "D9C269B8-1A2B-4C3D-8E9F-0123456789AB";
    const SF: &str = "b9dd280a-1111-2222-3333-444455556666";

    #[test]
    fn links_only_from_checked_ids() {
        assert_eq!(surface_link(Some(WS), Some(SF)), Some(format!("cmux://workspace/{WS}/surface/{SF}")));
        assert_eq!(surface_link(Some(WS), None), Some(format!("cmux://workspace/{WS}")));
        assert_eq!(surface_link(Some(WS), Some("../../etc")), Some(format!("cmux://workspace/{WS}")));
        assert_eq!(surface_link(Some("not-a-uuid"), Some(SF)), None);
        assert_eq!(surface_link(Some("D9C269B8-1A2B-4C3D-8E9F-0123456789AB?x=1"), None), None);
        assert_eq!(surface_link(None, Some(SF)), None);
    }

    #[test]
    fn an_ssh_link_carries_a_checked_host_and_an_encoded_title() {
        assert_eq!(
            ssh_link("devbox.example.com", "Refactor the parser").as_deref(),
            Some("cmux://ssh?host=devbox.example.com&title=Refactor%20the%20parser")
        );
        assert_eq!(ssh_link("10.0.0.7:2222", "a&b=c").as_deref(), Some("cmux://ssh?host=10.0.0.7%3A2222&title=a%26b%3Dc"));
        for bad in ["", "ada@devbox", "devbox/etc", "-x.example.com", "host name", "devbox;rm -rf", "devbox:", "devbox:123456", "a..b"] {
            assert_eq!(ssh_link(bad, "t"), None, "{bad:?}");
        }
    }

    #[tokio::test]
    async fn only_cmux_links_are_opened() {
        for bad in ["https://example.com", "file:///etc/passwd", "cmux://x y", "/bin/sh"] {
            assert!(matches!(open_link(bad, None).await, Err(OpenError::NotAllowed(_))), "{bad}");
        }
    }
}

/// What a `cmux-tray://` link asks of the app. Only checked ids and known routes are accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppLink {
    /// `cmux-tray://follow/run/<run id>`
    FollowRun(crate::cloud::RunId),
    /// `cmux-tray://follow/handoff/<hand-off id>`
    FollowHandoff(crate::cloud::HandoffId),
    /// `cmux-tray://open/<notice key>` (the key percent-encoded): its card or the history.
    Open(String),
}

impl AppLink {
    pub fn parse(text: &str) -> Result<AppLink, String> {
        let url = url::Url::parse(text).map_err(|e| format!("{text:?} is not a link: {e}"))?;
        if url.scheme() != "cmux-tray" {
            return Err(format!("{text:?}: only cmux-tray:// links are handled"));
        }
        if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() || url.port().is_some() {
            return Err(format!("{text:?}: a cmux-tray link has no query, fragment, user or port"));
        }
        let parts: Vec<&str> = url.path().trim_start_matches('/').split('/').collect();
        match (url.host_str(), parts.as_slice()) {
            (Some("follow"), ["run", id]) => crate::cloud::RunId::parse(id).map(AppLink::FollowRun).map_err(|e| e.to_string()),
            (Some("follow"), ["handoff", id]) => crate::cloud::HandoffId::parse(id).map(AppLink::FollowHandoff).map_err(|e| e.to_string()),
            (Some("open"), [key]) if !key.is_empty() => {
                let key = percent_decode(key).ok_or_else(|| format!("{text:?}: the notice key is not valid UTF-8"))?;
                Ok(AppLink::Open(key))
            }
            _ => Err(format!("{text:?}: expected cmux-tray://follow/run/<id>, follow/handoff/<id> or open/<notice>")),
        }
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod link_tests {
    use super::*;

    #[test]
    fn app_links_take_checked_ids_only() {
        assert_eq!(
            AppLink::parse("cmux-tray://follow/run/run_0123456789abcdef0123"),
            Ok(AppLink::FollowRun(crate::cloud::RunId::parse("run_0123456789abcdef0123").unwrap()))
        );
        assert!(matches!(AppLink::parse("cmux-tray://follow/handoff/ho_0123456789abcdef0123"), Ok(AppLink::FollowHandoff(_))));
        assert_eq!(
            AppLink::parse("cmux-tray://open/run%3Arun_0123456789abcdef0123"),
            Ok(AppLink::Open("run:run_0123456789abcdef0123".into()))
        );
        for bad in [
            "cmux-tray://follow/run/run_../../etc",
            "cmux-tray://follow/run/ho_0123456789abcdef0123",
            "cmux-tray://follow/run/run_0123456789abcdef0123?x=1",
            "cmux-tray://delete/everything",
            "https://follow/run/run_0123456789abcdef0123",
            "cmux-tray://open/",
            "not a link",
        ] {
            assert!(AppLink::parse(bad).is_err(), "{bad}");
        }
    }
}
