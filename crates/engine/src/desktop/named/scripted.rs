//! Stand-ins for the two platforms' notification centres, scripted by tests: each keeps what a
//! real centre keeps and does with it what the platform's documentation says (each rule below
//! names its page); docs/architecture.md "Banners on each platform" lists them and what no
//! stand-in can show. They outlive an engine, as the system's centre outlives the app: a test can
//! stop an engine in the middle of a post and start another on the same store.
//!
//! Windows (learn.microsoft.com, Windows.UI.Notifications):
//! - `ToastNotification.Tag` is "the unique identifier of this notification within the
//!   notification Group": a toast replaces the listed one with the same tag *and* group; a tag in
//!   another group (or in none) is another toast. An empty tag, or a tag or group over 64
//!   characters, is refused (an exception; 64 since the Creators Update).
//! - `ToastNotificationHistory.Remove(tag, group)` removes that pair only.
//! - `ToastNotifier.Setting` other than `Enabled`: the app's toasts are turned off.
//!
//! macOS (developer.apple.com, UserNotifications):
//! - `UNNotificationRequest.identifier`: a request with an identifier already used replaces that
//!   notification; one removed (`removeDeliveredNotificationsWithIdentifiers`) is gone, and the
//!   identifier's next request is a new banner.
//! - `addNotificationRequest` by an app not authorized fails (`UNErrorCodeNotificationsNotAllowed`).
//! - `requestAuthorizationWithOptions:completionHandler:` shows the question once; its handler
//!   runs when the person answers, so a question left on screen leaves the call waiting.

use std::sync::{Arc, Condvar, Mutex};

use super::toasts::{Toast, ToastApi};
use super::user_notifications::{Authorization, CenterApi, Request};
use crate::lock::Locked;

/// A banner as a centre lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// The tag (Windows) or identifier (macOS).
    pub name: String,
    /// The toast's group (Windows); `None` on macOS, where the identifier alone is the key.
    pub group: Option<String>,
    /// The toast's XML (Windows) or the request's title (macOS).
    pub content: String,
}

impl Listed {
    fn same(&self, name: &str, group: Option<&str>) -> bool {
        self.name == name && self.group.as_deref() == group
    }
}

type Told = Arc<dyn Fn(&str) + Send + Sync>;

/// What both stand-ins keep.
#[derive(Default)]
struct Centre {
    /// On screen or in the centre's list, oldest first; one per name.
    listed: Vec<Listed>,
    /// Every banner shown, in order (a replacement too).
    shown: Vec<Listed>,
    removed: Vec<String>,
    clicked: Option<Told>,
    /// The next show lists its banner, then does not return until released: the app stopped
    /// between the platform taking the banner and the engine saving it.
    hold_next: bool,
    held: bool,
}

#[derive(Default)]
struct Shared {
    centre: Mutex<Centre>,
    released: Condvar,
}

impl Shared {
    fn show(&self, listed: Listed) {
        let mut c = self.centre.locked();
        c.listed.retain(|l| !l.same(&listed.name, listed.group.as_deref()));
        c.listed.push(listed.clone());
        c.shown.push(listed);
        if std::mem::take(&mut c.hold_next) {
            c.held = true;
            while c.held {
                c = self.released.wait(c).unwrap_or_else(|e| e.into_inner());
            }
        }
    }

    fn remove(&self, name: &str, group: Option<&str>) {
        let mut c = self.centre.locked();
        c.listed.retain(|l| !l.same(name, group));
        c.removed.push(name.into());
    }

    fn click(&self, name: &str) {
        let told = self.centre.locked().clicked.clone();
        if let Some(told) = told {
            told(name);
        }
    }
}

/// The test's handle on a stand-in: what is listed, and what a person or the system does.
#[derive(Clone, Default)]
pub struct Scripted(Arc<Shared>);

impl Scripted {
    /// The banners listed now, oldest first.
    pub fn listed(&self) -> Vec<Listed> {
        self.0.centre.locked().listed.clone()
    }

    /// Every banner shown so far, a replacement included.
    pub fn shown(&self) -> Vec<Listed> {
        self.0.centre.locked().shown.clone()
    }

    /// Every name removed so far.
    pub fn removed(&self) -> Vec<String> {
        self.0.centre.locked().removed.clone()
    }

    /// A click on the body of the banner named `name`, as the platform reports it.
    pub fn click(&self, name: &str) {
        self.0.click(name);
    }

    /// The next banner shown is listed, and its show call then waits until [`Scripted::release`].
    pub fn hold_next_show(&self) {
        self.0.centre.locked().hold_next = true;
    }

    /// Whether a show call is waiting.
    pub fn holding(&self) -> bool {
        self.0.centre.locked().held
    }

    pub fn release(&self) {
        self.0.centre.locked().held = false;
        self.0.released.notify_all();
    }
}

/// A stand-in for Windows' toast notifier and its history.
#[derive(Clone, Default)]
pub struct ScriptedToasts {
    pub centre: Scripted,
    disabled: Arc<Mutex<Option<String>>>,
}

impl ScriptedToasts {
    /// Toasts turned off for the app (`Some(why)`), or on.
    pub fn set_disabled(&self, why: Option<&str>) {
        *self.disabled.locked() = why.map(String::from);
    }
}

impl ToastApi for ScriptedToasts {
    fn disabled(&self) -> Result<Option<String>, String> {
        Ok(self.disabled.locked().clone())
    }

    fn show(&self, toast: &Toast) -> Result<(), String> {
        // An empty group is one never set: a toast of that tag alone (`Remove(tag)` removes it).
        if toast.tag.is_empty() || toast.tag.chars().count() > 64 || toast.group.chars().count() > 64 {
            return Err("a toast's tag holds 1 to 64 characters and its group at most 64".into());
        }
        self.centre.0.show(Listed { name: toast.tag.clone(), group: Some(toast.group.clone()), content: toast.xml.clone() });
        Ok(())
    }

    fn remove(&self, tag: &str, group: &str) -> Result<(), String> {
        self.centre.0.remove(tag, Some(group));
        Ok(())
    }

    fn on_activated(&self, activated: Told) {
        self.centre.0.centre.locked().clicked = Some(activated);
    }
}

/// A stand-in for macOS's `UNUserNotificationCenter`, with the person's answer to the one
/// question scripted.
#[derive(Clone)]
pub struct ScriptedUserNotifications {
    pub centre: Scripted,
    /// The person, and the signal that they answered.
    person: Arc<(Mutex<Person>, Condvar)>,
}

struct Person {
    bundled: bool,
    status: Authorization,
    /// What the person answers when asked; `None` leaves the question on screen.
    answers: Option<bool>,
    asked: usize,
    /// How long the platform call waits for an unanswered question before it gives up, as the
    /// real binding does after its own limit (macos.rs: five minutes).
    gives_up_after: std::time::Duration,
}

impl ScriptedUserNotifications {
    /// A centre in an app bundle whose person has not been asked yet, and will say `answers`.
    pub fn new(answers: bool) -> Self {
        Self::asking(Some(answers))
    }

    /// A centre whose person leaves the question on screen, unanswered, until
    /// [`Self::person_answers`]; the asking call gives up after `gives_up_after`.
    pub fn unanswered(gives_up_after: std::time::Duration) -> Self {
        let s = Self::asking(None);
        s.person.0.locked().gives_up_after = gives_up_after;
        s
    }

    fn asking(answers: Option<bool>) -> Self {
        let person = Person {
            bundled: true,
            status: Authorization::NotDetermined,
            answers,
            asked: 0,
            gives_up_after: std::time::Duration::from_secs(300),
        };
        ScriptedUserNotifications { centre: Scripted::default(), person: Arc::new((Mutex::new(person), Condvar::new())) }
    }

    /// The person answers the question on screen (or, asked before, in System Settings).
    pub fn person_answers(&self, yes: bool) {
        let mut p = self.person.0.locked();
        p.answers = Some(yes);
        p.status = if yes { Authorization::Authorized } else { Authorization::Denied };
        self.person.1.notify_all();
    }

    /// A process outside any app bundle (the daemon run from a shell).
    pub fn unbundled() -> Self {
        let s = Self::new(true);
        s.person.0.locked().bundled = false;
        s
    }

    /// How often the person was asked.
    pub fn asked(&self) -> usize {
        self.person.0.locked().asked
    }

    /// The person changes their mind in System Settings.
    pub fn set_status(&self, status: Authorization) {
        self.person.0.locked().status = status;
    }
}

impl CenterApi for ScriptedUserNotifications {
    fn bundled(&self) -> bool {
        self.person.0.locked().bundled
    }

    fn authorization(&self) -> Result<Authorization, String> {
        let p = self.person.0.locked();
        // The real centre raises an exception outside a bundle; the backend never asks there.
        assert!(p.bundled, "the notification centre asked outside an app bundle");
        Ok(p.status)
    }

    fn request_authorization(&self) -> Result<bool, String> {
        let (person, answered) = &*self.person;
        let mut p = person.locked();
        p.asked += 1;
        // Asked once, the answer stands: the system never asks the person again.
        if p.status == Authorization::NotDetermined {
            let limit = p.gives_up_after;
            let (waited, _) = answered.wait_timeout_while(p, limit, |p| p.answers.is_none()).unwrap_or_else(|e| e.into_inner());
            p = waited;
            match p.answers {
                Some(yes) => p.status = if yes { Authorization::Authorized } else { Authorization::Denied },
                None => return Err(format!("the notification centre did not answer the question to show banners within {limit:?}")),
            }
        }
        Ok(p.status == Authorization::Authorized)
    }

    fn add(&self, request: &Request) -> Result<(), String> {
        let p = self.person.0.locked();
        assert!(p.bundled, "a banner added outside an app bundle");
        if p.status != Authorization::Authorized {
            return Err("Notifications are not allowed for this application".into());
        }
        drop(p);
        self.centre.0.show(Listed { name: request.identifier.clone(), group: None, content: request.title.clone() });
        Ok(())
    }

    fn remove(&self, identifier: &str) {
        self.centre.0.remove(identifier, None);
    }

    fn on_click(&self, clicked: Told) {
        self.centre.0.centre.locked().clicked = Some(clicked);
    }
}
