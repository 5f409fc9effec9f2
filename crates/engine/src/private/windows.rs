//! Windows: the app's folders live in the person's profile, whose inherited ACL already keeps
//! others out (the module's doc in `private` says more), so nothing is set or tightened here.

use std::path::Path;

pub(super) fn with_umask(_command: &mut tokio::process::Command, _umask: u32) {}

pub(super) fn private_dir() -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    builder
}

pub(super) fn private_file() -> std::fs::OpenOptions {
    std::fs::OpenOptions::new()
}

/// A link in the profile's own folders is the person's doing: nothing to refuse.
pub(super) fn no_link(_options: &mut std::fs::OpenOptions) {}

/// The profile's inherited ACL is the person's; a path only has to exist.
pub(super) fn tighten(path: &Path, _mode: u32) -> std::io::Result<()> {
    std::fs::metadata(path).map(drop)
}
