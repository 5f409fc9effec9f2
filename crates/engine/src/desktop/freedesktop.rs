//! Banners through the freedesktop notification server (`org.freedesktop.Notifications`).
//!
//! One session-bus connection carries every post and hears every click. That is why this talks
//! zbus directly rather than through notify-rust: notify-rust opens a connection per banner and
//! waits for each banner's action on its own, and some servers (GNOME Shell) send the click only
//! to the connection that posted the banner.
//!
//! The connection outlives the server: while no server owns the name (a headless machine, a
//! desktop still starting) calls fail with "no server" and the same connection stays, its one
//! listener watching `NameOwnerChanged`, so held banners go out the moment a server appears. It is
//! remade only when the bus itself dropped it, and then its listener goes with it: never two
//! listeners, so never one click told twice. Every call has a time limit.
//!
//! Each banner declares the `default` action, so a click on its body is reported, and carries
//! the item key as `x-dunst-stack-tag` / `x-canonical-private-synchronous`, so servers that know
//! those hints keep one banner per item even when our own replace id was lost in a crash. Bodies
//! are escaped for servers that render markup (`body-markup`): text from the cloud or an agent
//! shows as the text it is.
//!
//! A banner the server has closed itself (timed out, dismissed, clicked: `NotificationClosed`) is
//! not replaced by its id: the newer notice is a banner of its own. KDE Plasma 5.27 answers a
//! replacement of a popup that timed out with the same id and shows nothing (docs/notices.md §5).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use zbus::zvariant::Value;

use futures_util::future::BoxFuture;

use super::seam::{Banner, Click, Desktop, DesktopError, DesktopEvent};
use crate::lock::Locked;

const DEST: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";
const IFACE: &str = "org.freedesktop.Notifications";
/// No D-Bus call waits longer than this: a stuck server is an absent one.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// A server may say one click more than once: GNOME Shell 43 sends `ActionInvoked` from the
/// shell and again from its notification service for each `Notify` that showed that banner
/// (docs/notices.md §5). The same banner's clicks within this are one click, as a person's
/// double click is.
const CLICK_ECHO: Duration = Duration::from_secs(1);

/// How many closed banners' ids are remembered: far more than are ever open at once.
const CLOSED_KEPT: usize = 256;

/// The banners the server said it closed, newest last; a newer notice does not replace them.
#[derive(Default)]
struct Closed(VecDeque<u32>);

impl Closed {
    fn closed(&mut self, banner_id: u32) {
        if self.0.len() == CLOSED_KEPT {
            self.0.pop_front();
        }
        self.0.push_back(banner_id);
    }

    /// The id to replace: `replaces` unless the server closed that banner.
    fn to_replace(&self, replaces: Option<u32>) -> Option<u32> {
        replaces.filter(|id| !self.0.contains(id))
    }

    /// A banner the server shows now under `banner_id` (servers reuse ids) is open again.
    fn shown(&mut self, banner_id: u32) {
        self.0.retain(|id| *id != banner_id);
    }
}

pub struct Freedesktop {
    app_name: String,
    bus: tokio::sync::Mutex<Option<Bus>>,
    events_tx: mpsc::UnboundedSender<DesktopEvent>,
    events_rx: Mutex<Option<mpsc::UnboundedReceiver<DesktopEvent>>>,
}

/// The connection and what hangs on it.
struct Bus {
    conn: zbus::Connection,
    /// The one listener (clicks, the server's arrival); stopped with the connection.
    listener: tokio::task::JoinHandle<()>,
    /// Whether the server in place renders body markup; asked once per server.
    markup: Arc<Mutex<Option<bool>>>,
    /// The banners the server closed itself, told by the listener.
    closed: Arc<Mutex<Closed>>,
}

impl Drop for Bus {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

impl Freedesktop {
    pub fn new(app_name: &str) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Freedesktop { app_name: app_name.into(), bus: tokio::sync::Mutex::new(None), events_tx: tx, events_rx: Mutex::new(Some(rx)) }
    }

    /// The live connection and its capability cache, connecting (and starting the listener)
    /// when there is none or the bus closed the last one.
    async fn bus(&self) -> Result<(zbus::Connection, Arc<Mutex<Option<bool>>>, Arc<Mutex<Closed>>), DesktopError> {
        let mut guard = self.bus.lock().await;
        if let Some(b) = guard.as_ref().filter(|b| !b.conn.is_closed()) {
            return Ok((b.conn.clone(), b.markup.clone(), b.closed.clone()));
        }
        *guard = None; // a closed connection's listener stops here
        let connect = async {
            let conn = zbus::connection::Builder::session()?.method_timeout(CALL_TIMEOUT).build().await?;
            let markup = Arc::new(Mutex::new(None));
            let closed = Arc::new(Mutex::new(Closed::default()));
            let listener = listen(&conn, self.events_tx.clone(), markup.clone(), closed.clone()).await?;
            Ok::<_, zbus::Error>(Bus { conn, listener, markup, closed })
        };
        let bus = tokio::time::timeout(CALL_TIMEOUT, connect)
            .await
            .map_err(|_| DesktopError::Unavailable("the session bus did not answer in time".into()))?
            .map_err(|e| DesktopError::Unavailable(e.to_string()))?;
        let out = (bus.conn.clone(), bus.markup.clone(), bus.closed.clone());
        *guard = Some(bus);
        Ok(out)
    }

    /// One method call on the server, within the time limit.
    async fn call<B>(&self, conn: &zbus::Connection, method: &str, body: &B) -> Result<zbus::Message, DesktopError>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        match tokio::time::timeout(CALL_TIMEOUT, conn.call_method(Some(DEST), PATH, Some(IFACE), method, body)).await {
            Err(_) => Err(DesktopError::Unavailable(format!("{method} got no answer within {CALL_TIMEOUT:?}"))),
            Ok(Ok(msg)) => Ok(msg),
            Ok(Err(e)) => Err(classify(e)),
        }
    }

    /// Whether the server renders markup in bodies (asked once per server).
    async fn renders_markup(&self, conn: &zbus::Connection, cache: &Mutex<Option<bool>>) -> Result<bool, DesktopError> {
        if let Some(known) = *cache.locked() {
            return Ok(known);
        }
        // A server that cannot say (an error answer, a strange reply) is taken at its word as
        // rendering no markup: its banners still go out, as sent.
        let caps: Vec<String> = match self.call(conn, "GetCapabilities", &()).await {
            Ok(reply) => reply.body().deserialize().unwrap_or_default(),
            Err(DesktopError::Refused(why)) => {
                tracing::info!("the notification server did not list its capabilities ({why}): bodies go as they are");
                Vec::new()
            }
            Err(absent) => return Err(absent),
        };
        let markup = caps.iter().any(|c| c == "body-markup");
        *cache.locked() = Some(markup);
        Ok(markup)
    }

    async fn notify(&self, banner: &Banner) -> Result<u32, DesktopError> {
        // D-Bus cannot carry a NUL; the bus would drop the whole connection for it.
        if banner.title.contains('\0') || banner.body.contains('\0') {
            return Err(DesktopError::Refused("its text holds a NUL character".into()));
        }
        let (conn, cache, closed) = self.bus().await?;
        let replaces = closed.locked().to_replace(banner.replaces);
        let markup = self.renders_markup(&conn, &cache).await?;
        let body = if markup { escape_markup(&banner.body) } else { banner.body.clone() };
        let mut hints: HashMap<&str, Value<'_>> = HashMap::new();
        hints.insert("urgency", Value::U8(if banner.urgent { 2 } else { 1 }));
        // The stack tags replace an item's banner whose id was lost (a crash before the id was
        // saved); a replacement by id needs neither, and mako crashes when it gets both.
        let tag = banner.item.to_string();
        if replaces.is_none() {
            hints.insert("x-dunst-stack-tag", Value::Str(tag.clone().into()));
            hints.insert("x-canonical-private-synchronous", Value::Str(tag.clone().into()));
        }
        hints.insert("x-cmux-tray-item", Value::Str(tag.into()));
        hints.insert("x-cmux-tray-notice", Value::Str(banner.notice_key.as_str().into()));
        hints.insert("desktop-entry", Value::Str("cmux-tray".into()));
        if banner.sound {
            hints.insert("sound-name", Value::Str("message-new-instant".into()));
        } else {
            hints.insert("suppress-sound", Value::Bool(true));
        }
        let actions = vec!["default", "Open"];
        let body = (self.app_name.as_str(), replaces.unwrap_or(0), "", banner.title.as_str(), body.as_str(), actions, hints, -1i32);
        let reply = self.call(&conn, "Notify", &body).await?;
        let id = reply.body().deserialize::<u32>().map_err(|e| DesktopError::Refused(format!("the answer to Notify was no id: {e}")))?;
        closed.locked().shown(id);
        Ok(id)
    }
}

impl Desktop for Freedesktop {
    fn post<'a>(&'a self, banner: &'a Banner) -> BoxFuture<'a, Result<u32, DesktopError>> {
        Box::pin(self.notify(banner))
    }

    fn withdraw(&self, banner_id: u32) -> BoxFuture<'_, Result<(), DesktopError>> {
        Box::pin(async move {
            let (conn, ..) = self.bus().await?;
            self.call(&conn, "CloseNotification", &(banner_id,)).await.map(drop)
        })
    }

    fn events(&self) -> Option<mpsc::UnboundedReceiver<DesktopEvent>> {
        self.events_rx.locked().take()
    }
}

/// What a failed call means: no server to show banners, or this banner refused.
fn classify(e: zbus::Error) -> DesktopError {
    // An error reply comes as `MethodError`, the bus's own (no such name …) too: read those by
    // their names as the bus's well-known errors, `FDO`, and any other as the server's.
    let e = match e {
        zbus::Error::MethodError(..) => match zbus::fdo::Error::from(e) {
            zbus::fdo::Error::ZBus(e) => e,
            fdo => zbus::Error::FDO(Box::new(fdo)),
        },
        e => e,
    };
    match &e {
        zbus::Error::FDO(fdo) => {
            use zbus::fdo::Error as E;
            // The name has no owner, the bus could not start one, or nobody answered.
            let absent = matches!(
                **fdo,
                E::ServiceUnknown(_)
                    | E::NameHasNoOwner(_)
                    | E::NoReply(_)
                    | E::TimedOut(_)
                    | E::Timeout(_)
                    | E::Disconnected(_)
                    | E::NoServer(_)
                    | E::IOError(_)
                    | E::SpawnExecFailed(_)
                    | E::SpawnForkFailed(_)
                    | E::SpawnChildExited(_)
                    | E::SpawnChildSignaled(_)
                    | E::SpawnFailed(_)
                    | E::SpawnFailedToSetup(_)
                    | E::SpawnConfigInvalid(_)
                    | E::SpawnServiceNotValid(_)
                    | E::SpawnServiceNotFound(_)
                    | E::SpawnPermissionsInvalid(_)
                    | E::SpawnFileInvalid(_)
                    | E::SpawnNoMemory(_)
            );
            if absent { DesktopError::Unavailable(e.to_string()) } else { DesktopError::Refused(e.to_string()) }
        }
        zbus::Error::MethodError(..) => DesktopError::Refused(e.to_string()),
        // What could not be written as a message is this banner's own problem.
        zbus::Error::Variant(_) | zbus::Error::ExcessData => DesktopError::Refused(e.to_string()),
        _ => DesktopError::Unavailable(e.to_string()),
    }
}

/// Text as text for a server that reads the body as markup (notification spec, "Markup").
pub fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Starts the connection's one listener: `ActionInvoked` (a click), `NotificationClosed` (kept in
/// `closed`) and `NameOwnerChanged` of the notification server's name (one appeared: tell the
/// engine, and ask its capabilities anew).
async fn listen(
    conn: &zbus::Connection,
    tx: mpsc::UnboundedSender<DesktopEvent>,
    markup: Arc<Mutex<Option<bool>>>,
    closed: Arc<Mutex<Closed>>,
) -> zbus::Result<tokio::task::JoinHandle<()>> {
    let dbus = zbus::fdo::DBusProxy::new(conn).await?;
    let signal = || zbus::MatchRule::builder().msg_type(zbus::message::Type::Signal);
    let clicks = signal().interface(IFACE)?.member("ActionInvoked")?.build();
    let tokens = signal().interface(IFACE)?.member("ActivationToken")?.build();
    let closings = signal().interface(IFACE)?.member("NotificationClosed")?.build();
    let owner =
        signal().sender("org.freedesktop.DBus")?.interface("org.freedesktop.DBus")?.member("NameOwnerChanged")?.arg(0, DEST)?.build();
    // A stream made before the rules are added misses nothing they let through.
    let mut stream = zbus::MessageStream::from(conn);
    dbus.add_match_rule(clicks).await?;
    dbus.add_match_rule(tokens).await?;
    dbus.add_match_rule(closings).await?;
    dbus.add_match_rule(owner).await?;
    // Who serves the banners now: a click or a token is believed from that connection alone,
    // not from any program on the bus that sends a signal of the same name.
    let mut server = dbus.get_name_owner(zbus::names::BusName::try_from(DEST)?).await.ok().map(|o| o.to_string());
    Ok(tokio::spawn(async move {
        // The spec sends a click's activation token just before its ActionInvoked.
        let mut token: Option<(u32, String)> = None;
        let mut clicked: HashMap<u32, std::time::Instant> = HashMap::new();
        while let Some(Ok(msg)) = stream.next().await {
            let header = msg.header();
            if header.message_type() != zbus::message::Type::Signal {
                continue;
            }
            let from_server = header.sender().is_some_and(|s| server.as_deref() == Some(s.as_str()));
            let ours = header.interface().is_some_and(|i| i.as_str() == IFACE) && from_server;
            let event = match header.member().map(|m| m.as_str()) {
                Some("ActionInvoked") if ours => match msg.body().deserialize::<(u32, String)>() {
                    Ok((banner_id, action)) if action == "default" => {
                        let now = std::time::Instant::now();
                        clicked.retain(|_, at| now.duration_since(*at) < CLICK_ECHO);
                        if clicked.insert(banner_id, now).is_some() {
                            tracing::debug!(banner = banner_id, "the same click said again");
                            continue;
                        }
                        let activation_token = token.take().filter(|(id, _)| *id == banner_id).map(|(_, t)| t);
                        DesktopEvent::Clicked(Click { banner_id, activation_token })
                    }
                    _ => continue,
                },
                Some("ActivationToken") if ours => {
                    // Kept only when it is a token's plain shape: it goes into a child's environment.
                    if let Ok((banner_id, t)) = msg.body().deserialize::<(u32, String)>()
                        && !t.is_empty()
                        && t.len() <= 512
                        && t.chars().all(|c| c.is_ascii_graphic())
                    {
                        token = Some((banner_id, t));
                    }
                    continue;
                }
                Some("NotificationClosed") if ours => {
                    if let Ok((banner_id, _reason)) = msg.body().deserialize::<(u32, u32)>() {
                        closed.locked().closed(banner_id);
                    }
                    continue;
                }
                Some("NameOwnerChanged") => match msg.body().deserialize::<(String, String, String)>() {
                    Ok((name, _, new_owner)) if name == DEST => {
                        // Another server, perhaps other capabilities.
                        *markup.locked() = None;
                        server = Some(new_owner.clone()).filter(|o| !o.is_empty());
                        if new_owner.is_empty() {
                            continue;
                        }
                        DesktopEvent::ServerAppeared
                    }
                    _ => continue,
                },
                _ => continue,
            };
            if tx.send(event).is_err() {
                break;
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A banner the server closed (Plasma's timed-out popup) is not replaced by its id; one it
    /// shows again under that id (a server reusing ids) is; the memory is bounded.
    #[test]
    fn a_banner_the_server_closed_is_not_replaced_by_its_id() {
        let mut closed = Closed::default();
        assert_eq!(closed.to_replace(Some(7)), Some(7));
        assert_eq!(closed.to_replace(None), None);
        closed.closed(7);
        assert_eq!(closed.to_replace(Some(7)), None, "closed by the server: a new banner");
        assert_eq!(closed.to_replace(Some(8)), Some(8));
        closed.shown(7);
        assert_eq!(closed.to_replace(Some(7)), Some(7), "shown again under the same id");
        for id in 0..(CLOSED_KEPT as u32 + 10) {
            closed.closed(id);
        }
        assert_eq!(closed.0.len(), CLOSED_KEPT);
        assert_eq!(closed.to_replace(Some(0)), Some(0), "the oldest are forgotten");
        assert_eq!(closed.to_replace(Some(CLOSED_KEPT as u32 + 9)), None);
    }

    fn error_reply(name: &str) -> zbus::Error {
        let call = zbus::Message::method_call(PATH, "Notify").unwrap().destination(DEST).unwrap().build(&()).unwrap();
        zbus::Error::MethodError(name.try_into().unwrap(), Some("said".into()), call)
    }

    /// The bus's "nobody owns that name" is no server (banners wait); the server's own error
    /// reply is that banner refused.
    #[test]
    fn an_error_reply_is_read_by_its_name() {
        for absent in ["org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"] {
            assert!(matches!(classify(error_reply(absent)), DesktopError::Unavailable(_)), "{absent}");
        }
        for refused in ["org.freedesktop.DBus.Error.InvalidArgs", "org.freedesktop.Notifications.Error.Whatever"] {
            assert!(matches!(classify(error_reply(refused)), DesktopError::Refused(_)), "{refused}");
        }
    }

    #[test]
    fn markup_is_escaped_to_the_text_it_is() {
        assert_eq!(
            escape_markup("<b>x</b> & <a href=\"y\">z</a> &amp;"),
            "&lt;b&gt;x&lt;/b&gt; &amp; &lt;a href=\"y\"&gt;z&lt;/a&gt; &amp;amp;"
        );
        assert_eq!(escape_markup("plain — text"), "plain — text");
    }
}
