//! Stand-ins for the two platforms' notification centres, scripted by tests: each keeps what a
//! real centre keeps (the banners listed, under their tag or identifier) and does what it does
//! with them (a second banner of the same name takes the first's place; removing one takes it
//! away; a click tells its name). They outlive an engine, as the system's centre outlives the
//! app: a test can stop an engine in the middle of a post and start another on the same store.

use std::sync::{Arc, Condvar, Mutex};

use super::toasts::{Toast, ToastApi};
use super::user_notifications::{Authorization, CenterApi, Request};
use crate::lock::Locked;

/// A banner as a centre lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// The tag (Windows) or identifier (macOS).
    pub name: String,
    /// The toast's XML (Windows) or the request's title (macOS).
    pub content: String,
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
        c.listed.retain(|l| l.name != listed.name);
        c.listed.push(listed.clone());
        c.shown.push(listed);
        if std::mem::take(&mut c.hold_next) {
            c.held = true;
            while c.held {
                c = self.released.wait(c).unwrap_or_else(|e| e.into_inner());
            }
        }
    }

    fn remove(&self, name: &str) {
        let mut c = self.centre.locked();
        c.listed.retain(|l| l.name != name);
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
        // The history keys a toast by tag and group; the app uses one group.
        self.centre.0.show(Listed { name: toast.tag.clone(), content: toast.xml.clone() });
        Ok(())
    }

    fn remove(&self, tag: &str, _group: &str) -> Result<(), String> {
        self.centre.0.remove(tag);
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
    person: Arc<Mutex<Person>>,
}

struct Person {
    bundled: bool,
    status: Authorization,
    /// What the person answers when asked.
    answers: bool,
    asked: usize,
}

impl ScriptedUserNotifications {
    /// A centre in an app bundle whose person has not been asked yet, and will say `answers`.
    pub fn new(answers: bool) -> Self {
        let person = Person { bundled: true, status: Authorization::NotDetermined, answers, asked: 0 };
        ScriptedUserNotifications { centre: Scripted::default(), person: Arc::new(Mutex::new(person)) }
    }

    /// A process outside any app bundle (the daemon run from a shell).
    pub fn unbundled() -> Self {
        let s = Self::new(true);
        s.person.locked().bundled = false;
        s
    }

    /// How often the person was asked.
    pub fn asked(&self) -> usize {
        self.person.locked().asked
    }

    /// The person changes their mind in System Settings.
    pub fn set_status(&self, status: Authorization) {
        self.person.locked().status = status;
    }
}

impl CenterApi for ScriptedUserNotifications {
    fn bundled(&self) -> bool {
        self.person.locked().bundled
    }

    fn authorization(&self) -> Result<Authorization, String> {
        let p = self.person.locked();
        // The real centre raises an exception outside a bundle; the backend never asks there.
        assert!(p.bundled, "the notification centre asked outside an app bundle");
        Ok(p.status)
    }

    fn request_authorization(&self) -> Result<bool, String> {
        let mut p = self.person.locked();
        p.asked += 1;
        // Asked once, the answer stands: the system never asks the person again.
        if p.status == Authorization::NotDetermined {
            p.status = if p.answers { Authorization::Authorized } else { Authorization::Denied };
        }
        Ok(p.status == Authorization::Authorized)
    }

    fn add(&self, request: &Request) -> Result<(), String> {
        let p = self.person.locked();
        assert!(p.bundled, "a banner added outside an app bundle");
        drop(p);
        self.centre.0.show(Listed { name: request.identifier.clone(), content: request.title.clone() });
        Ok(())
    }

    fn remove(&self, identifier: &str) {
        self.centre.0.remove(identifier);
    }

    fn on_click(&self, clicked: Told) {
        self.centre.0.centre.locked().clicked = Some(clicked);
    }
}
