//! A terminal's X11 window, through the window manager's EWMH hints (x11rb, pure Rust): which
//! top-level window a process runs under (`_NET_CLIENT_LIST`, `_NET_WM_PID`), which window is
//! active (`_NET_ACTIVE_WINDOW`), and asking the window manager to activate one. Without a window
//! manager that keeps these hints there is no answer, and the callers say "cannot tell".
//!
//! x11rb is blocking; every call here runs on a blocking thread, with a fresh connection (a
//! click or a delivery decision is rare, and a held connection would wake the process).

use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{self, AtomEnum, ClientMessageEvent, ConnectionExt, EventMask, Window};
use x11rb::reexports::x11rb_protocol::{parse_display::parse_display, xauth::get_auth};
use x11rb::rust_connection::{DefaultStream, PollMode, RustConnection, Stream};
use x11rb::utils::RawFdContainer;
use x11rb::wrapper::ConnectionExt as _;

use crate::place::{X11Window, is_local_display};

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
    conn: RustConnection<Patient>,
    root: Window,
    display: String,
}

impl Desk {
    /// A connection whose every wait ends by [`X11_TIMEOUT`] from now: a server that never
    /// answers ends the question, and the blocking thread with it (x11rb's own connection would
    /// wait for ever, and each such question would keep a thread of tokio's pool).
    fn open(display: &str) -> Result<Desk, X11Error> {
        let failed = |e: String| X11Error::Connect(display.into(), e);
        let until = Instant::now() + X11_TIMEOUT;
        let parsed = parse_display(Some(display)).map_err(|e| failed(e.to_string()))?;
        let mut last = String::from("no address to connect to");
        for addr in parsed.connect_instruction() {
            match DefaultStream::connect(&addr) {
                Ok((stream, (family, address))) => {
                    let (name, data) = get_auth(family, &address, parsed.display).ok().flatten().unwrap_or_default();
                    let patient = Patient { stream, until };
                    let conn = RustConnection::connect_to_stream_with_auth_info(patient, parsed.screen.into(), name, data)
                        .map_err(|e| failed(e.to_string()))?;
                    let root = conn.setup().roots[usize::from(parsed.screen)].root;
                    return Ok(Desk { conn, root, display: display.into() });
                }
                Err(e) => last = e.to_string(),
            }
        }
        Err(failed(last))
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
const X11_TIMEOUT: Duration = Duration::from_secs(2);

/// x11rb's stream, with every wait bounded by the question's deadline.
struct Patient {
    stream: DefaultStream,
    until: Instant,
}

impl Stream for Patient {
    fn poll(&self, mode: PollMode) -> std::io::Result<()> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() || !ready_within(&self.stream, mode, left)? {
            return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, format!("no answer within {X11_TIMEOUT:?}")));
        }
        Ok(())
    }

    fn read(&self, buf: &mut [u8], fds: &mut Vec<RawFdContainer>) -> std::io::Result<usize> {
        self.stream.read(buf, fds)
    }

    fn write(&self, buf: &[u8], fds: &mut Vec<RawFdContainer>) -> std::io::Result<usize> {
        self.stream.write(buf, fds)
    }

    fn write_vectored(&self, bufs: &[std::io::IoSlice<'_>], fds: &mut Vec<RawFdContainer>) -> std::io::Result<usize> {
        self.stream.write_vectored(bufs, fds)
    }
}

/// Waits until the stream is ready, at most `left`; whether it became ready.
#[cfg(unix)]
fn ready_within(stream: &DefaultStream, mode: PollMode, left: Duration) -> std::io::Result<bool> {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let flags = match mode {
        PollMode::Readable => PollFlags::IN,
        PollMode::Writable => PollFlags::OUT,
        PollMode::ReadAndWritable => PollFlags::IN | PollFlags::OUT,
    };
    let mut fds = [PollFd::new(stream, flags)];
    let timeout = Timespec { tv_sec: left.as_secs() as i64, tv_nsec: left.subsec_nanos() as _ };
    Ok(rustix::event::poll(&mut fds, Some(&timeout))? > 0)
}

/// On Windows no terminal runs under an X server, and a wait there could not be bounded: an
/// X11 place is never asked (no answer: its banner shows).
#[cfg(not(unix))]
fn ready_within(_stream: &DefaultStream, _mode: PollMode, _left: Duration) -> std::io::Result<bool> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "no X server is asked on Windows"))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// An X server that takes the connection and never answers (hung, or a fake one an agent
    /// named): the question ends by its deadline, and so does the thread that asked it; a thread
    /// left waiting for ever would be one of tokio's 512 blocking threads gone.
    #[test]
    fn a_silent_x_server_ends_the_question_and_its_thread() {
        let (listener, display) = (6090..6100)
            .find_map(|n| std::net::TcpListener::bind(("127.0.0.1", 6000 + n)).ok().map(|l| (l, format!("127.0.0.1:{n}"))))
            .expect("a free X display port in 6090..6100");
        let silent = std::thread::spawn(move || {
            let mut held = Vec::new();
            while let Ok((tcp, _)) = listener.accept() {
                held.push(tcp); // read nothing, answer nothing, close nothing
                if held.len() == 3 {
                    std::thread::sleep(Duration::from_secs(10));
                    return;
                }
            }
        });
        let (done, ended) = std::sync::mpsc::channel();
        for _ in 0..3 {
            let (display, done) = (display.clone(), done.clone());
            std::thread::spawn(move || {
                let asked = Instant::now();
                let answer = Desk::open(&display).and_then(|desk| desk.active());
                let _ = done.send((answer.is_err(), asked.elapsed()));
            });
        }
        for _ in 0..3 {
            let (failed, took) = ended.recv_timeout(X11_TIMEOUT * 2).expect("the question's thread ended");
            assert!(failed, "a server that says nothing gives no answer");
            assert!(took < X11_TIMEOUT + Duration::from_millis(500), "ended after {took:?}");
        }
        drop(silent);
    }
}
