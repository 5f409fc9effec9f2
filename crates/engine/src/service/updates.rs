//! Whether a newer version is out (docs/configuration.md, "Updates"): the release feed that
//! `[updates] feed` names, asked at start and then once a day. Linux packages update through the
//! package manager, so this only says so: a line in the tray's menu, in settings and in `status`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{Changes, Engine};
use crate::cloud::CloudClient;
use crate::lock::Locked;

/// How often the feed is asked again.
const EVERY: Duration = Duration::from_secs(24 * 3600);

/// The update check: the feed, and the newer version it last said (written by its task, read by
/// the tray and `status`, so behind a lock). Cheap to clone: the task holds a clone.
#[derive(Clone)]
pub(super) struct Updates {
    feed: Option<url::Url>,
    newer: Arc<Mutex<Option<String>>>,
    changes: Changes,
}

impl Updates {
    pub(super) fn new(feed: Option<url::Url>, changes: Changes) -> Self {
        Updates { feed, newer: Default::default(), changes }
    }

    /// Asks the feed now and once a day, until `shutdown`; nothing when no feed is set.
    pub(super) fn start(&self, cloud: CloudClient, tracker: &TaskTracker, shutdown: CancellationToken) {
        let Some(feed) = self.feed.clone() else { return };
        let this = self.clone();
        tracker.spawn(async move {
            loop {
                this.check(&cloud, &feed).await;
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(EVERY) => {}
                }
            }
        });
    }

    async fn check(&self, cloud: &CloudClient, feed: &url::Url) {
        let said = match cloud.release(feed).await {
            Ok(release) => is_newer(env!("CARGO_PKG_VERSION"), &release.version).map(|newer| newer.then_some(release.version)),
            Err(e) => Err(e.to_string()),
        };
        match said {
            Ok(newer) => {
                if let Some(v) = &newer {
                    tracing::info!(version = %v, "a newer version is out");
                }
                self.changes.set(&self.newer, newer);
            }
            // Said in the log only: a feed that cannot be read is no reason to alarm anyone.
            Err(why) => tracing::info!("the release feed {feed}: {why}"),
        }
    }

    /// The newer version the feed said, if any.
    pub(super) fn newer(&self) -> Option<String> {
        self.newer.locked().clone()
    }

    /// The release feed, while it offers a newer version than this one.
    pub(super) fn offered(&self) -> Option<(url::Url, String)> {
        Some((self.feed.clone()?, self.newer()?))
    }
}

/// Whether `offered` is a later version than `current`, by Semantic Versioning's order (the
/// `semver` crate, as Cargo and Tauri's updater order versions): `0.2.0-rc.1` comes after
/// `0.1.0` and before `0.2.0`. Anything that is not such a version is refused by name.
pub fn is_newer(current: &str, offered: &str) -> Result<bool, String> {
    let version = |v: &str| semver::Version::parse(v.trim()).map_err(|e| format!("{v:?} is not a version ({e}; as 0.2.0 or 0.2.0-rc.1)"));
    // Precedence, as the specification orders: build metadata (`+build.5`) makes no version newer.
    Ok(version(offered)?.cmp_precedence(&version(current)?) == std::cmp::Ordering::Greater)
}

impl Engine {
    /// The release feed, while it offers a newer version than this one.
    pub fn update_offered(&self) -> Option<(url::Url, String)> {
        self.inner.updates.offered()
    }

    /// The proxy the installer's own download of the update at `feed` goes through, by the
    /// rules the engine's requests follow (`[cloud] proxy`, the environment, the system's).
    pub fn proxy_for_update(&self, feed: &url::Url) -> Option<cmux_tray_channel::ProxyLine> {
        self.inner.cloud.proxy_for(feed).map(|p| cmux_tray_channel::ProxyLine::new(p.expose()))
    }

    /// The newer version the feed said, if any.
    pub fn update_available(&self) -> Option<String> {
        self.inner.updates.newer()
    }
}

#[cfg(test)]
mod tests {
    use super::is_newer;

    #[test]
    fn versions_are_compared_as_semantic_versions() {
        for (current, offered, newer) in [
            ("0.1.0", "0.2.0", true),
            ("0.1.0", "0.1.0", false),
            ("0.10.0", "0.9.9", false),
            ("0.1.9", "0.1.10", true),
            ("0.1.0", "0.2.0-rc.1", true),
            ("0.2.0-rc.1", "0.2.0", true),
            ("0.2.0", "0.2.0-rc.1", false),
            ("0.2.0-rc.1", "0.2.0-rc.2", true),
            ("0.2.0", "0.2.0+build.5", false),
        ] {
            assert_eq!(is_newer(current, offered), Ok(newer), "{current} → {offered}");
        }
        for bad in ["", "v0.2.0", "latest", "1.0", "1.2.3.4"] {
            let e = is_newer("0.1.0", bad).unwrap_err();
            assert!(e.contains(&format!("{bad:?}")), "{e}");
        }
    }
}
