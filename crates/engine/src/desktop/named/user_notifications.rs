//! macOS banners through `UNUserNotificationCenter` (the UserNotifications framework). A
//! request's identifier is the banner's name: adding a request under an identifier still shown
//! replaces that notification, and `removeDeliveredNotificationsWithIdentifiers` withdraws it.
//! The centre's delegate hears a click on the body (`UNNotificationDefaultActionIdentifier`).
//!
//! The centre serves only a process inside an app bundle: the cmux-tray app. The `cmux-tray
//! daemon` run from a shell has none, so its banners wait, untold, with a line saying why, and the
//! app shows them when it runs on the same store. Leave to show banners is asked of the person
//! once, at the first banner; a refusal is said in the tray and in settings, and the banners
//! wait for the person to turn them on in System Settings.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Backend, BackendError, BannerName, Clicks};
use crate::desktop::seam::Banner;

/// Every banner's thread: the app's banners are grouped together in Notification Centre.
pub const THREAD: &str = "cmux-tray";

/// What the person has said about the app's banners (`UNAuthorizationStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Authorization {
    NotDetermined,
    Denied,
    /// Authorized, provisional or ephemeral: banners show.
    Authorized,
}

/// One notification request, as the platform takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub identifier: String,
    pub title: String,
    pub body: String,
    pub thread: String,
    /// `UNNotificationSound.defaultSound`, or none.
    pub sound: bool,
    /// `UNNotificationInterruptionLevel.timeSensitive` ("needs you"), else `active`.
    pub time_sensitive: bool,
}

/// The platform's calls this backend makes, so its logic runs against a stand-in in tests.
pub trait CenterApi: Send + Sync + 'static {
    /// Whether this process may use the centre at all (it runs from an app bundle).
    fn bundled(&self) -> bool;
    /// `getNotificationSettingsWithCompletionHandler`'s `authorizationStatus`.
    fn authorization(&self) -> Result<Authorization, String>;
    /// `requestAuthorizationWithOptions:completionHandler:` for alerts and sounds: the one
    /// question to the person. Returns whether it was granted.
    fn request_authorization(&self) -> Result<bool, String>;
    /// `addNotificationRequest:withCompletionHandler:`.
    fn add(&self, request: &Request) -> Result<(), String>;
    /// `removeDeliveredNotificationsWithIdentifiers:` (and the pending ones).
    fn remove(&self, identifier: &str);
    /// Where the identifier of a notification whose body was clicked is told (the delegate).
    fn on_click(&self, clicked: Arc<dyn Fn(&str) + Send + Sync>);
}

pub struct UserNotifications<A: CenterApi> {
    api: A,
    /// Whether this process has asked the person already: never twice.
    asked: AtomicBool,
}

impl<A: CenterApi> UserNotifications<A> {
    pub fn new(api: A) -> Self {
        UserNotifications { api, asked: AtomicBool::new(false) }
    }
}

/// What a refusal says, in the tray and in settings.
pub const TURNED_OFF: &str = "Banners are turned off for cmux-tray: turn them on in System Settings, Notifications";
/// While the person has not answered the question.
pub const UNANSWERED: &str = "Banners wait for an answer to whether cmux-tray may show them";
/// What the daemon outside the app says.
pub const NOT_IN_APP: &str = "On macOS banners come from the cmux-tray app: they wait until it runs";

impl<A: CenterApi> Backend for UserNotifications<A> {
    fn authorize(&self) -> Result<(), BackendError> {
        if !self.api.bundled() {
            return Err(BackendError::Unavailable(NOT_IN_APP.into()));
        }
        match self.api.authorization().map_err(BackendError::Unavailable)? {
            Authorization::Authorized => Ok(()),
            Authorization::Denied => Err(BackendError::Denied(TURNED_OFF.into())),
            // Asked, and not answered yet (the question stays on screen): the banners wait.
            Authorization::NotDetermined if self.asked.swap(true, Ordering::AcqRel) => Err(BackendError::Unavailable(UNANSWERED.into())),
            Authorization::NotDetermined => match self.api.request_authorization().map_err(BackendError::Unavailable)? {
                true => Ok(()),
                false => Err(BackendError::Denied(TURNED_OFF.into())),
            },
        }
    }

    fn show(&self, name: BannerName, banner: &Banner) -> Result<(), BackendError> {
        self.api.add(&request(name, banner)).map_err(BackendError::Refused)
    }

    fn remove(&self, name: BannerName) -> Result<(), BackendError> {
        self.api.remove(&name.to_string());
        Ok(())
    }

    fn listen(&self, clicks: Clicks) {
        if self.api.bundled() {
            self.api.on_click(Arc::new(move |identifier| clicks.clicked(identifier)));
        }
    }
}

/// The request for `banner` under its name.
pub fn request(name: BannerName, banner: &Banner) -> Request {
    Request {
        identifier: name.to_string(),
        title: banner.title.clone(),
        body: banner.body.clone(),
        thread: THREAD.into(),
        sound: banner.sound,
        time_sensitive: banner.urgent,
    }
}
