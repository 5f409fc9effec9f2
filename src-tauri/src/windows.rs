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

    fn title(self) -> &'static str {
        match self {
            Page::History => "cmux-tray — History",
            Page::Settings => "cmux-tray — Settings",
            Page::SignIn => "cmux-tray — Sign in",
        }
    }
}

/// Shows the page's window, creating it if it is not open; `query` is passed to the page.
pub fn open(app: &AppHandle, page: Page, query: Option<&str>) {
    if let Some(w) = app.get_webview_window(page.label()) {
        let _ = w.show();
        let _ = w.set_focus();
        return;
    }
    let file = match query {
        Some(q) => format!("{}.html?{q}", page.label()),
        None => format!("{}.html", page.label()),
    };
    let built = WebviewWindowBuilder::new(app, page.label(), WebviewUrl::App(file.into()))
        .title(page.title())
        .inner_size(560.0, 480.0)
        .build();
    if let Err(e) = built {
        tracing::error!("opening the {} window: {e}", page.label());
    }
}
