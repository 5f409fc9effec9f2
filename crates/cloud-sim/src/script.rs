//! What the fault script and the request log hold: the state keeps them, the fault layer reads
//! and writes them, the control API takes them.

use serde::{Deserialize, Serialize};

/// One scripted fault. Matching requests (by path substring and method) get the fault instead
/// of (or, for `delay_ms` alone, before) the real answer.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fault {
    /// Applies to requests whose path (without query) contains this; all when absent.
    pub path_contains: Option<String>,
    pub method: Option<String>,
    /// Answer with this status and the service's error body.
    pub status: Option<u16>,
    /// `Retry-After` seconds sent with `status`.
    pub retry_after: Option<u64>,
    /// Wait this long first.
    pub delay_ms: Option<u64>,
    /// Never answer (a stall past any hold).
    #[serde(default)]
    pub stall: bool,
    /// Reset the connection instead of answering.
    #[serde(default)]
    pub reset: bool,
    /// Answer 200 with this body instead.
    pub body: Option<FaultBody>,
    /// How many matching requests it applies to; 0 means every one until cleared. Default 1.
    pub times: Option<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FaultBody {
    /// JSON cut off in the middle.
    Malformed,
    /// Valid JSON of 16 MiB.
    Oversized,
    /// Valid JSON that is no snapshot of anything.
    NotASnapshot,
    /// Exactly this text, as `application/json`.
    Raw(String),
}

impl Fault {
    pub fn on(path_contains: &str) -> Self {
        Fault { path_contains: Some(path_contains.into()), ..Fault::default() }
    }
    pub fn status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }
    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }
    pub fn body(mut self, body: FaultBody) -> Self {
        self.body = Some(body);
        self
    }
    pub fn stall(mut self) -> Self {
        self.stall = true;
        self
    }
    pub fn reset(mut self) -> Self {
        self.reset = true;
        self
    }
    pub fn delay(mut self, ms: u64) -> Self {
        self.delay_ms = Some(ms);
        self
    }
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    pub(crate) fn matches(&self, method: &str, path: &str) -> bool {
        self.path_contains.as_deref().is_none_or(|p| path.contains(p))
            && self.method.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(method))
    }

    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(s) = self.status {
            parts.push(format!("status {s}"));
        }
        if let Some(d) = self.delay_ms {
            parts.push(format!("delay {d} ms"));
        }
        if self.stall {
            parts.push("stall".into());
        }
        if self.reset {
            parts.push("reset".into());
        }
        if let Some(b) = &self.body {
            parts.push(format!("body {b:?}"));
        }
        parts.join(", ")
    }
}

/// A request as the simulator received it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggedRequest {
    pub seq: u64,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// Every header, names lower-case, in arrival order.
    pub headers: Vec<(String, String)>,
    /// Arrival, in milliseconds since the simulator started (tokio's clock).
    pub at_ms: u64,
    /// The connection it came on (client address).
    pub peer: String,
    /// The fault it got, if any.
    pub fault: Option<String>,
    /// The status it was answered with, once the answer was made (a held long-poll has none
    /// yet; a reset connection is logged 500, which its client never read).
    #[serde(default)]
    pub status: Option<u16>,
}
