//! The app's windows, made when opened and destroyed when closed, so the idle app is the tray
//! alone (a webview and its web processes cost ~300 MB while they exist).

use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindowBuilder};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Page {
    History,
    Settings,
    SignIn,
}

impl Page {
    pub fn parse(name: &str) -> Option<Page> {
        [Page::History, Page::Settings, Page::SignIn].into_iter().find(|p| p.label() == name)
    }

    fn label(self) -> &'static str {
        match self {
            Page::History => "history",
            Page::Settings => "settings",
            Page::SignIn => "signin",
        }
    }

    /// Sized to their content at the default font, within a 1366 x 768 screen: the settings'
    /// groups in two columns (one when made narrow), the history's rows readable at a glance,
    /// the sign-in's code and state without scrolling.
    fn size(self) -> (f64, f64) {
        match self {
            Page::History => (640.0, 680.0),
            Page::Settings => (940.0, 700.0),
            Page::SignIn => (520.0, 440.0),
        }
    }

    fn title(self) -> &'static str {
        match self {
            Page::History => "cmux-tray — History",
            Page::Settings => "cmux-tray — Settings",
            Page::SignIn => "cmux-tray — Sign in",
        }
    }
}

/// The window a launch asks for with `--open history|settings|signin` (a launcher, a test, a
/// second launch handed over).
pub fn requested(argv: &[String]) -> Option<Page> {
    let page = argv.iter().position(|a| a == "--open").and_then(|i| argv.get(i + 1))?;
    let parsed = Page::parse(page);
    if parsed.is_none() {
        tracing::warn!("--open {page}: expected history, settings or signin");
    }
    parsed
}

/// Shows what an item is (`run:<id>`, `handoff:<id>`): its card in the history window, else
/// the history.
pub fn open_item(app: &AppHandle, item: &str) {
    open(app, Page::History, card_of(item).as_deref());
}

/// The history's query for an item's card (`run=<id>`, `handoff=<id>`); none for other items.
fn card_of(item: &str) -> Option<String> {
    match item.split_once(':') {
        Some(("run", id)) => Some(format!("run={id}")),
        Some(("handoff", id)) => Some(format!("handoff={id}")),
        _ => None,
    }
}

/// Shows what a click opened in the app: a Run's or hand-off's card; a terminal's notice whose
/// place could not be brought forward, its own card, which says why; else the history.
pub fn open_clicked(app: &AppHandle, notice: &cmux_tray_engine::store::StoredNotice) {
    let query = card_of(&notice.item).or_else(|| {
        notice
            .reveal_note
            .as_ref()
            .map(|_| format!("notice={}", url::form_urlencoded::byte_serialize(notice.key.as_bytes()).collect::<String>()))
    });
    open(app, Page::History, query.as_deref());
}

/// Shows the page's window, creating it if it is not open; `query` is passed to the page (an
/// open window is taken to it).
pub fn open(app: &AppHandle, page: Page, query: Option<&str>) {
    let file = match query {
        Some(q) => format!("{}.html?{q}", page.label()),
        None => format!("{}.html", page.label()),
    };
    if let Some(w) = app.get_webview_window(page.label()) {
        if query.is_some()
            && let Ok(url) = w.url()
            && let Ok(target) = url.join(&format!("/{file}"))
            && target != url
            && let Err(e) = w.navigate(target)
        {
            tracing::warn!("taking the {} window to {file}: {e}", page.label());
        }
        let _ = w.show();
        let _ = w.set_focus();
        return;
    }
    let built = WebviewWindowBuilder::new(app, page.label(), WebviewUrl::App(file.into()))
        .title(page.title())
        .inner_size(page.size().0, page.size().1)
        .min_inner_size(420.0, 360.0)
        .build();
    match built {
        Ok(window) => {
            let handle = app.clone();
            window.on_window_event(move |event| {
                if !matches!(event, tauri::WindowEvent::Destroyed) {
                    return;
                }
                // A closed history shows nothing any more (its page cannot always say so itself).
                if page == Page::History
                    && let Some(state) = handle.try_state::<crate::AppState>()
                {
                    let engine = state.engine.clone();
                    tauri::async_runtime::spawn(async move { engine.set_viewing(None).await });
                }
                crate::webkit::window_destroyed(&handle);
            });
        }
        Err(e) => tracing::error!("opening the {} window: {e}", page.label()),
    }
}
