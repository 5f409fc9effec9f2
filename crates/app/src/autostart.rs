//! "Open at login", starting the tray alone (`--hidden`). On Linux: an XDG autostart entry,
//! `$XDG_CONFIG_HOME/autostart/cmux-tray.desktop`, removed when turned off. On macOS and
//! Windows: auto-launch (a LaunchAgent, the Run key), as tauri-plugin-autostart does.

/// An argument of an `Exec=` value, as the Desktop Entry spec says ("The Exec key"): quoted
/// only when it holds a reserved character (Debian 12's xdg-utils 1.1.3 cannot read a quoted
/// Exec), `"`, `` ` ``, `$` and `\` escaped inside the quotes, `%` doubled (it starts a field
/// code), and then the escapes of every string value (`\\`, `\n`, `\t`, `\r`).
#[cfg(target_os = "linux")]
pub fn exec_of(exe: &std::path::Path) -> String {
    const RESERVED: &[char] = &[' ', '\t', '\n', '"', '\'', '\\', '>', '<', '~', '|', '&', ';', '$', '*', '?', '#', '(', ')', '`'];
    let arg = exe.to_string_lossy();
    let quoted = if arg.contains(RESERVED) {
        let inner: String = arg.chars().flat_map(|c| matches!(c, '"' | '`' | '$' | '\\').then_some('\\').into_iter().chain([c])).collect();
        format!("\"{inner}\"")
    } else {
        arg.into_owned()
    };
    quoted
        .chars()
        .map(|c| match c {
            '%' => "%%".to_string(),
            '\\' => "\\\\".to_string(),
            '\n' => "\\n".to_string(),
            '\t' => "\\t".to_string(),
            '\r' => "\\r".to_string(),
            c => c.to_string(),
        })
        .collect()
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::exec_of;

    /// Each value as the Desktop Entry spec's rules write it, by hand.
    #[test]
    fn awkward_paths_are_quoted_and_escaped_as_the_spec_says() {
        let cases = [
            ("/usr/bin/cmux-tray-app", r#"/usr/bin/cmux-tray-app"#),
            ("/home/ada/My Apps/cmux-tray-app", r#""/home/ada/My Apps/cmux-tray-app""#),
            ("/opt/100%/cmux-tray-app", r#"/opt/100%%/cmux-tray-app"#),
            ("/opt/100% sure/cmux-tray-app", r#""/opt/100%% sure/cmux-tray-app""#),
            ("/home/ada/\"quoted\"/app", r#""/home/ada/\\"quoted\\"/app""#),
            ("/home/ada/it's/app", r#""/home/ada/it's/app""#),
            ("/home/ada/$HOME/app", r#""/home/ada/\\$HOME/app""#),
            ("/home/ada/back\\slash/app", r#""/home/ada/back\\\\slash/app""#),
            ("/home/ada/tick`/app", r#""/home/ada/tick\\`/app""#),
            ("/home/ada/a=b/app", r#"/home/ada/a=b/app"#),
        ];
        for (path, value) in cases {
            assert_eq!(exec_of(std::path::Path::new(path)), value, "{path}");
        }
    }

    /// desktop-file-validate (desktop-file-utils) accepts an entry made with each of them.
    #[test]
    fn entries_with_awkward_paths_pass_desktop_file_validate() {
        let dir = tempfile::tempdir().unwrap();
        for (n, path) in ["/home/ada/My Apps/app", "/opt/100% sure/app", "/x/\"q\"/$y/`z`/app", "/x/back\\slash/app"].iter().enumerate() {
            let file = dir.path().join(format!("awkward{n}.desktop"));
            let entry =
                format!("[Desktop Entry]\nType=Application\nName=cmux-tray\nExec={} --hidden\n", exec_of(std::path::Path::new(path)));
            std::fs::write(&file, &entry).unwrap();
            let out = std::process::Command::new("desktop-file-validate")
                .arg(&file)
                .output()
                .expect("desktop-file-validate runs (desktop-file-utils)");
            assert!(out.status.success() && out.stdout.is_empty(), "{entry}\n{}", String::from_utf8_lossy(&out.stdout));
        }
    }
}
