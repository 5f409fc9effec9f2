//! What a connection knows about itself: whether it is authorised, the password it must give,
//! and the ssh that forwards it from another machine, when one does.

use secrecy::{ExposeSecret, SecretString};

use super::forwarded::Forwarded;
use crate::notice::local::LocalPost;

pub struct Conn {
    pub authorised: bool,
    pub password: Option<SecretString>,
    /// The local ssh that forwards this connection from another machine, when it is one.
    pub forwarded: Option<Forwarded>,
}

impl Conn {
    /// A notice as this connection's sender means it (a forwarded one: its host named, its
    /// click to the local terminal running ssh).
    pub fn adopt(&self, mut post: LocalPost) -> LocalPost {
        if let Some(forwarded) = &self.forwarded {
            forwarded.adopt(&mut post);
        }
        post
    }

    /// Whether `given` is the password; once it was, the connection is authorised.
    pub fn check_password(&mut self, given: &str) -> bool {
        let ok = self.password.as_ref().is_some_and(|p| constant_time_eq(p.expose_secret().as_bytes(), given.as_bytes()));
        self.authorised |= ok;
        ok
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
