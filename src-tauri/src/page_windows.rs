//! The app's windows, made when shown and destroyed when closed. A window is drawn hidden and
//! shown once its page has loaded, so a person never sees it blank.

use std::sync::Mutex;
use std::time::Duration;

use cmux_tray_channel::Page;
use tauri::webview::PageLoadEvent;
use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindowBuilder};

use crate::tray_link::locked;

/// The pages whose window exists, from its making to its `Destroyed` (Tauri's own list may still
/// hold a window that is being destroyed). Managed by the app.
#[derive(Default)]
pub struct Shown(Mutex<Vec<Page>>);

/// The pages whose window exists now.
pub fn shown(app: &AppHandle) -> Vec<Page> {
    locked(&app.state::<Shown>().0).clone()
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

/// Shows the page's window, creating it if it is not open; `query` is passed to the page (an
/// open window is taken to it). `destroyed` hears when the window goes.
/// `words` is what the tray's `page_words` answered: the page reads it as `window.__CMUX_WORDS__`
/// before any script of its own runs.
pub fn open(
    app: &AppHandle,
    page: Page,
    query: Option<&str>,
    words: &serde_json::Value,
    destroyed: impl Fn(&AppHandle, Page) + Send + Sync + 'static,
) {
    let file = match query {
        Some(q) => format!("{page}.html?{q}"),
        None => format!("{page}.html"),
    };
    if let Some(w) = app.get_webview_window(page.as_str()) {
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
        .on_page_load(|window, load| {
            if load.event() == PageLoadEvent::Finished && !window.is_visible().unwrap_or(true) {
                tracing::debug!(window = window.label(), "page loaded: shown");
                let _ = window.show();
                let _ = window.set_focus();
            }
        })
        .build();
    match built {
        Ok(window) => {
            locked(&app.state::<Shown>().0).push(page);
            let handle = app.clone();
            window.on_window_event(move |event| {
                if matches!(event, tauri::WindowEvent::Destroyed) {
                    locked(&handle.state::<Shown>().0).retain(|p| *p != page);
                    destroyed(&handle, page);
                }
            });
            tauri::async_runtime::spawn(async move {
                tokio::time::sleep(SHOW_ANYWAY).await;
                if !window.is_visible().unwrap_or(true) {
                    tracing::warn!("the {page} window's page did not load within {SHOW_ANYWAY:?}: shown anyway");
                    let _ = window.show();
                }
            });
        }
        Err(e) => tracing::error!("opening the {page} window ({file}): {e}"),
    }
}
