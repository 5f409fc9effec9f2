//! Unix: the desktop's opener program, the URL as its one argument, no shell.

use super::super::{OPEN_TIMEOUT, OpenError};

#[cfg(target_os = "macos")]
const OPENER: &str = "open";
#[cfg(not(target_os = "macos"))]
const OPENER: &str = "xdg-open";

/// Runs the opener on `url`; `Ok` only when it said it did. `activation` reaches it as the
/// focus hand-over's variables (`terminal::activation_env`).
pub(in crate::reveal) async fn open(url: &str, activation: Option<&str>) -> Result<(), OpenError> {
    let mut command = crate::private::person_command(OPENER);
    command.envs(crate::terminal::activation_env(activation));
    let mut child = command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| OpenError::Spawn { program: OPENER, source })?;
    // A stuck opener is given up on (and killed); the next click does not wait for it.
    let status = tokio::time::timeout(OPEN_TIMEOUT, child.wait())
        .await
        .map_err(|_| OpenError::TimedOut { program: OPENER, url: url.into() })?
        .map_err(|source| OpenError::Spawn { program: OPENER, source })?;
    if status.success() { Ok(()) } else { Err(OpenError::Failed { program: OPENER, status: status.to_string(), url: url.into() }) }
}
