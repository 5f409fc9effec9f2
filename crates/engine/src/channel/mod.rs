//! The app's private channel (docs/architecture.md "Two processes"): the tray process holds the
//! engine and serves it; the windows process and a second launch of the app speak to it. One
//! JSON object a line each way, on a socket beside the local socket (`app.sock`; a named pipe
//! on Windows) whose peers are checked as the local socket's are: this user's alone.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

#[cfg(test)]
mod tests;

/// The longest line either side reads (a page's largest answer, the history, is far below).
pub const MAX_LINE: u64 = 8 << 20;

crate::words::text_enum! {
    /// The app's windows, each a page of its own.
    pub enum Page { History = "history", Settings = "settings", SignIn = "signin" }
}

/// What reaches the tray.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToTray {
    /// A second launch of the app hands over its arguments (a `cmux-tray://` link, `--open`).
    Launched { argv: Vec<String> },
    /// A windows process started to show `page`: the tray takes it as its windows process, or
    /// shows the page in the one it has (and this one ends).
    Attach { page: Page, query: Option<String> },
    /// The windows process has no window left and would end: the tray stops sending it pages
    /// and answers `Detached` (a page sent before that answer still opens there).
    Detach,
    /// A page's command, by its name, with the page's arguments.
    Call { id: u64, command: String, args: Value },
}

/// What the tray sends to its windows process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromTray {
    /// The answer to `Attach`: false when another windows process was shown the page instead.
    Attached { chosen: bool },
    /// A command's answer: its value, or why it failed in words the page shows.
    Answer {
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ok: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// Something the windows show changed: they redraw.
    Changed,
    /// Show this page (the tray's menu, a link, a click on a banner asked for it).
    Open { page: Page, query: Option<String> },
    /// The answer to `Detach`: nothing more is sent to this windows process.
    Detached,
    /// Install the update the release feed offers (its signed manifest at `feed`), on the
    /// platforms whose installers update themselves (macOS, Windows).
    Install { feed: String },
}

impl FromTray {
    pub fn answer(id: u64, result: Result<Value, String>) -> FromTray {
        match result {
            Ok(value) => FromTray::Answer { id, ok: Some(value), error: None },
            Err(message) => FromTray::Answer { id, ok: None, error: Some(message) },
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    #[error("the app's channel: {0}")]
    Io(#[from] std::io::Error),
    #[error("the app's channel: a line longer than {MAX_LINE} bytes")]
    TooLong,
    #[error("the app's channel: an unreadable line ({why}): {excerpt}")]
    Unreadable { why: String, excerpt: String },
}

/// The next message, or `None` when the other side has gone.
pub async fn read<T: DeserializeOwned>(from: &mut (impl AsyncBufRead + Unpin)) -> Result<Option<T>, ChannelError> {
    let mut line = Vec::new();
    let n = (&mut *from).take(MAX_LINE + 1).read_until(b'\n', &mut line).await?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        return Err(if n as u64 > MAX_LINE {
            ChannelError::TooLong
        } else {
            std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()
        });
    }
    serde_json::from_slice(&line).map(Some).map_err(|e| ChannelError::Unreadable {
        why: e.to_string(),
        excerpt: crate::text::cut(&crate::text::clean(&String::from_utf8_lossy(&line), false), 120),
    })
}

/// Sends one message as its line.
pub async fn write(to: &mut (impl AsyncWrite + Unpin), message: &impl Serialize) -> Result<(), ChannelError> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    to.write_all(&line).await?;
    to.flush().await?;
    Ok(())
}

impl crate::config::Paths {
    /// Where the tray serves the app's channel.
    pub fn channel(&self) -> std::path::PathBuf {
        crate::local::endpoint::channel_path(&self.runtime_dir)
    }
}

crate::words::text_enum! {
    /// The app's two programs.
    pub enum Program { Tray = "cmux-tray-app", Windows = "cmux-tray-windows" }
}

/// Where the other program of the app is: beside this one (a build tree, the benchmark's
/// install), else where the package puts it (`/usr/bin/cmux-tray-app`,
/// `/usr/lib/cmux-tray/cmux-tray-windows`).
pub fn program(which: Program) -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let file = format!("{}{}", which.as_str(), std::env::consts::EXE_SUFFIX);
    [dir.join(&file), dir.join("../lib/cmux-tray").join(&file), dir.join("../../bin").join(&file)].into_iter().find(|p| p.is_file())
}
