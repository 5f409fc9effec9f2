//! Windows toasts (WinRT `ToastNotification`) under the app's AppUserModelID
//! [`APP_ID`](crate::config::APP_ID), so a toast carries the app's name and icon. A toast's `Tag`
//! is the banner's name and its `Group` the app's: showing a toast whose tag and group are those
//! of one still listed replaces it, in place, and `ToastNotificationHistory::Remove` takes it from
//! the screen and the Action Center. The toast's content is the XML schema's `ToastGeneric`
//! template, made here, with every text escaped: a title from the cloud is text, never markup.

use std::sync::Arc;

use super::{Backend, BackendError, BannerName, Clicks};
use crate::desktop::seam::Banner;

/// Every toast's group: the app's toasts are removed by tag within it.
pub const GROUP: &str = "cmux-tray";

/// One toast, as the platform takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toast {
    pub xml: String,
    pub tag: String,
    pub group: String,
}

/// The platform's calls this backend makes (`ToastNotificationManager` and its history), so the
/// backend's logic runs against a stand-in in tests.
pub trait ToastApi: Send + Sync + 'static {
    /// Why the app's toasts are off (`ToastNotifier.Setting` not `Enabled`), if they are.
    fn disabled(&self) -> Result<Option<String>, String>;
    fn show(&self, toast: &Toast) -> Result<(), String>;
    /// `ToastNotificationHistory::RemoveGroupedTagWithId`.
    fn remove(&self, tag: &str, group: &str) -> Result<(), String>;
    /// Where an activated toast's tag is told (the `Activated` event; a click on its body).
    fn on_activated(&self, activated: Arc<dyn Fn(&str) + Send + Sync>);
}

pub struct Toasts<A: ToastApi> {
    api: A,
}

impl<A: ToastApi> Toasts<A> {
    pub fn new(api: A) -> Self {
        Toasts { api }
    }
}

impl<A: ToastApi> Backend for Toasts<A> {
    /// Windows asks nobody: toasts are on unless the person (or a policy) turned them off.
    fn authorize(&self) -> Result<(), BackendError> {
        match self.api.disabled().map_err(BackendError::Unavailable)? {
            None => Ok(()),
            Some(why) => Err(BackendError::Denied(why)),
        }
    }

    fn show(&self, name: BannerName, banner: &Banner) -> Result<(), BackendError> {
        self.api.show(&toast(name, banner)).map_err(BackendError::Refused)
    }

    fn remove(&self, name: BannerName) -> Result<(), BackendError> {
        self.api.remove(&name.to_string(), GROUP).map_err(BackendError::Refused)
    }

    fn listen(&self, clicks: Clicks) {
        self.api.on_activated(Arc::new(move |tag| clicks.clicked(tag)));
    }
}

/// The toast for `banner`: its title and body; the default sound or none; "needs you" as the
/// `urgent` scenario (Windows 11's important notifications, which may break through Do not
/// disturb; earlier versions show an ordinary toast). The `launch` argument names the banner too.
pub fn toast(name: BannerName, banner: &Banner) -> Toast {
    let scenario = if banner.urgent { r#" scenario="urgent""# } else { "" };
    let audio = if banner.sound { r#"<audio src="ms-winsoundevent:Notification.Default"/>"# } else { r#"<audio silent="true"/>"# };
    let xml = format!(
        r#"<toast launch="{name}"{scenario}><visual><binding template="ToastGeneric"><text>{}</text><text>{}</text></binding></visual>{audio}</toast>"#,
        escape(&banner.title),
        escape(&banner.body),
    );
    Toast { xml, tag: name.to_string(), group: GROUP.into() }
}

/// Text as XML character data: the five special characters as entities, and the characters XML
/// 1.0 cannot hold at all (controls but tab and line ends) left out.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn banner(title: &str, urgent: bool, sound: bool) -> Banner {
        Banner {
            item: crate::notice::Item::App("1".into()),
            notice_key: "k".into(),
            title: title.into(),
            body: "body".into(),
            urgent,
            sound,
            replaces: None,
        }
    }

    /// A title from the cloud is text: markup in it is escaped, controls XML cannot hold are
    /// dropped, and the toast is tagged with the banner's name in the app's group.
    #[test]
    fn a_toast_holds_its_text_escaped_and_is_tagged_with_the_name() {
        let name = BannerName::of_item(&crate::desktop::named::NameKey::from_bytes([1; 16]), &crate::notice::Item::App("1".into()));
        let t = toast(name, &banner("<b>done</b> & \"ok\"\u{7}'", false, false));
        assert!(t.xml.contains("<text>&lt;b&gt;done&lt;/b&gt; &amp; &quot;ok&quot;&apos;</text>"), "{}", t.xml);
        assert!(t.xml.contains(r#"<audio silent="true"/>"#), "{}", t.xml);
        assert!(!t.xml.contains("scenario"), "{}", t.xml);
        assert_eq!((t.tag.as_str(), t.group.as_str()), (name.to_string().as_str(), GROUP));
        assert!(t.tag.len() <= 64, "a toast's tag holds at most 64 characters");
    }

    #[test]
    fn needs_you_is_urgent_and_a_sound_is_the_default_one() {
        let t = toast(
            BannerName::of_item(&crate::desktop::named::NameKey::from_bytes([1; 16]), &crate::notice::Item::App("1".into())),
            &banner("t", true, true),
        );
        assert!(t.xml.contains(r#"scenario="urgent""#), "{}", t.xml);
        assert!(t.xml.contains("ms-winsoundevent:Notification.Default"), "{}", t.xml);
    }
}
