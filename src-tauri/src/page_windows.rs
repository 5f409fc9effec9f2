//! The app's windows, made when shown, hidden when closed and destroyed a short while later. A
//! window is drawn hidden and shown once its page has loaded, so a person never sees it blank;
//! one opened again while it is kept loads its page afresh in the web engine it already has.

use std::sync::Mutex;
use std::time::Duration;

use cmux_tray_channel::Page;
use tauri::webview::PageLoadEvent;
use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindowBuilder};

use crate::tray_link::locked;

/// The pages whose window exists, from its making to its `Destroyed` (Tauri's own list may still
/// hold a window that is being destroyed), shown or kept. Managed by the app.
#[derive(Default)]
pub struct Shown(Mutex<Vec<Made>>);

/// A page's window that exists.
struct Made {
    page: Page,
    /// Closed by the person and kept hidden until its while ends.
    kept: bool,
    /// Counts its closes and opens: a close's while ends the window only if nothing came since.
    turn: u64,
}

/// The pages whose window exists now, shown or kept.
pub fn shown(app: &AppHandle) -> Vec<Page> {
    locked(&app.state::<Shown>().0).iter().map(|m| m.page).collect()
}

/// How long a closed window is kept, hidden, before it is destroyed (and with the last one the
/// process and its web engine end): a window opened again within it is shown without starting
/// a web engine (docs/architecture.md "Two processes"; its memory meanwhile: docs/benchmarks.md).
pub const KEPT_AFTER_CLOSE: Duration = Duration::from_secs(20);

/// Marks `page`'s window kept (`true`) or in use (`false`); returns its new turn.
fn mark(app: &AppHandle, page: Page, kept: bool) -> u64 {
    let shown = app.state::<Shown>();
    let mut made = locked(&shown.0);
    match made.iter_mut().find(|m| m.page == page) {
        Some(m) => {
            m.kept = kept;
            m.turn += 1;
            m.turn
        }
        None => 0,
    }
}

/// Whether `page`'s window is kept (closed) at `turn` (any turn: `None`).
fn is_kept(app: &AppHandle, page: Page, turn: Option<u64>) -> bool {
    locked(&app.state::<Shown>().0).iter().any(|m| m.page == page && m.kept && turn.is_none_or(|t| t == m.turn))
}

/// Shows a window whose page has loaded, unless it was closed meanwhile.
fn reveal(window: &tauri::WebviewWindow, page: Page) {
    if !is_kept(window.app_handle(), page, None) && !window.is_visible().unwrap_or(true) {
        let _ = window.show();
        let _ = window.set_focus();
    }
}

/// Shows the window after [`SHOW_ANYWAY`] if its page has not loaded by then, unless it was
/// closed meanwhile.
fn show_anyway(window: tauri::WebviewWindow, page: Page) {
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SHOW_ANYWAY).await;
        if !is_kept(window.app_handle(), page, None) && !window.is_visible().unwrap_or(true) {
            tracing::warn!("the {page} window's page did not load within {SHOW_ANYWAY:?}: shown anyway");
            let _ = window.show();
        }
    });
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
fn title(page: Page, words: &serde_json::Value) -> String {
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
/// open window is taken to it). `closed` hears when the person closes it, `destroyed` when it
/// goes. `words` is what the tray's `page_words` answered: the page reads it as
/// `window.__CMUX_WORDS__` before any script of its own runs.
pub fn open(
    app: &AppHandle,
    page: Page,
    query: Option<&str>,
    words: &serde_json::Value,
    closed: impl Fn(&AppHandle, Page) + Send + Sync + 'static,
    destroyed: impl Fn(&AppHandle, Page) + Send + Sync + 'static,
) {
    let file = match query {
        Some(q) => format!("{page}.html?{q}"),
        None => format!("{page}.html"),
    };
    if let Some(w) = app.get_webview_window(page.as_str()) {
        if is_kept(app, page, None) {
            // Kept since its close: its page loaded again as a new window's would be (its
            // query, its data, what it tells the tray it shows), and shown once loaded.
            mark(app, page, false);
            match w.url().map(|url| url.join(&format!("/{file}"))) {
                Ok(Ok(target)) => {
                    if let Err(e) = w.navigate(target) {
                        tracing::warn!("loading the kept {page} window's {file}: {e}");
                    }
                }
                _ => tracing::warn!("the kept {page} window has no address to load {file} from"),
            }
            show_anyway(w, page);
            return;
        }
        if query.is_some()
            && let Ok(url) = w.url()
            && let Ok(target) = url.join(&format!("/{file}"))
            && target != url
            && let Err(e) = w.navigate(target)
        {
            tracing::warn!("taking the {page} window to {file}: {e}");
        }
        let _ = w.show();
        let _ = w.set_focus();
        return;
    }
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
    match built {
        Ok(window) => {
            locked(&app.state::<Shown>().0).push(Made { page, kept: false, turn: 0 });
            let (handle, kept) = (app.clone(), window.clone());
            window.on_window_event(move |event| match event {
                // The person's close hides it; its while's end destroys it, unless it was
                // opened again meanwhile.
                tauri::WindowEvent::CloseRequested { api, .. } => {
                    api.prevent_close();
                    let _ = kept.hide();
                    let turn = mark(&handle, page, true);
                    closed(&handle, page);
                    let window = kept.clone();
                    tauri::async_runtime::spawn(async move {
                        tokio::time::sleep(KEPT_AFTER_CLOSE).await;
                        if is_kept(window.app_handle(), page, Some(turn)) {
                            tracing::debug!("the {page} window's while after its close ended");
                            let _ = window.destroy();
                        }
                    });
                }
                tauri::WindowEvent::Destroyed => {
                    locked(&handle.state::<Shown>().0).retain(|m| m.page != page);
                    destroyed(&handle, page);
                }
                _ => {}
            });
            show_anyway(window, page);
        }
        Err(e) => tracing::error!("opening the {page} window ({file}): {e}"),
    }
}
