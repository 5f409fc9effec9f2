//! The Linux tray: a StatusNotifierItem of our own (ksni). Tauri's tray goes through
//! libayatana-appindicator, which never implemented `Activate`, so a left click would do
//! nothing; here a left click opens the history, and the menu (served as com.canonical.dbusmenu)
//! is the engine's `TrayView`, redrawn on every engine event.

use cmux_tray_engine::Engine;
use cmux_tray_engine::view::{Icon, TrayView};
use ksni::menu::{StandardItem, SubMenu};
use ksni::{MenuItem, TrayMethods};
use tauri::AppHandle;

use crate::windows::{self, Page};

pub struct CmuxTray {
    view: TrayView,
    engine: Engine,
    app: AppHandle,
}

/// Runs an engine call from a menu click, off the tray's own task.
fn act<F, Fut>(engine: &Engine, f: F)
where
    F: FnOnce(Engine) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    tauri::async_runtime::spawn(f(engine.clone()));
}

fn item(label: impl Into<String>, activate: impl Fn(&mut CmuxTray) + Send + Sync + 'static) -> MenuItem<CmuxTray> {
    StandardItem { label: label.into(), activate: Box::new(activate), ..Default::default() }.into()
}

fn disabled(label: impl Into<String>) -> MenuItem<CmuxTray> {
    StandardItem { label: label.into(), enabled: false, ..Default::default() }.into()
}

/// A round dot in the state's colour, ARGB32 in network byte order (the spec's pixmap format).
fn dot(icon: Icon) -> ksni::Icon {
    let (r, g, b) = match icon {
        Icon::Problem => (0xd1, 0x24, 0x2f),
        Icon::SignedOut => (0x8c, 0x95, 0x9f),
        Icon::Paused => (0xbf, 0x87, 0x00),
        Icon::Unread => (0x1f, 0x6f, 0xeb),
        Icon::Following => (0x1a, 0x7f, 0x37),
        Icon::Idle => (0x57, 0x60, 0x6a),
    };
    let size = 22i32;
    let mut data = Vec::with_capacity((size * size * 4) as usize);
    let c = (size as f32 - 1.0) / 2.0;
    for y in 0..size {
        for x in 0..size {
            let d = ((x as f32 - c).powi(2) + (y as f32 - c).powi(2)).sqrt();
            let alpha = if d <= c - 1.0 { 255 } else if d <= c { 128 } else { 0 };
            data.extend_from_slice(&[alpha, r, g, b]);
        }
    }
    ksni::Icon { width: size, height: size, data }
}

impl ksni::Tray for CmuxTray {
    fn id(&self) -> String {
        "cmux-tray".into()
    }

    fn title(&self) -> String {
        "cmux-tray".into()
    }

    fn icon_pixmap(&self) -> Vec<ksni::Icon> {
        vec![dot(self.view.icon)]
    }

    fn status(&self) -> ksni::Status {
        match self.view.icon {
            Icon::Problem | Icon::Unread => ksni::Status::NeedsAttention,
            _ => ksni::Status::Active,
        }
    }

    fn tool_tip(&self) -> ksni::ToolTip {
        let mut lines = vec![self.view.account.clone()];
        if self.view.unread > 0 {
            lines.push(format!("{} unread", self.view.unread));
        }
        lines.extend(self.view.problems.iter().cloned());
        ksni::ToolTip { title: "cmux-tray".into(), description: lines.join("\n"), ..Default::default() }
    }

    /// A left click opens the history.
    fn activate(&mut self, _x: i32, _y: i32) {
        windows::open(&self.app, Page::History, None);
    }

    fn menu(&self) -> Vec<MenuItem<Self>> {
        let v = &self.view;
        let mut menu = Vec::new();
        if v.signed_in {
            let sign_out = item("Sign out", |t| {
                act(&t.engine, |e| async move {
                    if let Err(err) = e.sign_out().await {
                        tracing::error!("signing out: {err}");
                    }
                })
            });
            menu.push(SubMenu { label: v.account.clone(), submenu: vec![sign_out], ..Default::default() }.into());
        } else {
            menu.push(item(v.account.clone(), |t| windows::open(&t.app, Page::SignIn, None)));
        }
        for p in &v.problems {
            menu.push(disabled(format!("⚠ {p}")));
        }
        menu.push(MenuItem::Separator);
        let follows: Vec<MenuItem<Self>> = if v.follows.is_empty() {
            vec![disabled("Nothing is being followed")]
        } else {
            v.follows
                .iter()
                .map(|f| {
                    let target = f.item.clone();
                    item(f.label.clone(), move |t| windows::open_item(&t.app, &target))
                })
                .collect()
        };
        menu.push(SubMenu { label: format!("Following ({})", v.follows.len()), submenu: follows, ..Default::default() }.into());
        menu.push(MenuItem::Separator);
        menu.push(disabled(if v.unread > 0 { format!("Last notices ({} unread)", v.unread) } else { "Last notices".into() }));
        for n in &v.notices {
            let label = if n.unread { format!("● {}", n.label) } else { format!("   {}", n.label) };
            let key = n.key.clone();
            // As a click on its banner: the terminal it came from, or its card.
            menu.push(item(label, move |t| {
                let key = key.clone();
                act(&t.engine, |e| async move {
                    if let Err(err) = e.open_notice(&key).await {
                        tracing::warn!("opening notice {key}: {err}");
                    }
                })
            }));
        }
        menu.push(item("Mark all read", |t| {
            act(&t.engine, |e| async move {
                let _ = e.mark_all_read().await;
            })
        }));
        menu.push(MenuItem::Separator);
        let mut pause = vec![
            item("For 1 hour", |t| {
                let until = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
                let _ = t.engine.pause(Some(until));
            }),
            item("Until tomorrow", |t| {
                if let Some(until) = cmux_tray_engine::policy::tomorrow_morning(&jiff::Zoned::now()) {
                    let _ = t.engine.pause(Some(until));
                }
            }),
        ];
        if v.paused.is_some() {
            pause.push(item("Resume", |t| {
                let _ = t.engine.resume();
            }));
        }
        let pause_label = match &v.paused {
            Some(until) => format!("Notifications paused ({until})"),
            None => "Pause notifications".into(),
        };
        menu.push(SubMenu { label: pause_label, submenu: pause, ..Default::default() }.into());
        menu.push(item("Settings…", |t| windows::open(&t.app, Page::Settings, None)));
        menu.push(MenuItem::Separator);
        menu.push(item("Quit", |t| t.app.exit(0)));
        menu
    }
}

/// Publishes the tray and keeps it in step with the engine.
pub async fn start(app: AppHandle, engine: Engine) -> anyhow::Result<()> {
    // Subscribe before the first read, so no change falls between the two.
    let mut events = engine.subscribe();
    let tray = CmuxTray { view: engine.tray_view()?, engine: engine.clone(), app };
    // A desktop may bring its tray host up after us: stay published and appear when it does.
    let handle = tray.assume_sni_available(true).spawn().await?;
    tauri::async_runtime::spawn(async move {
        loop {
            if let Ok(view) = engine.tray_view() {
                handle.update(|t| t.view = view).await;
            }
            match events.recv().await {
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return,
            }
        }
    });
    Ok(())
}
