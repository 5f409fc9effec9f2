//! The secret a tray makes per launch and hands to the windows process it starts on that
//! process's standard input (never the environment or the arguments, which other processes of
//! the user can read).

use serde::{Deserialize, Serialize};

/// The channel's key. Its `Debug` never shows it.
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
