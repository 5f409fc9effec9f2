//! The tray of macOS and Windows: tray-icon (the crate Tauri's own tray is) on tao's event loop,
//! with no webview. The menu is the shared one, rebuilt when the view changes; a left click
//! opens the history, the menu shows on a right click. On macOS links reach the running app as
//! an event of this loop (`Opened`), not as a second launch.

use std::sync::Arc;

use cmux_tray_engine::lang::Lang;
use cmux_tray_engine::view::TrayView;
use tao::event::{Event, StartCause};
use tao::event_loop::{ControlFlow, EventLoopBuilder};
use tray_icon::menu::{IsMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem, Submenu};
use tray_icon::{MouseButton, MouseButtonState, TrayIcon, TrayIconBuilder, TrayIconEvent};

use super::{Action, Entry};
use crate::App;

enum Wake {
    Menu(MenuEvent),
    Tray(TrayIconEvent),
    Changed,
    Quit,
}

/// muda reads `&` as a mnemonic marker; a label shows it as written.
fn label(text: &str) -> String {
    text.replace('&', "&&")
}

fn item(entry: Entry) -> tray_icon::menu::Result<Box<dyn IsMenuItem>> {
    Ok(match entry {
        Entry::Action { action, label: text } => Box::new(MenuItem::with_id(action.id(), label(&text), true, None)),
        Entry::Disabled(text) => Box::new(MenuItem::new(label(&text), false, None)),
        Entry::Separator => Box::new(PredefinedMenuItem::separator()),
        Entry::Sub { label: text, entries } => {
            let sub = Submenu::new(label(&text), true);
            for e in entries {
                sub.append(item(e)?.as_ref())?;
            }
            Box::new(sub)
        }
    })
}

fn menu(lang: &Lang, view: &TrayView, about: &super::About) -> tray_icon::menu::Result<Menu> {
    let menu = Menu::new();
    for entry in super::entries(lang, view, about) {
        menu.append(item(entry)?.as_ref())?;
    }
    Ok(menu)
}

fn icon(view: &TrayView) -> anyhow::Result<tray_icon::Icon> {
    let p = super::icon_pixels(view.icon)?;
    Ok(tray_icon::Icon::from_rgba(p.rgba, p.width, p.height)?)
}

fn build(lang: &Lang, view: &TrayView, about: &super::About) -> anyhow::Result<TrayIcon> {
    Ok(TrayIconBuilder::new()
        .with_id("cmux-tray")
        .with_icon(icon(view)?)
        .with_tooltip(super::tooltip(lang, view))
        .with_menu(Box::new(menu(lang, view, about)?))
        .with_menu_on_left_click(false)
        .build()?)
}

fn redraw(lang: &Lang, tray: &TrayIcon, shown: &TrayView, view: &TrayView, about: &super::About) -> anyhow::Result<()> {
    if view.icon != shown.icon {
        tray.set_icon(Some(icon(view)?))?;
    }
    tray.set_tooltip(Some(super::tooltip(lang, view)))?;
    tray.set_menu(Some(Box::new(menu(lang, view, about)?)));
    Ok(())
}

/// Runs the tray's event loop on this (the main) thread until Quit, then `stop`, and exits.
pub fn run(runtime: tokio::runtime::Runtime, app: Arc<App>, stop: impl FnOnce(&tokio::runtime::Runtime) + 'static) -> ! {
    let event_loop = EventLoopBuilder::<Wake>::with_user_event().build();
    let proxy = event_loop.create_proxy();
    MenuEvent::set_event_handler(Some(move |e| {
        let _ = proxy.send_event(Wake::Menu(e));
    }));
    let proxy = event_loop.create_proxy();
    TrayIconEvent::set_event_handler(Some(move |e| {
        let _ = proxy.send_event(Wake::Tray(e));
    }));
    let (proxy, mut events) = (event_loop.create_proxy(), app.engine.subscribe());
    let quit = app.quit.clone();
    runtime.spawn(async move {
        loop {
            tokio::select! {
                _ = quit.cancelled() => {
                    let _ = proxy.send_event(Wake::Quit);
                    return;
                }
                event = events.recv() => match event {
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        let _ = proxy.send_event(Wake::Changed);
                    }
                    Err(_) => return,
                },
            }
        }
    });
    // The loop below never returns: the runtime moves in.
    let mut tray: Option<(TrayIcon, TrayView)> = None;
    let mut stop = Some(stop);
    event_loop.run(move |event, _, flow| {
        *flow = ControlFlow::Wait;
        match event {
            // macOS wants the tray made once the loop runs.
            Event::NewEvents(StartCause::Init) => {
                match app
                    .engine
                    .tray_view()
                    .map_err(anyhow::Error::from)
                    .and_then(|v| Ok((build(app.engine.lang(), &v, &super::About::of(&app))?, v)))
                {
                    Ok(made) => tray = Some(made),
                    Err(e) => tracing::error!("the tray: {e:#}"),
                }
            }
            Event::UserEvent(Wake::Menu(e)) => match Action::from_id(e.id().as_ref()) {
                Some(action) => action.run(&app),
                None => tracing::warn!("a menu item of no action: {:?}", e.id()),
            },
            Event::UserEvent(Wake::Tray(TrayIconEvent::Click {
                button: MouseButton::Left, button_state: MouseButtonState::Up, ..
            })) => Action::History.run(&app),
            Event::UserEvent(Wake::Changed) => {
                if let (Some((icon, shown)), Ok(view)) = (tray.as_mut(), app.engine.tray_view())
                    && view != *shown
                {
                    if let Err(e) = redraw(app.engine.lang(), icon, shown, &view, &super::About::of(&app)) {
                        tracing::warn!("redrawing the tray: {e:#}");
                    }
                    *shown = view;
                }
            }
            Event::UserEvent(Wake::Quit) => {
                tray = None;
                if let Some(stop) = stop.take() {
                    stop(&runtime);
                }
                *flow = ControlFlow::Exit;
            }
            Event::Opened { urls } => {
                for url in urls {
                    crate::links::open(&app, url.as_str());
                }
            }
            _ => {}
        }
    })
}
