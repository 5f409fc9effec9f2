//! Banners through the freedesktop notification server (`org.freedesktop.Notifications`).
//!
//! One session-bus connection, made on first use and remade after a failure, carries every post
//! and hears every click. That is why this talks zbus directly rather than through notify-rust:
//! notify-rust opens a connection per banner and waits for each banner's action on its own, and
//! some servers (GNOME Shell) send the click only to the connection that posted the banner.
//!
//! Each banner declares the `default` action, so a click on its body is reported, and carries
//! the item key as `x-dunst-stack-tag` / `x-canonical-private-synchronous`, so servers that know
//! those hints keep one banner per item even when our own replace id was lost in a crash.

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use zbus::Variant as Value;

use super::{Banner, BoxFuture, Click, Desktop, DesktopError};

const DEST: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";
const IFACE: &str = "org.freedesktop.Notifications";

pub struct Freedesktop {
    app_name: String,
    conn: tokio::sync::Mutex<Option<zbus::Connection>>,
    clicks_tx: mpsc::UnboundedSender<Click>,
    clicks_rx: Mutex<Option<mpsc::UnboundedReceiver<Click>>>,
}

impl Freedesktop {
    pub fn new(app_name: &str) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Freedesktop { app_name: app_name.into(), conn: tokio::sync::Mutex::new(None), clicks_tx: tx, clicks_rx: Mutex::new(Some(rx)) }
    }

    /// The live connection, connecting (and starting the click listener) when there is none.
    async fn connection(&self) -> Result<zbus::Connection, DesktopError> {
        let mut guard = self.conn.lock().await;
        if let Some(c) = guard.as_ref() {
            return Ok(c.clone());
        }
        let conn = zbus::Connection::session().await.map_err(unavailable)?;
        listen_for_clicks(&conn, self.clicks_tx.clone()).await.map_err(unavailable)?;
        *guard = Some(conn.clone());
        Ok(conn)
    }

    async fn forget_connection(&self) {
        *self.conn.lock().await = None;
    }

    async fn notify(&self, banner: &Banner) -> Result<u32, DesktopError> {
        let conn = self.connection().await?;
        let mut hints: HashMap<&str, Value<'_>> = HashMap::new();
        hints.insert("urgency", Value::U8(if banner.urgent { 2 } else { 1 }));
        hints.insert("x-dunst-stack-tag", Value::Str(banner.item.as_str().into()));
        hints.insert("x-canonical-private-synchronous", Value::Str(banner.item.as_str().into()));
        hints.insert("x-cmux-tray-notice", Value::Str(banner.notice_key.as_str().into()));
        hints.insert("desktop-entry", Value::Str("cmux-tray".into()));
        if banner.sound {
            hints.insert("sound-name", Value::Str("message-new-instant".into()));
        } else {
            hints.insert("suppress-sound", Value::Bool(true));
        }
        let actions = vec!["default", "Open"];
        let reply = conn
            .call_method(
                Some(DEST),
                PATH,
                Some(IFACE),
                "Notify",
                &(
                    self.app_name.as_str(),
                    banner.replaces.unwrap_or(0),
                    "",
                    banner.title.as_str(),
                    banner.body.as_str(),
                    actions,
                    hints,
                    -1i32,
                ),
            )
            .await;
        match reply {
            Ok(msg) => msg.body().deserialize::<u32>().map_err(unavailable),
            Err(e) => {
                self.forget_connection().await;
                Err(unavailable(e))
            }
        }
    }
}

impl Desktop for Freedesktop {
    fn post<'a>(&'a self, banner: &'a Banner) -> BoxFuture<'a, Result<u32, DesktopError>> {
        Box::pin(self.notify(banner))
    }

    fn withdraw(&self, banner_id: u32) -> BoxFuture<'_, Result<(), DesktopError>> {
        Box::pin(async move {
            let conn = self.connection().await?;
            conn.call_method(Some(DEST), PATH, Some(IFACE), "CloseNotification", &(banner_id,)).await.map(drop).map_err(unavailable)
        })
    }

    fn clicks(&self) -> Option<mpsc::UnboundedReceiver<Click>> {
        self.clicks_rx.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

async fn listen_for_clicks(conn: &zbus::Connection, tx: mpsc::UnboundedSender<Click>) -> zbus::Result<()> {
    let rule = zbus::MatchRule::builder().msg_type(zbus::message::Type::Signal).interface(IFACE).member("ActionInvoked").build()?;
    zbus::fdo::DBusProxy::new(conn).await?.add_match_rule(rule).await?;
    let mut stream = zbus::MessageStream::from(conn);
    tokio::spawn(async move {
        while let Some(Ok(msg)) = stream.next().await {
            let header = msg.header();
            if header.message_type() != zbus::message::Type::Signal || header.member().map(|m| m.as_str()) != Some("ActionInvoked") {
                continue;
            }
            if let Ok((banner_id, action)) = msg.body().deserialize::<(u32, String)>()
                && action == "default"
                && tx.send(Click { banner_id }).is_err()
            {
                break;
            }
        }
    });
    Ok(())
}

fn unavailable(e: impl std::fmt::Display) -> DesktopError {
    DesktopError::Unavailable(e.to_string())
}
