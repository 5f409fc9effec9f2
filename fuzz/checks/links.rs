//! The links the app reads and makes (docs/notices.md §4): `cmux-tray://` links from outside,
//! and the `cmux://` links built from ids and hosts a notice carries. Reading refuses what is
//! not a known route with checked ids; a link made holds only checked parts.

use cmux_tray_engine::reveal::{AppLink, is_cmux_id, is_host, ssh_link, surface_link};

/// One input: returns, or panics on what the contract above forbids.
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = AppLink::parse(&text);
    let mut parts = text.splitn(3, '\n');
    let (a, b, c) = (parts.next().unwrap_or(""), parts.next(), parts.next().unwrap_or(""));
    if let Some(link) = surface_link(Some(a), b) {
        assert!(is_cmux_id(a), "a surface link from a checked workspace id only: {link}");
        assert!(!link.contains(char::is_whitespace) && !link.contains('?'), "{link}");
    }
    if let Some(link) = ssh_link(a, c) {
        assert!(is_host(a), "an ssh link for a checked host only: {link}");
        assert!(!link.contains(char::is_whitespace), "{link}");
    }
}
