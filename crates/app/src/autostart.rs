//! "Open at login", starting the tray alone (`--hidden`). On Linux: an XDG autostart entry,
//! `$XDG_CONFIG_HOME/autostart/cmux-tray.desktop`, removed when turned off. On macOS and
//! Windows: auto-launch (a LaunchAgent, the Run key), as tauri-plugin-autostart does.

/// An `Exec=` value for this program: its path, quoted by the Desktop Entry rules only when it
/// must be (Debian 12's xdg-utils 1.1.3 cannot read a quoted Exec).
#[cfg(target_os = "linux")]
pub fn exec_of(exe: &std::path::Path) -> String {
    let exe = exe.to_string_lossy();
    if exe.chars().any(|c| c.is_whitespace() || "\"'\\$`".contains(c)) {
        format!("\"{}\"", exe.replace('\\', "\\\\").replace('"', "\\\"").replace('$', "\\$").replace('`', "\\`"))
    } else {
        exe.into_owned()
    }
}

#[cfg(target_os = "linux")]
fn entry_path() -> Result<std::path::PathBuf, String> {
    Ok(dirs::config_dir().ok_or("no config directory (set HOME or XDG_CONFIG_HOME)")?.join("autostart").join("cmux-tray.desktop"))
}

#[cfg(target_os = "linux")]
pub fn is_enabled() -> Result<bool, String> {
    Ok(entry_path()?.exists())
}

#[cfg(target_os = "linux")]
pub fn set(enabled: bool) -> Result<(), String> {
    let path = entry_path()?;
    if !enabled {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!("removing {}: {e}", path.display())),
            _ => Ok(()),
        };
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let entry = format!(
        "[Desktop Entry]\nType=Application\nName=cmux-tray\nComment=Banners when cloud Runs, hand-offs and agents in your terminals need you\nExec={} --hidden\nIcon=cmux-tray\nTerminal=false\nX-GNOME-Autostart-enabled=true\n",
        exec_of(&exe)
    );
    let dir = path.parent().expect("an entry has a folder");
    cmux_tray_engine::private::create_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    cmux_tray_engine::private::write_file(&path, &entry).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(any(target_os = "macos", windows))]
fn launcher() -> Result<auto_launch::AutoLaunch, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    auto_launch::AutoLaunchBuilder::new()
        .set_app_name("cmux-tray")
        .set_app_path(&exe.to_string_lossy())
        .set_args(&["--hidden"])
        .build()
        .map_err(|e| e.to_string())
}

#[cfg(any(target_os = "macos", windows))]
pub fn is_enabled() -> Result<bool, String> {
    launcher()?.is_enabled().map_err(|e| e.to_string())
}

#[cfg(any(target_os = "macos", windows))]
pub fn set(enabled: bool) -> Result<(), String> {
    let launch = launcher()?;
    if enabled { launch.enable() } else { launch.disable() }.map_err(|e| e.to_string())
}
