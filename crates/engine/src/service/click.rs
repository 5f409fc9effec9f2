//! Click routing: what a banner click, a menu line or a `cmux-tray://open` link opens
//! (docs/notices.md §4). In order: a notice from inside cmux opens its surface's `cmux://` link;
//! a notice from a terminal brings that terminal place forward (tmux pane, kitty window, WezTerm
//! pane, X11 window); a cloud session a terminal reported opens there; a hand-off made here that
//! no tab shows opens a workspace on its host; the rest opens the app's own card or history (an
//! event for the shell), as does a place that is gone, with a note saying so. Each click runs on
//! its own task, so a stuck opener never holds the next one; a notice is marked read only when
//! its reveal worked.

use super::{Engine, EngineError, EngineEvent};
use crate::desktop::DesktopEvent;
use crate::lang::say;
use crate::notice::Item;
use crate::place::Place;
use crate::store::{FollowKind, StoreError, StoredNotice};
use crate::terminal::RevealError;

/// Where one click goes.
enum Route {
    Link(String),
    Terminal(Place),
    Card,
}

impl Route {
    /// Where a notice, or the session it is about, is shown: a cmux surface's link first (inside
    /// cmux, cmux answers it), else the terminal place.
    fn to_shown(workspace: Option<&str>, surface: Option<&str>, place: Option<&Place>) -> Option<Route> {
        match crate::reveal::surface_link(workspace, surface) {
            Some(link) => Some(Route::Link(link)),
            None => place.cloned().map(Route::Terminal),
        }
    }
}

impl Engine {
    /// Opens a followed item (`run:<id>`, `handoff:<id>`) from a menu: as a click on its last
    /// banner would (its tab, a workspace on its host, or its card). Returns false when nothing
    /// was told about it yet; the shell then shows the item itself.
    pub async fn open_item(&self, item: &Item) -> Result<bool, EngineError> {
        let Some(notice) = self.inner.store.latest_told(item)? else { return Ok(false) };
        self.reveal(notice, None).await;
        Ok(true)
    }

    /// Opens a notice as a click on its banner does (a tray menu line, a `cmux-tray://open/…`
    /// link). Returns whether the notice is known.
    pub async fn open_notice(&self, key: &str) -> Result<bool, EngineError> {
        let Some(notice) = self.inner.store.notice(key)? else { return Ok(false) };
        self.reveal(notice, None).await;
        Ok(true)
    }

    /// A hand-off made on this machine whose session no tab shows: a workspace on its host
    /// (docs/notices.md §4). `None` for anything else.
    fn host_link(&self, notice: &StoredNotice) -> Option<String> {
        let Item::Handoff(id) = &notice.item else { return None };
        let host = notice.host.as_deref()?;
        let made_here = self.inner.store.follow(FollowKind::Handoff, id.as_str()).ok().flatten().is_some_and(|f| f.made_here);
        made_here.then(|| crate::reveal::ssh_link(host, &notice.title)).flatten()
    }

    fn route(&self, notice: &StoredNotice) -> Route {
        if let Some(route) = Route::to_shown(notice.workspace_id.as_deref(), notice.surface_id.as_deref(), notice.place.as_ref()) {
            return route;
        }
        // A cloud session a terminal reported (session.attach) is revealed in that terminal.
        let shown = notice.session_id.as_deref().and_then(|s| self.inner.store.session_shown(s).ok().flatten());
        if let Some(route) = shown.and_then(|s| Route::to_shown(s.workspace_id.as_deref(), s.surface_id.as_deref(), s.place.as_ref())) {
            return route;
        }
        match self.host_link(notice) {
            Some(link) => Route::Link(link),
            None => Route::Card,
        }
    }

    /// What a click on this notice opens, in words, for the history's rows (the same route a
    /// click takes).
    pub(super) fn opens(&self, notice: &StoredNotice) -> String {
        let lang = &self.inner.lang;
        match self.route(notice) {
            Route::Link(url) if url.starts_with("cmux://") => say!(lang, "opens-surface"),
            Route::Link(_) => match notice.host.as_deref() {
                Some(host) => say!(lang, "opens-workspace", host = host),
                None => say!(lang, "opens-workspace-unknown"),
            },
            Route::Terminal(place) => say!(lang, "opens-terminal", place = place.describe()),
            Route::Card => match notice.item {
                Item::Run(_) => say!(lang, "opens-run-card"),
                Item::Handoff(_) => say!(lang, "opens-handoff-card"),
                Item::Local(_) | Item::App(_) | Item::Account(_) => say!(lang, "opens-history"),
            },
        }
    }

    /// A click: open what the notice points at, and mark it read only when that worked. What
    /// only the app can show (a card, the history) goes to the shell as an event. `activation`
    /// is the token the notification server sent with the click, passed on to what is opened.
    async fn reveal(&self, notice: StoredNotice, activation: Option<String>) {
        let revealed = match self.route(&notice) {
            Route::Link(url) => match crate::reveal::open_link(&url, activation.as_deref()).await {
                Ok(()) => Some(url),
                Err(e) => {
                    tracing::warn!(key = %notice.key, "the click could not be followed: {e}");
                    return;
                }
            },
            Route::Terminal(place) => match self.inner.terminals.reveal(&place, activation.as_deref()).await {
                Ok(()) => {
                    if let Some(there) = place.remote.as_deref()
                        && self.delivery_settings().remote_tmux
                    {
                        crate::terminal::remote::select(there).await;
                    }
                    Some(place.describe())
                }
                Err(e) => {
                    let note = match &e {
                        RevealError::Gone(why) => say!(self.inner.lang, "reveal-gone", why = why.as_str()),
                        RevealError::Failed(why) => say!(self.inner.lang, "reveal-failed", why = why.as_str()),
                    };
                    tracing::info!(key = %notice.key, place = %place.describe(), "the click opens the card instead: {e}");
                    if let Err(e) = self.inner.store.set_reveal_note(&notice.key, &note) {
                        tracing::warn!("saving why {} opened its card: {e}", notice.key);
                    }
                    let notice = StoredNotice { reveal_note: Some(note), ..notice };
                    let _ = self.inner.events.send(EngineEvent::Clicked { notice: Box::new(notice) });
                    return;
                }
            },
            Route::Card => None,
        };
        match revealed {
            Some(what) => {
                tracing::info!(key = %notice.key, %what, "revealed");
                // Read, so its banner goes (docs/notices.md §3 rule 8): a server that keeps a
                // clicked banner up (dunst, mako) would show it after its session was opened.
                if let Err(e) = self.revealed(&notice.key).await {
                    tracing::warn!("marking {} read: {e}", notice.key);
                }
            }
            None => {
                let _ = self.inner.events.send(EngineEvent::Clicked { notice: Box::new(notice) });
            }
        }
    }

    /// The notice a clicked banner shows. A banner whose mark is still being written is asked
    /// of the deliverer first: a banner that replaced another in place has the same id, and the
    /// store would still answer with the notice it replaced.
    fn clicked_notice(&self, banner_id: u32) -> Result<Option<StoredNotice>, StoreError> {
        let unrecorded = self.inner.deliverer.unrecorded_notice(banner_id);
        if let Some(notice) = unrecorded.map(|key| self.inner.store.notice(&key)).transpose()?.flatten() {
            return Ok(Some(notice));
        }
        self.inner.store.notice_by_banner(banner_id)
    }

    /// Clicks open what their banner told; a notification server's arrival wakes the deliverer,
    /// so what waited for one goes out now.
    pub(super) fn spawn_desktop_events(&self) {
        let Some(events) = self.inner.desktop.events() else { return };
        self.spawn_event_loop(events, |this, event| {
            let click = match event {
                DesktopEvent::ServerAppeared => {
                    tracing::info!("a notification server appeared");
                    this.inner.deliverer.wake();
                    return;
                }
                DesktopEvent::Clicked(click) => click,
            };
            match this.clicked_notice(click.banner_id) {
                // Each click on its own task: a stuck opener never holds the next click.
                Ok(Some(notice)) => {
                    let revealing = this.clone();
                    this.inner.tracker.spawn(async move { revealing.reveal(notice, click.activation_token).await });
                }
                Ok(None) => tracing::debug!(banner = click.banner_id, "a click on a banner that is not ours"),
                Err(e) => tracing::warn!("reading the clicked notice: {e}"),
            }
        });
    }
}
