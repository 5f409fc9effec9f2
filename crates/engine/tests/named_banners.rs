//! The banners' promises on macOS and Windows (docs/notices.md §4: one live banner per item,
//! replaced, withdrawn, clicked; never shown twice), checked on each platform's backend logic:
//! the engine over `Named`, the Windows toasts' or macOS user notifications' backend, and a
//! scripted stand-in of that platform's centre (desktop/named/scripted.rs), which outlives an
//! engine as the system's does. These run in real time: a post is a blocking platform call.

mod common;

use std::sync::Arc;
use std::time::Duration;

use cmux_tray_engine::desktop::Desktop;
use cmux_tray_engine::desktop::named::scripted::{Scripted, ScriptedToasts, ScriptedUserNotifications};
use cmux_tray_engine::desktop::named::toasts::{Toast, ToastApi, Toasts};
use cmux_tray_engine::desktop::named::user_notifications::{Authorization, UserNotifications};
use cmux_tray_engine::desktop::named::{BannerName, NameKey, Named};
use cmux_tray_engine::notice::local::LocalPost;
use cmux_tray_engine::service::EngineEvent;
use cmux_tray_engine::{Engine, EngineOptions};
use common::eventually;

const LIMIT: Duration = Duration::from_secs(10);

/// The banners' key of the person these engines run for: one, as the file kept in their data.
fn key() -> NameKey {
    NameKey::from_bytes([42; 16])
}

/// A platform's stand-in, and the engine's desktop over its backend.
trait Platform: Clone + Send + 'static {
    fn desktop(&self) -> Arc<dyn Desktop>;
    fn centre(&self) -> &Scripted;
}

impl Platform for ScriptedToasts {
    fn desktop(&self) -> Arc<dyn Desktop> {
        Arc::new(Named::new(Toasts::new(self.clone()), key()))
    }
    fn centre(&self) -> &Scripted {
        &self.centre
    }
}

impl Platform for ScriptedUserNotifications {
    fn desktop(&self) -> Arc<dyn Desktop> {
        Arc::new(Named::new(UserNotifications::new(self.clone()), key()))
    }
    fn centre(&self) -> &Scripted {
        &self.centre
    }
}

/// An engine on `dir`'s store, not signed in (local notices need no cloud), over `desktop`.
fn options(dir: &std::path::Path, desktop: Arc<dyn Desktop>) -> EngineOptions {
    let mut opts = EngineOptions::new("http://127.0.0.1:9", "http://127.0.0.1:9", dir.join("state.sqlite3"), desktop);
    opts.desktop_retry = Duration::from_millis(100);
    opts
}

/// A notice from a cmux surface: one live banner per surface.
fn post(title: &str, surface: &str) -> LocalPost {
    LocalPost { title: title.into(), workspace_id: Some("W1".into()), surface_id: Some(surface.into()), ..Default::default() }
}

/// Whether the centre lists exactly one banner, under `name`, showing `title`.
fn lists_only(centre: &Scripted, name: BannerName, title: &str) -> bool {
    matches!(centre.listed().as_slice(), [one] if one.name == name.to_string() && one.content.contains(title))
}

/// The notice of the next click the engine tells, past any redraw it tells meanwhile.
async fn next_click(events: &mut tokio::sync::broadcast::Receiver<EngineEvent>) -> Box<cmux_tray_engine::store::StoredNotice> {
    let click = async {
        loop {
            if let Ok(EngineEvent::Clicked { notice }) = events.recv().await {
                return notice;
            }
        }
    };
    tokio::time::timeout(LIMIT, click).await.expect("the click reaches the engine")
}

/// A second notice for the item replaces its banner in place; a click on it opens its notice;
/// marking all read takes it away.
async fn replaced_clicked_and_withdrawn(platform: impl Platform) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(options(dir.path(), platform.desktop())).await.unwrap();
    let centre = platform.centre().clone();

    let first = engine.post_local(post("first", "S1")).await.unwrap();
    let name = BannerName::of_item(&key(), &first.item);
    eventually("the first banner is listed", LIMIT, || lists_only(&centre, name, "first")).await;
    engine.post_local(post("second", "S1")).await.unwrap();
    eventually("the second banner took the first's place", LIMIT, || lists_only(&centre, name, "second")).await;
    assert_eq!(centre.shown().len(), 2, "each notice shown once");

    let mut events = engine.subscribe();
    centre.click(&name.to_string());
    let clicked = next_click(&mut events).await;
    assert_eq!(clicked.title, "second", "a click opens the notice its banner shows");

    engine.mark_all_read().await.unwrap();
    eventually("the banner is taken away", LIMIT, || centre.listed().is_empty()).await;
    assert!(centre.removed().contains(&name.to_string()));

    // Removed, the name is free: the item's next notice is a banner of its own again.
    engine.post_local(post("third", "S1")).await.unwrap();
    eventually("a new banner under the same name", LIMIT, || lists_only(&centre, name, "third")).await;
    assert_eq!(centre.shown().len(), 3);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toasts_are_replaced_clicked_and_withdrawn() {
    replaced_clicked_and_withdrawn(ScriptedToasts::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_notifications_are_replaced_clicked_and_withdrawn() {
    replaced_clicked_and_withdrawn(ScriptedUserNotifications::new(true)).await;
}

/// The app is killed after the platform took a banner and before the engine saved it as told.
/// The next engine posts it again (it cannot know it was shown), under the same name: it takes
/// the first's place, so the person sees it once; and a click on it still opens it.
async fn reposted_after_a_kill_replaces_itself(platform: impl Platform) {
    let dir = tempfile::tempdir().unwrap();
    let centre = platform.centre().clone();
    centre.hold_next_show();

    // The first engine on a runtime of its own, dropped whole: nothing of it runs after the kill.
    let killed = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let opts = options(dir.path(), platform.desktop());
    let first = killed.spawn(async move { Engine::start(opts).await.unwrap() }).await.unwrap();
    let posting = first.clone();
    let notice = killed.spawn(async move { posting.post_local(post("ended", "S1")).await.unwrap() }).await.unwrap();
    let name = BannerName::of_item(&key(), &notice.item);
    eventually("the platform took the banner", LIMIT, || centre.holding()).await;
    killed.shutdown_background();
    drop(first);
    assert!(lists_only(&centre, name, "ended"), "on screen, though never saved as told");

    let engine = Engine::start(options(dir.path(), platform.desktop())).await.unwrap();
    eventually("the next engine tells it", LIMIT, || centre.shown().len() == 2).await;
    assert!(lists_only(&centre, name, "ended"), "shown again in its own place: once on screen, {:?}", centre.listed());
    let stored = engine.local_notices(10).unwrap();
    assert_eq!(stored.len(), 1);
    eventually("saved as told, under its name's id", LIMIT, || engine.local_notices(10).unwrap()[0].banner_id == Some(name.id())).await;
    let mut events = engine.subscribe();
    centre.click(&name.to_string());
    assert_eq!(next_click(&mut events).await.key, stored[0].key, "a click opens the notice shown again");
    centre.release();
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toast_reposted_after_a_kill_replaces_itself() {
    reposted_after_a_kill_replaces_itself(ScriptedToasts::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_notification_reposted_after_a_kill_replaces_itself() {
    reposted_after_a_kill_replaces_itself(ScriptedUserNotifications::new(true)).await;
}

/// macOS: the person is asked once, at the first banner. A "no" is said in status and settings,
/// and the banners wait; turned on in System Settings, they go out; turned off again, it is said
/// again at the next banner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn macos_asks_once_and_a_refusal_is_said_until_banners_are_turned_on() {
    let platform = ScriptedUserNotifications::new(false);
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(options(dir.path(), platform.desktop())).await.unwrap();
    assert_eq!(platform.asked(), 0, "nobody is asked before a banner");
    engine.post_local(post("one", "S1")).await.unwrap();
    eventually("the refusal is said", LIMIT, || engine.banners_off().is_some()).await;
    engine.post_local(post("two", "S2")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await; // several retries (every 100 ms)
    assert_eq!(platform.asked(), 1, "asked once, never again");
    assert!(platform.centre.listed().is_empty());
    let status = engine.status().unwrap();
    let lines: Vec<String> = status.problems.iter().map(|p| p.headline(&cmux_tray_engine::lang::Lang::english())).collect();
    assert!(lines.iter().any(|l| l == "Banners are turned off for cmux-tray"), "{lines:?}");
    assert!(engine.settings_view().banners_off.is_some_and(|why| why.contains("System Settings")));

    platform.set_status(Authorization::Authorized);
    eventually("both banners go out", LIMIT, || platform.centre.listed().len() == 2).await;
    eventually("the refusal is no longer said", LIMIT, || engine.banners_off().is_none()).await;

    // Turned off again later: seen at the next banner, which waits; still nobody is asked.
    platform.set_status(Authorization::Denied);
    engine.post_local(post("three", "S3")).await.unwrap();
    eventually("the refusal is said again", LIMIT, || engine.banners_off().is_some()).await;
    assert_eq!((platform.centre.listed().len(), platform.asked()), (2, 1));
    engine.shutdown().await;
}

/// macOS: the daemon outside an app bundle never touches the centre (it would raise an
/// exception there): its notices wait, untold, for the app.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn macos_outside_an_app_bundle_keeps_notices_for_the_app() {
    let platform = ScriptedUserNotifications::unbundled();
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(options(dir.path(), platform.desktop())).await.unwrap();
    engine.post_local(post("one", "S1")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await; // several retries (every 100 ms)
    assert!(platform.centre.shown().is_empty());
    assert_eq!(platform.asked(), 0);
    let stored = engine.local_notices(10).unwrap();
    assert_eq!((stored.len(), stored[0].told_at), (1, None), "kept untold");
    engine.shutdown().await;

    let app = ScriptedUserNotifications::new(true);
    let engine = Engine::start(options(dir.path(), app.desktop())).await.unwrap();
    eventually("the app shows it", LIMIT, || app.centre.listed().len() == 1).await;
    engine.shutdown().await;
}

/// Windows: toasts turned off for the app are said, and the banners wait until turned on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_toasts_turned_off_are_said_and_wait() {
    let platform = ScriptedToasts::default();
    platform.set_disabled(Some("Notifications are turned off for cmux-tray"));
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(options(dir.path(), platform.desktop())).await.unwrap();
    engine.post_local(post("one", "S1")).await.unwrap();
    eventually("the refusal is said", LIMIT, || engine.banners_off().is_some()).await;
    assert!(platform.centre.listed().is_empty());
    platform.set_disabled(None);
    eventually("the banner goes out", LIMIT, || platform.centre.listed().len() == 1).await;
    eventually("the refusal is no longer said", LIMIT, || engine.banners_off().is_none()).await;
    engine.shutdown().await;
}

/// Windows: a toast is its tag within its group (ToastNotification.Tag). A toast of the same tag
/// in no group (shown by another part of the app, or an older one) is another toast: the
/// engine's banner neither replaces nor removes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toast_of_the_same_tag_without_the_group_is_another_toast() {
    let platform = ScriptedToasts::default();
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(options(dir.path(), platform.desktop())).await.unwrap();
    let first = engine.post_local(post("first", "S1")).await.unwrap();
    let name = BannerName::of_item(&key(), &first.item).to_string();
    eventually("the engine's toast", LIMIT, || platform.centre.listed().len() == 1).await;
    platform.show(&Toast { tag: name.clone(), group: String::new(), xml: "<toast>not ours</toast>".into() }).unwrap();
    assert_eq!(platform.centre.listed().len(), 2, "same tag, no group: another toast");

    engine.post_local(post("second", "S1")).await.unwrap();
    eventually("the engine's toast replaced", LIMIT, || platform.centre.listed().iter().any(|l| l.content.contains("second"))).await;
    engine.mark_all_read().await.unwrap();
    eventually("the engine's toast removed", LIMIT, || platform.centre.listed().len() == 1).await;
    let left = platform.centre.listed();
    assert_eq!((left[0].content.as_str(), left[0].group.as_deref()), ("<toast>not ours</toast>", Some("")), "{left:?}");
    // A tag past 64 characters is refused, as the platform's exception refuses it.
    assert!(platform.show(&Toast { tag: "x".repeat(65), group: String::new(), xml: String::new() }).is_err());
    engine.shutdown().await;
}

/// macOS: the question left on screen unanswered. The asking call waits (its handler runs only
/// at the answer) and gives up; the banners wait, untold, said as waiting for an answer; nobody
/// is asked twice; once the person says yes, each goes out once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn macos_a_question_left_unanswered_holds_the_banners_until_answered() {
    let platform = ScriptedUserNotifications::unanswered(Duration::from_millis(300));
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(options(dir.path(), platform.desktop())).await.unwrap();
    engine.post_local(post("one", "S1")).await.unwrap();
    engine.post_local(post("two", "S2")).await.unwrap();
    // Said as what holds banners back (status's "why no banner"), in the backend's words.
    eventually("the wait is said", LIMIT, || engine.no_server().is_some_and(|why| why.contains("wait for an answer"))).await;
    tokio::time::sleep(Duration::from_millis(500)).await; // several retries (every 100 ms)
    assert!(platform.centre.shown().is_empty());
    assert_eq!(platform.asked(), 1, "asked once, never again");
    assert!(engine.local_notices(10).unwrap().iter().all(|n| n.told_at.is_none()), "kept untold");

    platform.person_answers(true);
    eventually("both banners go out", LIMIT, || platform.centre.listed().len() == 2).await;
    eventually("the wait is no longer said", LIMIT, || engine.no_server().is_none()).await;
    assert_eq!((platform.centre.shown().len(), platform.asked()), (2, 1), "each once");
    engine.shutdown().await;
}
