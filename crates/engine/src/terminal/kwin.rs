//! KWin's window layer (KDE Plasma on Wayland, where EWMH does not reach). KWin has no D-Bus call
//! that lists windows or focuses one, but it runs a script handed to it over D-Bus
//! (`org.kde.KWin /Scripting loadScript`, then `run` on the script's object), and a script can
//! call back (`callDBus`). The engine's script lists each window's process and whether it is the
//! active one, and activates one when asked; the answer is taken only from the owner of
//! `org.kde.KWin`, on a connection of its own that ends with the question. A window is found
//! from a process by its ancestors, as under sway. The script speaks KWin 5's names
//! (`clientList`, `activeClient`) and KWin 6's (`windowList`, `activeWindow`).

/// Whether this is a Plasma session on Wayland (`XDG_CURRENT_DESKTOP` names KDE, and a Wayland
/// display is set): KWin is then the compositor asked.
pub fn session() -> bool {
    is_plasma_on_wayland(std::env::var("XDG_CURRENT_DESKTOP").ok().as_deref(), std::env::var_os("WAYLAND_DISPLAY").as_deref())
}

fn is_plasma_on_wayland(desktop: Option<&str>, wayland: Option<&std::ffi::OsStr>) -> bool {
    desktop.is_some_and(|d| d.split(':').any(|d| d.eq_ignore_ascii_case("KDE"))) && wayland.is_some_and(|w| !w.is_empty())
}

#[cfg(all(unix, not(target_os = "macos")))]
mod bus {
    use std::sync::Mutex;

    use tokio::sync::oneshot;

    pub const PATH: &str = "/dev/cmux/tray/KWinAnswer";
    pub const INTERFACE: &str = "dev.cmux.tray.KWinAnswer";
    const KWIN: &str = "org.kde.KWin";

    /// The script: `ANCESTORS` (a process and its parents, nearest first), `ACTIVATE` (whether to
    /// activate the window of the nearest KWin shows) and where to answer are filled in.
    const SCRIPT: &str = r#"(function () {
    var ws = workspace;
    var list = ws.windowList ? ws.windowList() : ws.clientList();
    var six = ws.activeWindow !== undefined;
    var ancestors = ANCESTORS;
    var target = null;
    for (var a = 0; a < ancestors.length && target === null; a++) {
        for (var i = 0; i < list.length; i++) {
            if (list[i].pid === ancestors[a]) { target = list[i]; break; }
        }
    }
    if (ACTIVATE && target !== null) {
        if (six) { ws.activeWindow = target; } else { ws.activeClient = target; }
    }
    var active = six ? ws.activeWindow : ws.activeClient;
    var out = [];
    for (var j = 0; j < list.length; j++) { out.push([list[j].pid, list[j] === active]); }
    callDBus(NAME, PATH, INTERFACE, "Windows", JSON.stringify(out));
})();
"#;

    /// Where the script's answer arrives: who sent it, and what.
    struct Answer(Mutex<Option<oneshot::Sender<(String, String)>>>);

    #[zbus::interface(name = "dev.cmux.tray.KWinAnswer")]
    impl Answer {
        async fn windows(&self, #[zbus(header)] header: zbus::message::Header<'_>, list: String) {
            let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
            if let Some(answer) = self.0.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = answer.send((sender, list));
            }
        }
    }

    /// Runs the script for `ancestors` (activating the window of the nearest when `activate`)
    /// and returns what it answered: each window's process and whether it is the active one.
    pub async fn windows(ancestors: &[u32], activate: bool) -> Result<Vec<(u32, bool)>, String> {
        let exchange = async {
            let (tell, told) = oneshot::channel();
            let conn = zbus::connection::Builder::session()
                .and_then(|b| b.serve_at(PATH, Answer(Mutex::new(Some(tell)))))
                .map_err(|e| format!("the session bus: {e}"))?
                .build()
                .await
                .map_err(|e| format!("the session bus: {e}"))?;
            let name = conn.unique_name().map(|n| n.to_string()).ok_or("no name on the session bus")?;
            let plugin = format!("cmux-tray-{}", uuid::Uuid::now_v7().simple());
            let script = SCRIPT
                .replace("ANCESTORS", &serde_json::to_string(ancestors).map_err(|e| e.to_string())?)
                .replace("ACTIVATE", if activate { "true" } else { "false" })
                .replace("NAME", &format!("{name:?}"))
                .replace("PATH", &format!("{PATH:?}"))
                .replace("INTERFACE", &format!("{INTERFACE:?}"));
            // KWin reads the script from a file: the person's runtime folder, private.
            let folder = std::env::var_os("XDG_RUNTIME_DIR").map(std::path::PathBuf::from).filter(|d| d.is_absolute());
            let file = folder.unwrap_or_else(std::env::temp_dir).join(format!("{plugin}.js"));
            crate::private::write_file(&file, &script).map_err(|e| format!("the script's file {}: {e}", file.display()))?;
            let path = file.to_string_lossy().into_owned();
            // KWin reads the file when the script runs; it goes once the script has answered.
            let answer = async {
                let id =
                    call::<i32>(&conn, "/Scripting", "org.kde.kwin.Scripting", "loadScript", &(path.as_str(), plugin.as_str())).await?;
                // KWin 6 names a script's object /Scripting/ScriptN; KWin 5 /N.
                if call::<()>(&conn, &format!("/Scripting/Script{id}"), "org.kde.kwin.Script", "run", &()).await.is_err() {
                    call::<()>(&conn, &format!("/{id}"), "org.kde.kwin.Script", "run", &()).await?;
                }
                told.await.map_err(|_| "KWin's script did not answer".to_string())
            }
            .await;
            let _ = call::<bool>(&conn, "/Scripting", "org.kde.kwin.Scripting", "unloadScript", &(plugin.as_str(),)).await;
            let _ = std::fs::remove_file(&file);
            let (sender, list) = answer?;
            let owner: String = conn
                .call_method(Some("org.freedesktop.DBus"), "/org/freedesktop/DBus", Some("org.freedesktop.DBus"), "GetNameOwner", &(KWIN,))
                .await
                .and_then(|m| m.body().deserialize::<String>())
                .map_err(|e| format!("who owns {KWIN}: {e}"))?;
            if sender != owner {
                return Err(format!("an answer from {sender}, which is not KWin ({owner}): not taken"));
            }
            parse(&list)
        };
        match tokio::time::timeout(super::super::process::TOOL_TIMEOUT, exchange).await {
            Ok(answer) => answer,
            Err(_) => Err(format!("KWin did not answer within {:?}", super::super::process::TOOL_TIMEOUT)),
        }
    }

    async fn call<R: serde::de::DeserializeOwned + zbus::zvariant::Type>(
        conn: &zbus::Connection,
        path: &str,
        interface: &str,
        method: &str,
        body: &(impl serde::Serialize + zbus::zvariant::DynamicType),
    ) -> Result<R, String> {
        let reply = conn.call_method(Some(KWIN), path, Some(interface), method, body).await.map_err(|e| format!("KWin's {method}: {e}"))?;
        reply.body().deserialize::<R>().map_err(|e| format!("KWin's answer to {method}: {e}"))
    }

    /// The script's answer: `[[pid, active], …]`, a few hundred windows at most.
    fn parse(list: &str) -> Result<Vec<(u32, bool)>, String> {
        serde_json::from_str::<Vec<(u32, bool)>>(list)
            .map_err(|e| format!("KWin's script answered {} bytes that are not its list: {e}", list.len()))
    }
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
mod bus {
    pub async fn windows(_: &[u32], _: bool) -> Result<Vec<(u32, bool)>, String> {
        Err("KWin is asked on Linux alone".into())
    }
}

/// The window of the nearest of `ancestors` that KWin shows (activated first when `activate`),
/// and whether it is the active one.
async fn window_of(ancestors: &[u32], activate: bool) -> Result<Option<(u32, bool)>, String> {
    Ok(super::process::nearest_window(ancestors, &bus::windows(ancestors, activate).await?))
}

/// Whether the window holding any of `pids` (a terminal's clients) is the active one.
pub async fn shows_focused(pids: &[u32]) -> Result<bool, String> {
    // One script run lists every window; each client's parents are looked up in that list.
    let shown = bus::windows(&[], false).await?;
    Ok(pids.iter().any(|pid| matches!(super::process::nearest_window(&super::process::ancestors(*pid), &shown), Some((_, true)))))
}

/// Activates (and so raises) the window that holds `pid`, in one script that also says whether
/// it then is the active one.
pub async fn focus(pid: u32) -> Result<(), String> {
    match window_of(&super::process::ancestors(pid), true).await? {
        Some((_, true)) => Ok(()),
        Some((window, false)) => Err(format!("KWin did not activate the window of process {window}")),
        None => Err(format!("KWin shows no window of process {pid} or its parents")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plasma_on_wayland_is_kde_named_with_a_wayland_display() {
        let wayland = Some(std::ffi::OsStr::new("wayland-0"));
        assert!(is_plasma_on_wayland(Some("KDE"), wayland));
        assert!(is_plasma_on_wayland(Some("ubuntu:KDE"), wayland));
        assert!(!is_plasma_on_wayland(Some("KDE"), None), "Plasma on X11: EWMH");
        assert!(!is_plasma_on_wayland(Some("KDE"), Some(std::ffi::OsStr::new(""))));
        assert!(!is_plasma_on_wayland(Some("GNOME"), wayland));
        assert!(!is_plasma_on_wayland(None, wayland));
    }
}
