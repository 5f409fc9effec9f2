//! A batch's answers on their way out to a client, in the order it asked.

use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};

/// A reply that cannot be written within this long (a client that stopped reading) ends the
/// connection, never the server.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// A batch's answers are written together up to this many bytes; past it they go out as they
/// are ready (64 `notification.list` answers of thousands of notices would be gigabytes).
pub const REPLY_BYTES: usize = 256 * 1024;

/// What a connection writes to.
pub trait Write: AsyncWrite + Unpin {}
impl<T: AsyncWrite + Unpin> Write for T {}

/// A batch's answers on their way out, in order: kept together while small (one write for a
/// pipelining client's many `OK`s), written as they are ready once [`REPLY_BYTES`] wait.
pub struct Replies<'a, W> {
    write: &'a mut W,
    pending: Vec<u8>,
    /// The first slot not yet taken.
    next: usize,
}

impl<'a, W: Write> Replies<'a, W> {
    pub fn new(write: &'a mut W) -> Self {
        Replies { write, pending: Vec::new(), next: 0 }
    }

    /// Takes the answers ready at the front of `replies` (slots before the first still empty),
    /// writing when enough wait.
    pub async fn take_ready(&mut self, replies: &mut [Option<String>]) -> std::io::Result<()> {
        while let Some(reply) = replies.get_mut(self.next).and_then(Option::take) {
            self.pending.extend_from_slice(reply.as_bytes());
            self.pending.push(b'\n');
            self.next += 1;
            if self.pending.len() >= REPLY_BYTES {
                self.flush().await?;
            }
        }
        Ok(())
    }

    /// Writes what waits, within [`WRITE_TIMEOUT`].
    pub async fn flush(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let written = tokio::time::timeout(WRITE_TIMEOUT, self.write.write_all(&self.pending)).await;
        self.pending.clear();
        written.unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
    }
}
