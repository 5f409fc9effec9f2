//! Posting a notice to the socket the way seed 000 resolves it, for `notify`, `wrap` and `hook`.
//! It never fails its caller: a missing socket, a refusal or a timeout is said on stderr (only
//! `notify` itself exits 69 when no engine answers, as `follow` does).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cmux_tray_engine::config::Paths;
use cmux_tray_engine::local::client::{self, NotifyConfig, Resolved, Undeliverable};
use cmux_tray_engine::local::forwarded::FORWARDED_SOCKET;
use cmux_tray_engine::local::requests::{Attach, CreateForCaller, Created, MethodRequest};
use cmux_tray_engine::notice::local::LocalPost;
use cmux_tray_engine::place::Place;
use cmux_tray_engine::store::SessionShown;
use cmux_tray_engine::terminal;

/// What to post.
#[derive(Clone, Debug, Default)]
pub struct Post {
    pub title: String,
    pub subtitle: String,
    pub body: String,
    /// The sender waits for the person: sent as `needs_you` (docs/local-socket.md).
    pub needs_you: bool,
}

/// Overrides from the command line.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub socket: Option<PathBuf>,
    pub workspace: Option<String>,
    pub surface: Option<String>,
}

/// Resolves where to send, from the environment, the config file and this app's live socket.
pub fn resolve(paths: &Paths, env: &BTreeMap<String, String>, overrides: &Overrides) -> Result<Resolved, String> {
    let config = NotifyConfig::load(&paths.config_file)?;
    let own = paths.socket();
    let own_live = cmux_tray_engine::local::endpoint::is_live(&own);
    // On a machine `cmux-tray ssh` reaches: the forwarded socket in the home, even while its
    // link is down (a notice then waits for it, `send`).
    let forwarded = env.get("HOME").map(|h| Path::new(h).join(FORWARDED_SOCKET)).filter(|p| is_socket(p));
    let fallback = if own_live { Some(own) } else { forwarded };
    let mut r = client::resolve(env, &config, fallback.as_deref());
    if let Some(s) = &overrides.socket {
        r.socket = Some(s.clone());
        r.enabled |= config.enabled != Some(false);
    }
    if overrides.workspace.is_some() {
        r.workspace_id = overrides.workspace.clone();
    }
    if overrides.surface.is_some() {
        r.surface_id = overrides.surface.clone();
    }
    Ok(r)
}

/// The process that posts: its environment, and the terminal place it runs in (tmux pane, kitty
/// window, WezTerm pane, X11 window), read once and only when a request goes out (a hook that
/// reports its session and posts asks tmux and the X server once).
pub struct Caller {
    env: BTreeMap<String, String>,
    place: tokio::sync::OnceCell<Option<Place>>,
}

impl Caller {
    pub fn new(env: BTreeMap<String, String>) -> Caller {
        Caller { env, place: tokio::sync::OnceCell::new() }
    }

    async fn place(&self) -> Option<&Place> {
        self.place.get_or_init(|| terminal::of_caller(&self.env, std::process::id())).await.as_ref()
    }

    fn password(&self) -> Option<&str> {
        self.env.get("CMUX_SOCKET_PASSWORD").filter(|p| !p.is_empty()).map(String::as_str)
    }
}

/// Why a notice did not go out.
#[derive(Debug, thiserror::Error)]
pub enum NotSent {
    /// No engine answers where it looked (`notify` exits 69 for it, as `follow` does).
    #[error("{0}")]
    NoEngine(String),
    /// Turned off, refused, no answer in time, a bad config.
    #[error("{0}")]
    Other(String),
}

impl NotSent {
    /// Where it looked, from what resolved and this app's own socket's path.
    fn undeliverable(why: Undeliverable, own: &Path, config: &Path) -> NotSent {
        match why {
            Undeliverable::NoEngine => NotSent::NoEngine(format!(
                "no engine answers: nothing listens at {} (cmux-tray's socket), and neither CMUX_SOCKET_PATH, CMUX_SOCKET nor \
                 [notify] socket_path in {} names another",
                own.display(),
                config.display()
            )),
            other => NotSent::Other(other.to_string()),
        }
    }
}

impl From<client::RequestError> for NotSent {
    fn from(e: client::RequestError) -> NotSent {
        match e {
            client::RequestError::NoEngine { .. } => NotSent::NoEngine(e.to_string()),
            other => NotSent::Other(other.to_string()),
        }
    }
}

/// Sends `post` with `notification.create_for_caller`, with the caller's terminal place for the
/// click and the focus rule. Returns the result, or why nothing went out.
pub async fn send(paths: &Paths, caller: &Caller, overrides: &Overrides, post: &Post) -> Result<Created, NotSent> {
    let resolved = resolve(paths, &caller.env, overrides).map_err(NotSent::Other)?;
    let socket = resolved.deliverable().map_err(|why| NotSent::undeliverable(why, &paths.socket(), &paths.config_file))?;
    let request = CreateForCaller {
        post: LocalPost {
            title: post.title.clone(),
            subtitle: post.subtitle.clone(),
            body: post.body.clone(),
            workspace_id: resolved.workspace_id.clone(),
            surface_id: resolved.surface_id.clone(),
            place: caller.place().await.cloned(),
            needs_you: post.needs_you,
        },
        caller_tty: crate::process::stdin_terminal(),
    };
    // A forwarded socket whose link is down (nothing listens behind it): wait for the link a
    // bounded time, then say it was not delivered. Only a connection refused before a byte went
    // out is tried again, so a notice is never sent twice.
    let wait = if socket.file_name() == Some(std::ffi::OsStr::new(FORWARDED_SOCKET)) {
        let config = NotifyConfig::load(&paths.config_file).unwrap_or_default();
        config.link_wait.and_then(|t| Duration::try_from_secs_f64(t).ok()).unwrap_or(client::DEFAULT_LINK_WAIT)
    } else {
        Duration::ZERO
    };
    let started = Instant::now();
    loop {
        match client::request(socket, &request, caller.password(), resolved.timeout).await {
            Err(client::RequestError::NoEngine { .. }) if started.elapsed() < wait => {
                tokio::time::sleep(LINK_RETRY).await;
            }
            Err(client::RequestError::NoEngine { path, source }) if !wait.is_zero() => {
                return Err(NotSent::NoEngine(format!(
                    "{}: the link to the tray stayed down for {} s ({source}); not delivered",
                    path.display(),
                    wait.as_secs()
                )));
            }
            answer => {
                return serde_json::from_value(answer?)
                    .map_err(|e| NotSent::Other(format!("the tray's answer to {}: {e}", CreateForCaller::METHOD)));
            }
        }
    }
}

/// How often a notice tries a forwarded socket whose link is down.
const LINK_RETRY: Duration = Duration::from_millis(500);

fn is_socket(path: &Path) -> bool {
    #[cfg(unix)]
    let socket = std::fs::symlink_metadata(path).is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()));
    // No forwarded socket where the tray's socket is a named pipe.
    #[cfg(not(unix))]
    let socket = path.as_os_str().is_empty() && cfg!(unix);
    socket
}

/// Tells the tray that this terminal shows a cloud session (`session.attach`): a click on that
/// session's hand-off or Run banner then brings this terminal forward. Sends nothing when this
/// process is in no terminal the tray can reach and not inside cmux.
pub async fn attach(paths: &Paths, caller: &Caller, session_id: &str) -> Result<(), String> {
    let resolved = resolve(paths, &caller.env, &Overrides::default())?;
    let socket = resolved.deliverable().map_err(|why| why.to_string())?;
    let place = caller.place().await;
    if place.is_none() && resolved.workspace_id.is_none() {
        return Err("this terminal is none the tray can bring forward (no tmux, kitty, WezTerm or X11 window found)".into());
    }
    let request = Attach {
        session_id: session_id.to_string(),
        shown: SessionShown { workspace_id: resolved.workspace_id.clone(), surface_id: resolved.surface_id.clone(), place: place.cloned() },
    };
    client::request(socket, &request, caller.password(), resolved.timeout).await.map(drop).map_err(|e| e.to_string())
}

/// The project a command ran in: the last part of its working directory.
pub fn project_of(cwd: &Path) -> String {
    cwd.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}
