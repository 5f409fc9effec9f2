//! Where the app's folders and its other program are, declared once for both programs (the
//! engine's `config::Paths` reads its own from here).

use std::path::PathBuf;

/// The app's folder name in each of the platform's directories.
pub const APP: &str = "cmux-tray";

/// The app's runtime folder (`$XDG_RUNTIME_DIR/cmux-tray`, else in the data directory), where
/// the sockets are; none without a home.
pub fn runtime_dir() -> Option<PathBuf> {
    Some(dirs::runtime_dir().or_else(dirs::data_dir)?.join(APP))
}

/// Where the app writes its log (one file a day, a week kept): `$XDG_STATE_HOME` on Linux,
/// else the local data folder, else under `data_dir` (the app's data folder).
pub fn log_dir(data_dir: &std::path::Path) -> PathBuf {
    dirs::state_dir().or_else(dirs::data_local_dir).unwrap_or_else(|| data_dir.to_path_buf()).join(APP).join("logs")
}

/// [`log_dir`] of this user's app data folder; none without a home.
pub fn default_log_dir() -> Option<PathBuf> {
    Some(log_dir(&dirs::data_dir()?.join(APP)))
}

/// The app's two programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Program {
    Tray,
    Windows,
}

impl Program {
    /// Its file's name, without the platform's suffix.
    pub const fn as_str(self) -> &'static str {
        match self {
            Program::Tray => "cmux-tray-app",
            Program::Windows => "cmux-tray-windows",
        }
    }
}

/// Where the other program of the app is: beside this one (a build tree, the benchmark's
/// install), else where the package puts it (`/usr/bin/cmux-tray-app`,
/// `/usr/lib/cmux-tray/cmux-tray-windows`).
pub fn program(which: Program) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let file = format!("{}{}", which.as_str(), std::env::consts::EXE_SUFFIX);
    [dir.join(&file), dir.join("../lib/cmux-tray").join(&file), dir.join("../../bin").join(&file)].into_iter().find(|p| p.is_file())
}
