//! Unix: the umask, and folders 0700 and files 0600 from the moment they exist.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Gives `command` the person's own umask when it starts.
#[allow(clippy::unnecessary_cast)] // to macOS's 16-bit `mode_t`
pub(super) fn with_umask(command: &mut tokio::process::Command, umask: u32) {
    // SAFETY: umask(2) is async-signal-safe, and the closure touches nothing else.
    unsafe {
        command.pre_exec(move || {
            // Every mode bit fits the narrowest `mode_t`: the umask was read from one.
            rustix::process::umask(rustix::fs::Mode::from_raw_mode(umask as rustix::fs::RawMode));
            Ok(())
        });
    }
}

/// A folder builder whose folders are 0700.
pub(super) fn private_dir() -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true).mode(0o700);
    builder
}

/// Open options whose new files are 0600.
pub(super) fn private_file() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.mode(0o600);
    options
}

/// Open options that never follow a link at the last step (a lock file a link points elsewhere).
pub(super) fn no_link(options: &mut std::fs::OpenOptions) {
    use std::os::unix::fs::OpenOptionsExt;
    options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
}

/// Takes `path` down to `mode` when it is looser (one log line saying so); refuses a path that
/// is not the person's own.
pub(super) fn tighten(path: &Path, mode: u32) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    let own = rustix::process::getuid().as_raw();
    if meta.uid() != own {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{} belongs to another user (uid {}), not to this one ({own})", path.display(), meta.uid()),
        ));
    }
    let found = meta.permissions().mode() & 0o777;
    if found & !mode != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
        tracing::warn!("{} was readable by others ({found:o}): made it {mode:o}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{create_dir, open_lock, touch_file, write_file};
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn folders_and_files_are_the_persons_alone() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        create_dir(&dir).unwrap();
        assert_eq!((mode(&root.path().join("a")), mode(&dir)), (0o700, 0o700));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        create_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700, "a looser folder is tightened");
        let file = dir.join("config.toml");
        write_file(&file, "x = 1\n").unwrap();
        assert_eq!((mode(&file), std::fs::read_to_string(&file).unwrap().as_str()), (0o600, "x = 1\n"));
        let db = dir.join("state.sqlite3");
        std::fs::write(&db, "").unwrap();
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        touch_file(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "no temporary file is left");
    }

    /// A program of the person's points `app.lock` at a file it wants emptied: the lock is not
    /// taken through the link, and the file keeps its words; a lock file that exists keeps its.
    #[test]
    fn a_lock_is_never_opened_through_a_link_nor_emptied() {
        let root = tempfile::tempdir().unwrap();
        let victim = root.path().join("notes.txt");
        std::fs::write(&victim, "keep me").unwrap();
        let lock = root.path().join("app.lock");
        std::os::unix::fs::symlink(&victim, &lock).unwrap();
        assert!(open_lock(&lock).is_err(), "opened through a link");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        std::fs::remove_file(&lock).unwrap();
        let held = open_lock(&lock).unwrap();
        assert_eq!(mode(&lock), 0o600);
        drop(held);
        std::fs::write(&lock, "12345").unwrap();
        drop(open_lock(&lock).unwrap());
        assert_eq!(std::fs::read_to_string(&lock).unwrap(), "12345", "not truncated");
    }
}
