//! Tauri's own tray (muda menus): the tray on macOS and Windows. The menu is the shared one,
//! rebuilt on every engine event; a left click opens the history where the platform reports it
//! (macOS, Windows), and the menu shows on a right click.

use cmux_tray_engine::Engine;
use cmux_tray_engine::view::TrayView;
use tauri::image::Image;
use tauri::menu::{IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Wry};

use super::{Action, Entry};

/// muda reads `&` as a mnemonic marker; a label shows it as written.
fn label(text: &str) -> String {
    text.replace('&', "&&")
}

fn append(app: &AppHandle, add: &dyn Fn(&dyn IsMenuItem<Wry>) -> tauri::Result<()>, entry: Entry) -> tauri::Result<()> {
    match entry {
        Entry::Action { action, label: text } => add(&MenuItem::with_id(app, action.id(), label(&text), true, None::<&str>)?),
        Entry::Disabled(text) => add(&MenuItem::new(app, label(&text), false, None::<&str>)?),
        Entry::Separator => add(&PredefinedMenuItem::separator(app)?),
        Entry::Sub { label: text, entries } => {
            let sub = Submenu::new(app, label(&text), true)?;
            for e in entries {
                append(app, &|item| sub.append(item), e)?;
            }
            add(&sub)
        }
    }
}

fn menu(app: &AppHandle, view: &TrayView) -> tauri::Result<Menu<Wry>> {
    let menu = Menu::new(app)?;
    for entry in super::entries(view) {
        append(app, &|item| menu.append(item), entry)?;
    }
    Ok(menu)
}

pub fn start(app: AppHandle, engine: Engine) -> anyhow::Result<()> {
    let mut events = engine.subscribe();
    let view = engine.tray_view()?;
    let on_menu = engine.clone();
    let on_click = engine.clone();
    let tray = TrayIconBuilder::with_id("cmux-tray")
        .icon(Image::from_bytes(super::icon_png(view.icon))?)
        .tooltip(super::tooltip(&view))
        .menu(&menu(&app, &view)?)
        .show_menu_on_left_click(false)
        .on_menu_event(move |app, event| match Action::from_id(event.id().as_ref()) {
            Some(action) => action.run(app, &on_menu),
            None => tracing::warn!("a menu item of no action: {:?}", event.id()),
        })
        .on_tray_icon_event(move |tray, event| {
            if let TrayIconEvent::Click { button: MouseButton::Left, button_state: MouseButtonState::Up, .. } = event {
                Action::History.run(tray.app_handle(), &on_click);
            }
        })
        .build(&app)?;
    tauri::async_runtime::spawn(async move {
        let mut shown = view;
        loop {
            match events.recv().await {
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return,
            }
            let Ok(view) = engine.tray_view() else { continue };
            if view == shown {
                continue;
            }
            let redrawn = (|| -> tauri::Result<()> {
                if view.icon != shown.icon {
                    tray.set_icon(Some(Image::from_bytes(super::icon_png(view.icon))?))?;
                }
                tray.set_tooltip(Some(super::tooltip(&view)))?;
                tray.set_menu(Some(menu(&app, &view)?))
            })();
            if let Err(e) = redrawn {
                tracing::warn!("redrawing the tray: {e}");
            }
            shown = view;
        }
    });
    Ok(())
}
