//! The cmux cloud: its HTTP client, its types, its checked ids and its errors.
//!
//! Owns everything about the wire; never decides what is news.

pub mod answer;
pub mod auth;
pub mod client;
mod connect;
pub mod error;
pub mod ids;
pub mod listing;
pub mod proxy;
pub mod types;
mod waits;

pub use client::{CloudClient, Credentials, HANDOFF_HOLD, Listing, Network, RUN_HOLD};
pub use error::CloudError;
pub use ids::{BadId, HandoffId, RunId, TeamId};
pub use types::{Handoff, HandoffState, HandoffStatus, Me, Outcome, Receipt, Release, Run, RunStatus, Team};
