//! A simulator of the cmux cloud API, faithful to `docs/cloud-api.md`, served on loopback.
//!
//! It stands in for the real service in the project's tests, benchmarks and demo. Map:
//!
//! - [`state`]: the accounts, Runs, hand-offs and device codes, and every way to change them
//!   (the Rust control API tests call in-process).
//! - [`api`]: the public endpoints, with the long-poll holds (10 s Runs, 25 s hand-offs), the
//!   version rule, legacy hand-offs without `state`, list paging and the error bodies.
//! - [`faults`]: scripted faults (any status, `Retry-After`, delay, stall, reset, malformed or
//!   oversized body) and the log of every request received, with headers and arrival time.
//! - [`script`], [`reply`]: what a fault and a logged request are; the service's error body.
//! - [`control`]: the same control API over HTTP under `/_sim/`, for other processes.
//! - [`demo`]: the newcomer's story (a Run ends, a hand-off needs you …), for the demo modes.
//!
//! Time comes from tokio's clock, so a test with a paused clock sees holds and arrival times in
//! virtual time. The simulator never reaches outside loopback.

pub mod api;
pub mod control;
pub mod demo;
pub mod faults;
mod lock;
pub mod reply;
pub mod script;
pub mod state;

use std::net::SocketAddr;

use axum::Router;
use tokio::net::TcpListener;

pub use script::{Fault, FaultBody, LoggedRequest};
pub use state::{HandoffChange, RunChange, Sim, SimUser};

/// How long the Run API holds a `/wait` on an unchanged, non-terminal Run.
pub const RUN_HOLD: std::time::Duration = std::time::Duration::from_secs(10);
/// How long the hand-off store holds a `/wait` whose version has not passed `after`.
pub const HANDOFF_HOLD: std::time::Duration = std::time::Duration::from_secs(25);

/// A simulator listening on loopback. Dropping the handle does not stop the server; call
/// [`RunningSim::shutdown`] (or let the runtime end).
pub struct RunningSim {
    pub sim: Sim,
    pub addr: SocketAddr,
    shutdown: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl RunningSim {
    /// `http://127.0.0.1:PORT`, the origin to give a client as both API and auth URL.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        let _ = self.task.await;
    }
}

/// The whole application: public API, control API, and the fault/log layer in front of both.
pub fn router(sim: Sim) -> Router {
    let public = api::routes();
    let control = control::routes();
    Router::new()
        .merge(public)
        .nest("/_sim", control)
        .layer(axum::middleware::from_fn_with_state(sim.clone(), faults::intercept))
        .with_state(sim)
}

/// Binds `addr` (use port 0 for any free port) and serves until shut down.
pub async fn serve(sim: Sim, addr: SocketAddr) -> std::io::Result<RunningSim> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    let app = router(sim.clone()).into_make_service_with_connect_info::<faults::Connection>();
    let task = tokio::spawn(async move {
        let stop = async move {
            let _ = rx.wait_for(|stop| *stop).await;
        };
        if let Err(e) = axum::serve(listener, app).with_graceful_shutdown(stop).await {
            tracing::error!("simulator stopped: {e}");
        }
    });
    Ok(RunningSim { sim, addr, shutdown: tx, task })
}

/// A fresh simulator on a free loopback port.
pub async fn start() -> std::io::Result<RunningSim> {
    serve(Sim::new(), SocketAddr::from(([127, 0, 0, 1], 0))).await
}
