//! Installing the newer version the release feed offers, where the installers update themselves
//! (macOS, Windows), with tauri-plugin-updater: the feed is a Tauri update manifest (`version`,
//! and per platform the artifact's URL and its minisign signature), verified with the bundle's
//! key (`plugins.updater.pubkey`, which the release build sets; a build without one installs
//! nothing). What happens is said to the pages as `update` events. Linux packages update through
//! the package manager: the tray never asks for this there.

#[cfg(any(target_os = "macos", windows))]
pub use installer::install;

/// Never asked on Linux (the tray refuses it there); said in the log if it were.
#[cfg(not(any(target_os = "macos", windows)))]
pub fn install(_: &tauri::AppHandle, _: &crate::tray_link::TrayLink, feed: String, _: Option<cmux_tray_channel::ProxyLine>) {
    tracing::warn!("asked to install the update at {feed}: on Linux the package manager updates cmux-tray");
}

/// The largest installer taken (a few tens of MB are expected); it is held in memory whole, as
/// the plugin verifies and installs it from there.
const MAX_DOWNLOAD: u64 = 256 << 20;

/// Whether an update may be asked for or fetched from `url`: over https alone.
#[cfg_attr(not(any(target_os = "macos", windows)), allow(dead_code))]
fn https_only(what: &str, url: &url::Url) -> Result<(), String> {
    match url.scheme() {
        "https" => Ok(()),
        other => Err(format!("{what} {url} is not https ({other}): refused")),
    }
}

/// How many redirects an update's manifest or download may take.
const REDIRECTS: usize = 5;

/// Whether a redirect is followed: to https alone, at most [`REDIRECTS`] in a row.
#[cfg_attr(not(any(target_os = "macos", windows)), allow(dead_code))]
fn follows(to: &url::Url, before: usize) -> Result<(), String> {
    https_only("a redirect to", to)?;
    match before < REDIRECTS {
        true => Ok(()),
        false => Err(format!("more than {REDIRECTS} redirects, the last to {to}: refused")),
    }
}

#[cfg(any(target_os = "macos", windows))]
fn https_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| match follows(attempt.url(), attempt.previous().len()) {
        Ok(()) => attempt.follow(),
        Err(why) => attempt.error(why),
    })
}

/// A download's bytes counted against [`MAX_DOWNLOAD`].
#[derive(Default)]
#[cfg_attr(not(any(target_os = "macos", windows)), allow(dead_code))]
struct Budget {
    got: u64,
}

#[cfg_attr(not(any(target_os = "macos", windows)), allow(dead_code))]
impl Budget {
    /// Counts a chunk (of a download announced as `total`): the percent done, or why it stops.
    fn take(&mut self, chunk: usize, total: Option<u64>) -> Result<Option<u8>, String> {
        self.got += chunk as u64;
        if self.got > MAX_DOWNLOAD || total.is_some_and(|t| t > MAX_DOWNLOAD) {
            return Err(format!("the update is larger than {} MiB: refused", MAX_DOWNLOAD >> 20));
        }
        Ok(total.filter(|t| *t > 0).map(|t| (self.got * 100 / t).min(100) as u8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_is_asked_for_an_update() {
        assert!(https_only("the feed", &"https://releases.example/cmux.json".parse().unwrap()).is_ok());
        for url in ["http://releases.example/cmux.json", "file:///tmp/cmux.dmg", "ftp://releases.example/x"] {
            let e = https_only("the update's download", &url.parse().unwrap()).unwrap_err();
            assert!(e.contains(url) && e.contains("not https"), "{e}");
        }
    }

    #[test]
    fn a_few_redirects_are_followed_to_https_alone() {
        let to = |u: &str| u.parse::<url::Url>().unwrap();
        assert!(follows(&to("https://objects.githubusercontent.com/a"), 0).is_ok());
        assert!(follows(&to("https://objects.githubusercontent.com/a"), REDIRECTS - 1).is_ok());
        assert!(follows(&to("https://x.example/a"), REDIRECTS).unwrap_err().contains("more than 5 redirects"));
        assert!(follows(&to("http://x.example/a"), 0).unwrap_err().contains("not https"));
    }

    #[test]
    fn a_download_past_its_cap_stops_whether_announced_or_not() {
        let mut announced = Budget::default();
        assert!(announced.take(10, Some(MAX_DOWNLOAD + 1)).unwrap_err().contains("larger than 256 MiB"));
        let mut silent = Budget::default();
        assert_eq!(silent.take(1 << 20, None), Ok(None));
        assert!(silent.take(MAX_DOWNLOAD as usize, None).is_err(), "a download with no length is cut at the cap");
        let mut fine = Budget::default();
        assert_eq!(fine.take(50, Some(200)), Ok(Some(25)));
    }
}

#[cfg(any(target_os = "macos", windows))]
mod installer {
    use std::time::Duration;

    use serde::Serialize;
    use tauri::{AppHandle, Emitter};

    use cmux_tray_channel::ProxyLine;

    use crate::tray_link::TrayLink;
    use cmux_tray_channel::Call;

    /// What the settings page says while an update is installed.
    #[derive(Clone, Debug, Serialize)]
    #[serde(tag = "state", rename_all = "kebab-case")]
    enum Progress {
        Checking,
        Downloading { version: String, percent: Option<u8> },
        Installing { version: String },
        Failed { why: String },
    }

    fn say(app: &AppHandle, progress: Progress) {
        let _ = app.emit("update", progress);
    }

    /// Checks `feed`, downloads and verifies the update, has the tray step aside, and installs it.
    pub fn install(app: &AppHandle, link: &TrayLink, feed: String, proxy: Option<ProxyLine>) {
        let (app, link) = (app.clone(), link.clone());
        tauri::async_runtime::spawn(async move {
            say(&app, Progress::Checking);
            if let Err(why) = run(&app, &link, &feed, proxy).await {
                tracing::warn!("the update from {feed}: {why}");
                say(&app, Progress::Failed { why });
            }
        });
    }

    use super::{Budget, https_only, https_redirects};

    /// The longest an update's manifest or its download may take.
    const CHECK_WITHIN: Duration = Duration::from_secs(30);
    const DOWNLOAD_WITHIN: Duration = Duration::from_secs(15 * 60);

    async fn run(app: &AppHandle, link: &TrayLink, feed: &str, proxy: Option<ProxyLine>) -> Result<(), String> {
        use tauri_plugin_updater::UpdaterExt;
        let feed: url::Url = feed.parse().map_err(|e| format!("the feed {feed:?}: {e}"))?;
        https_only("the release feed", &feed)?;
        // The key the release build puts in the bundle: without it nothing can be verified.
        let key = app.config().plugins.0.get("updater").and_then(|u| u["pubkey"].as_str()).unwrap_or_default().trim().to_string();
        if key.is_empty() {
            return Err("this build of cmux-tray carries no update key: install the new version from its installer".into());
        }
        let quit = link.clone();
        let mut builder = app.updater_builder();
        // The proxy the engine's own requests to the feed take (the settings', the environment's).
        if let Some(proxy) = &proxy {
            builder = builder.proxy(proxy.expose().parse().map_err(|e| format!("the proxy: {e}"))?);
        }
        let updater = builder
            .endpoints(vec![feed])
            .map_err(|e| e.to_string())?
            .timeout(CHECK_WITHIN)
            // A release host answers with a redirect to its storage (GitHub's do): a few are
            // followed, each to https alone. The signature, not the path, vouches for the bytes.
            .configure_client(|client| client.redirect(https_redirects()))
            // Windows: the installer replaces the programs once they have ended; the tray is asked
            // to quit (and has answered) before it starts, and the installer starts cmux-tray again.
            .on_before_exit(move || {
                if let Err(e) = tauri::async_runtime::block_on(quit.call(Call::Quit {})) {
                    tracing::warn!("asking the tray to quit for the update: {e}");
                }
            })
            .build()
            .map_err(|e| e.to_string())?;
        let checked = tokio::time::timeout(CHECK_WITHIN, updater.check())
            .await
            .map_err(|_| format!("the feed did not answer within {CHECK_WITHIN:?}"))?;
        let update = checked.map_err(|e| e.to_string())?.ok_or("the feed offers no newer version for this platform")?;
        https_only("the update's download", &update.download_url)?;
        let version = update.version.clone();
        let (mut budget, mut shown) = (Budget::default(), None);
        let (over, mut too_large) = tokio::sync::watch::channel(None);
        let download = update.download(
            |chunk, total| match budget.take(chunk, total) {
                Ok(percent) if percent != shown => {
                    shown = percent;
                    say(app, Progress::Downloading { version: version.clone(), percent });
                }
                Ok(_) => {}
                Err(why) => {
                    let _ = over.send(Some(why));
                }
            },
            || {},
        );
        // Dropping the download (a select's other arm) ends it: nothing more is read or held.
        let bytes = tokio::select! {
            done = tokio::time::timeout(DOWNLOAD_WITHIN, download) => {
                done.map_err(|_| format!("the download took longer than {DOWNLOAD_WITHIN:?}"))?.map_err(|e| e.to_string())?
            }
            why = too_large.wait_for(Option::is_some) => return Err(why.map(|w| (*w).clone().unwrap_or_default()).unwrap_or_default()),
        };
        // The last chunks may have come in the poll that finished the download.
        if let Some(why) = too_large.borrow().clone() {
            return Err(why);
        }
        say(app, Progress::Installing { version: version.clone() });
        // On Windows `install` starts the installer and ends this process; it runs off the runtime,
        // where the hook above may wait for the tray's answer.
        tauri::async_runtime::spawn_blocking(move || update.install(bytes)).await.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        // macOS: the bundle was replaced in place; the tray starts again from it.
        link.call(Call::Restart {}).await.map(|_| ())
    }
}
