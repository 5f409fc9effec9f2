//! Where a notice came from: a tmux pane, a kitty window, a WezTerm pane, an X11 window
//! (docs/notices.md §4, "Terminals"). Read by `notify`, `wrap` and `hook` from their own
//! environment and process tree, sent over the socket, checked again by the engine, stored with
//! the notice. Every field is checked for its exact shape: a place names things, it never carries
//! text for a program to interpret.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The place a notice came from; each part is what one terminal layer knows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Place {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux: Option<TmuxPane>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kitty: Option<KittyWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wezterm: Option<WeztermPane>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x11: Option<X11Window>,
    /// For a notice forwarded over ssh from another machine (`local::forwarded`): where it came
    /// from there. Shown, never obeyed (its tmux socket is a path on that machine); set by the
    /// engine alone, never by a client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<Box<RemotePlace>>,
}

/// Where on another machine a forwarded notice came from: the host, and its tmux pane there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemotePlace {
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux: Option<TmuxPane>,
    /// The ssh connection's ControlMaster socket here (`cmux-tray ssh` makes one): the way to
    /// that machine without a new connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<PathBuf>,
}

/// A tmux pane: its server's socket and its ids (`$1`, `@2`, `%3`). The pane id is what counts
/// (a pane keeps it when moved); the session and window are as they were when the notice came.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TmuxPane {
    pub socket: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    pub pane: String,
}

/// A kitty window, reached through kitty's remote control socket (`unix:/path` or `unix:@name`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KittyWindow {
    pub socket: String,
    pub window: u64,
}

/// A WezTerm pane, reached through `wezterm cli` (its mux socket, when the pane named one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeztermPane {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<PathBuf>,
    pub pane: u64,
}

/// A terminal's top-level X11 window on a local display (`:0`, `:1.0`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct X11Window {
    pub display: String,
    pub window: u32,
}

impl Place {
    /// Nothing known here: no terminal layer of this machine said where.
    pub fn is_empty(&self) -> bool {
        self.tmux.is_none() && self.kitty.is_none() && self.wezterm.is_none() && self.x11.is_none()
    }

    /// Reads a place sent by a client (JSON), checking every field; the error names the field.
    pub fn from_json(value: &serde_json::Value) -> Result<Place, String> {
        let place: Place = serde_json::from_value(value.clone()).map_err(|e| format!("place: {e}"))?;
        if place.remote.is_some() {
            return Err("place.remote: set by the tray for a connection forwarded over ssh, never by a client".into());
        }
        place.check()?;
        Ok(place)
    }

    /// Every field has its exact shape, or the error names the field and what it should be.
    pub fn check(&self) -> Result<(), String> {
        if let Some(t) = &self.tmux {
            check_path("place.tmux.socket", &t.socket)?;
            check_id("place.tmux.pane", &t.pane, '%')?;
            if let Some(s) = &t.session {
                check_id("place.tmux.session", s, '$')?;
            }
            if let Some(w) = &t.window {
                check_id("place.tmux.window", w, '@')?;
            }
        }
        if let Some(k) = &self.kitty {
            check_kitty_socket(&k.socket)?;
        }
        if let Some(w) = &self.wezterm
            && let Some(s) = &w.socket
        {
            check_path("place.wezterm.socket", s)?;
        }
        if let Some(x) = &self.x11 {
            if !is_local_display(&x.display) {
                return Err(format!("place.x11.display {:?}: expected a local display such as \":0\"", x.display));
            }
            if x.window == 0 {
                return Err("place.x11.window: 0 is no window".into());
            }
        }
        Ok(())
    }

    /// What "one live banner per place" keys on: the innermost layer that names a place.
    pub fn key(&self) -> Option<String> {
        if let Some(t) = &self.tmux {
            return Some(format!("tmux:{}:{}", t.socket.display(), t.pane));
        }
        if let Some(k) = &self.kitty {
            return Some(format!("kitty:{}:{}", k.socket, k.window));
        }
        if let Some(w) = &self.wezterm {
            let socket = w.socket.as_ref().map(|s| s.display().to_string()).unwrap_or_default();
            return Some(format!("wezterm:{socket}:{}", w.pane));
        }
        self.x11.as_ref().map(|x| format!("x11:{}:{}", x.display, x.window))
    }

    /// In words, for a log line or a card ("tmux pane %3", "kitty window 2").
    pub fn describe(&self) -> String {
        if let Some(t) = &self.tmux {
            return format!("tmux pane {}", t.pane);
        }
        if let Some(k) = &self.kitty {
            return format!("kitty window {}", k.window);
        }
        if let Some(w) = &self.wezterm {
            return format!("WezTerm pane {}", w.pane);
        }
        match &self.x11 {
            Some(x) => format!("terminal window 0x{:x}", x.window),
            None => "no terminal".into(),
        }
    }
}

/// A terminal's socket is a Unix path (tmux, kitty and WezTerm are Unix programs), whatever
/// platform reads the place.
fn check_path(field: &str, p: &Path) -> Result<(), String> {
    let s = p.to_str().ok_or_else(|| format!("{field}: not UTF-8"))?;
    if !s.starts_with('/') || s.len() > 4096 || s.chars().any(char::is_control) {
        return Err(format!("{field} {s:?}: expected an absolute path"));
    }
    Ok(())
}

/// A tmux id: its sigil, then digits (`%12`).
fn check_id(field: &str, id: &str, sigil: char) -> Result<(), String> {
    let digits = id.strip_prefix(sigil).unwrap_or("");
    if digits.is_empty() || digits.len() > 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{field} {id:?}: expected {sigil} and a number, such as {sigil}1"));
    }
    Ok(())
}

fn check_kitty_socket(s: &str) -> Result<(), String> {
    let ok = match s.strip_prefix("unix:") {
        Some(rest) if rest.starts_with('@') => rest.len() > 1 && rest.len() <= 107 && !rest.chars().any(char::is_control),
        Some(rest) => check_path("", Path::new(rest)).is_ok(),
        None => false,
    };
    if ok { Ok(()) } else { Err(format!("place.kitty.socket {s:?}: expected unix:/path or unix:@name")) }
}

/// `:N` or `:N.M`: a display on this machine (no host, so no TCP display of another machine).
pub fn is_local_display(d: &str) -> bool {
    let Some(rest) = d.strip_prefix(':') else { return false };
    let (n, screen) = rest.split_once('.').map_or((rest, None), |(n, s)| (n, Some(s)));
    let number = |s: &str| !s.is_empty() && s.len() <= 5 && s.bytes().all(|b| b.is_ascii_digit());
    number(n) && screen.is_none_or(number)
}

/// What the caller's environment says about its terminal layers (no program is run and nothing
/// is trusted: a value of the wrong shape is left out). The X11 window, and tmux's session and
/// window, need a look outside the environment; `terminal::of_caller` adds them.
pub fn from_env(env: &BTreeMap<String, String>) -> Place {
    let get = |k: &str| env.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let mut place = Place::default();
    // TMUX is "<socket>,<server pid>,<session index>"; the socket path may itself hold commas.
    if let (Some(tmux), Some(pane)) = (get("TMUX"), get("TMUX_PANE")) {
        let socket = tmux.rsplitn(3, ',').nth(2).map(PathBuf::from);
        if let Some(socket) = socket {
            let t = TmuxPane { socket, session: None, window: None, pane: pane.into() };
            if check_path("", &t.socket).is_ok() && check_id("", &t.pane, '%').is_ok() {
                place.tmux = Some(t);
            }
        }
    }
    // Inside tmux, a terminal's variables are those of whichever terminal started the tmux
    // server, not of the one showing this pane: tmux alone says where the pane is.
    if place.tmux.is_some() {
        return place;
    }
    if let (Some(socket), Some(id)) = (get("KITTY_LISTEN_ON"), get("KITTY_WINDOW_ID").and_then(|v| v.parse::<u64>().ok()))
        && check_kitty_socket(socket).is_ok()
    {
        place.kitty = Some(KittyWindow { socket: socket.into(), window: id });
    }
    if let Some(pane) = get("WEZTERM_PANE").and_then(|v| v.parse::<u64>().ok()) {
        let socket = get("WEZTERM_UNIX_SOCKET").map(PathBuf::from).filter(|p| check_path("", p).is_ok());
        place.wezterm = Some(WeztermPane { socket, pane });
    }
    place
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_client_cannot_say_its_notice_came_from_another_machine() {
        let err = Place::from_json(&serde_json::json!({"remote": {"host": "devbox"}})).unwrap_err();
        assert!(err.starts_with("place.remote:"), "{err}");
    }

    #[test]
    fn the_environment_of_each_terminal_is_read_and_bad_shapes_are_left_out() {
        let p = from_env(&env(&[("TMUX", "/tmp/tmux-1000/my,odd,name,4242,0"), ("TMUX_PANE", "%7")]));
        assert_eq!(
            p.tmux.unwrap(),
            TmuxPane { socket: "/tmp/tmux-1000/my,odd,name".into(), session: None, window: None, pane: "%7".into() }
        );
        let p = from_env(&env(&[("KITTY_LISTEN_ON", "unix:/tmp/kitty-9"), ("KITTY_WINDOW_ID", "2")]));
        assert_eq!(p.kitty.unwrap(), KittyWindow { socket: "unix:/tmp/kitty-9".into(), window: 2 });
        let p = from_env(&env(&[("WEZTERM_PANE", "3"), ("WEZTERM_UNIX_SOCKET", "/run/user/1000/wezterm/gui-sock-1")]));
        assert_eq!(p.wezterm.unwrap().pane, 3);
        // tmux started from kitty: kitty's variables are the server's, stale for this pane.
        let p =
            from_env(&env(&[("TMUX", "/tmp/t,1,0"), ("TMUX_PANE", "%2"), ("KITTY_LISTEN_ON", "unix:/tmp/k"), ("KITTY_WINDOW_ID", "1")]));
        assert!(p.tmux.is_some() && p.kitty.is_none());
        for bad in [
            env(&[("TMUX", "relative/sock,1,0"), ("TMUX_PANE", "%1")]),
            env(&[("TMUX", "/tmp/s,1,0"), ("TMUX_PANE", "%1; rm -rf ~")]),
            env(&[("TMUX", "/tmp/s"), ("TMUX_PANE", "%1")]),
            env(&[("KITTY_LISTEN_ON", "tcp:evil.example:1"), ("KITTY_WINDOW_ID", "2")]),
            env(&[("KITTY_LISTEN_ON", "unix:/tmp/k"), ("KITTY_WINDOW_ID", "two")]),
            env(&[("WEZTERM_PANE", "-1")]),
        ] {
            assert!(from_env(&bad).is_empty(), "{bad:?}");
        }
    }

    #[test]
    fn a_place_from_a_client_is_checked_field_by_field() {
        let good = serde_json::json!({"tmux": {"socket": "/tmp/t", "session": "$1", "window": "@2", "pane": "%3"},
                                      "x11": {"display": ":1", "window": 4194317}});
        assert!(Place::from_json(&good).is_ok());
        for (bad, says) in [
            (serde_json::json!({"tmux": {"socket": "/tmp/t", "pane": "3"}}), "place.tmux.pane"),
            (serde_json::json!({"tmux": {"socket": "/tmp/t", "window": "@x", "pane": "%3"}}), "place.tmux.window"),
            (serde_json::json!({"x11": {"display": "evil.example:0", "window": 1}}), "place.x11.display"),
            (serde_json::json!({"x11": {"display": ":0", "window": 0}}), "place.x11.window"),
            (serde_json::json!({"kitty": {"socket": "unix:rel", "window": 1}}), "place.kitty.socket"),
            (serde_json::json!({"shell": "rm -rf ~"}), "unknown field"),
            (serde_json::json!({"wezterm": {"pane": -1}}), "place"),
        ] {
            let e = Place::from_json(&bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn local_displays_only() {
        for ok in [":0", ":12", ":1.0"] {
            assert!(is_local_display(ok), "{ok}");
        }
        for bad in ["", "0", "host:0", ":", ":a", ":1.", "localhost:10.0"] {
            assert!(!is_local_display(bad), "{bad}");
        }
    }
}
