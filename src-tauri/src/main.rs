//! cmux-tray's windows: the history, settings and sign-in pages in webviews, in a process of
//! their own (docs/architecture.md "Two processes"). The tray (`cmux-tray-app`) starts it when
//! a window is asked for; it ends once its last window is gone, and with the tray. It holds no engine
//! and no product rule: each page's command goes over the app's channel to the tray, which
//! answers from the engine; the tray says when to redraw and which page to show. A closed window
//! is kept hidden a short while (`page_windows::KEPT_AFTER_CLOSE`). A crash here
//! (a web process's too) leaves the tray, its follows and its banners untouched.
//!
//! - `tray_link`: the channel to the tray: calls and their answers, what the tray sends.
//! - `page_windows`: the pages' windows, made when shown, kept a while after their close.
//! - `update`: installing a newer version, where the installers update themselves.
//!
//! `--open PAGE` (history, settings, signin), `--query Q` (the page's query), `--channel PATH`
//! (the tray's channel, when not the person's own: the demo's), `--key-on-stdin` (the tray that
//! started it wrote the channel's key on standard input); `--cannot-start WHY` draws the
//! tray's "cannot start" dialog, which the tray, having no toolkit, cannot.

// A release build on Windows opens no console window beside the windows.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod page_windows;
mod tray_link;
mod update;

use cmux_tray_channel::{Call, FromTray, Page};
use tauri::ipc::InvokeBody;
use tauri::{AppHandle, Emitter, Manager, RunEvent};

use crate::tray_link::{Incoming, TrayLink};

struct Args {
    page: Page,
    query: Option<String>,
    channel: Option<std::path::PathBuf>,
    cannot_start: Option<String>,
    /// The tray that started this process wrote its channel's key on standard input.
    key_on_stdin: bool,
}

fn args() -> Args {
    let mut args = Args { page: Page::History, query: None, channel: None, cannot_start: None, key_on_stdin: false };
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        if word == "--key-on-stdin" {
            args.key_on_stdin = true;
            continue;
        }
        match (word.as_str(), words.next()) {
            ("--open", Some(page)) => match Page::parse(&page) {
                Some(p) => args.page = p,
                None => tracing::warn!("--open {page}: expected history, settings or signin"),
            },
            ("--query", Some(query)) => args.query = Some(query),
            ("--channel", Some(path)) => args.channel = Some(path.into()),
            ("--cannot-start", Some(why)) => args.cannot_start = Some(why),
            (other, _) => tracing::warn!("ignored an argument: {other:?}"),
        }
    }
    args
}

/// The tray's "cannot start" dialog (on Linux, where a person would otherwise not see it).
fn cannot_start_dialog(why: &str) {
    #[cfg(target_os = "linux")]
    if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() {
        use gtk::prelude::*;
        if gtk::init().is_ok() {
            let dialog = gtk::MessageDialog::new(
                None::<&gtk::Window>,
                gtk::DialogFlags::MODAL,
                gtk::MessageType::Error,
                gtk::ButtonsType::Close,
                "cmux-tray cannot start",
            );
            dialog.set_title("cmux-tray");
            dialog.set_secondary_text(Some(why));
            dialog.run();
            dialog.close();
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = why;
}

/// GTK and its display, opened before Tauri's event loop, which panics when it cannot: an X
/// server may refuse a connection now and then (Xvfb here refused 4 of 300 `xdpyinfo`s while
/// other clients came and went), and a window asked for should not be lost to one refusal.
#[cfg(target_os = "linux")]
fn display_opened() -> Result<(), String> {
    const TRIES: u32 = 3;
    for attempt in 1..=TRIES {
        if gtk::init().is_ok() {
            return Ok(());
        }
        if attempt < TRIES {
            tracing::warn!(attempt, "GTK could not open the display: trying again");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    Err(format!("GTK could not open the display ({TRIES} tries)"))
}

/// What the tray sends, until it goes (then the windows go too).
async fn hear(app: AppHandle, link: TrayLink, mut incoming: Incoming) {
    loop {
        let message = match cmux_tray_channel::read::<FromTray>(&mut incoming).await {
            Ok(Some(message)) => message,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!("{e}");
                break;
            }
        };
        match link.answered(message) {
            None => {}
            Some(FromTray::Changed) => {
                let _ = app.emit("changed", ());
            }
            Some(FromTray::Open { page, query }) => {
                page_windows::asked(&app);
                open(&app, &link, page, query.as_deref())
            }
            // Another windows process is in use (this one re-attached too late): it shows the page.
            Some(FromTray::Attached { chosen: false }) => app.exit(0),
            Some(FromTray::Attached { chosen: true }) => {}
            // A page asked for while detaching opened a window: this process stays, attached again.
            Some(FromTray::Detached) => {
                link.detached();
                if page_windows::in_use(&app) {
                    link.attach(page_windows::shown(&app).first().copied().unwrap_or(Page::History), None);
                } else {
                    app.exit(0);
                }
            }
            Some(FromTray::Install { feed, proxy }) => update::install(&app, &link, feed, proxy),
            Some(FromTray::Answer { .. }) => unreachable!("answers are taken by the link"),
        }
    }
    tracing::info!("the tray has gone: the windows close");
    app.exit(0);
}

/// The pages' words in the person's language, asked once: this process ends with its tray, and
/// a language chosen in the settings applies from the tray's next start.
async fn page_words(link: &TrayLink) -> Result<&'static serde_json::Value, String> {
    static WORDS: tokio::sync::OnceCell<serde_json::Value> = tokio::sync::OnceCell::const_new();
    WORDS.get_or_try_init(|| link.call(Call::PageWords {})).await
}

fn open(app: &AppHandle, link: &TrayLink, page: Page, query: Option<&str>) {
    let (app, link, query) = (app.clone(), link.clone(), query.map(String::from));
    tauri::async_runtime::spawn(async move {
        static ENGLISH: serde_json::Value = serde_json::Value::Null;
        let words = page_words(&link).await.unwrap_or_else(|e| {
            tracing::warn!("the pages' words: {e}; the window says its English");
            &ENGLISH
        });
        page_windows::open(&app, page, query, words);
    });
}

/// What the windows do when one is closed or gone.
fn hooks(link: TrayLink) -> page_windows::Hooks {
    let viewing = link.clone();
    page_windows::Hooks {
        closed: Box::new(move |_, page| {
            // A closed history shows nothing any more (its page cannot always say so itself).
            if page == Page::History {
                let link = viewing.clone();
                tauri::async_runtime::spawn(async move {
                    let _ = link.call(Call::Viewing { item: None }).await;
                });
            }
        }),
        destroyed: Box::new(move |app, _| {
            // The last window gone: detach (again). Tauri's `ExitRequested` may come before this
            // window's `Destroyed`, and a `Detached` answered meanwhile found it still listed
            // and attached again, leaving a process with no window.
            if !page_windows::in_use(app) {
                link.detach();
            }
        }),
    }
}

fn main() {
    // Before any thread: private files from here on, and no secret in the web processes'
    // environment. A tray started from here gets the environment as it was.
    let environment = cmux_tray_channel::start::start_with(cmux_tray_channel::webview_env::OWN);
    let _log = cmux_tray_channel::start::logging(cmux_tray_channel::place::default_log_dir(), cmux_tray_channel::start::private_dir);
    let args = args();
    if let Some(why) = &args.cannot_start {
        cannot_start_dialog(why);
        return;
    }
    #[cfg(target_os = "linux")]
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        eprintln!(
            "cmux-tray-windows: no display to draw a window on (neither DISPLAY nor WAYLAND_DISPLAY is set); in a terminal, `cmux-tray status` shows the same"
        );
        std::process::exit(1);
    }
    #[cfg(target_os = "linux")]
    if let Err(e) = display_opened() {
        tracing::error!("{e}");
        eprintln!("cmux-tray-windows: {e}");
        std::process::exit(1);
    }
    let Some(channel) = args.channel.clone().or_else(cmux_tray_channel::endpoint::default_channel) else {
        eprintln!("cmux-tray-windows: no home, data or runtime directory for the tray's channel: set HOME or the XDG_* variables");
        std::process::exit(1);
    };
    // The key of the tray that started this process; none when started by hand (a tray this
    // process starts gets one it makes, and a tray already running shows the page itself).
    let key = args
        .key_on_stdin
        .then(|| cmux_tray_channel::ChannelKey::read_line(std::io::stdin().lock()))
        .and_then(|read| read.map_err(|e| tracing::warn!("--key-on-stdin: {e}")).ok());
    let (link, incoming) = match tauri::async_runtime::block_on(TrayLink::connect(&channel, &environment, key)) {
        Ok(connected) => connected,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("cmux-tray-windows: {e:#}");
            std::process::exit(1);
        }
    };
    // Another windows process may be the tray's already: then it shows the page, and this one
    // ends before it draws anything.
    link.attach(args.page, args.query.clone());
    let mut incoming = incoming;
    match tauri::async_runtime::block_on(cmux_tray_channel::read::<FromTray>(&mut incoming)) {
        Ok(Some(FromTray::Attached { chosen: true })) => tracing::debug!("attached to the tray"),
        Ok(Some(FromTray::Attached { chosen: false })) => {
            tracing::info!("the {} page was shown in the windows already open", args.page);
            return;
        }
        other => {
            tracing::error!("the tray did not take this windows process: {other:?}");
            std::process::exit(1);
        }
    }
    // The first window's words asked now, while Tauri and GTK get ready.
    let early = link.clone();
    tauri::async_runtime::spawn(async move {
        let _ = page_words(&early).await;
    });
    let (forward, shown) = (link.clone(), link.clone());
    let builder = tauri::Builder::default();
    // The installers' updates (`update`); its key is tauri.conf.json's `plugins.updater.pubkey`.
    #[cfg(any(target_os = "macos", windows))]
    let builder = builder.plugin(tauri_plugin_updater::Builder::new().build());
    let app = builder
        // Every command of the pages goes to the tray as its typed call; which window may call
        // which command was checked before this by the window's capability (capabilities/).
        .invoke_handler(move |invoke| {
            let args = match invoke.message.payload() {
                InvokeBody::Json(args) => args.clone(),
                InvokeBody::Raw(_) => serde_json::Value::Null,
            };
            // Read into its typed call here: one no call has never reaches the tray.
            let call = Call::read(invoke.message.command(), args);
            let (link, resolver) = (forward.clone(), invoke.resolver);
            match call {
                Ok(call) => {
                    tauri::async_runtime::spawn(async move {
                        match link.call(call).await {
                            Ok(value) => resolver.resolve(value),
                            Err(e) => resolver.reject(e),
                        }
                    });
                }
                Err(e) => resolver.reject(e),
            }
            true
        })
        .setup(move |app| {
            app.manage(page_windows::Shown::default());
            app.manage(hooks(shown.clone()));
            page_windows::asked(app.handle());
            open(app.handle(), &shown, args.page, args.query.as_deref());
            tauri::async_runtime::spawn(hear(app.handle().clone(), shown.clone(), incoming));
            Ok(())
        })
        .build(tauri::generate_context!())
        .unwrap_or_else(|e| {
            tracing::error!("cannot draw windows: {e}");
            eprintln!("cmux-tray-windows: cannot draw windows: {e}");
            std::process::exit(1)
        });
    app.run(move |app, event| {
        // The last window destroyed: the tray is asked to send nothing more, and once it has
        // answered the process ends (a page sent meanwhile keeps it); not while one is being
        // made anew.
        if let RunEvent::ExitRequested { api, code: None, .. } = event {
            api.prevent_exit();
            if !page_windows::in_use(app) {
                link.detach();
            }
        }
    });
}
