//! The Linux tray: a StatusNotifierItem of our own (ksni). Tauri's tray goes through
//! libayatana-appindicator, which never implemented `Activate`, so a left click would do
//! nothing; here a left click opens the history, and the menu (served as com.canonical.dbusmenu)
//! is the shared menu, redrawn on every engine event.

use cmux_tray_engine::Engine;
use cmux_tray_engine::view::TrayView;
use ksni::menu::{StandardItem, SubMenu};
use ksni::{MenuItem, TrayMethods};
use tauri::AppHandle;

use super::{Action, Entry};

struct CmuxTray {
    view: TrayView,
    /// The icon's pixmap for `view.icon`, decoded once per state change.
    pixmap: Vec<ksni::Icon>,
    engine: Engine,
    app: AppHandle,
}

/// The state's icon as the spec's pixmap: ARGB32 in network byte order.
fn pixmap(view: &TrayView) -> Vec<ksni::Icon> {
    match tauri::image::Image::from_bytes(super::icon_png(view.icon)) {
        Ok(image) => {
            let data = image.rgba().chunks_exact(4).flat_map(|p| [p[3], p[0], p[1], p[2]]).collect();
            vec![ksni::Icon { width: image.width() as i32, height: image.height() as i32, data }]
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
            StandardItem { label, activate: Box::new(move |t: &mut CmuxTray| action.clone().run(&t.app, &t.engine)), ..Default::default() }
                .into()
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
        ksni::ToolTip { title: "cmux-tray".into(), description: super::tooltip(&self.view), ..Default::default() }
    }

    /// A left click opens the history.
    fn activate(&mut self, _x: i32, _y: i32) {
        Action::History.run(&self.app, &self.engine);
    }

    fn menu(&self) -> Vec<MenuItem<Self>> {
        super::entries(&self.view).into_iter().map(render).collect()
    }
}

/// Publishes the tray and keeps it in step with the engine.
pub async fn start(app: AppHandle, engine: Engine) -> anyhow::Result<()> {
    // Subscribe before the first read, so no change falls between the two.
    let mut events = engine.subscribe();
    let view = engine.tray_view()?;
    let tray = CmuxTray { pixmap: pixmap(&view), view, engine: engine.clone(), app };
    // A desktop may bring its tray host up after us: stay published and appear when it does.
    let handle = tray.assume_sni_available(true).spawn().await?;
    tauri::async_runtime::spawn(async move {
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
