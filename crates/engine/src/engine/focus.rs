//! The focus rule (docs/notices.md §3 "Focus"): no banner for what the person is looking at. They
//! look at an item in the app's own window, at a cmux surface a terminal reported focused
//! (`surface.focus`), or at the terminal place a notice came from (a tmux pane, a kitty window, a
//! WezTerm pane, an X11 window), asked of the terminal itself at delivery. What cannot be told
//! shows its banner. Also here: what terminals report about the cloud sessions they show.

use super::{Engine, EngineError};
use crate::outbox::{SessionShown, StoredNotice};
use crate::terminal::Place;

impl Engine {
    /// A terminal shows this cloud session (what a hand-off banner's click reveals): a cmux
    /// surface, a terminal place, or both.
    pub fn attach_session(&self, session_id: &str, shown: &SessionShown) -> Result<(), EngineError> {
        self.inner.outbox.attach_session(session_id, shown, self.inner.clock.now_ms())?;
        Ok(())
    }

    /// A terminal reports whether the person is looking at a surface. Looking at it marks what
    /// came from it read, and takes those banners away.
    pub async fn set_focus(&self, workspace_id: &str, surface_id: Option<&str>, focused: bool) -> Result<(), EngineError> {
        let key = (workspace_id.to_string(), surface_id.map(String::from));
        {
            let mut set = self.inner.focused.lock().unwrap_or_else(|p| p.into_inner());
            if focused {
                set.insert(key);
            } else {
                set.remove(&key);
            }
        }
        if focused {
            let keys = self.inner.outbox.mark_read_for_surface(workspace_id, surface_id, self.inner.clock.now_ms())?;
            self.withdraw_banners_of(&keys).await?;
        }
        Ok(())
    }

    /// The app's window shows this item (`run:<id>`, `handoff:<id>`) to the person now, or
    /// nothing (`None`): the same as a focused terminal surface. What was told about the item is
    /// marked read and its banner withdrawn; what comes while it is shown gets no banner.
    pub async fn set_viewing(&self, item: Option<&str>) -> Result<(), EngineError> {
        {
            let mut set = self.inner.viewing.lock().unwrap_or_else(|p| p.into_inner());
            set.clear();
            set.extend(item.map(String::from));
        }
        let Some(item) = item else { return Ok(()) };
        let keys = self.inner.outbox.mark_read_for_item(item, self.inner.clock.now_ms())?;
        if !keys.is_empty() {
            self.withdraw_banners_of(&keys).await?;
        }
        Ok(())
    }

    /// Whether the person is looking at what this notice is about.
    pub(super) async fn is_looking_at(&self, n: &StoredNotice) -> bool {
        if self.inner.viewing.lock().unwrap_or_else(|p| p.into_inner()).contains(&n.item) {
            return true;
        }
        if let Some(ws) = &n.workspace_id {
            return self.is_focused(ws, n.surface_id.as_deref());
        }
        if let Some(place) = &n.place {
            return self.terminal_looked_at(place).await;
        }
        let shown = match n.session_id.as_deref().map(|s| self.inner.outbox.session_shown(s)) {
            Some(Ok(Some(shown))) => shown,
            _ => return false,
        };
        if let Some(ws) = &shown.workspace_id
            && self.is_focused(ws, shown.surface_id.as_deref())
        {
            return true;
        }
        match &shown.place {
            Some(place) => self.terminal_looked_at(place).await,
            None => false,
        }
    }

    /// Asks the terminal; "cannot tell" is "not looking" (the banner shows).
    async fn terminal_looked_at(&self, place: &Place) -> bool {
        let seen = self.inner.terminals.looked_at(place).await;
        tracing::debug!(place = %place.describe(), ?seen, "is the person looking at it");
        seen == Some(true)
    }

    /// Whether a terminal said the person is looking at this surface.
    pub fn is_focused(&self, workspace_id: &str, surface_id: Option<&str>) -> bool {
        let set = self.inner.focused.lock().unwrap_or_else(|p| p.into_inner());
        set.contains(&(workspace_id.to_string(), surface_id.map(String::from))) || set.contains(&(workspace_id.to_string(), None))
    }
}
