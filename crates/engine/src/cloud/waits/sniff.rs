//! h2c to loopback: the first bytes an HTTP/1.1 server answers HTTP/2's preface with, kept.

use std::sync::{Arc, Mutex};

use crate::lock::Locked;

/// An h2c connection's TCP stream, keeping the first bytes the server sent: an HTTP/1.1 server
/// answers the preface and closes at once, and its close can fail the client's next write
/// before h2 reads the answer; a failed write then reads what came, so the answer is not lost.
pub(super) struct Sniffed {
    tcp: tokio::net::TcpStream,
    first: Arc<Mutex<Vec<u8>>>,
}

const SNIFFED: usize = 16;

impl Sniffed {
    pub(super) fn new(tcp: tokio::net::TcpStream) -> (Sniffed, Arc<Mutex<Vec<u8>>>) {
        let first = Arc::new(Mutex::new(Vec::new()));
        (Sniffed { tcp, first: first.clone() }, first)
    }

    fn keep(&self, bytes: &[u8]) {
        let mut first = self.first.locked();
        let room = SNIFFED.saturating_sub(first.len());
        first.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl tokio::io::AsyncRead for Sniffed {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let read = std::pin::Pin::new(&mut self.tcp).poll_read(cx, buf);
        if before < SNIFFED {
            self.keep(&buf.filled()[before..]);
        }
        read
    }
}

impl tokio::io::AsyncWrite for Sniffed {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bytes: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let written = std::pin::Pin::new(&mut self.tcp).poll_write(cx, bytes);
        if let std::task::Poll::Ready(Err(_)) = &written
            && self.first.locked().is_empty()
        {
            let mut came = [0u8; SNIFFED];
            if let Ok(n) = self.tcp.try_read(&mut came) {
                self.keep(&came[..n]);
            }
        }
        written
    }

    fn poll_flush(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}
