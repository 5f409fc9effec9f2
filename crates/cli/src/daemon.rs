//! `cmux-tray daemon`: the engine headless, until SIGINT or SIGTERM.

use std::time::Duration;

use cmux_tray_engine::EngineError;
use cmux_tray_engine::config::Paths;
use cmux_tray_engine::notice::Item;

use crate::environment;

/// The daemon's exit when it cannot start until the person does something (EX_CONFIG): a store
/// it cannot read, a config file it refuses, another engine already running. The user service
/// is not restarted on it (`RestartPreventExitStatus=78`): starting again would fail again.
pub const EXIT_CANNOT_START: u8 = 78;

/// Why the daemon could not start, where starting again would not help.
#[derive(Debug, thiserror::Error)]
#[error("cannot start: {0:#}")]
pub(crate) struct CannotStart(anyhow::Error);

pub(crate) async fn daemon(paths: &Paths) -> anyhow::Result<()> {
    let host = match cmux_tray_host::Host::start(paths, &environment(), cmux_tray_engine::desktop::Hearing::Nothing).await {
        Ok(host) => host,
        Err(e) if !is_passing(&e) => {
            // Said once where the person looks: a banner, when a notification server is up.
            let banner = cmux_tray_engine::desktop::Banner {
                item: Item::App("cannot-start".into()),
                notice_key: Item::App("cannot-start".into()).key(),
                title: "cmux-tray cannot start".into(),
                body: cmux_tray_engine::text::clean(&format!("{e:#}"), false),
                urgent: false,
                sound: false,
                replaces: None,
            };
            let desktop = cmux_tray_engine::desktop::system("cmux-tray", cmux_tray_engine::desktop::Hearing::Nothing, &paths.data_dir);
            if let Err(why) = tokio::time::timeout(Duration::from_secs(5), desktop.post(&banner))
                .await
                .unwrap_or(Err(cmux_tray_engine::desktop::DesktopError::Unavailable("no answer within 5 s".into())))
            {
                tracing::info!("the reason could not be shown as a banner: {why}");
            }
            return Err(CannotStart(e).into());
        }
        Err(e) => return Err(e),
    };
    cmux_tray_host::stop_requested().await;
    tracing::info!("stopping");
    host.stop().await;
    Ok(())
}

/// Whether a failed start may pass by itself (a folder not made yet, a bus still starting), as
/// opposed to one the person must act on: the store unreadable or from a newer version, the
/// config file refused, another engine running.
pub(crate) fn is_passing(e: &anyhow::Error) -> bool {
    use cmux_tray_engine::store::StoreError;
    // The engine's error wraps the store's transparently: it is looked for under both.
    let store = e.chain().find_map(|c| match c.downcast_ref::<EngineError>() {
        Some(EngineError::Store(o)) => Some(o),
        _ => c.downcast_ref::<StoreError>(),
    });
    let refused_store = matches!(store, Some(StoreError::Corrupt { .. } | StoreError::TooNew { .. } | StoreError::Locked { .. }));
    let config = e.chain().any(|c| c.downcast_ref::<cmux_tray_engine::config::ConfigError>().is_some());
    let taken = e.chain().any(|c| c.downcast_ref::<cmux_tray_host::AlreadyRunning>().is_some());
    !(refused_store || config || taken)
}
