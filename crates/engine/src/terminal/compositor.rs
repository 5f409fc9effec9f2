//! The Wayland compositor's window layer, where EWMH does not reach: the compositors that tell
//! which window has the focus and focus another on request, each over its own IPC, chosen by the
//! session's variables. sway (`SWAYSOCK`: the i3 protocol), Hyprland
//! (`HYPRLAND_INSTANCE_SIGNATURE`: its command socket) and KWin (Plasma on Wayland: a script run
//! over D-Bus). GNOME Shell offers no such public way (docs/terminals.md, per desktop).

use std::path::PathBuf;

use super::{hyprland, kwin, sway};

/// The compositor of this session whose IPC the engine speaks, at its socket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compositor {
    Sway(PathBuf),
    Hyprland(PathBuf),
    /// KWin, over the session bus.
    Kwin,
}

impl Compositor {
    /// This session's, when it runs one of them and its socket is the person's own.
    pub fn of_session() -> Option<Compositor> {
        sway::socket()
            .map(Compositor::Sway)
            .or_else(|| hyprland::socket().map(Compositor::Hyprland))
            .or_else(|| kwin::session().then_some(Compositor::Kwin))
    }

    /// Whether the window holding any of `pids` (a terminal's clients) has the focus.
    pub async fn shows_focused(&self, pids: &[u32]) -> Result<bool, String> {
        match self {
            Compositor::Sway(socket) => sway::shows_focused(socket, pids).await,
            Compositor::Hyprland(socket) => hyprland::shows_focused(socket, pids).await,
            Compositor::Kwin => kwin::shows_focused(pids).await,
        }
    }

    /// Focuses (and so raises) the window that holds `pid`.
    pub async fn focus(&self, pid: u32) -> Result<(), String> {
        match self {
            Compositor::Sway(socket) => sway::focus(socket, pid).await,
            Compositor::Hyprland(socket) => hyprland::focus(socket, pid).await,
            Compositor::Kwin => kwin::focus(pid).await,
        }
    }
}
