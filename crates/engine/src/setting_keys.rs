//! Every setting, declared once: its dotted key, the kind of value it takes with its bounds,
//! what applies when it is not set, the catalogue's label where the settings window shows it,
//! and which reader takes it from the file. The config file's readers (`config`, the
//! `[delivery]` policy, the `[notify]` client), `config get|set`, the settings window and
//! docs/configuration.md's table all read this; nothing else names a key.

pub const DEFAULT_API_URL: &str = "https://cloud-api.cmux.dev";
pub const DEFAULT_AUTH_URL: &str = "https://cmux.com";

/// The longest period a setting takes: a day. More is surely a slip of the keyboard (and past
/// `Duration`'s range a panic).
pub const A_DAY: u32 = 86_400;

/// The kind of value a setting takes, with its bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Bool,
    /// Seconds, a fraction allowed, from `min` (none: any, not positive meaning the default) to `max`.
    Seconds {
        min: Option<u32>,
        max: u32,
    },
    /// A whole number of notices.
    Count {
        min: u32,
        max: u32,
    },
    /// A whole number of days.
    Days {
        min: u32,
        max: u32,
    },
    /// Quiet-hours windows: `"DAYS HH:MM-HH:MM"` each.
    Windows,
    /// An IANA time zone, or `system`.
    TimeZone,
    /// An https origin (http on loopback only).
    Url,
    /// An absolute path.
    Path,
    /// A proxy URL, or `none`.
    Proxy,
    /// A language code the catalogues speak, or empty for the system's.
    Language,
    /// A team's id.
    Team,
    /// `"2"` or `"1.1"`.
    Http,
    Text,
    /// Text that is set but never printed.
    Secret,
}

/// Which reader takes a setting from the config file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// `policy::delivery_settings`: applied live (`config set` reloads a running engine).
    Delivery,
    /// `config::Settings`: read when the engine starts.
    Engine,
    /// `local::client::NotifyConfig`: read by each `notify`, `wrap` and hook.
    Notify,
}

/// Where the settings window shows a setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Notifications,
    QuietHours,
    General,
    /// Under "Advanced": applied at the next start.
    Advanced,
    /// Not in the window: the command line and the file only.
    Nowhere,
}

impl Place {
    /// The window's part, as the docs' table names it.
    pub fn words(self) -> &'static str {
        match self {
            Place::Notifications => "Notifications",
            Place::QuietHours => "Quiet hours",
            Place::General => "General",
            Place::Advanced => "Advanced",
            Place::Nowhere => "—",
        }
    }
}

/// What applies when the key is not set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unset {
    /// `DeliverySettings::default()`'s value, as `config get` prints it.
    DeliveryDefault,
    /// In words, for the docs' table.
    Is(&'static str),
}

/// One setting.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    pub key: Key,
    pub kind: Kind,
    pub reader: Reader,
    pub unset: Unset,
    /// The catalogue's message the settings window labels it with.
    pub label: Option<&'static str>,
    pub place: Place,
    /// Whether `config get|set` takes it (the team is chosen per account, HTTP from the file).
    pub settable: bool,
    /// One line for the docs' table and `config set`'s help.
    pub about: &'static str,
}

/// The settings: each line declares the key's word and its [`Setting`].
macro_rules! settings {
    ($($variant:ident = $word:literal: $kind:expr, $reader:ident, $unset:expr, $label:expr, $place:ident, $settable:literal, $about:literal;)+) => {
        crate::words::text_enum! {
            /// A setting's dotted key, as the file (`[section] name`), `config get|set` and the
            /// settings window name it.
            pub enum Key { $($variant = $word),+ }
        }

        /// Every setting, in the order `config get` lists them.
        pub const SETTINGS: &[Setting] = &[$(Setting {
            key: Key::$variant,
            kind: $kind,
            reader: Reader::$reader,
            unset: $unset,
            label: $label,
            place: Place::$place,
            settable: $settable,
            about: $about,
        }),+];
    };
}

use Kind::*;
use Unset::*;

const DAY_SECONDS: Kind = Seconds { min: Some(0), max: A_DAY };
const CLIENT_SECONDS: Kind = Seconds { min: None, max: A_DAY };

settings! {
    Banners = "delivery.banners": Bool, Delivery, DeliveryDefault, Some("setting-banners"), Notifications, true,
        "banners at all";
    Sounds = "delivery.sounds": Bool, Delivery, DeliveryDefault, Some("setting-sounds"), Notifications, true,
        "sounds at all";
    SoundCooldown = "delivery.sound_cooldown": DAY_SECONDS, Delivery, DeliveryDefault, Some("setting-sound-cooldown"), Notifications, true,
        "one sound per source per this many seconds";
    CoalesceCount = "delivery.coalesce_count": Count { min: 1, max: 1000 }, Delivery, DeliveryDefault, Some("setting-coalesce-count"), Notifications, true,
        "more than this many notices of one source …";
    CoalesceWindow = "delivery.coalesce_window": DAY_SECONDS, Delivery, DeliveryDefault, Some("setting-coalesce-window"), Notifications, true,
        "… within this many seconds become one banner";
    Attention = "delivery.attention": Bool, Delivery, DeliveryDefault, Some("setting-attention"), Notifications, true,
        "an urgency hint on “needs you” banners";
    RunsBanner = "delivery.runs.banner": Bool, Delivery, DeliveryDefault, Some("setting-source-banners"), Notifications, true,
        "banners for Cloud Runs";
    RunsSound = "delivery.runs.sound": Bool, Delivery, DeliveryDefault, Some("setting-source-sounds"), Notifications, true,
        "sounds for Cloud Runs";
    HandoffsBanner = "delivery.handoffs.banner": Bool, Delivery, DeliveryDefault, Some("setting-source-banners"), Notifications, true,
        "banners for hand-offs";
    HandoffsSound = "delivery.handoffs.sound": Bool, Delivery, DeliveryDefault, Some("setting-source-sounds"), Notifications, true,
        "sounds for hand-offs";
    LocalBanner = "delivery.local.banner": Bool, Delivery, DeliveryDefault, Some("setting-source-banners"), Notifications, true,
        "banners for terminals (the local socket)";
    LocalSound = "delivery.local.sound": Bool, Delivery, DeliveryDefault, Some("setting-source-sounds"), Notifications, true,
        "sounds for terminals (the local socket)";
    QuietEnabled = "delivery.quiet_hours.enabled": Bool, Delivery, DeliveryDefault, Some("setting-quiet"), QuietHours, true,
        "quiet hours (a `[delivery.quiet_hours]` table alone turns them on)";
    QuietWindows = "delivery.quiet_hours.windows": Windows, Delivery, DeliveryDefault, Some("page-quiet-windows"), QuietHours, true,
        "when quiet hours are, in the time zone below";
    QuietBreaksThrough = "delivery.quiet_hours.needs_you_breaks_through": Bool, Delivery, DeliveryDefault, Some("setting-breaks-through"), QuietHours, true,
        "a “needs you” notice still shows in quiet hours";
    QuietTimeZone = "delivery.quiet_hours.time_zone": TimeZone, Delivery, DeliveryDefault, Some("page-time-zone"), QuietHours, true,
        "the zone quiet hours are read in";
    HistoryDays = "delivery.history_days": Days { min: 1, max: 3650 }, Delivery, DeliveryDefault, Some("setting-history-days"), Notifications, true,
        "the history forgets what is older (untold notices are kept)";
    RemoteTmux = "delivery.remote_tmux": Bool, Delivery, DeliveryDefault, Some("setting-remote-tmux"), Notifications, true,
        "over `cmux-tray ssh`'s connection: a click selects a remote tmux pane, no banner while it is looked at (docs/terminals.md)";
    ApiUrl = "cloud.api_url": Url, Engine, Is(DEFAULT_API_URL), Some("connection-api-url"), Advanced, true,
        "the cloud API's origin (staging: https://cloud-api-staging.cmux.dev); CMUX_TRAY_API_URL wins";
    AuthUrl = "cloud.auth_url": Url, Engine, Is(DEFAULT_AUTH_URL), Some("connection-auth-url"), Advanced, true,
        "the sign-in origin; CMUX_TRAY_AUTH_URL wins";
    Proxy = "cloud.proxy": Proxy, Engine, Is("the environment's (HTTPS_PROXY …)"), Some("connection-proxy"), Advanced, true,
        "the proxy to the cloud (http://host:port, socks5://host:port), or none";
    SocketPath = "local.socket_path": Path, Engine, Is("$XDG_RUNTIME_DIR/cmux-tray/cmux.sock"), Some("connection-socket-path"), Advanced, true,
        "where the local socket lives";
    UpdateFeed = "updates.feed": Url, Engine, Is("no check"), Some("connection-updates-feed"), Advanced, true,
        "a release feed asked once a day for a newer version";
    Language = "general.language": Language, Engine, Is("the system's"), Some("page-language"), General, true,
        "the language of the tray, the windows and the banners; from the next start (docs/languages.md)";
    NotifyEnabled = "notify.enabled": Bool, Notify, Is("a socket decides"), None, Nowhere, true,
        "false: never send (beats everything); true: send";
    NotifySocketPath = "notify.socket_path": Text, Notify, Is("the environment's, or the tray's own"), None, Nowhere, true,
        "the socket to send to when the environment names none (CMUX_SOCKET_PATH wins)";
    NotifySurfaceId = "notify.surface_id": Text, Notify, Is("CMUX_SURFACE_ID"), None, Nowhere, true,
        "the surface a notice belongs to when CMUX_SURFACE_ID is not set";
    NotifyWorkspaceId = "notify.workspace_id": Text, Notify, Is("CMUX_WORKSPACE_ID"), None, Nowhere, true,
        "the workspace a notice belongs to when CMUX_WORKSPACE_ID is not set";
    NotifyTimeout = "notify.timeout": CLIENT_SECONDS, Notify, Is("2"), None, Nowhere, true,
        "seconds a notice may take to be sent";
    NotifyWrapThreshold = "notify.wrap_threshold": CLIENT_SECONDS, Notify, Is("10"), None, Nowhere, true,
        "seconds a wrapped command must run before its end is a notice";
    NotifyIdleReminders = "notify.idle_reminders": Bool, Notify, Is("false"), None, Nowhere, true,
        "Claude Code's idle reminders as notices";
    NotifyLinkWait = "notify.link_wait": CLIENT_SECONDS, Notify, Is("30"), None, Nowhere, true,
        "seconds a notice waits for `cmux-tray ssh`'s link to come back (docs/terminals.md)";
    Password = "local.password": Secret, Engine, Is("no password"), None, Nowhere, true,
        "the socket's password mode (CMUX_SOCKET_PASSWORD wins); `config get` never prints it";
    Team = "cloud.team": Team, Engine, Is("chosen in Settings"), None, Nowhere, false,
        "the team followed with CMUX_TRAY_TOKEN (CMUX_TRAY_TEAM wins)";
    Http = "cloud.http": Http, Engine, Is("\"2\""), None, Nowhere, false,
        "\"2\" (up to 100 follows to a connection) or \"1.1\" (one connection per follow); CMUX_TRAY_HTTP wins";
}

impl Key {
    /// Its declaration.
    pub fn setting(self) -> &'static Setting {
        // SETTINGS holds each key once, in the enum's order (a test says so).
        &SETTINGS[self as usize]
    }

    /// The `[section]` it is in and its name there.
    pub fn split(self) -> (&'static str, &'static str) {
        let word = self.as_str();
        let at = word.rfind('.').expect("a key has a dot");
        (&word[..at], &word[at + 1..])
    }

    /// The key `name` in the table `section` (`delivery.runs`, `banner`).
    pub fn in_table(section: &str, name: &str) -> Option<Key> {
        // A quoted key with a dot in it (`"runs.banner" = …`) is no key of the table's.
        if name.contains('.') {
            return None;
        }
        Key::parse(&format!("{section}.{name}"))
    }
}

/// Whether some setting lives in the table `section` (`delivery`, `delivery.runs`, …).
pub fn is_table(section: &str) -> bool {
    SETTINGS.iter().any(|s| s.key.split().0 == section)
}

/// The keys `config get|set` takes, in their order.
pub fn settable() -> impl Iterator<Item = Key> {
    SETTINGS.iter().filter(|s| s.settable).map(|s| s.key)
}

impl Kind {
    /// What it takes, in words (the docs' table, a refusal).
    pub fn allowed(self) -> String {
        match self {
            Bool => "true or false".into(),
            Seconds { min: Some(min), max } => format!("seconds, {min} to {max}"),
            Seconds { min: None, max } => format!("seconds, at most {max}"),
            Count { min, max } => format!("notices, {min} to {max}"),
            Days { min, max } => format!("days, {min} to {max}"),
            Windows => "a list of \"DAYS HH:MM-HH:MM\"".into(),
            TimeZone => "an IANA time zone, or system".into(),
            Url => "an https URL (http on loopback)".into(),
            Path => "an absolute path".into(),
            Proxy => "a proxy URL, or none".into(),
            Kind::Language => format!("{}, or empty", crate::lang::Language::ALL.iter().map(|l| l.as_str()).collect::<Vec<_>>().join(", ")),
            Kind::Team => "a team's id (team_…)".into(),
            Kind::Http => "\"2\" or \"1.1\"".into(),
            Text => "text".into(),
            Secret => "text, never printed".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_is_declared_once_in_the_enums_order_and_each_label_is_in_the_catalogue() {
        assert_eq!(SETTINGS.len(), Key::ALL.len());
        for (i, s) in SETTINGS.iter().enumerate() {
            assert_eq!(s.key as usize, i, "{}", s.key);
            assert_eq!(s.key.setting().key, s.key);
        }
        let english = crate::lang::Lang::english();
        for s in SETTINGS {
            if let Some(label) = s.label {
                assert!(english.has(label), "{}: label {label} is not in lang/en.ftl", s.key);
            }
            assert_eq!(s.label.is_some(), s.place != Place::Nowhere, "{}: a label where the window shows it", s.key);
        }
    }
}
