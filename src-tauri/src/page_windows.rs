//! The app's windows, made when shown, hidden when closed and destroyed a short while later. A
//! window is drawn hidden and shown once its page has loaded, so a person never sees it blank;
//! one opened again while it is kept loads its page afresh in the web engine it already has.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use cmux_tray_channel::Page;
use tauri::webview::PageLoadEvent;
use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindow, WebviewWindowBuilder};

use crate::tray_link::locked;

/// The pages whose window exists or is being made, from the making to its `Destroyed` (Tauri's
/// own list may still hold a window that is being destroyed). Managed by the app.
#[derive(Default)]
pub struct Shown(Mutex<Vec<Made>>, AtomicUsize);

/// What the windows process does when a window is closed or gone (set once by `main`, managed
/// by the app).
pub struct Hooks {
    /// The person closed the page's window (it is kept, hidden).
    pub closed: Hook,
    /// The page's window is gone.
    pub destroyed: Hook,
}

/// What is done for a page's window.
pub type Hook = Box<dyn Fn(&AppHandle, Page) + Send + Sync>;

/// A page's window.
struct Made {
    page: Page,
    stage: Stage,
    /// Counts its closes and opens: a timer acts only if nothing came since it was set.
    turn: u64,
    /// Asked for again while being built or ending: shown with this query once built, or made
    /// anew with it once gone.
    reopen: Option<Option<String>>,
}

/// The pages' words in the person's language, as the tray answered them once for the process
/// (`Null`: the pages' own English).
pub type Words = &'static serde_json::Value;

/// Where a page's window is in its life. Its changes but the first are made on the main thread,
/// in turn with the window's own events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Being built.
    Opening,
    /// In use: shown, or hidden until its page has loaded.
    Shown,
    /// Closed by the person and kept hidden until its while ends.
    Kept,
    /// Its while over: being destroyed.
    Ending,
}

/// The pages whose window exists now, or is being made.
pub fn shown(app: &AppHandle) -> Vec<Page> {
    locked(&app.state::<Shown>().0).iter().map(|m| m.page).collect()
}

/// A page was asked for: counted from the ask's arrival until [`open`] has taken it, so that the
/// process does not end in between.
pub fn asked(app: &AppHandle) {
    app.state::<Shown>().1.fetch_add(1, Ordering::SeqCst);
}

/// Whether a window exists, is being made or was asked for: the process is in use.
pub fn in_use(app: &AppHandle) -> bool {
    let shown = app.state::<Shown>();
    !locked(&shown.0).is_empty() || shown.1.load(Ordering::SeqCst) > 0
}

/// How long a closed window is kept, hidden, before it is destroyed (and with the last one the
/// process and its web engine end): a window opened again within it is shown without starting
/// a web engine (docs/architecture.md "Two processes"; its memory meanwhile: docs/benchmarks.md).
pub const KEPT_AFTER_CLOSE: Duration = Duration::from_secs(20);

/// `page`'s window's stage and turn.
fn stage(app: &AppHandle, page: Page) -> Option<(Stage, u64)> {
    locked(&app.state::<Shown>().0).iter().find(|m| m.page == page).map(|m| (m.stage, m.turn))
}

/// Changes `page`'s window under the list's lock; `None` when it is not listed.
fn with_made<R>(app: &AppHandle, page: Page, change: impl FnOnce(&mut Made) -> R) -> Option<R> {
    let shown = app.state::<Shown>();
    let mut made = locked(&shown.0);
    made.iter_mut().find(|m| m.page == page).map(change)
}

/// Puts the window in `stage`, a new turn (never one an earlier window had); returns the turn.
fn next(m: &mut Made, stage: Stage) -> u64 {
    static TURNS: AtomicU64 = AtomicU64::new(1);
    m.stage = stage;
    m.turn = TURNS.fetch_add(1, Ordering::Relaxed);
    m.turn
}

/// Puts `page`'s window in `stage`; returns its new turn.
fn enter(app: &AppHandle, page: Page, stage: Stage) -> u64 {
    with_made(app, page, |m| next(m, stage)).unwrap_or(0)
}

/// Shows a window in use that is hidden (its page has loaded, or it waited long enough).
fn reveal(window: &WebviewWindow, page: Page) {
    let in_use = stage(window.app_handle(), page).is_some_and(|(s, _)| matches!(s, Stage::Opening | Stage::Shown));
    if in_use && !window.is_visible().unwrap_or(true) {
        let _ = window.show();
        let _ = window.set_focus();
    }
}

/// Shows the window after [`SHOW_ANYWAY`] if its page has not loaded by then, unless it was
/// closed or opened again since `turn`.
fn show_anyway(window: WebviewWindow, page: Page, turn: u64) {
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SHOW_ANYWAY).await;
        let app = window.app_handle().clone();
        let _ = app.run_on_main_thread(move || {
            if stage(window.app_handle(), page) == Some((Stage::Shown, turn)) && !window.is_visible().unwrap_or(true) {
                tracing::warn!("the {page} window's page did not load within {SHOW_ANYWAY:?}: shown anyway");
                reveal(&window, page);
            }
        });
    });
}

/// Takes the window to `file` of the app's pages: loaded afresh when `fresh`, else only when it
/// shows another.
fn load(window: &WebviewWindow, page: Page, file: &str, fresh: bool) -> Result<(), String> {
    let here = window.url().map_err(|e| e.to_string())?;
    let target = here.join(&format!("/{file}")).map_err(|e| e.to_string())?;
    if !fresh && target == here {
        return Ok(());
    }
    window.navigate(target).map_err(|e| format!("the {page} window to {file}: {e}"))
}

/// How long a window waits for its page before it is shown anyway.
const SHOW_ANYWAY: Duration = Duration::from_secs(2);

/// Sized to their content at the default font, within a 1366 x 768 screen: the settings'
/// groups in two columns (one when made narrow), the history's rows readable at a glance, the
/// sign-in's code and state without scrolling.
fn size(page: Page) -> (f64, f64) {
    match page {
        Page::History => (640.0, 680.0),
        Page::Settings => (940.0, 700.0),
        Page::SignIn => (520.0, 440.0),
    }
}

/// The window's title in the person's language (the page's own `<title>`, English, else).
fn title(page: Page, words: Words) -> String {
    let id = format!("page-{page}-title");
    if let Some(title) = words["words"][id.as_str()].as_str() {
        return title.to_string();
    }
    match page {
        Page::History => "cmux-tray — History".into(),
        Page::Settings => "cmux-tray — Settings".into(),
        Page::SignIn => "cmux-tray — Sign in".into(),
    }
}

/// Shows the page's window, creating it if it does not exist; `query` is passed to the page (an
/// open window is taken to it). `words` is what the tray's `page_words` answered: the page reads
/// it as `window.__CMUX_WORDS__` before any script of its own runs. Off the main thread (on
/// Windows a window built there deadlocks; called there, `again` would run at once, out of turn).
/// Takes an ask counted by [`asked`].
pub fn open(app: &AppHandle, page: Page, query: Option<String>, words: Words) {
    let taken = Taken(app);
    if listed(app, page) {
        // Listed: the ask is taken (a build that fails then lets the process end).
        drop(taken);
        build(app, page, query, words);
    } else {
        let handle = app.clone();
        let _ = app.run_on_main_thread(move || again(&handle, page, query, words));
    }
}

/// Lists `page`'s window as being built, unless one is listed already; says whether it did.
fn listed(app: &AppHandle, page: Page) -> bool {
    let shown = app.state::<Shown>();
    let mut made = locked(&shown.0);
    if made.iter().any(|m| m.page == page) {
        return false;
    }
    made.push(Made { page, stage: Stage::Opening, turn: 0, reopen: None });
    true
}

/// Takes the ask [`asked`] counted, once the window is listed (at the end of [`open`]).
struct Taken<'a>(&'a AppHandle);

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let _ = self.0.state::<Shown>().1.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }
}

/// Records an ask for a window being built or ending, done once it is built or gone; gives the
/// query back when the window is neither (any more).
fn ask_again(app: &AppHandle, page: Page, query: Option<String>) -> Result<(), Option<String>> {
    let shown = app.state::<Shown>();
    let mut made = locked(&shown.0);
    match made.iter_mut().find(|m| m.page == page) {
        Some(m) if matches!(m.stage, Stage::Opening | Stage::Ending) => {
            m.reopen = Some(query);
            Ok(())
        }
        _ => Err(query),
    }
}

/// The page's file, with its query.
fn file(page: Page, query: Option<&str>) -> String {
    match query {
        Some(q) => format!("{page}.html?{q}"),
        None => format!("{page}.html"),
    }
}

/// Builds the window of `page`, listed as being built; it shows once its page has loaded.
fn build(app: &AppHandle, page: Page, query: Option<String>, words: Words) {
    let file = file(page, query.as_deref());
    let (width, height) = size(page);
    let built = WebviewWindowBuilder::new(app, page.as_str(), WebviewUrl::App(file.clone().into()))
        .title(title(page, words))
        .initialization_script(format!("window.__CMUX_WORDS__ = {words};"))
        .inner_size(width, height)
        .min_inner_size(420.0, 360.0)
        .visible(false)
        .on_page_load(move |window, load| {
            if load.event() == PageLoadEvent::Finished {
                tracing::debug!(window = window.label(), "page loaded: shown");
                reveal(&window, page);
            }
        })
        .build();
    let window = match built {
        Ok(window) => window,
        Err(e) => {
            locked(&app.state::<Shown>().0).retain(|m| m.page != page);
            tracing::error!("opening the {page} window ({file}): {e}");
            (app.state::<Hooks>().destroyed)(app, page);
            return;
        }
    };
    // Shown, and what was asked of it while it was built taken, in one step with `ask_again`.
    let (turn, asked) = with_made(app, page, |m| (next(m, Stage::Shown), m.reopen.take())).unwrap_or((0, None));
    if let Some(query) = asked {
        let handle = app.clone();
        let _ = app.run_on_main_thread(move || again(&handle, page, query, words));
    }
    let (handle, this) = (app.clone(), window.clone());
    window.on_window_event(move |event| match event {
        // The person's close hides it; its while's end destroys it, unless it was opened again
        // meanwhile.
        tauri::WindowEvent::CloseRequested { api, .. } => {
            api.prevent_close();
            let _ = this.hide();
            let turn = enter(&handle, page, Stage::Kept);
            (handle.state::<Hooks>().closed)(&handle, page);
            let window = this.clone();
            tauri::async_runtime::spawn(async move {
                tokio::time::sleep(KEPT_AFTER_CLOSE).await;
                let app = window.app_handle().clone();
                let _ = app.run_on_main_thread(move || {
                    if stage(window.app_handle(), page) == Some((Stage::Kept, turn)) {
                        tracing::debug!("the {page} window's while after its close ended");
                        enter(window.app_handle(), page, Stage::Ending);
                        let _ = window.destroy();
                    }
                });
            });
        }
        // Gone; made anew if it was asked for while it went.
        tauri::WindowEvent::Destroyed => {
            let gone = {
                let shown = handle.state::<Shown>();
                let mut made = locked(&shown.0);
                let gone = made.iter().position(|m| m.page == page).map(|i| made.remove(i));
                if let Some(Made { reopen: Some(_), .. }) = &gone {
                    made.push(Made { page, stage: Stage::Opening, turn: 0, reopen: None });
                }
                gone
            };
            match gone {
                Some(Made { reopen: Some(query), .. }) => {
                    let handle = handle.clone();
                    tauri::async_runtime::spawn(async move { build(&handle, page, query, words) });
                }
                _ => (handle.state::<Hooks>().destroyed)(&handle, page),
            }
        }
        _ => {}
    });
    show_anyway(window, page, turn);
}

/// The page asked for again while its window exists (on the main thread, in turn with its close).
fn again(app: &AppHandle, page: Page, query: Option<String>, words: Words) {
    let file = file(page, query.as_deref());
    let window = app.get_webview_window(page.as_str());
    match (stage(app, page), window) {
        // Kept since its close: its page loaded again as a new window's would be (its query, its
        // data, what it tells the tray it shows), and shown once loaded.
        (Some((Stage::Kept, _)), Some(w)) => {
            let turn = enter(app, page, Stage::Shown);
            if let Err(e) = load(&w, page, &file, true) {
                tracing::warn!("loading the kept window: {e}");
            }
            show_anyway(w, page, turn);
        }
        (Some((Stage::Shown, _)), Some(w)) => {
            if query.is_some()
                && let Err(e) = load(&w, page, &file, false)
            {
                tracing::warn!("taking the window there: {e}");
            }
            // One still loading shows once loaded, not blank now.
            if w.is_visible().unwrap_or(false) {
                let _ = w.set_focus();
            }
        }
        (Some((Stage::Ending | Stage::Opening, _)), _) => {
            // Built meanwhile (on another thread): asked again, as the window it now is.
            if let Err(query) = ask_again(app, page, query) {
                again(app, page, query, words);
            }
        }
        // Gone since it was asked for: made anew (unless another ask listed it meanwhile).
        (None, _) => {
            if listed(app, page) {
                let handle = app.clone();
                tauri::async_runtime::spawn(async move { build(&handle, page, query, words) });
            } else {
                again(app, page, query, words);
            }
        }
        (Some((stage, _)), None) => tracing::warn!("the {page} window is listed ({stage:?}) but Tauri has none"),
    }
}
