//! Notices from this machine's terminals (cmux's socket, docs/local-socket.md and seed 000).
//!
//! Every accepted `notify` is a notice. An empty title becomes "Notification"; an empty or
//! whitespace-only subtitle or body is left out, never shown as a gap; the banner body is one
//! line, cut at 200 characters at a word boundary. A post that needs the person (`needs_you`:
//! an agent asks a permission or a question) is urgent, "needs you" in its title, with a live
//! banner of its own beside its pane's other notices (docs/notices.md §3).

use super::{Item, LocalOrigin, LocalStatus, Notice, NoticeStatus};
use crate::lang::{Lang, say};
use crate::text;

/// What a terminal sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalPost {
    pub title: String,
    pub subtitle: String,
    pub body: String,
    pub workspace_id: Option<String>,
    pub surface_id: Option<String>,
    /// The terminal it was sent from, checked (see [`crate::place::Place`]).
    pub place: Option<crate::place::Place>,
    /// The sender waits for the person (a permission prompt, a question): urgent, never
    /// coalesced into a burst (docs/local-socket.md, `needs_you`).
    pub needs_you: bool,
}

/// A fresh cmux id: a UUID in cmux's form (upper case). Version 7, which starts with the time:
/// ids made one after another sort in that order, so the store's two unique indexes on them
/// (the notice's key and its cmux id) grow at one end instead of at a random page each.
pub fn new_cmux_id() -> String {
    uuid::Uuid::now_v7().to_string().to_uppercase()
}

/// The notice for a local post, under a fresh cmux id.
pub fn local_notice(lang: &Lang, post: &LocalPost, cmux_id: &str) -> Notice {
    let title = text::one_line(&post.title).unwrap_or_else(|| "Notification".into());
    let title = if post.needs_you { say!(lang, "local-needs-you", title = title) } else { title };
    let subtitle = text::one_line(&post.subtitle).unwrap_or_default();
    let body = text::one_line(&post.body).unwrap_or_default();
    let shown: Vec<&str> = [subtitle.as_str(), body.as_str()].into_iter().filter(|s| !s.is_empty()).collect();
    let clean = |s: &Option<String>| s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(String::from);
    let (workspace_id, surface_id) = (clean(&post.workspace_id), clean(&post.surface_id));
    let place = post.place.clone().filter(|p| !p.is_empty());
    // One live banner per terminal surface or pane: its next notice replaces the last.
    let shown_in = match (&workspace_id, &surface_id, place.as_ref().and_then(|p| p.key())) {
        (Some(ws), Some(sf), _) => format!("{ws}:{sf}"),
        (Some(ws), None, _) => ws.clone(),
        (None, _, Some(key)) => key,
        _ => cmux_id.to_string(),
    };
    // A question keeps its banner while the pane's next "turn complete" comes: its own item.
    let status = if post.needs_you { LocalStatus::NeedsYou } else { LocalStatus::Posted };
    let shown_in = if post.needs_you { format!("{shown_in}:{status}") } else { shown_in };
    Notice {
        key: Item::Local(cmux_id.into()).key(),
        item: Item::Local(shown_in),
        status: NoticeStatus::Local(status),
        title: text::cut(&title, text::MAX_BODY_CHARS),
        body: text::cut(&shown.join(" — "), text::MAX_BODY_CHARS),
        urgent: post.needs_you,
        local: Some(LocalOrigin { cmux_id: cmux_id.into(), subtitle, body, workspace_id, surface_id, place }),
        session_id: None,
        host: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmux_ids_are_upper_case_uuids_in_the_order_they_were_made() {
        let ids: Vec<String> = (0..1000).map(|_| new_cmux_id()).collect();
        for id in &ids {
            let parsed = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(id, &parsed.to_string().to_uppercase());
        }
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids made one after another sort in that order");
    }

    fn post(title: &str, subtitle: &str, body: &str) -> LocalPost {
        LocalPost { title: title.into(), subtitle: subtitle.into(), body: body.into(), ..Default::default() }
    }

    #[test]
    fn empty_fields_are_left_out_and_an_empty_title_is_notification() {
        let n = local_notice(&Lang::english(), &post("  ", " ", ""), "ID");
        assert_eq!((n.title.as_str(), n.body.as_str()), ("Notification", ""));
        let n = local_notice(&Lang::english(), &post("Build", "", "passed\n\nin 3 s"), "ID");
        assert_eq!(n.body, "passed in 3 s");
        let n = local_notice(&Lang::english(), &post("Build", "my-project", "passed"), "ID");
        assert_eq!(n.body, "my-project — passed");
        assert_eq!(n.local.unwrap().subtitle, "my-project");
    }

    #[test]
    fn the_body_is_cut_at_two_hundred_characters() {
        let long = "word ".repeat(100);
        let n = local_notice(&Lang::english(), &post("t", "", &long), "ID");
        assert!(n.body.chars().count() <= 200 && n.body.ends_with("word…"), "{}", n.body);
    }

    #[test]
    fn one_banner_per_surface() {
        let mut p = post("t", "", "b");
        assert_eq!(local_notice(&Lang::english(), &p, "A").item.to_string(), "local:A");
        p.workspace_id = Some("WS".into());
        p.surface_id = Some("SF".into());
        assert_eq!(local_notice(&Lang::english(), &p, "A").item, local_notice(&Lang::english(), &p, "B").item);
        assert_ne!(local_notice(&Lang::english(), &p, "A").key, local_notice(&Lang::english(), &p, "B").key);
    }

    #[test]
    fn a_post_that_needs_you_is_urgent_with_a_banner_of_its_own() {
        let mut p = post("Claude Code", "parser", "Claude needs your permission to use Bash");
        p.workspace_id = Some("WS".into());
        p.surface_id = Some("SF".into());
        let plain = local_notice(&Lang::english(), &p, "A");
        p.needs_you = true;
        let n = local_notice(&Lang::english(), &p, "B");
        assert_eq!((n.title.as_str(), n.urgent, n.status), ("Claude Code needs you", true, NoticeStatus::Local(LocalStatus::NeedsYou)));
        assert!(!plain.urgent);
        assert_ne!(n.item, plain.item, "the pane's next notice does not take its place");
        assert_eq!(local_notice(&Lang::in_language(crate::lang::Language::German), &p, "C").title, "Claude Code braucht dich");
    }
}
