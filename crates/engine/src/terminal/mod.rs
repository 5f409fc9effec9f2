//! Terminals on this machine (docs/notices.md §4 "Terminals"): where a notice came from, bringing
//! that place forward on a click, and whether the person is looking at it.
//!
//! One seam, [`Terminals`], with the system's own implementation ([`System`]) built from one
//! adapter per terminal layer, innermost first: `tmux` (a pane in a server), `kitty` (a window,
//! over its remote control), `wezterm` (a pane, over `wezterm cli`), then `x11` (the terminal's
//! top-level window, through the window manager), or on Wayland `compositor`: sway's IPC
//! (`sway`) or Hyprland's (`hyprland`).
//! `crate::place` is the checked record of where, and `process` what the adapters share (a
//! process's ancestors, running a terminal's own tool), `trust` whose servers the tools may speak
//! to and `confine` what the tools may do.

pub mod compositor;
mod confine;
pub mod hyprland;
pub mod kitty;
pub mod kwin;
pub mod process;
pub mod remote;
pub mod sway;
pub mod tmux;
pub mod trust;
pub mod wezterm;
pub mod x11;

use std::collections::BTreeMap;

use crate::place::{self, Place};
use compositor::Compositor;

use crate::lock::Locked;
use futures_util::future::BoxFuture;

/// Why a click could not bring the place forward.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RevealError {
    /// The place is no more (pane closed, tmux server ended, window closed): the click opens the
    /// notice's card instead, which says this.
    #[error("{0}")]
    Gone(String),
    /// The place may be there but could not be brought forward (a tool missing or failing).
    #[error("{0}")]
    Failed(String),
}

/// What an inner layer did: the process whose terminal window is to be raised next (a tmux or
/// WezTerm client), and anything worth a log line.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub raise_pid: Option<u32>,
    pub note: Option<String>,
}

/// The seam between the engine and the terminals.
pub trait Terminals: Send + Sync {
    /// Brings the place forward, innermost layer first, then its window. `activation` is the
    /// token the notification server sent with the click (Wayland), passed on to what runs.
    fn reveal<'a>(&'a self, place: &'a Place, activation: Option<&'a str>) -> BoxFuture<'a, Result<(), RevealError>>;
    /// `Some(true)` when the person is looking at the place now; `None` when it cannot be told.
    fn looked_at<'a>(&'a self, place: &'a Place) -> BoxFuture<'a, Option<bool>>;
}

/// This machine's terminals, through their own tools and the X11 window manager.
#[derive(Clone, Debug, Default)]
pub struct System;

impl Terminals for System {
    fn reveal<'a>(&'a self, place: &'a Place, activation: Option<&'a str>) -> BoxFuture<'a, Result<(), RevealError>> {
        Box::pin(reveal(place, activation))
    }

    fn looked_at<'a>(&'a self, place: &'a Place) -> BoxFuture<'a, Option<bool>> {
        Box::pin(looked_at(place))
    }
}

/// The variables a program started for a click reads its activation token from: Wayland's
/// `XDG_ACTIVATION_TOKEN`, and in an X11 session (no Wayland display) also `DESKTOP_STARTUP_ID`,
/// where the server's token is an X11 startup id (Plasma on X11) and X11 programs look for it.
pub fn activation_env(activation: Option<&str>) -> Vec<(&'static str, &str)> {
    let x11 = std::env::var_os("WAYLAND_DISPLAY").is_none_or(|d| d.is_empty());
    activation_vars(activation, x11)
}

fn activation_vars(activation: Option<&str>, x11: bool) -> Vec<(&'static str, &str)> {
    let Some(token) = activation else { return Vec::new() };
    let mut env = vec![("XDG_ACTIVATION_TOKEN", token)];
    if x11 {
        env.push(("DESKTOP_STARTUP_ID", token));
    }
    env
}

async fn reveal(place: &Place, activation: Option<&str>) -> Result<(), RevealError> {
    let env = activation_env(activation);
    let inner = if let Some(t) = &place.tmux {
        Some(tmux::reveal(t, &env).await?)
    } else if let Some(k) = &place.kitty {
        Some(kitty::reveal(k, &env).await?)
    } else if let Some(w) = &place.wezterm {
        Some(wezterm::reveal(w, &env).await?)
    } else {
        None
    };
    if let Some(note) = inner.as_ref().and_then(|o| o.note.as_deref()) {
        tracing::info!("{note}");
    }
    // Under sway, Hyprland or KWin (Wayland, their Xwayland windows too) the compositor focuses the
    // switched client's window.
    if let (Some(pid), Some(compositor)) = (inner.as_ref().and_then(|o| o.raise_pid), Compositor::of_session()) {
        if let Err(e) = compositor.focus(pid).await {
            tracing::info!("the pane is current; its window was not raised: {e}");
        }
        return Ok(());
    }
    // The terminal's window: the one of the client an inner layer switched, else the one the
    // notice named.
    let window = match (inner.as_ref().and_then(|o| o.raise_pid), x11::display_for(place.x11.as_ref())) {
        (Some(pid), Some(display)) => x11::window_of_process(display, None, process::ancestors(pid)).await.ok().flatten(),
        _ => place.x11.clone(),
    };
    let Some(window) = window else {
        return match inner {
            Some(_) => Ok(()), // the pane is current; no window to raise (a console, Wayland)
            None => Err(RevealError::Failed("the notice names no terminal to bring forward".into())),
        };
    };
    match x11::activate(window).await {
        Ok(()) => Ok(()),
        Err(x11::X11Error::Gone(w)) if inner.is_none() => Err(RevealError::Gone(format!("the terminal window 0x{w:x} is closed"))),
        Err(e) if inner.is_none() => Err(RevealError::Failed(e.to_string())),
        Err(e) => {
            tracing::info!("the pane is current; its window was not raised: {e}");
            Ok(())
        }
    }
}

async fn looked_at(place: &Place) -> Option<bool> {
    let clients = if let Some(t) = &place.tmux {
        tmux::clients_showing(t).await.ok()?
    } else if let Some(k) = &place.kitty {
        return kitty::looked_at(k).await;
    } else if let Some(w) = &place.wezterm {
        wezterm::clients_showing(w).await?
    } else {
        let x = place.x11.as_ref()?;
        return Some(x11::active_window(x.display.clone()).await.ok()?? == x.window);
    };
    if clients.is_empty() {
        return Some(false);
    }
    // A client shows the pane: it is looked at when that client's terminal window has the focus.
    if let Some(compositor) = Compositor::of_session() {
        return compositor.shows_focused(&clients).await.map_err(|e| tracing::info!("whether the pane's window has the focus: {e}")).ok();
    }
    let display = x11::display_for(place.x11.as_ref())?;
    let active = x11::active_window(display.clone()).await.ok()??;
    for pid in clients {
        if let Ok(Some(w)) = x11::window_of_process(display.clone(), None, process::ancestors(pid)).await
            && w.window == active
        {
            return Some(true);
        }
    }
    // No shown client's window is known to be the focused one; whether one is unknown (a console,
    // ssh) cannot be told apart here, so the banner shows.
    Some(false)
}

/// Where the calling process runs: read from its environment and process tree when a notice is
/// sent (`notify`, `wrap`, `hook`). `None` when no terminal layer is known.
pub async fn of_caller(env: &BTreeMap<String, String>, pid: u32) -> Option<Place> {
    let mut place = place::from_env(env);
    if let Some(t) = &mut place.tmux
        && let Ok(Some((session, window))) = tmux::ids_of(t).await
    {
        t.session = Some(session);
        t.window = Some(window);
    }
    // Inside tmux the environment's WINDOWID and ancestors are those of whichever terminal started
    // the tmux server; the terminal that shows the pane is found from its client at the click.
    if place.tmux.is_none()
        && let Some(display) = env.get("DISPLAY").filter(|d| place::is_local_display(d))
    {
        let windowid = env.get("WINDOWID").and_then(|w| w.parse::<u32>().ok()).filter(|w| *w != 0);
        place.x11 = x11::window_of_process(display.clone(), windowid, process::ancestors(pid)).await.ok().flatten();
    }
    (!place.is_empty()).then_some(place)
}

/// A stand-in for the engine's own tests: answers what it is told to, and records each reveal.
#[derive(Debug, Default)]
pub struct Scripted {
    state: std::sync::Mutex<ScriptedState>,
}

#[derive(Debug, Default)]
struct ScriptedState {
    looked_at: Option<bool>,
    /// How long `looked_at` takes to answer (a stalled terminal), on tokio's clock.
    looked_at_delay: std::time::Duration,
    asked: usize,
    reveal: Option<RevealError>,
    revealed: Vec<(Place, Option<String>)>,
}

impl Scripted {
    fn state(&self) -> std::sync::MutexGuard<'_, ScriptedState> {
        self.state.locked()
    }
    /// What `looked_at` answers from now on (`None`: cannot tell).
    pub fn set_looked_at(&self, answer: Option<bool>) {
        self.state().looked_at = answer;
    }
    /// How long `looked_at` takes from now on (a terminal whose server stalls).
    pub fn set_looked_at_delay(&self, delay: std::time::Duration) {
        self.state().looked_at_delay = delay;
    }
    /// How many times a terminal was asked whether the person looks at a place.
    pub fn asked(&self) -> usize {
        self.state().asked
    }
    /// What `reveal` fails with from now on (`None`: it works).
    pub fn set_reveal_error(&self, error: Option<RevealError>) {
        self.state().reveal = error;
    }
    /// Every place a click brought forward (or tried to), with its activation token.
    pub fn revealed(&self) -> Vec<(Place, Option<String>)> {
        self.state().revealed.clone()
    }
}

impl Terminals for Scripted {
    fn reveal<'a>(&'a self, place: &'a Place, activation: Option<&'a str>) -> BoxFuture<'a, Result<(), RevealError>> {
        let mut state = self.state();
        state.revealed.push((place.clone(), activation.map(String::from)));
        let answer = state.reveal.clone().map_or(Ok(()), Err);
        Box::pin(async move { answer })
    }

    fn looked_at<'a>(&'a self, _place: &'a Place) -> BoxFuture<'a, Option<bool>> {
        let (answer, delay) = {
            let mut state = self.state();
            state.asked += 1;
            (state.looked_at, state.looked_at_delay)
        };
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/notices.md §3: the token as `XDG_ACTIVATION_TOKEN`, and in an X11 session also as
    /// `DESKTOP_STARTUP_ID`.
    #[test]
    fn an_activation_token_is_handed_on_as_the_session_reads_it() {
        assert_eq!(activation_vars(None, true), []);
        assert_eq!(activation_vars(Some("t"), false), [("XDG_ACTIVATION_TOKEN", "t")]);
        assert_eq!(
            activation_vars(Some("h;1;2_TIME3"), true),
            [("XDG_ACTIVATION_TOKEN", "h;1;2_TIME3"), ("DESKTOP_STARTUP_ID", "h;1;2_TIME3")]
        );
    }
}
