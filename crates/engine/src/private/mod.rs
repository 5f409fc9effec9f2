//! The app's files are the person's alone: every folder it makes is 0700 and every file 0600,
//! from the moment it exists; and no secret reaches a child's environment.
//!
//! Three layers, because one alone leaves gaps: [`start`] sets the process's umask to 077 before
//! anything is created (files made by libraries — SQLite's WAL, the log appender, WebKit's caches
//! — come out private too) and takes the secrets out of the environment; the helpers here create
//! folders and files with their modes explicitly; and folders found looser are tightened at
//! start with one log line. Programs started on the person's behalf (the opener, a wrapped
//! command) get the person's own umask back, so what *they* create is as the person expects.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

/// Variables that hold a secret: read once at start, never inherited by a child.
pub const SECRET_VARS: &[&str] = &["CMUX_TRAY_TOKEN", "CMUX_SOCKET_PASSWORD"];

/// The umask the process was started with (restored for the person's own programs).
static PERSON_UMASK: AtomicU32 = AtomicU32::new(0o022);

/// Call first in `main`, before any other thread exists. Returns the environment as it was
/// (secrets included, for the settings), having set the umask to 077 and removed
/// [`SECRET_VARS`] from the process's own environment, so no child (the opener, `xdg-mime`,
/// the web processes) inherits them.
pub fn start() -> BTreeMap<String, String> {
    let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    PERSON_UMASK.store(old.bits(), Ordering::Relaxed);
    let env: BTreeMap<String, String> =
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
    for var in SECRET_VARS {
        // SAFETY: called first in main, before any other thread exists that could read the
        // environment at the same time (the one condition of `remove_var`).
        unsafe { std::env::remove_var(var) };
    }
    env
}

/// A program started on the person's behalf: no secret in its environment (whatever the
/// process's own still holds) and the person's own umask.
pub fn person_command(program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    for var in SECRET_VARS {
        command.env_remove(var);
    }
    let umask = PERSON_UMASK.load(Ordering::Relaxed);
    // SAFETY: umask(2) is async-signal-safe, and the closure touches nothing else.
    unsafe {
        command.pre_exec(move || {
            rustix::process::umask(rustix::fs::Mode::from_raw_mode(umask));
            Ok(())
        });
    }
    command
}

/// Makes `dir` (and any missing parent) 0700. A folder that exists looser is tightened, with one
/// log line saying so; one that is not the person's own is refused.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    tighten(dir, 0o700)
}

/// Makes a file private if it exists looser (a file from an older version, or made by a library
/// before the umask was set); absent is fine.
pub fn tighten_file(file: &Path) -> std::io::Result<()> {
    match std::fs::metadata(file) {
        Ok(_) => tighten(file, 0o600),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn tighten(path: &Path, mode: u32) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    let own = rustix::process::getuid().as_raw();
    if std::os::unix::fs::MetadataExt::uid(&meta) != own {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} belongs to another user (uid {}), not to this one ({own})",
                path.display(),
                std::os::unix::fs::MetadataExt::uid(&meta)
            ),
        ));
    }
    let found = meta.permissions().mode() & 0o777;
    if found & !mode != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
        tracing::warn!("{} was readable by others ({found:o}): made it {mode:o}", path.display());
    }
    Ok(())
}

/// Writes `file` whole, through a 0600 temporary file beside it renamed over it: a reader sees
/// the old text or the new, never half, and nobody else ever sees either.
pub fn write_file(file: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        create_dir(dir)?;
    }
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = file.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Creates `file` empty and 0600 if it does not exist, and tightens it if it does (a database
/// file before SQLite opens it: SQLite gives its WAL the main file's mode).
pub fn touch_file(file: &Path) -> std::io::Result<()> {
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(file) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => tighten_file(file),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
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
}
