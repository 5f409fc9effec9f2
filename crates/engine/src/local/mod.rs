//! The local socket: cmux's notification protocol on a socket of the user's own (a Unix socket,
//! or a named pipe on Windows), so `cmux notify`, cmux's agent hooks and any client written for
//! cmux reach this app unchanged; and the way this machine's `cmux-tray` commands reach the
//! running engine.
//!
//! - [`protocol`]: lines in, requests out; results in, lines out (pure).
//! - [`endpoint`]: the platform's socket: bind, the peer check, connect (one file per platform).
//! - [`server`]: password mode, limits, one task per connection; what a client pipelined is
//!   read and answered together.
//! - [`methods`]: each line to its request's type, by the command or method it names; a
//!   batch's notices in one commit.
//! - [`requests`]: one type per method, shared by the client and the server, each parsed and
//!   applied in a file of its own.
//! - [`conn`]: what a connection knows about itself (authorised, password, forwarded).
//! - [`replies`]: a batch's answers written in order, together while small.
//! - [`forwarded`]: a connection an ssh client forwards from another machine: its host, and
//!   the local terminal running that ssh for the click.
//! - [`client`]: where a client sends (seed 000's resolution rules), and one request.
//!
//! Never trusts a peer it has not checked.

pub mod client;
pub mod conn;
pub mod endpoint;
pub mod forwarded;
pub mod methods;
pub mod protocol;
pub mod replies;
pub mod requests;
pub mod server;

pub use client::{RequestError, request};
pub use endpoint::{Listener, bind};
pub use server::{ServerOptions, SocketError, serve};
