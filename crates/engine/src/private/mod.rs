//! The app's files are the person's alone: every folder it makes is 0700 and every file 0600,
//! from the moment it exists; and no secret reaches a child's environment.
//!
//! Three layers, because one alone leaves gaps: [`start`] sets the process's umask to 077 before
//! anything is created (files made by libraries — SQLite's WAL, the log appender, WebKit's caches
//! — come out private too) and takes the secrets out of the environment; the helpers here create
//! folders and files with their modes explicitly; and folders found looser are tightened at
//! start with one log line. Programs started on the person's behalf (the opener, a wrapped
//! command) get the person's own umask back, so what *they* create is as the person expects.
//!
//! Modes and the umask are Unix's ([`unix`]). On Windows ([`windows`]) the app's folders are
//! under the person's profile (`%APPDATA%`, `%LOCALAPPDATA%`), whose inherited ACL already
//! grants only the person, SYSTEM and Administrators; there is nothing to tighten.

use std::io::Write;
use std::path::Path;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as platform;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as platform;

pub use cmux_tray_channel::start::{SECRET_VARS, start, start_with};

/// A program started on the person's behalf: no secret in its environment (whatever the
/// process's own still holds) and the person's own umask.
pub fn person_command(program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    for var in SECRET_VARS.iter().chain(cmux_tray_channel::start::own_vars()) {
        command.env_remove(var);
    }
    platform::with_umask(&mut command, cmux_tray_channel::start::person_umask());
    command
}

/// Makes `dir` (and any missing parent) 0700. A folder that exists looser is tightened, with one
/// log line saying so; one that is not the person's own is refused.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    platform::private_dir().create(dir)?;
    platform::tighten(dir, 0o700)
}

/// Makes a file private if it exists looser (a file from an older version, or made by a library
/// before the umask was set); absent is fine.
pub fn tighten_file(file: &Path) -> std::io::Result<()> {
    match std::fs::metadata(file) {
        Ok(_) => platform::tighten(file, 0o600),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
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
        let mut f = platform::private_file().write(true).create_new(true).open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Opens a lock file (`app.lock`, the data folder's lock) to hold a lock on: made 0600 when
/// missing, never truncated, and never through a link (whose target another program chose).
pub fn open_lock(file: &Path) -> std::io::Result<std::fs::File> {
    let mut options = platform::private_file();
    options.read(true).write(true).create(true).truncate(false);
    platform::no_link(&mut options);
    options.open(file)
}

/// Creates `file` empty and 0600 if it does not exist, and tightens it if it does (a database
/// file before SQLite opens it: SQLite gives its WAL the main file's mode).
pub fn touch_file(file: &Path) -> std::io::Result<()> {
    match platform::private_file().write(true).create_new(true).open(file) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => tighten_file(file),
        Err(e) => Err(e),
    }
}
