//! One message a line, each side reading at most its limit: a line that is not a message is
//! said by its kind, place and length, never its words (a pasted token may be in it).

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The longest line the windows process reads (a page's largest answer, the history, is far below).
pub const MAX_LINE: u64 = 8 << 20;

/// The longest line the tray reads: a launch's arguments or a page's call, never near it.
pub const MAX_LINE_TO_TRAY: u64 = 256 << 10;

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
