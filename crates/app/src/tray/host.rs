//! The tray's host on Linux: the `org.kde.StatusNotifierWatcher` a desktop's panel serves. With
//! none on the session bus (stock GNOME, or a panel that went away) the item shows nowhere, so
//! the app says so once in a banner and, signed out, opens the sign-in window; its windows do
//! all the menu does (docs/architecture.md, "No tray host"). When a watcher appears, the item is
//! registered with it, by ksni and else here: status-notifier-watcher takes its name before it
//! serves its object, so an item that registers on the name's arrival is refused (UnknownObject)
//! and ksni does not try again; ksni also misses a watcher that comes between its first try and
//! its subscription to the name's changes.

use std::sync::Arc;
use std::time::Duration;

use cmux_tray_channel::Page;
use cmux_tray_engine::lang::say;
use cmux_tray_engine::notice::local::LocalPost;
use futures_util::StreamExt;
use tokio::time::Instant;
use zbus::fdo::{DBusProxy, NameOwnerChangedStream};

use crate::App;

pub const WATCHER: &str = "org.kde.StatusNotifierWatcher";
/// The accessibility bus's launcher (AT-SPI): a desktop session starts it at login, a screen
/// reader needs it. The windows skip GTK's bridge to it when it is not there (windows_process.rs).
const A11Y_BUS: &str = "org.a11y.Bus";
const WATCHER_PATH: &str = "/StatusNotifierWatcher";

/// How long the watcher may be missing before it is said: a panel starts beside the app at
/// login, and a shell restarting (GNOME on X11) is back within it.
const GRACE: Duration = Duration::from_secs(4);
/// How long ksni is given to register with a watcher that appeared before we look.
const SETTLE: Duration = Duration::from_millis(300);
/// The longest wait between two registrations of our own with a watcher that has not listed us.
const RETRY_AT_MOST: Duration = Duration::from_secs(5);

/// The watcher's comings and goings, heard from before the item is published, so none falls
/// between the item's first registration and the watching.
pub struct Watch {
    bus: DBusProxy<'static>,
    changes: NameOwnerChangedStream,
    /// The accessibility bus's comings and goings.
    a11y: NameOwnerChangedStream,
}

pub async fn watch() -> zbus::Result<Watch> {
    let connection = zbus::Connection::session().await?;
    let bus = DBusProxy::new(&connection).await?;
    let changes = bus.receive_name_owner_changed_with_args(&[(0, WATCHER)]).await?;
    let a11y = bus.receive_name_owner_changed_with_args(&[(0, A11Y_BUS)]).await?;
    Ok(Watch { bus, changes, a11y })
}

/// Where the watcher is, as this process knows it.
enum Host {
    /// None since `since`; `said` once the person was told.
    Missing { since: Instant, said: bool },
    /// A watcher is there; our item is listed by it, or is registered again at `next` (after
    /// waiting `wait`).
    There { listed: bool, next: Instant, wait: Duration },
}

impl Host {
    fn arrived(now: Instant) -> Host {
        Host::There { listed: false, next: now + SETTLE, wait: SETTLE }
    }

    /// When something is due: the grace's end, or the next look at the watcher's list.
    fn due(&self) -> Option<Instant> {
        match self {
            Host::Missing { since, said: false } => Some(*since + GRACE),
            Host::There { listed: false, next, .. } => Some(*next),
            _ => None,
        }
    }
}

impl Watch {
    /// Keeps `item` (our bus name) registered with every watcher that comes, and says when
    /// none is there. Runs until the app ends.
    pub fn keep(self, app: Arc<App>, item: String) {
        let Watch { bus, mut changes, mut a11y } = self;
        app.clone().spawn(async move {
            let a11y_there = bus.name_has_owner(A11Y_BUS.try_into().expect("a bus name")).await.unwrap_or(true);
            app.windows.accessibility_bus(a11y_there);
            let now = Instant::now();
            let there = bus.name_has_owner(WATCHER.try_into().expect("a bus name")).await.unwrap_or(false);
            let mut host = if there { Host::arrived(now) } else { Host::Missing { since: now, said: false } };
            // The banner that said so, withdrawn once the item shows again.
            let mut said: Option<String> = None;
            loop {
                let due = host.due();
                tokio::select! {
                    change = a11y.next() => {
                        let Some(Ok(args)) = change.as_ref().map(|c| c.args()) else { continue };
                        app.windows.accessibility_bus(args.new_owner.is_some());
                    }
                    change = changes.next() => {
                        let Some(change) = change else { return };
                        let Ok(args) = change.args() else { continue };
                        let now = Instant::now();
                        host = match (args.new_owner.as_ref(), &host) {
                            (Some(_), _) => {
                                tracing::info!("a tray host ({WATCHER}) appeared");
                                Host::arrived(now)
                            }
                            (None, Host::Missing { .. }) => continue,
                            (None, Host::There { .. }) => {
                                tracing::warn!("the tray host ({WATCHER}) went away");
                                Host::Missing { since: now, said: false }
                            }
                        };
                    }
                    () = sleep_until(due) => match &mut host {
                        Host::Missing { said: s, .. } => {
                            *s = true;
                            said = say_missing(&app).await.or(said);
                        }
                        Host::There { listed, next, wait } => {
                            if is_listed(&bus, &item).await {
                                *listed = true;
                                tracing::info!(item, "the tray item is registered with the tray host");
                                if let Some(key) = said.take() {
                                    let _ = app.engine.revealed(&key).await;
                                }
                            } else {
                                register(&bus, &item).await;
                                *wait = (*wait * 2).min(RETRY_AT_MOST);
                                *next = Instant::now() + *wait;
                            }
                        }
                    }
                }
            }
        });
    }
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The watcher, as a proxy that reads its properties each time (a watcher's list changes).
async fn watcher(bus: &DBusProxy<'_>) -> zbus::Result<zbus::Proxy<'static>> {
    zbus::proxy::Builder::new(bus.inner().connection())
        .destination(WATCHER)?
        .path(WATCHER_PATH)?
        .interface(WATCHER)?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
}

/// Whether the watcher lists `item` (as the bus name alone, or as `name/path`).
async fn is_listed(bus: &DBusProxy<'_>, item: &str) -> bool {
    let items = match watcher(bus).await {
        Ok(w) => w.get_property::<Vec<String>>("RegisteredStatusNotifierItems").await,
        Err(e) => Err(e),
    };
    match items {
        Ok(items) => items.iter().any(|i| i.split('/').next() == Some(item)),
        Err(e) => {
            tracing::debug!("the tray host's items: {e}");
            false
        }
    }
}

/// Registers our item with the watcher ourselves (it names our item by its bus name).
async fn register(bus: &DBusProxy<'_>, item: &str) {
    let registered = match watcher(bus).await {
        Ok(w) => w.call_method("RegisterStatusNotifierItem", &(item,)).await.map(|_| ()),
        Err(e) => Err(e),
    };
    match registered {
        Ok(()) => tracing::info!(item, "registered the tray item with the tray host"),
        Err(e) => tracing::debug!("registering the tray item: {e}"),
    }
}

/// The bus name ksni took for our item (`org.kde.StatusNotifierItem-<pid>-<n>`).
pub async fn item_name(watch: &Watch) -> Option<String> {
    let prefix = format!("org.kde.StatusNotifierItem-{}-", std::process::id());
    let names = watch.bus.list_names().await.ok()?;
    names.into_iter().map(|n| n.to_string()).find(|n| n.starts_with(&prefix))
}

/// Says, once, that the tray cannot show (docs/notices.md, "The app's own notices"), and opens
/// the sign-in window when no one is signed in: the menu's "Sign in…" is out of reach. Returns
/// the banner's notice key.
async fn say_missing(app: &Arc<App>) -> Option<String> {
    tracing::warn!("no tray host ({WATCHER}) on the session bus: the tray icon shows nowhere; said in a banner");
    let lang = app.engine.lang();
    let post = LocalPost { title: say!(lang, "no-tray-title"), body: say!(lang, "no-tray-body"), ..Default::default() };
    let key = match app.engine.post_local(post).await {
        Ok(notice) => Some(notice.key),
        Err(e) => {
            tracing::warn!("the notice that no tray host runs: {e}");
            None
        }
    };
    if app.engine.tray_view().is_ok_and(|v| !v.signed_in) {
        app.windows.open(app, Page::SignIn, None);
    }
    key
}
