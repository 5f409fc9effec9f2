//! A terminal's X11 window, through the window manager's EWMH hints (x11rb, pure Rust): which
//! top-level window a process runs under (`_NET_CLIENT_LIST`, `_NET_WM_PID`), which window is
//! active (`_NET_ACTIVE_WINDOW`), and asking the window manager to activate one. Without a window
//! manager that keeps these hints there is no answer, and the callers say "cannot tell".
//!
//! x11rb is blocking; every call here runs on a blocking thread, with a fresh connection (a
//! click or a delivery decision is rare, and a held connection would wake the process).

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{self, AtomEnum, ClientMessageEvent, ConnectionExt, EventMask, Window};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use super::place::{X11Window, is_local_display};

#[derive(Debug, thiserror::Error)]
pub enum X11Error {
    #[error("no X display to ask")]
    NoDisplay,
    #[error("the X display {0} cannot be reached: {1}")]
    Connect(String, String),
    #[error("the X display {0} did not answer: {1}")]
    Request(String, String),
    #[error("the window manager on {0} keeps no EWMH window list")]
    NoWindowManager(String),
    #[error("window 0x{0:x} is gone")]
    Gone(u32),
}

/// The display to ask: the place's, else this process's own `DISPLAY` when it is local.
pub fn display_for(place: Option<&X11Window>) -> Option<String> {
    place.map(|x| x.display.clone()).or_else(|| std::env::var("DISPLAY").ok().filter(|d| is_local_display(d)))
}

struct Desk {
    conn: RustConnection,
    root: Window,
    display: String,
}

impl Desk {
    fn open(display: &str) -> Result<Desk, X11Error> {
        let (conn, screen) = RustConnection::connect(Some(display)).map_err(|e| X11Error::Connect(display.into(), e.to_string()))?;
        let root = conn.setup().roots[screen].root;
        Ok(Desk { conn, root, display: display.into() })
    }

    fn err(&self, e: impl std::fmt::Display) -> X11Error {
        X11Error::Request(self.display.clone(), e.to_string())
    }

    fn atom(&self, name: &str) -> Result<xproto::Atom, X11Error> {
        Ok(self.conn.intern_atom(false, name.as_bytes()).map_err(|e| self.err(e))?.reply().map_err(|e| self.err(e))?.atom)
    }

    /// A property of 32-bit values (windows, cardinals); empty when absent.
    fn values(&self, window: Window, name: &str, kind: AtomEnum) -> Result<Vec<u32>, X11Error> {
        let atom = self.atom(name)?;
        let reply =
            self.conn.get_property(false, window, atom, kind, 0, 65536).map_err(|e| self.err(e))?.reply().map_err(|e| self.err(e))?;
        Ok(reply.value32().map(|v| v.collect()).unwrap_or_default())
    }

    fn clients(&self) -> Result<Vec<Window>, X11Error> {
        let list = self.values(self.root, "_NET_CLIENT_LIST", AtomEnum::WINDOW)?;
        if list.is_empty() {
            return Err(X11Error::NoWindowManager(self.display.clone()));
        }
        Ok(list)
    }

    fn active(&self) -> Result<Option<Window>, X11Error> {
        Ok(self.values(self.root, "_NET_ACTIVE_WINDOW", AtomEnum::WINDOW)?.first().copied().filter(|w| *w != 0))
    }

    /// The managed top-level window that is `window` or holds it (xterm's `WINDOWID` names an
    /// inner window; the window manager knows the top-level one).
    fn top_level(&self, window: Window) -> Result<Option<Window>, X11Error> {
        let clients = self.clients()?;
        let mut current = window;
        for _ in 0..32 {
            if clients.contains(&current) {
                return Ok(Some(current));
            }
            let Ok(cookie) = self.conn.query_tree(current) else { return Ok(None) };
            let Ok(tree) = cookie.reply() else { return Ok(None) };
            if tree.parent == self.root || tree.parent == 0 {
                return Ok(None);
            }
            current = tree.parent;
        }
        Ok(None)
    }

    /// The managed window whose `_NET_WM_PID` is the nearest of these processes.
    fn window_of(&self, pids: &[u32]) -> Result<Option<Window>, X11Error> {
        let mut owners = Vec::new();
        for w in self.clients()? {
            if let Some(pid) = self.values(w, "_NET_WM_PID", AtomEnum::CARDINAL)?.first() {
                owners.push((*pid, w));
            }
        }
        Ok(pids.iter().find_map(|p| owners.iter().find(|(pid, _)| pid == p).map(|(_, w)| *w)))
    }

    fn exists(&self, window: Window) -> bool {
        self.conn.get_window_attributes(window).ok().and_then(|c| c.reply().ok()).is_some()
    }

    /// Asks the window manager to activate `window` (EWMH: a client message to the root).
    /// Source 2 ("a pager"): a request on the person's behalf, which window managers honour
    /// where they would refuse an application stealing focus.
    fn activate(&self, window: Window) -> Result<(), X11Error> {
        if !self.exists(window) {
            return Err(X11Error::Gone(window));
        }
        let atom = self.atom("_NET_ACTIVE_WINDOW")?;
        let current = self.active()?.unwrap_or(0);
        let event = ClientMessageEvent::new(32, window, atom, [2, x11rb::CURRENT_TIME, current, 0, 0]);
        let mask = EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY;
        self.conn.send_event(false, self.root, mask, event).map_err(|e| self.err(e))?;
        self.conn.sync().map_err(|e| self.err(e))?;
        Ok(())
    }
}

/// No question to the X server waits longer than this: a hung server is no answer ("cannot tell").
const X11_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T, X11Error> + Send + 'static) -> Result<T, X11Error> {
    match tokio::time::timeout(X11_TIMEOUT, tokio::task::spawn_blocking(f)).await {
        Ok(done) => done.unwrap_or_else(|e| Err(X11Error::Request("?".into(), e.to_string()))),
        Err(_) => Err(X11Error::Request("?".into(), format!("no answer within {X11_TIMEOUT:?}"))),
    }
}

/// The top-level terminal window for a process: `WINDOWID` when it names a managed window (or
/// one inside it), else the window of its nearest ancestor.
pub async fn window_of_process(display: String, windowid: Option<u32>, pids: Vec<u32>) -> Result<Option<X11Window>, X11Error> {
    blocking(move || {
        let desk = Desk::open(&display)?;
        let by_id = match windowid {
            Some(w) => desk.top_level(w)?,
            None => None,
        };
        let window = match by_id {
            Some(w) => Some(w),
            None => desk.window_of(&pids)?,
        };
        Ok(window.map(|window| X11Window { display, window }))
    })
    .await
}

/// The window that has the focus now, if the window manager says.
pub async fn active_window(display: String) -> Result<Option<u32>, X11Error> {
    blocking(move || {
        let desk = Desk::open(&display)?;
        desk.clients()?; // no window manager, no answer
        desk.active()
    })
    .await
}

/// Raises and focuses the window (through the window manager).
pub async fn activate(window: X11Window) -> Result<(), X11Error> {
    blocking(move || Desk::open(&window.display)?.activate(window.window)).await
}
