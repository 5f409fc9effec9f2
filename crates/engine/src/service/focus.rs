//! The focus rule (docs/notices.md §3 "Focus"): no banner for what the person is looking at. They
//! look at an item in the app's own window, at a cmux surface a terminal reported focused
//! (`surface.focus`), or at the terminal place a notice came from (a tmux pane, a kitty window, a
//! WezTerm pane, an X11 window), asked of the terminal itself at delivery. What cannot be told
//! shows its banner. Also here: what terminals report about the cloud sessions they show.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Engine, EngineError};
use crate::lock::Locked;
use crate::notice::Item;
use crate::place::Place;
use crate::store::{SessionShown, Store, StoredNotice};
use crate::terminal::Terminals;

/// How long one delivery pass waits for terminals to say what the person looks at. A terminal
/// that takes longer (a stalled tmux server, an X server that does not answer) cannot tell, and
/// the banner shows: a stalled pane never holds the cloud's banners back.
pub(super) const FOCUS_BUDGET: Duration = Duration::from_millis(500);

/// What tells whether the person looks at a notice.
enum Question {
    Known(bool),
    Place(Box<Place>),
}

/// What the person is looking at, as terminals and the app's own windows report it, and the
/// terminals to ask. Reported by the socket's and the app's calls and read by the deliverer's
/// pass, so each set is behind its own lock.
pub(super) struct Focus {
    /// Terminal surfaces the person is looking at, as terminals report them (`surface.focus`).
    focused: Mutex<HashSet<(String, Option<String>)>>,
    /// Items the app's own window shows right now.
    viewing: Mutex<HashSet<Item>>,
    terminals: Arc<dyn Terminals>,
}

impl Focus {
    pub(super) fn new(terminals: Arc<dyn Terminals>) -> Self {
        Focus { focused: Default::default(), viewing: Default::default(), terminals }
    }

    /// A terminal says whether the person is looking at a surface.
    fn set_surface(&self, workspace_id: &str, surface_id: Option<&str>, focused: bool) {
        let key = (workspace_id.to_string(), surface_id.map(String::from));
        let mut set = self.focused.locked();
        if focused {
            set.insert(key);
        } else {
            set.remove(&key);
        }
    }

    /// The app's window shows this item now, or nothing.
    fn set_viewing(&self, item: Option<&Item>) {
        let mut set = self.viewing.locked();
        set.clear();
        set.extend(item.cloned());
    }

    /// Whether a terminal said the person is looking at this surface.
    pub(super) fn is_focused(&self, workspace_id: &str, surface_id: Option<&str>) -> bool {
        let set = self.focused.locked();
        set.contains(&(workspace_id.to_string(), surface_id.map(String::from))) || set.contains(&(workspace_id.to_string(), None))
    }

    /// Whether the person is looking at what each of these notices is about, in one pass: each
    /// terminal place is asked once however many notices came from it, all places at once, and
    /// none longer than [`FOCUS_BUDGET`] (what has not answered by then cannot be told: its
    /// banner shows). `remote_tmux`: the person allows asking a pane on another machine.
    pub(super) async fn looking_at_all(&self, notices: &[&StoredNotice], store: &Store, remote_tmux: bool) -> Vec<bool> {
        let questions: Vec<Question> = notices.iter().map(|n| self.question(n, store, remote_tmux)).collect();
        let mut places: Vec<&Box<Place>> = Vec::new();
        for q in &questions {
            if let Question::Place(p) = q
                && !places.contains(&p)
            {
                places.push(p);
            }
        }
        let asked = places.iter().map(|place| async move {
            // A remote pane is looked at when the terminal running its ssh is, and the pane there.
            let both = async {
                match place.remote.as_deref() {
                    Some(there) if there.tmux.is_some() => {
                        let (here, there) = tokio::join!(self.terminals.looked_at(place), crate::terminal::remote::looked_at(there));
                        Some(here? && there?)
                    }
                    _ => self.terminals.looked_at(place).await,
                }
            };
            let seen = tokio::time::timeout(FOCUS_BUDGET, both).await.ok().flatten();
            tracing::debug!(place = %place.describe(), ?seen, "is the person looking at it");
            seen == Some(true)
        });
        let answers = futures_util::future::join_all(asked).await;
        questions
            .iter()
            .map(|q| match q {
                Question::Known(seen) => *seen,
                Question::Place(p) => places.iter().position(|asked| *asked == p).is_some_and(|i| answers[i]),
            })
            .collect()
    }

    /// What tells whether the person looks at a notice: known here, or a terminal to ask.
    fn question(&self, n: &StoredNotice, store: &Store, remote_tmux: bool) -> Question {
        if self.viewing.locked().contains(&n.item) {
            return Question::Known(true);
        }
        if let Some(ws) = &n.workspace_id {
            return Question::Known(self.is_focused(ws, n.surface_id.as_deref()));
        }
        // A pane on another machine: asked there over the ssh's own master when the person
        // allows it; otherwise it cannot be told from here, and its banner shows
        // (docs/terminals.md, "Agents on another machine").
        if let Some(place) = &n.place
            && place.remote.as_ref().is_some_and(|r| r.tmux.is_some())
            && !remote_tmux
        {
            return Question::Known(false);
        }
        if let Some(place) = &n.place {
            return Question::Place(Box::new(place.clone()));
        }
        let shown = match n.session_id.as_deref().map(|s| store.session_shown(s)) {
            Some(Ok(Some(shown))) => shown,
            _ => return Question::Known(false),
        };
        if let Some(ws) = &shown.workspace_id
            && self.is_focused(ws, shown.surface_id.as_deref())
        {
            return Question::Known(true);
        }
        match shown.place {
            Some(place) => Question::Place(Box::new(place)),
            None => Question::Known(false),
        }
    }
}

impl Engine {
    /// A terminal shows this cloud session (what a hand-off banner's click reveals): a cmux
    /// surface, a terminal place, or both.
    pub fn attach_session(&self, session_id: &str, shown: &SessionShown) -> Result<(), EngineError> {
        self.inner.store.attach_session(session_id, shown, self.inner.clock.now_ms())?;
        Ok(())
    }

    /// A terminal reports whether the person is looking at a surface. Looking at it marks what
    /// came from it read, and takes those banners away.
    pub async fn set_focus(&self, workspace_id: &str, surface_id: Option<&str>, focused: bool) -> Result<(), EngineError> {
        self.inner.focus.set_surface(workspace_id, surface_id, focused);
        if focused {
            let keys = self.inner.store.mark_read_for_surface(workspace_id, surface_id, self.inner.clock.now_ms())?;
            self.withdraw_banners_of(&keys).await?;
        }
        Ok(())
    }

    /// The app's window shows this item (`run:<id>`, `handoff:<id>`) to the person now, or
    /// nothing (`None`): the same as a focused terminal surface. What was told about the item is
    /// marked read and its banner withdrawn; what comes while it is shown gets no banner.
    pub async fn set_viewing(&self, item: Option<&Item>) -> Result<(), EngineError> {
        self.inner.focus.set_viewing(item);
        let Some(item) = item else { return Ok(()) };
        let keys = self.inner.store.mark_read_for_item(item, self.inner.clock.now_ms())?;
        if !keys.is_empty() {
            self.withdraw_banners_of(&keys).await?;
        }
        Ok(())
    }

    /// Whether a terminal said the person is looking at this surface.
    pub fn is_focused(&self, workspace_id: &str, surface_id: Option<&str>) -> bool {
        self.inner.focus.is_focused(workspace_id, surface_id)
    }
}
