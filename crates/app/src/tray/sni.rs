//! The Linux tray: a StatusNotifierItem of our own (ksni), over D-Bus alone. A left click opens
//! the history (the appindicator tray never implemented `Activate`); the menu, served as
//! com.canonical.dbusmenu, is the shared menu, redrawn on every engine event.

use std::sync::Arc;

use cmux_tray_engine::view::TrayView;
use ksni::menu::{StandardItem, SubMenu};
use ksni::{MenuItem, TrayMethods};

use super::{Action, Entry};
use crate::App;

struct CmuxTray {
    view: TrayView,
    /// The icon's pixmap for `view.icon`, decoded once per state change.
    pixmap: Vec<ksni::Icon>,
    app: Arc<App>,
}

/// The state's icon as the spec's pixmap: ARGB32 in network byte order.
fn pixmap(view: &TrayView) -> Vec<ksni::Icon> {
    match super::icon_pixels(view.icon) {
        Ok(p) => {
            let data = p.rgba.chunks_exact(4).flat_map(|px| [px[3], px[0], px[1], px[2]]).collect();
            vec![ksni::Icon { width: p.width as i32, height: p.height as i32, data }]
        }
        Err(e) => {
            tracing::warn!("the tray icon: {e}");
            Vec::new()
        }
    }
}

fn render(entry: Entry) -> MenuItem<CmuxTray> {
    match entry {
        Entry::Action { action, label } => {
            StandardItem { label, activate: Box::new(move |t: &mut CmuxTray| action.clone().run(&t.app)), ..Default::default() }.into()
        }
        Entry::Disabled(label) => StandardItem { label, enabled: false, ..Default::default() }.into(),
        Entry::Sub { label, entries } => SubMenu { label, submenu: entries.into_iter().map(render).collect(), ..Default::default() }.into(),
        Entry::Separator => MenuItem::Separator,
    }
}

impl ksni::Tray for CmuxTray {
    fn id(&self) -> String {
        "cmux-tray".into()
    }

    fn title(&self) -> String {
        "cmux-tray".into()
    }

    fn icon_pixmap(&self) -> Vec<ksni::Icon> {
        self.pixmap.clone()
    }

    fn status(&self) -> ksni::Status {
        use cmux_tray_engine::view::Icon;
        match self.view.icon {
            Icon::Problem | Icon::Unread => ksni::Status::NeedsAttention,
            _ => ksni::Status::Active,
        }
    }

    fn tool_tip(&self) -> ksni::ToolTip {
        ksni::ToolTip { title: "cmux-tray".into(), description: super::tooltip(self.app.engine.lang(), &self.view), ..Default::default() }
    }

    /// A left click opens the history.
    fn activate(&mut self, _x: i32, _y: i32) {
        Action::History.run(&self.app);
    }

    fn menu(&self) -> Vec<MenuItem<Self>> {
        super::entries(self.app.engine.lang(), &self.view, &super::About::of(&self.app)).into_iter().map(render).collect()
    }
}

/// Publishes the tray and keeps it in step with the engine.
pub async fn start(app: Arc<App>) -> anyhow::Result<()> {
    // Subscribe before the first read, so no change falls between the two.
    let engine = app.engine.clone();
    let mut events = engine.subscribe();
    let view = engine.tray_view()?;
    // The tray host's comings and goings, heard from before the item is published.
    let watch = super::host::watch().await?;
    let tray = CmuxTray { pixmap: pixmap(&view), view, app: app.clone() };
    // A desktop may bring its tray host up after us: stay published and appear when it does.
    let handle = tray.assume_sni_available(true).spawn().await?;
    match super::host::item_name(&watch).await {
        Some(item) => watch.keep(app, item),
        None => tracing::warn!("the tray item's bus name was not found: a tray host that comes later may not show it"),
    }
    tokio::spawn(async move {
        loop {
            if let Ok(view) = engine.tray_view() {
                handle
                    .update(|t| {
                        if t.view.icon != view.icon {
                            t.pixmap = pixmap(&view);
                        }
                        t.view = view;
                    })
                    .await;
            }
            match events.recv().await {
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return,
            }
        }
    });
    Ok(())
}
