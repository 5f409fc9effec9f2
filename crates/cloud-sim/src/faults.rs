//! Scripted faults and the request log, applied in front of every public endpoint.
//!
//! Each request to the public API is logged first (method, path and query, every header, arrival
//! time on tokio's clock), then matched against the fault script. Control requests (`/_sim/…`)
//! are neither logged nor faulted.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::IncomingStream;
use tokio::net::TcpListener;

use crate::script::{Fault, FaultBody, LoggedRequest};
use crate::state::Sim;

impl LoggedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// A query parameter's value as sent (not percent-decoded).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.as_deref()?.split('&').find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
    }
}

/// What the server knows of a connection: enough to reset it.
#[derive(Clone, Copy, Debug)]
pub struct Connection {
    socket: raw::Socket,
    peer: SocketAddr,
}

/// A connection's socket by its raw handle: a descriptor on Unix, a SOCKET on Windows.
#[cfg(unix)]
mod raw {
    use std::os::fd::{AsRawFd, BorrowedFd};
    pub type Socket = std::os::fd::RawFd;
    pub fn of(stream: &tokio::net::TcpStream) -> Socket {
        stream.as_raw_fd()
    }
    /// SAFETY: `socket` must be open for the borrow's life.
    pub unsafe fn borrow<'a>(socket: Socket) -> BorrowedFd<'a> {
        unsafe { BorrowedFd::borrow_raw(socket) }
    }
}

#[cfg(windows)]
mod raw {
    use std::os::windows::io::{AsRawSocket, BorrowedSocket};
    pub type Socket = std::os::windows::io::RawSocket;
    pub fn of(stream: &tokio::net::TcpStream) -> Socket {
        stream.as_raw_socket()
    }
    /// SAFETY: `socket` must be open for the borrow's life.
    pub unsafe fn borrow<'a>(socket: Socket) -> BorrowedSocket<'a> {
        unsafe { BorrowedSocket::borrow_raw(socket) }
    }
}

impl Connected<IncomingStream<'_, TcpListener>> for Connection {
    fn connect_info(stream: IncomingStream<'_, TcpListener>) -> Self {
        Connection { socket: raw::of(stream.io()), peer: *stream.remote_addr() }
    }
}

impl Connection {
    /// Aborts the connection: linger 0 makes the close an RST, shutdown wakes the client now.
    fn reset(&self) {
        // SAFETY: the connection is serving this very request, so its socket is open.
        let fd = unsafe { raw::borrow(self.socket) };
        let sock = socket2::SockRef::from(&fd);
        let _ = sock.set_linger(Some(Duration::ZERO));
        let _ = sock.shutdown(std::net::Shutdown::Both);
    }
}

fn take_fault(sim: &Sim, method: &str, path: &str) -> Option<Fault> {
    let mut faults = crate::lock::locked(&sim.inner.faults);
    let i = faults.iter().position(|f| f.matches(method, path))?;
    let fault = faults[i].clone();
    match fault.times.unwrap_or(1) {
        0 => {}
        1 => {
            faults.remove(i);
        }
        n => faults[i].times = Some(n - 1),
    }
    Some(fault)
}

pub(crate) async fn intercept(State(sim): State<Sim>, ConnectInfo(conn): ConnectInfo<Connection>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    if path.starts_with("/_sim/") || path == "/_sim" {
        return next.run(req).await;
    }
    let method = req.method().to_string();
    let fault = take_fault(&sim, &method, &path);
    let seq = {
        let mut log = crate::lock::locked(&sim.inner.log);
        let seq = log.len() as u64;
        log.push(LoggedRequest {
            seq,
            method: method.clone(),
            path: path.clone(),
            query: req.uri().query().map(String::from),
            headers: req
                .headers()
                .iter()
                .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect(),
            at_ms: sim.elapsed_ms(),
            peer: conn.peer.to_string(),
            fault: fault.as_ref().map(Fault::describe),
            status: None,
        });
        seq
    };
    let response = answer(conn, fault, req, next).await;
    // The log may have been cleared meanwhile: only this request's own entry is updated.
    let mut log = crate::lock::locked(&sim.inner.log);
    if let Some(logged) = log.get_mut(seq as usize).filter(|l| l.path == path && l.status.is_none()) {
        logged.status = Some(response.status().as_u16());
    }
    drop(log);
    response
}

async fn answer(conn: Connection, fault: Option<Fault>, req: Request, next: Next) -> Response {
    let Some(fault) = fault else {
        return next.run(req).await;
    };
    if let Some(ms) = fault.delay_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    if fault.stall {
        // Far past any hold; the client's own timeout must end it.
        tokio::time::sleep(Duration::from_secs(24 * 3600)).await;
    }
    if fault.reset {
        conn.reset();
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    if let Some(status) = fault.status {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let code = match status.as_u16() {
            401 => "auth.unauthenticated",
            403 => "auth.forbidden",
            404 => "not_found",
            429 => "rate_limited",
            503 => "owner.unreachable",
            _ => "internal",
        };
        let mut resp = crate::reply::error(status, code, "injected by the simulator");
        if let Some(secs) = fault.retry_after {
            resp.headers_mut().insert("retry-after", HeaderValue::from(secs));
        }
        return resp;
    }
    if let Some(body) = fault.body {
        let text = match body {
            FaultBody::Malformed => r#"{"id": "run_0000000000000000000"#.to_string(),
            FaultBody::NotASnapshot => r#"{"ok": true, "message": "hello"}"#.to_string(),
            FaultBody::Raw(s) => s,
            FaultBody::Oversized => {
                let pad = "x".repeat(16 * 1024 * 1024);
                format!(r#"{{"padding": "{pad}"}}"#)
            }
        };
        return Response::builder().header("content-type", "application/json").body(Body::from(text)).expect("a static response builds");
    }
    next.run(req).await
}
