//! `UNUserNotificationCenter` through the objc2 bindings, for
//! [`UserNotifications`](super::user_notifications). Each call's completion handler is waited
//! for on the calling thread (a blocking one: [`Named`](super::Named) never calls from the
//! runtime's), with a limit. The centre's delegate is an object of our own class: it hears a
//! click on a banner's body and lets banners show while the app is in front.

use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use block2::{DynBlock, RcBlock};
use objc2::rc::Retained;
use objc2::runtime::{Bool, NSObject, NSObjectProtocol, ProtocolObject};
use objc2::{AllocAnyThread, DefinedClass, define_class, msg_send, sel};
use objc2_foundation::{NSArray, NSBundle, NSError, NSString};
use objc2_user_notifications::{
    UNAuthorizationOptions, UNAuthorizationStatus, UNMutableNotificationContent, UNNotification, UNNotificationDefaultActionIdentifier,
    UNNotificationInterruptionLevel, UNNotificationPresentationOptions, UNNotificationRequest, UNNotificationResponse,
    UNNotificationSettings, UNNotificationSound, UNUserNotificationCenter, UNUserNotificationCenterDelegate,
};

use super::user_notifications::{Authorization, CenterApi, Request};
use crate::desktop::seam::Hearing;

/// How long the centre may take to answer a call.
const ANSWER: Duration = Duration::from_secs(5);
/// How long the person may take to answer the one question; after that the banners wait and the
/// question's answer is read from the settings at the next banner.
const PERSON: Duration = Duration::from_secs(300);

pub struct Centre {
    hearing: Hearing,
}

impl Centre {
    pub fn new(hearing: Hearing) -> Centre {
        Centre { hearing }
    }
}

/// The app's centre. Only called once [`CenterApi::bundled`] said yes: outside a bundle the
/// framework raises an exception instead.
fn centre() -> Retained<UNUserNotificationCenter> {
    UNUserNotificationCenter::currentNotificationCenter()
}

fn answer<T>(rx: &mpsc::Receiver<T>, limit: Duration, what: &str) -> Result<T, String> {
    rx.recv_timeout(limit).map_err(|_| format!("the notification centre did not answer {what} within {limit:?}"))
}

/// An error a completion handler was given, as text.
fn said(error: *mut NSError) -> Option<String> {
    // SAFETY: the framework passes nil or an NSError valid for the handler's call.
    unsafe { error.as_ref() }.map(|e| e.localizedDescription().to_string())
}

impl CenterApi for Centre {
    fn bundled(&self) -> bool {
        NSBundle::mainBundle().bundleIdentifier().is_some()
    }

    fn authorization(&self) -> Result<Authorization, String> {
        let (tx, rx) = mpsc::channel();
        let handler = RcBlock::new(move |settings: NonNull<UNNotificationSettings>| {
            // SAFETY: the framework passes settings valid for the handler's call.
            let _ = tx.send(unsafe { settings.as_ref() }.authorizationStatus());
        });
        centre().getNotificationSettingsWithCompletionHandler(&handler);
        Ok(match answer(&rx, ANSWER, "with its settings")? {
            UNAuthorizationStatus::NotDetermined => Authorization::NotDetermined,
            UNAuthorizationStatus::Denied => Authorization::Denied,
            // Authorized, provisional, ephemeral: banners show.
            _ => Authorization::Authorized,
        })
    }

    fn request_authorization(&self) -> Result<bool, String> {
        let (tx, rx) = mpsc::channel();
        let handler = RcBlock::new(move |granted: Bool, error: *mut NSError| {
            let _ = tx.send((granted.as_bool(), said(error)));
        });
        let options = UNAuthorizationOptions::Alert | UNAuthorizationOptions::Sound;
        centre().requestAuthorizationWithOptions_completionHandler(options, &handler);
        match answer(&rx, PERSON, "the question to show banners")? {
            (_, Some(error)) => Err(error),
            (granted, None) => Ok(granted),
        }
    }

    fn add(&self, request: &Request) -> Result<(), String> {
        let content = UNMutableNotificationContent::new();
        content.setTitle(&NSString::from_str(&request.title));
        content.setBody(&NSString::from_str(&request.body));
        content.setThreadIdentifier(&NSString::from_str(&request.thread));
        if request.sound {
            content.setSound(Some(&UNNotificationSound::defaultSound()));
        }
        // Interruption levels came with macOS 12; before it every banner is an ordinary one.
        if content.respondsToSelector(sel!(setInterruptionLevel:)) {
            content.setInterruptionLevel(match request.time_sensitive {
                true => UNNotificationInterruptionLevel::TimeSensitive,
                false => UNNotificationInterruptionLevel::Active,
            });
        }
        let identifier = NSString::from_str(&request.identifier);
        let request = UNNotificationRequest::requestWithIdentifier_content_trigger(&identifier, &content, None);
        let (tx, rx) = mpsc::channel();
        let handler = RcBlock::new(move |error: *mut NSError| {
            let _ = tx.send(said(error));
        });
        centre().addNotificationRequest_withCompletionHandler(&request, Some(&handler));
        match answer(&rx, ANSWER, "a new banner")? {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    fn remove(&self, identifier: &str) {
        let identifiers = NSArray::from_retained_slice(&[NSString::from_str(identifier)]);
        let centre = centre();
        centre.removePendingNotificationRequestsWithIdentifiers(&identifiers);
        centre.removeDeliveredNotificationsWithIdentifiers(&identifiers);
    }

    fn on_click(&self, clicked: Arc<dyn Fn(&str) + Send + Sync>) {
        if self.hearing == Hearing::Nothing {
            return;
        }
        let delegate = Delegate::new(clicked);
        centre().setDelegate(Some(ProtocolObject::from_ref(&*delegate)));
        // The centre holds its delegate weakly; this one serves for the life of the process.
        std::mem::forget(delegate);
    }
}

struct Ivars {
    clicked: Arc<dyn Fn(&str) + Send + Sync>,
}

define_class!(
    // SAFETY: NSObject has no subclassing requirements, and `Delegate` does not implement Drop.
    #[unsafe(super(NSObject))]
    #[ivars = Ivars]
    struct Delegate;

    unsafe impl NSObjectProtocol for Delegate {}

    unsafe impl UNUserNotificationCenterDelegate for Delegate {
        /// A click on the banner's body is the default action; the centre is told it was heard.
        #[unsafe(method(userNotificationCenter:didReceiveNotificationResponse:withCompletionHandler:))]
        fn did_receive(&self, _centre: &UNUserNotificationCenter, response: &UNNotificationResponse, done: &DynBlock<dyn Fn()>) {
            // SAFETY: a constant string the framework exports.
            let default = unsafe { UNNotificationDefaultActionIdentifier };
            if response.actionIdentifier().isEqualToString(default) {
                (self.ivars().clicked)(&response.notification().request().identifier().to_string());
            }
            done.call(());
        }

        /// The app's banners show even while one of its windows is in front.
        #[unsafe(method(userNotificationCenter:willPresentNotification:withCompletionHandler:))]
        fn will_present(
            &self,
            _centre: &UNUserNotificationCenter,
            _notification: &UNNotification,
            done: &DynBlock<dyn Fn(UNNotificationPresentationOptions)>,
        ) {
            done.call((UNNotificationPresentationOptions::Banner
                | UNNotificationPresentationOptions::List
                | UNNotificationPresentationOptions::Sound,));
        }
    }
);

impl Delegate {
    fn new(clicked: Arc<dyn Fn(&str) + Send + Sync>) -> Retained<Delegate> {
        let this = Delegate::alloc().set_ivars(Ivars { clicked });
        // SAFETY: NSObject's designated initialiser, on a freshly allocated object.
        unsafe { msg_send![super(this), init] }
    }
}
