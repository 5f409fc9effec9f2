//! A window's map, as the X server tells a client that asked: the moment a window titled so
//! became visible, read from the server's own `MapNotify` rather than by polling a program.
//!
//! A poll that starts `xdotool` every few ms walks the whole window tree each time, and on a
//! machine of two cores it takes CPU from the window it waits for; this watch sleeps in `poll(2)`
//! until the server writes to it.

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{ChangeWindowAttributesAux, ConnectionExt, EventMask, MapState, Window};
use x11rb::rust_connection::RustConnection;

/// Watches the display's top-level windows for a map of one titled `title`; made before the
/// launch it times, so that no map is missed. The root's children alone: under a window manager
/// that reparents (openbox), a client's map is told to its frame instead, and this one waits on.
pub struct MapWatch {
    conn: RustConnection,
    title: String,
    net_wm_name: u32,
    utf8: u32,
}

impl MapWatch {
    /// Asks the X server on `display` for the maps of every child of its root window; an error
    /// when a window titled so is shown already (its map would never come).
    pub fn new(display: &str, title: &str) -> Result<MapWatch, String> {
        let (conn, screen) = x11rb::connect(Some(display)).map_err(|e| format!("{display}: {e}"))?;
        let root = conn.setup().roots[screen].root;
        let (net_wm_name, utf8) = (atom(&conn, "_NET_WM_NAME")?, atom(&conn, "UTF8_STRING")?);
        let mask = ChangeWindowAttributesAux::new().event_mask(EventMask::SUBSTRUCTURE_NOTIFY);
        // Checked, so that the server took the mask before the launch it times.
        conn.change_window_attributes(root, &mask).map_err(|e| e.to_string())?.check().map_err(|e| format!("{display}: {e}"))?;
        let watch = MapWatch { conn, title: title.to_owned(), net_wm_name, utf8 };
        let tree = watch.conn.query_tree(root).map_err(|e| e.to_string())?.reply().map_err(|e| e.to_string())?;
        for window in tree.children {
            let shown =
                watch.conn.get_window_attributes(window).map_err(|e| e.to_string())?.reply().map(|a| a.map_state == MapState::VIEWABLE);
            if shown.unwrap_or(false) && watch.titled(window)? {
                return Err(format!("a window titled {title:?} is shown already on {display}"));
            }
        }
        Ok(watch)
    }

    /// When a window titled so was mapped: when its `MapNotify` was read, which the server sent
    /// as it mapped it; an error past `timeout`.
    pub fn wait(&self, timeout: Duration) -> Result<Instant, String> {
        let deadline = Instant::now() + timeout;
        loop {
            while let Some(event) = self.conn.poll_for_event().map_err(|e| e.to_string())? {
                if let Event::MapNotify(map) = event {
                    let seen = Instant::now();
                    if self.titled(map.window)? {
                        return Ok(seen);
                    }
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("no window titled {:?} mapped within {timeout:?}", self.title));
            }
            let mut fd = libc::pollfd { fd: self.conn.stream().as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one pollfd, alive for the call; a signal's EINTR only ends this sleep early.
            let _ = unsafe { libc::poll(&mut fd, 1, left.as_millis().clamp(1, i32::MAX as u128) as i32) };
        }
    }

    /// Whether `window`'s `_NET_WM_NAME` is the title watched for (GTK sets it, in UTF-8; its
    /// `WM_NAME` is `COMPOUND_TEXT` once a title holds a "—").
    fn titled(&self, window: Window) -> Result<bool, String> {
        let reply = self.conn.get_property(false, window, self.net_wm_name, self.utf8, 0, 1024).map_err(|e| e.to_string())?.reply();
        // A window gone meanwhile has no title to match.
        Ok(reply.map(|r| r.value == self.title.as_bytes()).unwrap_or(false))
    }
}

/// The atom named `name` on `conn`'s display.
pub fn atom(conn: &impl Connection, name: &str) -> Result<u32, String> {
    Ok(conn.intern_atom(false, name.as_bytes()).map_err(|e| e.to_string())?.reply().map_err(|e| e.to_string())?.atom)
}

#[cfg(test)]
mod tests {
    use super::*;
    use x11rb::protocol::xproto::{CreateWindowAux, PropMode, WindowClass};
    use x11rb::wrapper::ConnectionExt as _;

    const TITLE: &str = "cmux-tray — History";

    /// Another window mapped while the watch waits, then the one titled so: the watch tells the
    /// second's map; one already shown is refused; none mapped is an error once its time is up.
    #[test]
    fn the_watch_tells_the_titled_windows_map_and_no_other() {
        let desktop = crate::DesktopSession::start_bare_with_display();
        let display = desktop.display.clone().expect("a display");
        let (conn, screen) = x11rb::connect(Some(&display)).expect("the display");
        let root = conn.setup().roots[screen].root;
        let (net_wm_name, utf8) = (atom(&conn, "_NET_WM_NAME").unwrap(), atom(&conn, "UTF8_STRING").unwrap());
        let window = |title: &str| -> Window {
            let id = conn.generate_id().unwrap();
            conn.create_window(0, id, root, 0, 0, 10, 10, 0, WindowClass::INPUT_OUTPUT, 0, &CreateWindowAux::new()).unwrap();
            conn.change_property(PropMode::REPLACE, id, net_wm_name, utf8, 8, title.len() as u32, title.as_bytes()).unwrap();
            conn.sync().unwrap();
            id
        };
        let (other, watched) = (window("cmux-tray — Settings"), window(TITLE));
        let watch = MapWatch::new(&display, TITLE).unwrap();
        let (seen, before) = std::thread::scope(|s| {
            let waiting = s.spawn(|| watch.wait(Duration::from_secs(10)));
            conn.map_window(other).unwrap();
            conn.sync().unwrap();
            std::thread::sleep(Duration::from_millis(300));
            let before = Instant::now();
            conn.map_window(watched).unwrap();
            conn.sync().unwrap();
            (waiting.join().unwrap().unwrap(), before)
        });
        assert!(seen >= before, "the watch told a map {:?} before the titled window's", before - seen);

        let refused = MapWatch::new(&display, TITLE).err().expect("a watch for a window shown already is refused");
        assert!(refused.contains("shown already"), "{refused}");

        let none = MapWatch::new(&display, "cmux-tray — Sign in").unwrap();
        let waited = Instant::now();
        let said = none.wait(Duration::from_millis(500)).expect_err("no map, an error");
        assert!(waited.elapsed() >= Duration::from_millis(500) && said.contains("within"), "{said} after {:?}", waited.elapsed());
    }
}
