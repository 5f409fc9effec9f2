//! Banners the app names itself (macOS and Windows; docs/architecture.md "macOS and
//! Windows"). Where the freedesktop server gives each banner its id, these platforms let the app
//! give the name: a banner's name comes from its item, so an item's next banner replaces its live
//! one, and a banner reposted after a crash replaces the one the crashed process left on screen
//! instead of showing twice.
//!
//! [`Named`] is the seam's logic, the same on both platforms: names and ids, the one live banner
//! per item, withdrawal, clicks, asking leave once. A [`Backend`] speaks to one platform's centre:
//! [`toasts`] (Windows) and [`user_notifications`] (macOS), each over a small trait of the platform's own calls
//! that the real bindings implement and [`scripted`] stands in for in tests.

#[cfg(target_os = "macos")]
pub mod macos;
pub mod scripted;
pub mod toasts;
pub mod user_notifications;
#[cfg(target_os = "windows")]
pub mod windows;

use std::sync::Arc;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use tokio::sync::mpsc;

use super::seam::{Banner, Click, Desktop, DesktopError, DesktopEvent};
use crate::lock::Locked;
use crate::notice::{Item, Source};

/// What every name starts with; then the item's source and the banner id in hex.
const PREFIX: &str = "cmux-tray-";

/// A banner id's top two bits: the item's source. Each source has a name part and bits of its
/// own, so no item of one source can take the name (or the click) of another's: an agent's
/// notice never replaces, withdraws or answers for a Run's banner. Fixed: the ids are stored.
const SOURCE_BITS: [Source; 4] = [Source::App, Source::Run, Source::Handoff, Source::Local];

fn bits_of(source: Source) -> u32 {
    match source {
        Source::App => 0,
        Source::Run => 1,
        Source::Handoff => 2,
        Source::Local => 3,
    }
}

/// The secret the banners' names are made with: kept in the person's data folder (0600, made
/// once), so an item's name is the same across restarts and cannot be foreseen by a program
/// that cannot read that folder (an agent in a sandbox).
#[derive(Clone)]
pub struct NameKey([u8; 16]);

impl std::fmt::Debug for NameKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NameKey(..)")
    }
}

impl NameKey {
    /// The key in `dir` (`banner-names.key`), made there if it is not yet.
    pub fn kept_in(dir: &std::path::Path) -> std::io::Result<NameKey> {
        let path = dir.join("banner-names.key");
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::from_hex(text.trim())
                .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: not 32 hex digits", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = NameKey(rand::random());
                crate::private::create_dir(dir)?;
                crate::private::write_file(&path, &key.0.iter().map(|b| format!("{b:02x}")).collect::<String>())?;
                Ok(key)
            }
            Err(e) => Err(e),
        }
    }

    /// A key of these bytes (tests, whose engines must name alike).
    pub fn from_bytes(bytes: [u8; 16]) -> NameKey {
        NameKey(bytes)
    }

    fn from_hex(text: &str) -> Option<NameKey> {
        let mut bytes = [0u8; 16];
        (text.len() == 32).then_some(())?;
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(NameKey(bytes))
    }

    /// SipHash-1-3 of `item`'s stored form under this key.
    fn hash(&self, item: &Item) -> u64 {
        use std::hash::Hasher;
        let mut h = siphasher::sip::SipHasher13::new_with_key(&self.0);
        h.write(item.to_string().as_bytes());
        h.finish()
    }
}

/// A banner's name on the platform (a toast's tag, a notification request's identifier): made
/// from the banner's item, so each item has one, stable across restarts. It is at most 26 ASCII
/// characters, within a toast tag's 64. The engine saves a banner's id as a 32-bit number (the
/// freedesktop id's size), and a name is its id said: the item's source in the top two bits,
/// then 30 bits of a keyed 64-bit hash of the item key. Two items of one source share a name
/// only by chance (below one in ten thousand among the few hundred items a person follows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BannerName(u32);

impl BannerName {
    /// The name of `item`'s banner under `key`.
    pub fn of_item(key: &NameKey, item: &Item) -> BannerName {
        BannerName::made(item.source(), key.hash(item) as u32)
    }

    /// The name of a `source`'s item whose keyed hash is `hash` (its low 30 bits are kept).
    fn made(source: Source, hash: u32) -> BannerName {
        // 0 is no banner on the freedesktop side, and the store keeps ids alike: never use it.
        BannerName((bits_of(source) << 30) | (hash & 0x3fff_ffff).max(1))
    }

    /// The name the engine's banner id stands for.
    pub fn of_id(id: u32) -> BannerName {
        BannerName(id)
    }

    /// The id the engine saves for this banner.
    pub fn id(self) -> u32 {
        self.0
    }

    fn source(self) -> Source {
        SOURCE_BITS[(self.0 >> 30) as usize]
    }

    /// A name the platform told back (a click), if it is one of ours.
    pub fn parse(text: &str) -> Option<BannerName> {
        let (word, hex) = text.strip_prefix(PREFIX)?.rsplit_once('-')?;
        (hex.len() == 8 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(())?;
        let name = u32::from_str_radix(hex, 16).ok().filter(|id| id & 0x3fff_ffff != 0).map(BannerName)?;
        (name.source().as_str() == word).then_some(name)
    }
}

impl std::fmt::Display for BannerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{PREFIX}{}-{:08x}", self.source().as_str(), self.0)
    }
}

/// Why a platform call failed.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// Banners cannot be shown from this process or now (no bundle, no centre): they wait.
    #[error("{0}")]
    Unavailable(String),
    /// The person has turned the app's banners off: they wait until turned on again.
    #[error("{0}")]
    Denied(String),
    /// This banner was refused.
    #[error("{0}")]
    Refused(String),
}

impl From<BackendError> for DesktopError {
    fn from(e: BackendError) -> DesktopError {
        match e {
            BackendError::Unavailable(why) => DesktopError::Unavailable(why),
            BackendError::Denied(why) => DesktopError::Denied(why),
            BackendError::Refused(why) => DesktopError::Refused(why),
        }
    }
}

/// Where a backend tells the name of a banner the person clicked.
#[derive(Clone)]
pub struct Clicks(mpsc::UnboundedSender<DesktopEvent>);

impl Clicks {
    /// A click on the banner the platform names `name`; names not ours are ignored.
    pub fn clicked(&self, name: &str) {
        match BannerName::parse(name) {
            Some(name) => {
                let _ = self.0.send(DesktopEvent::Clicked(Click { banner_id: name.id(), activation_token: None }));
            }
            None => tracing::debug!(name, "a click on a banner that is not ours"),
        }
    }
}

/// One platform's notification centre. Calls are blocking and short (the platform queues the
/// banner); [`Named`] makes them off the runtime's threads.
pub trait Backend: Send + Sync + 'static {
    /// Whether banners may show now: `Ok`, or why they wait. Called before every banner, so
    /// banners turned off or on in the system's settings are seen at the next one; the person
    /// is asked at most once (the first banner), where the platform asks at all.
    fn authorize(&self) -> Result<(), BackendError>;
    /// Shows `banner` under `name`, in place of any banner of that name.
    fn show(&self, name: BannerName, banner: &Banner) -> Result<(), BackendError>;
    /// Takes the banner of that name away, from the screen and from the platform's list.
    fn remove(&self, name: BannerName) -> Result<(), BackendError>;
    /// Where clicks are told from now on (called once, at the start).
    fn listen(&self, clicks: Clicks);
}

/// The engine's [`Desktop`] over a backend whose banners the app names.
pub struct Named<B: Backend> {
    backend: Arc<B>,
    events: Mutex<Option<mpsc::UnboundedReceiver<DesktopEvent>>>,
    key: NameKey,
}

impl<B: Backend> Named<B> {
    /// Banners named under `key` ([`NameKey::kept_in`] the person's data folder).
    pub fn new(backend: B, key: NameKey) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        backend.listen(Clicks(tx));
        Named { backend: Arc::new(backend), events: Mutex::new(Some(rx)), key }
    }

    /// Runs a platform call on a blocking thread.
    async fn call<T: Send + 'static>(&self, f: impl FnOnce(&B) -> Result<T, BackendError> + Send + 'static) -> Result<T, DesktopError> {
        let backend = self.backend.clone();
        tokio::task::spawn_blocking(move || f(&backend))
            .await
            .map_err(|e| DesktopError::Refused(format!("the banner call stopped: {e}")))?
            .map_err(DesktopError::from)
    }
}

impl<B: Backend> Desktop for Named<B> {
    fn post<'a>(&'a self, banner: &'a Banner) -> BoxFuture<'a, Result<u32, DesktopError>> {
        Box::pin(async move {
            let name = BannerName::of_item(&self.key, &banner.item);
            let shown = banner.clone();
            self.call(move |b| b.authorize().and_then(|()| b.show(name, &shown))).await?;
            // A burst's banner takes the place of its leader's, which has another item's name.
            if let Some(other) = banner.replaces.map(BannerName::of_id).filter(|other| *other != name)
                && let Err(e) = self.call(move |b| b.remove(other)).await
            {
                tracing::warn!(banner = %other, "the banner replaced by a burst's could not be taken away: {e}");
            }
            Ok(name.id())
        })
    }

    fn withdraw(&self, banner_id: u32) -> BoxFuture<'_, Result<(), DesktopError>> {
        Box::pin(async move { self.call(move |b| b.remove(BannerName::of_id(banner_id))).await })
    }

    fn events(&self) -> Option<mpsc::UnboundedReceiver<DesktopEvent>> {
        self.events.locked().take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> NameKey {
        NameKey::from_bytes([7; 16])
    }

    fn item(text: &str) -> Item {
        Item::parse(text).unwrap()
    }

    #[test]
    fn a_name_is_its_items_and_reads_back() {
        let name = BannerName::of_item(&key(), &item("run:run_00000000000000000f7c"));
        assert_eq!(name, BannerName::of_item(&key(), &item("run:run_00000000000000000f7c")), "stable: the same item, the same name");
        assert_ne!(name, BannerName::of_item(&key(), &item("run:run_00000000000000000f7d")));
        assert_ne!(
            name,
            BannerName::of_item(&NameKey::from_bytes([8; 16]), &item("run:run_00000000000000000f7c")),
            "another key, another name"
        );
        let text = name.to_string();
        assert!(text.starts_with("cmux-tray-run-") && text.len() == 22, "{text}");
        assert_eq!(BannerName::parse(&text), Some(name));
        assert_eq!(BannerName::of_id(name.id()), name);
        let local = BannerName::of_item(&key(), &item("local:W1:S1")).to_string();
        assert!(local.starts_with("cmux-tray-local-") && local.len() <= 26, "{local}");
        let said = |id: u32| format!("{:08x}", id);
        let as_run = format!("cmux-tray-run-{}", said(BannerName::parse(&local).unwrap().id()));
        for other in
            ["", "cmux-tray-", "cmux-tray-run-0000000g", "cmux-tray-run-40000000", "cmux-tray-run-400000001", "other-40000001", &as_run]
        {
            assert_eq!(BannerName::parse(other), None, "{other:?}");
        }
    }

    /// Two items of different sources whose keyed hashes agree (found by an agent who knows
    /// the key, say) still have two names and two ids: the source is part of both.
    #[test]
    fn an_agents_item_cannot_take_a_runs_name() {
        for hash in [1, 0x1234_5678, 0x3fff_ffff] {
            let (run, local) = (BannerName::made(Source::Run, hash), BannerName::made(Source::Local, hash));
            assert_ne!(run, local);
            assert_ne!(run.to_string(), local.to_string());
            assert_eq!(BannerName::parse(&local.to_string()), Some(local));
        }
        let local = BannerName::of_item(&key(), &item("local:run:run_0123456789abcdef0123"));
        assert!(local.to_string().starts_with("cmux-tray-local-"), "an agent's words make no Run's item: {local}");
    }

    #[test]
    fn the_key_is_made_once_private_and_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("data");
        let key = NameKey::kept_in(&folder).unwrap();
        let again = NameKey::kept_in(&folder).unwrap();
        assert_eq!(
            BannerName::of_item(&key, &item("run:run_0123456789abcdef0123")),
            BannerName::of_item(&again, &item("run:run_0123456789abcdef0123"))
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(folder.join("banner-names.key")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(folder.join("banner-names.key"), "nonsense").unwrap();
        let e = NameKey::kept_in(&folder).unwrap_err().to_string();
        assert!(e.contains("banner-names.key") && e.contains("hex"), "{e}");
    }
}
