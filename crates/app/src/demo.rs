//! `--demo`: the whole loop in under a minute, without an account. The cloud simulator runs
//! inside the app with its newcomer's story; the engine's state goes to a folder of its own (the
//! person's real state is not touched); a terminal's notice joins in; the history opens.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cmux_tray_channel::Page;
use cmux_tray_engine::config::Paths;
use cmux_tray_engine::notice::local::LocalPost;

use crate::App;

/// One step of the story every this long.
const STEP: Duration = Duration::from_secs(5);

/// Starts the simulator and its story; returns where the demo keeps its state and the
/// environment that points the engine at the simulator.
pub async fn prepare() -> anyhow::Result<(Paths, BTreeMap<String, String>)> {
    let running = cmux_cloud_sim::start().await?;
    let story = cmux_cloud_sim::demo::seed(&running.sim);
    // A private folder of its own (0700, an unpredictable name): nobody else can plant or read it.
    let root = tempfile::Builder::new().prefix("cmux-tray-demo-").tempdir()?.keep();
    let paths =
        Paths { config_file: root.join("config.toml"), data_dir: root.join("data"), runtime_dir: root.join("run"), socket_path: None };
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    env.insert("CMUX_TRAY_API_URL".into(), running.origin());
    env.insert("CMUX_TRAY_AUTH_URL".into(), running.origin());
    env.insert("CMUX_TRAY_TOKEN".into(), story.user.access_token.clone());
    tracing::info!(origin = %running.origin(), state = %root.display(), "demo: the simulator runs inside the app");
    tokio::spawn(cmux_cloud_sim::demo::play(running.sim.clone(), story, STEP));
    // The simulator lives as long as the app.
    std::mem::forget(running);
    Ok((paths, env))
}

/// Opens the history, and has a terminal post a notice once the first Run has ended.
pub fn after_start(app: &Arc<App>) {
    app.windows.open(app, Page::History, None);
    let engine = app.engine.clone();
    tokio::spawn(async move {
        tokio::time::sleep(STEP * 3 + STEP / 2).await;
        let post = LocalPost {
            title: "Tests passed".into(),
            subtitle: "parser".into(),
            body: "412 passed in 38 s (cmux-tray wrap -- cargo test)".into(),
            ..Default::default()
        };
        if let Err(e) = engine.post_local(post).await {
            tracing::warn!("demo: the terminal's notice: {e}");
        }
    });
}
