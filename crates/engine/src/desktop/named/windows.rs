//! WinRT toasts through Microsoft's `windows` crate, for [`Toasts`](super::toasts::Toasts): the
//! notifier and the history of the app's AppUserModelID [`APP_ID`], which the installer's Start
//! menu shortcut carries, so the toasts show under the app's name and icon.

use std::sync::Arc;
use std::sync::Mutex;

use windows::Data::Xml::Dom::XmlDocument;
use windows::Foundation::TypedEventHandler;
use windows::UI::Notifications::{NotificationSetting, ToastNotification, ToastNotificationManager, ToastNotifier};
use windows::core::{HSTRING, IInspectable};

use super::toasts::{Toast, ToastApi};
use crate::config::APP_ID;
use crate::desktop::seam::Hearing;
use crate::lock::Locked;

type Activated = Arc<dyn Fn(&str) + Send + Sync>;

pub struct WinRt {
    hearing: Hearing,
    activated: Mutex<Option<Activated>>,
}

impl WinRt {
    pub fn new(hearing: Hearing) -> WinRt {
        WinRt { hearing, activated: Mutex::new(None) }
    }
}

fn notifier() -> windows::core::Result<ToastNotifier> {
    ToastNotificationManager::CreateToastNotifierWithId(&HSTRING::from(APP_ID))
}

impl ToastApi for WinRt {
    fn disabled(&self) -> Result<Option<String>, String> {
        let setting = notifier().and_then(|n| n.Setting()).map_err(|e| e.to_string())?;
        Ok(match setting {
            NotificationSetting::Enabled => None,
            NotificationSetting::DisabledForUser => Some("Notifications are turned off in Windows Settings, System, Notifications".into()),
            NotificationSetting::DisabledByGroupPolicy => Some("Notifications are turned off by a group policy".into()),
            _ => Some("Notifications are turned off for cmux-tray in Windows Settings, System, Notifications".into()),
        })
    }

    fn show(&self, toast: &Toast) -> Result<(), String> {
        let shown = || -> windows::core::Result<()> {
            let doc = XmlDocument::new()?;
            doc.LoadXml(&HSTRING::from(toast.xml.as_str()))?;
            let notification = ToastNotification::CreateToastNotification(&doc)?;
            notification.SetTag(&HSTRING::from(toast.tag.as_str()))?;
            notification.SetGroup(&HSTRING::from(toast.group.as_str()))?;
            if let Some(activated) = self.activated.locked().clone() {
                // Called on a WinRT thread when the person clicks the toast's body.
                let handler = TypedEventHandler::<ToastNotification, IInspectable>::new(move |sender, _| {
                    if let Some(sender) = sender.as_ref() {
                        activated(&sender.Tag()?.to_string_lossy());
                    }
                    Ok(())
                });
                notification.Activated(&handler)?;
            }
            notifier()?.Show(&notification)
        };
        shown().map_err(|e| e.to_string())
    }

    fn remove(&self, tag: &str, group: &str) -> Result<(), String> {
        ToastNotificationManager::History()
            .and_then(|h| h.RemoveGroupedTagWithId(&HSTRING::from(tag), &HSTRING::from(group), &HSTRING::from(APP_ID)))
            .map_err(|e| e.to_string())
    }

    fn on_activated(&self, activated: Activated) {
        if self.hearing == Hearing::Clicks {
            *self.activated.locked() = Some(activated);
        }
    }
}
