//! The windows process (`cmux-tray-windows`): started when a window is asked for, told what to
//! show while it runs, ended by itself once its last window is gone (a closed one is kept a
//! while). A second window while one is open goes to the same process; a process that crashed
//! or was killed is started again by the next window asked for, at once when it ended before it
//! attached (docs/architecture.md "Two processes").

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cmux_tray_channel::{self as channel, ChannelKey, FromTray, Page, Program};
use cmux_tray_engine::lock::Locked;
use cmux_tray_engine::notice::Item;
use tokio::sync::mpsc::UnboundedSender;

use crate::App;

/// How long a started windows process may take to attach before another start is tried.
const ATTACH_WITHIN: Duration = Duration::from_secs(20);

pub struct Windows {
    state: Mutex<State>,
    /// The channel the windows process is told to reach (the demo's is not the person's).
    channel: PathBuf,
    /// What the windows process shows to be let in, written to its standard input.
    key: ChannelKey,
    /// Whether the session's accessibility bus runs (Linux; taken as running until known).
    a11y_bus: AtomicBool,
}

#[derive(Default)]
struct State {
    /// The processes that may show the key: the windows processes this tray started, and the
    /// one that started this tray (a key stolen from a pipe is no use to another process).
    own: Vec<u32>,
    /// The windows process in use: its connection's id and what is sent to it.
    attached: Option<(u64, UnboundedSender<FromTray>)>,
    /// A windows process started and not attached yet, and the page asked for meanwhile.
    starting: Option<Start>,
    waiting: Option<(Page, Option<String>)>,
    /// How many windows processes this tray started: each start's number.
    starts: u64,
}

/// A windows process started and not attached yet.
#[derive(Clone, Copy)]
struct Start {
    at: Instant,
    number: u64,
    /// Started because the one before it ended unattached: one ending so too is not followed
    /// by another (a process the tray refuses would otherwise be started for ever).
    again: bool,
}

impl Windows {
    pub fn new(channel: PathBuf, key: ChannelKey) -> Windows {
        Windows { state: Mutex::new(State::default()), channel, key, a11y_bus: AtomicBool::new(true) }
    }

    /// Whether the session's accessibility bus (AT-SPI) runs: a windows process started while
    /// none does skips GTK's bridge to it, which would start one (about 270 ms of the first
    /// window; docs/benchmarks.md). A desktop session starts it at login, and so does a screen
    /// reader: where one is, the windows speak to it.
    pub fn accessibility_bus(&self, running: bool) {
        if self.a11y_bus.swap(running, Ordering::Relaxed) != running {
            tracing::debug!(running, "the accessibility bus");
        }
    }

    /// Has the windows process that asked install the update at `feed`; false when none is
    /// attached (it has just gone).
    pub fn install(&self, feed: String, proxy: Option<channel::ProxyLine>) -> bool {
        self.state.locked().attached.as_ref().is_some_and(|(_, send)| send.send(FromTray::Install { feed, proxy }).is_ok())
    }

    /// Shows `page` (with `query`, e.g. `run=<id>` for a Run's card), starting the windows
    /// process if none runs.
    pub fn open(self: &Arc<Self>, app: &App, page: Page, query: Option<String>) {
        let mut state = self.state.locked();
        if let Some((_, send)) = &state.attached
            && send.send(FromTray::Open { page, query: query.clone() }).is_ok()
        {
            return;
        }
        state.attached = None;
        if state.starting.is_some_and(|start| start.at.elapsed() < ATTACH_WITHIN) {
            state.waiting = Some((page, query));
            return;
        }
        self.start(&mut state, &app.runtime, page, query, false);
    }

    fn start(self: &Arc<Self>, state: &mut State, runtime: &tokio::runtime::Handle, page: Page, query: Option<String>, again: bool) {
        let Some(program) = channel::program(Program::Windows) else {
            tracing::error!("cannot open the {page} window: cmux-tray-windows is not installed beside cmux-tray-app");
            return;
        };
        let mut command = tokio::process::Command::new(program);
        command.arg("--open").arg(page.as_str()).arg("--channel").arg(&self.channel).arg("--key-on-stdin");
        if let Some(q) = &query {
            command.arg("--query").arg(q);
        }
        if !self.a11y_bus.load(Ordering::Relaxed) {
            command.envs(channel::webview_env::NO_ACCESSIBILITY_BUS);
        }
        match command.stdin(std::process::Stdio::piped()).kill_on_drop(false).spawn() {
            Ok(mut child) => {
                let pid = child.id();
                tracing::info!(pid, %page, "the windows process started");
                state.own.extend(pid);
                let keep = state.own.len().saturating_sub(4);
                state.own.drain(..keep);
                // The key on its standard input, then closed: a pipe holds far more than a line.
                if let Some(mut stdin) = child.stdin.take() {
                    let line = self.key.line();
                    runtime.spawn(async move {
                        use tokio::io::AsyncWriteExt;
                        if let Err(e) = stdin.write_all(line.as_bytes()).await {
                            tracing::warn!("handing the windows process its key: {e}");
                        }
                    });
                }
                state.starts += 1;
                let start = Start { at: Instant::now(), number: state.starts, again };
                state.starting = Some(start);
                state.waiting = None;
                let windows = self.clone();
                let handle = runtime.clone();
                runtime.spawn(async move {
                    // Reaped here; its connection, not its exit, says whether it shows anything.
                    match child.wait().await {
                        Ok(status) if status.success() => tracing::debug!("the windows process ended"),
                        Ok(status) => tracing::warn!("the windows process ended: {status}"),
                        Err(e) => tracing::warn!("the windows process: {e}"),
                    }
                    windows.ended(start, &handle);
                });
            }
            Err(e) => tracing::error!("starting the windows process: {e}"),
        }
    }

    /// The windows process of `start` ended. One that never attached holds no later window
    /// back: the next is started at once, and a window asked for while it started starts one now,
    /// unless it was itself such a start.
    fn ended(self: &Arc<Self>, start: Start, runtime: &tokio::runtime::Handle) {
        let mut state = self.state.locked();
        if state.starting.is_none_or(|starting| starting.number != start.number) {
            return;
        }
        state.starting = None;
        let Some((page, query)) = state.waiting.take() else { return };
        if start.again {
            tracing::warn!(%page, "the windows process ended before it attached, twice: the {page} window is not started again until asked for");
            return;
        }
        tracing::warn!(%page, "the windows process ended before it attached: starting another for the window asked for meanwhile");
        self.start(&mut state, runtime, page, query, true);
    }

    /// A windows process attached: it becomes the one in use, unless one is already (which is
    /// then shown the page; the newcomer ends). Returns whether it was chosen.
    pub fn attach(&self, id: u64, send: UnboundedSender<FromTray>, page: Page, query: Option<String>) -> bool {
        let mut state = self.state.locked();
        if let Some((_, current)) = &state.attached
            && current.send(FromTray::Open { page, query }).is_ok()
        {
            return false;
        }
        state.starting = None;
        if let Some((page, query)) = state.waiting.take() {
            let _ = send.send(FromTray::Open { page, query });
        }
        state.attached = Some((id, send));
        true
    }

    /// Whether the process `pid` is a windows process of this tray's (see [`State::own`]).
    pub fn is_own(&self, pid: Option<u32>) -> bool {
        pid.is_some_and(|pid| self.state.locked().own.contains(&pid))
    }

    /// The windows process that started this tray (`--key-on-stdin`) may show the key too.
    pub fn started_by(&self, pid: u32) {
        self.state.locked().own.push(pid);
    }

    /// The windows process of connection `id` is gone or going: nothing is on screen any more.
    pub fn detach(&self, app: &App, id: u64) {
        let was = {
            let mut state = self.state.locked();
            let was = state.attached.as_ref().is_some_and(|(current, _)| *current == id);
            if was {
                state.attached = None;
            }
            was
        };
        if was {
            let engine = app.engine.clone();
            app.spawn(async move {
                let _ = engine.set_viewing(None).await;
            });
        }
    }

    /// The engine changed: the windows redraw.
    pub fn changed(&self) {
        if let Some((_, send)) = &self.state.locked().attached {
            let _ = send.send(FromTray::Changed);
        }
    }

    /// At quit: the windows process ends with its channel, and none starting is followed by
    /// another (it would start a tray again).
    pub fn close(&self) {
        let mut state = self.state.locked();
        (state.attached, state.starting, state.waiting) = (None, None, None);
    }
}

/// The process that started this tray, when it is the windows program (a tray started with
/// `--key-on-stdin` by a window opened by hand). On Linux its program is checked; elsewhere the
/// parent is taken at its word.
pub fn starting_windows_process() -> Option<u32> {
    #[cfg(unix)]
    {
        let parent = std::os::unix::process::parent_id();
        #[cfg(target_os = "linux")]
        {
            let ours = std::fs::canonicalize(channel::program(Program::Windows)?).ok()?;
            let theirs = std::fs::read_link(format!("/proc/{parent}/exe")).ok()?;
            if ours != theirs {
                tracing::warn!(parent, program = %theirs.display(), "--key-on-stdin from a process that is not cmux-tray-windows: its key is not taken");
                return None;
            }
        }
        Some(parent)
    }
    #[cfg(not(unix))]
    None
}

/// Opens a notice as a click on its banner does (its terminal, a link, its card); one that is
/// gone opens the history. Off the caller's thread.
pub fn open_notice(app: &std::sync::Arc<App>, key: String) {
    let app = app.clone();
    app.clone().spawn(async move {
        match app.engine.open_notice(&key).await {
            Ok(true) => {}
            Ok(false) => app.windows.open(&app, Page::History, None),
            Err(e) => tracing::warn!("opening notice {key}: {e}"),
        }
    })
}

/// Shows what an item is (`run:<id>`, `handoff:<id>`): its card in the history, else the history.
pub fn open_item(app: &App, item: &Item) {
    app.windows.open(app, Page::History, card_of(item));
}

/// The history's query for an item's card (`run=<id>`, `handoff=<id>`); none for other items.
fn card_of(item: &Item) -> Option<String> {
    match item {
        Item::Run(id) => Some(format!("run={id}")),
        Item::Handoff(id) => Some(format!("handoff={id}")),
        Item::Local(_) | Item::App(_) | Item::Account(_) => None,
    }
}

/// Shows what a click opened in the app: a Run's or hand-off's card; a terminal's notice whose
/// place could not be brought forward, its own card, which says why; else the history.
pub fn open_clicked(app: &App, notice: &cmux_tray_engine::store::StoredNotice) {
    let query = card_of(&notice.item).or_else(|| {
        notice
            .reveal_note
            .as_ref()
            .map(|_| format!("notice={}", url::form_urlencoded::byte_serialize(notice.key.as_bytes()).collect::<String>()))
    });
    app.windows.open(app, Page::History, query);
}
