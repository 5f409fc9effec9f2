//! The app's private channel (docs/architecture.md "Two processes"): the tray process holds the
//! engine and serves it; the windows process and a second launch of the app speak to it. One
//! JSON object a line each way, on a socket beside the local socket (`app.sock`; a named pipe
//! on Windows) whose peers are checked as the local socket's are: this user's alone. Any of the
//! user's processes may hand over a launch; only a windows process holding the launch's
//! [`ChannelKey`] may attach and call.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

#[cfg(test)]
mod tests;

/// The longest line the windows process reads (a page's largest answer, the history, is far below).
pub const MAX_LINE: u64 = 8 << 20;

/// The longest line the tray reads: a launch's arguments or a page's call, never near it.
pub const MAX_LINE_TO_TRAY: u64 = 256 << 10;

/// The secret a tray makes per launch and hands to the windows process it starts on that
/// process's standard input (never the environment or the arguments, which other processes of
/// the user can read). Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ChannelKey(String);

impl std::fmt::Debug for ChannelKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChannelKey(..)")
    }
}

impl ChannelKey {
    /// 32 random bytes from the OS, as hex.
    pub fn generate() -> ChannelKey {
        let bytes: [u8; 32] = rand::random();
        ChannelKey(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The key as the line written to the other process's standard input.
    pub fn line(&self) -> String {
        format!("{}\n", self.0)
    }

    /// The key from the first line of `from` (the standard input a tray or a windows process
    /// was started with); at most 128 bytes are read.
    pub fn read_line(from: impl std::io::Read) -> std::io::Result<ChannelKey> {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(from.take(128)).read_line(&mut line)?;
        let key = line.trim_end_matches(['\n', '\r']);
        if key.len() != 64 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "the channel's key on standard input is not 64 hex digits"));
        }
        Ok(ChannelKey(key.to_string()))
    }

    /// Whether `other` is this key, compared in constant time.
    pub fn admits(&self, other: Option<&ChannelKey>) -> bool {
        use subtle::ConstantTimeEq;
        other.is_some_and(|o| bool::from(self.0.as_bytes().ct_eq(o.0.as_bytes())))
    }
}

crate::words::text_enum! {
    /// The app's windows, each a page of its own.
    pub enum Page { History = "history", Settings = "settings", SignIn = "signin" }
}

/// A proxy's whole URL, credentials included, for the one client that uses it. Its `Debug`
/// never shows it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProxyLine(String);

impl std::fmt::Debug for ProxyLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProxyLine(..)")
    }
}

impl ProxyLine {
    pub(crate) fn new(url: &str) -> ProxyLine {
        ProxyLine(url.to_string())
    }

    /// The URL, for the client that connects through it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// What reaches the tray.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToTray {
    /// A second launch of the app hands over its arguments (a `cmux-tray://` link, `--open`).
    Launched { argv: Vec<String> },
    /// A windows process started to show `page`: the tray takes it as its windows process, or
    /// shows the page in the one it has (and this one ends). Without the launch's key it is
    /// only a launch: the tray shows the page in a windows process of its own.
    Attach {
        page: Page,
        query: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<ChannelKey>,
    },
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
    /// platforms whose installers update themselves (macOS, Windows), through `proxy` when the
    /// settings or the environment route the feed through one.
    Install {
        feed: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proxy: Option<ProxyLine>,
    },
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
    #[error("the app's channel: a line longer than {limit} bytes")]
    TooLong { limit: u64 },
    /// Said by its kind, place and length alone: the line may carry a token (a pasted sign-in).
    #[error("the app's channel: an unreadable line of {length} bytes ({kind} at column {column})")]
    Unreadable { kind: &'static str, column: usize, length: usize },
}

/// The next message from the tray, or `None` when it has gone.
pub async fn read<T: DeserializeOwned>(from: &mut (impl AsyncBufRead + Unpin)) -> Result<Option<T>, ChannelError> {
    read_within(from, MAX_LINE).await
}

/// The next message of at most `limit` bytes, or `None` when the other side has gone.
pub async fn read_within<T: DeserializeOwned>(from: &mut (impl AsyncBufRead + Unpin), limit: u64) -> Result<Option<T>, ChannelError> {
    let mut line = Vec::new();
    let n = (&mut *from).take(limit + 1).read_until(b'\n', &mut line).await?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        return Err(if n as u64 > limit {
            ChannelError::TooLong { limit }
        } else {
            std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()
        });
    }
    serde_json::from_slice(&line).map(Some).map_err(|e| ChannelError::Unreadable {
        kind: match e.classify() {
            serde_json::error::Category::Io => "a read error",
            serde_json::error::Category::Syntax => "not JSON",
            serde_json::error::Category::Data => "not a message",
            serde_json::error::Category::Eof => "cut short",
        },
        column: e.column(),
        length: line.len(),
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
