//! Changing the config file from `cmux-tray config set` and the settings window: one key at a
//! time, keeping the rest of the file as the person wrote it (comments, order, spacing).
//!
//! It must never write a file the engine would refuse: the value is checked first, and then the
//! whole new file is read the way the engine reads it. The write is atomic (a temporary file
//! renamed over the old one), so a crash leaves the old file or the new one, never half of one.

use std::path::Path;

use super::Settings;
use crate::policy::delivery_settings as delivery;

/// The keys outside `[delivery]` that can be set, and what each is. An empty value removes the
/// key (its default again). The team is chosen per account (the settings window, the engine),
/// not here.
pub const EDITABLE: &[(&str, &str)] = &[
    ("cloud.api_url", "the cloud API's origin (staging: https://cloud-api-staging.cmux.dev)"),
    ("cloud.auth_url", "the sign-in origin"),
    ("cloud.proxy", "the proxy to the cloud (http://host:port, socks5://host:port), or none; empty: the environment's"),
    ("local.socket_path", "where the local socket lives (an absolute path)"),
    ("updates.feed", "a release feed asked once a day for a newer version (an https URL); empty: no check"),
    ("general.language", "the language of the tray, the windows and the banners (en, de); empty: the system's"),
];

/// `[local] password`: set like the keys of [`EDITABLE`], never printed (`config get` says
/// [`HIDDEN`]), and not in the settings window.
pub const LOCAL_PASSWORD: &str = "local.password";

/// The `[notify]` keys (where `notify`, `wrap` and `hook` send: docs/local-socket.md, the client
/// side) and the kind of value each takes. An empty value removes the key.
pub const NOTIFY: &[(&str, NotifyKind, &str)] = &[
    ("notify.enabled", NotifyKind::Bool, "send notices: true, false (beats everything), empty: a socket decides"),
    ("notify.socket_path", NotifyKind::Text, "the socket to send to when the environment names none"),
    ("notify.surface_id", NotifyKind::Text, "the surface a notice belongs to when CMUX_SURFACE_ID is not set"),
    ("notify.workspace_id", NotifyKind::Text, "the workspace a notice belongs to when CMUX_WORKSPACE_ID is not set"),
    ("notify.timeout", NotifyKind::Seconds, "seconds a notice may take to be sent (default 2)"),
    ("notify.wrap_threshold", NotifyKind::Seconds, "seconds a wrapped command must run before its end is a notice (default 10)"),
    ("notify.idle_reminders", NotifyKind::Bool, "Claude Code's idle reminders as notices (default false)"),
    ("notify.link_wait", NotifyKind::Seconds, "seconds a notice waits for a forwarded socket's ssh link to come back (default 30)"),
];

/// What a `[notify]` key takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotifyKind {
    Bool,
    Text,
    Seconds,
}

/// The kind of a `[notify]` key, if it is one.
pub fn notify_kind(key: &str) -> Option<NotifyKind> {
    NOTIFY.iter().find(|(k, _, _)| *k == key).map(|(_, kind, _)| *kind)
}

/// What `config get` shows for a key that is set but never printed.
pub const HIDDEN: &str = "(set, not shown)";

/// A `[notify]` value from the command line, as the file will hold it.
fn notify_value(key: &str, kind: NotifyKind, text: &str) -> Result<toml::Value, String> {
    let t = text.trim();
    match kind {
        NotifyKind::Text => Ok(toml::Value::String(t.into())),
        NotifyKind::Bool => match t.to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" | "1" => Ok(toml::Value::Boolean(true)),
            "false" | "off" | "no" | "0" => Ok(toml::Value::Boolean(false)),
            _ => Err(format!("{key} = {text:?}: expected true or false")),
        },
        NotifyKind::Seconds => match (t.parse::<i64>(), t.parse::<f64>()) {
            (Ok(n), _) => Ok(toml::Value::Integer(n)),
            (_, Ok(f)) => Ok(toml::Value::Float(f)),
            _ => Err(format!("{key} = {text:?}: expected seconds (a number)")),
        },
    }
}

/// The value in force for `key`: a `[delivery]` key, or one of [`EDITABLE`] (as the file says,
/// without the environment).
pub fn get_in_file(path: &Path, key: &str) -> Result<String, String> {
    let text = read(path)?;
    if key.starts_with("delivery.") {
        let table: toml::Table = text.parse().map_err(|e| format!("{}: not valid TOML: {e}", path.display()))?;
        let (settings, _) =
            delivery::parse(table.get("delivery").and_then(|d| d.as_table())).map_err(|e| format!("{}: {e}", path.display()))?;
        return delivery::get(&settings, key).ok_or_else(|| unknown(key));
    }
    if let Some(kind) = notify_kind(key) {
        let table: toml::Table = text.parse().map_err(|e| format!("{}: not valid TOML: {e}", path.display()))?;
        let name = key.trim_start_matches("notify.");
        let value = table.get("notify").and_then(|n| n.get(name));
        return Ok(match (value, kind) {
            (None, _) => String::new(),
            (Some(toml::Value::String(s)), _) => s.clone(),
            (Some(v), _) => v.to_string(),
        });
    }
    let s = Settings::from_text(path, &text).map_err(|e| e.to_string())?;
    match key {
        LOCAL_PASSWORD => Ok(if s.socket_password.is_some() { HIDDEN.into() } else { String::new() }),
        "cloud.api_url" => Ok(s.api_url),
        "cloud.auth_url" => Ok(s.auth_url),
        "cloud.proxy" => Ok(proxy_in_file(&text)),
        "local.socket_path" => Ok(s.socket_path.map(|p| p.display().to_string()).unwrap_or_default()),
        "updates.feed" => Ok(s.update_feed.unwrap_or_default()),
        "general.language" => Ok(s.language.map(|l| l.as_str().to_string()).unwrap_or_default()),
        _ => Err(unknown(key)),
    }
}

/// Changes one key in the config file (see the module's doc).
pub fn set_in_file(path: &Path, key: &str, text: &str) -> Result<(), String> {
    let value = if key.starts_with("delivery.") {
        Some(delivery::value_for(key, text).map_err(|e| e.to_string())?)
    } else if let Some(kind) = notify_kind(key) {
        (!text.trim().is_empty()).then(|| notify_value(key, kind, text)).transpose()?
    } else if EDITABLE.iter().any(|(k, _)| *k == key) || key == LOCAL_PASSWORD {
        let text = text.trim();
        (!text.is_empty()).then(|| toml::Value::String(text.into()))
    } else {
        return Err(unknown(key));
    };
    let old = read(path)?;
    let mut doc: toml_edit::DocumentMut = old.parse().map_err(|e| format!("{}: not valid TOML, not changed: {e}", path.display()))?;
    let parts: Vec<&str> = key.split('.').collect();
    let (last, tables) = parts.split_last().expect("keys have a dot");
    let mut table = doc.as_table_mut();
    for name in tables {
        let item = table.entry(name).or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        });
        table = item.as_table_mut().ok_or_else(|| format!("{}: {name} is not a table, not changed", path.display()))?;
    }
    match &value {
        Some(v) => {
            let mut new = to_edit(v);
            // Keep a comment after the old value (`api_url = "…" # prod`).
            if let Some(old) = table.get(last).and_then(|i| i.as_value()) {
                *new.decor_mut() = old.decor().clone();
            }
            table[last] = toml_edit::Item::Value(new);
        }
        None => drop(table.remove(last)),
    }
    if key.starts_with("delivery.")
        && doc.get("delivery").and_then(|d| d.get("schema")).is_none()
        && let Some(d) = doc.get_mut("delivery").and_then(|d| d.as_table_mut())
    {
        d.insert("schema", toml_edit::value(delivery::SCHEMA));
        d.sort_values_by(|a, _, b, _| (a.get() != "schema").cmp(&(b.get() != "schema")));
    }
    let new = doc.to_string();
    // Never write a file the engine would refuse: the whole of it must read, not just this key.
    let whole: toml::Table = new.parse().map_err(|e| format!("{}: {e}", path.display()))?;
    let refused = |e: String| format!("{e} (the file was not changed)");
    delivery::parse(whole.get("delivery").and_then(|d| d.as_table())).map_err(|e| refused(format!("{}: {e}", path.display())))?;
    Settings::from_text(path, &new).map_err(|e| refused(e.to_string()))?;
    crate::local::client::NotifyConfig::from_text(path, &new).map_err(refused)?;
    // 0600 from the first byte: the file may hold `[local] password`.
    crate::private::write_file(path, &new).map_err(|e| format!("{}: {e}", path.display()))
}

/// `[cloud] proxy` as the file has it (checked by the caller), without its credentials.
fn proxy_in_file(text: &str) -> String {
    let table: toml::Table = text.parse().unwrap_or_default();
    let raw = table.get("cloud").and_then(|c| c.get("proxy")).and_then(|p| p.as_str()).unwrap_or_default();
    crate::cloud::proxy::redacted(raw.trim())
}

fn read(path: &Path) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn unknown(key: &str) -> String {
    let known: Vec<&str> =
        delivery::keys().chain(EDITABLE.iter().map(|(k, _)| *k)).chain(NOTIFY.iter().map(|(k, _, _)| *k)).chain([LOCAL_PASSWORD]).collect();
    format!("{key}: unknown key; known keys: {}", known.join(", "))
}

fn to_edit(v: &toml::Value) -> toml_edit::Value {
    match v {
        toml::Value::Boolean(b) => (*b).into(),
        toml::Value::Integer(i) => (*i).into(),
        toml::Value::Float(f) => (*f).into(),
        toml::Value::Array(items) => items.iter().map(to_edit).collect::<toml_edit::Array>().into(),
        other => other.as_str().unwrap_or_default().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_keeps_the_rest_of_the_file_and_refuses_bad_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let original = "# my settings\n[cloud]\napi_url = \"https://cloud-api.cmux.dev\" # prod\n";
        std::fs::write(&path, original).unwrap();
        set_in_file(&path, "delivery.quiet_hours.windows", "mon-fri 22:00-07:00; sat,sun 23:00-09:00").unwrap();
        set_in_file(&path, "delivery.runs.sound", "off").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(original), "{text}");
        let t: toml::Table = text.parse().unwrap();
        let (s, warnings) = delivery::parse(t.get("delivery").and_then(|d| d.as_table())).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(s.quiet.schedule.windows.len(), 2);
        assert!(!s.runs.sound);
        assert_eq!(t["delivery"]["schema"].as_integer(), Some(delivery::SCHEMA));
        let before = std::fs::read_to_string(&path).unwrap();
        let e = set_in_file(&path, "delivery.quiet_hours.windows", "daily 25:00-07:00").unwrap_err();
        assert!(e.contains("delivery.quiet_hours.windows") && e.contains("25:00"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before, "not changed");
        std::fs::write(&path, "[cloud\n").unwrap();
        assert!(set_in_file(&path, "delivery.banners", "on").unwrap_err().contains("not valid TOML"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[cloud\n");
    }

    #[test]
    fn the_cloud_origins_and_the_socket_path_are_checked_and_an_empty_value_restores_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "# mine\n[cloud]\napi_url = \"https://cloud-api.cmux.dev\" # prod\n").unwrap();
        set_in_file(&path, "cloud.api_url", "https://cloud-api-staging.cmux.dev").unwrap();
        // An absolute path on this platform (on Windows, a pipe's name).
        let elsewhere = if cfg!(windows) { r"\\.\pipe\elsewhere" } else { "/tmp/elsewhere/cmux.sock" };
        set_in_file(&path, "local.socket_path", elsewhere).unwrap();
        assert_eq!(get_in_file(&path, "cloud.api_url").unwrap(), "https://cloud-api-staging.cmux.dev");
        assert_eq!(get_in_file(&path, "local.socket_path").unwrap(), elsewhere);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# mine\n[cloud]\napi_url = \"https://cloud-api-staging.cmux.dev\" # prod\n"), "{text}");
        let before = text.clone();
        for (key, value, says) in [
            ("cloud.api_url", "http://cloud.example.com", "https"),
            ("local.socket_path", "relative/cmux.sock", "absolute path"),
            ("cloud.colour", "blue", "unknown key"),
        ] {
            let e = set_in_file(&path, key, value).unwrap_err();
            assert!(e.contains(key) && e.contains(says), "{e}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), before, "not changed by {key}");
        }
        set_in_file(&path, "cloud.proxy", "http://alice:s3cret@proxy.corp:3128").unwrap();
        assert_eq!(get_in_file(&path, "cloud.proxy").unwrap(), "http://…@proxy.corp:3128", "its password is not shown");
        let e = set_in_file(&path, "cloud.proxy", "https://proxy.corp").unwrap_err();
        assert!(e.contains("cloud.proxy") && e.contains("https://") && e.contains("not supported"), "{e}");
        set_in_file(&path, "cloud.proxy", "none").unwrap();
        assert_eq!(get_in_file(&path, "cloud.proxy").unwrap(), "none");
        set_in_file(&path, "cloud.api_url", "").unwrap();
        assert_eq!(get_in_file(&path, "cloud.api_url").unwrap(), super::super::DEFAULT_API_URL);
        assert!(std::fs::read_to_string(&path).unwrap().starts_with("# mine\n"));
        assert_eq!(get_in_file(&path, "delivery.banners").unwrap(), "true");
    }

    #[test]
    fn the_notify_keys_and_the_socket_password_are_set_typed_and_the_password_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path, "# mine
",
        )
        .unwrap();
        set_in_file(&path, "notify.enabled", "off").unwrap();
        set_in_file(&path, "notify.timeout", "2.5").unwrap();
        set_in_file(&path, "notify.wrap_threshold", "30").unwrap();
        set_in_file(&path, "notify.socket_path", "/run/user/1000/cmux.sock").unwrap();
        set_in_file(&path, LOCAL_PASSWORD, "hunter2").unwrap();
        let t: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        assert_eq!(t["notify"]["enabled"].as_bool(), Some(false));
        assert_eq!(t["notify"]["timeout"].as_float(), Some(2.5));
        assert_eq!(t["notify"]["wrap_threshold"].as_integer(), Some(30));
        assert_eq!(get_in_file(&path, "notify.enabled").unwrap(), "false");
        assert_eq!(get_in_file(&path, "notify.socket_path").unwrap(), "/run/user/1000/cmux.sock");
        assert_eq!(get_in_file(&path, "notify.idle_reminders").unwrap(), "", "not set");
        assert_eq!(get_in_file(&path, LOCAL_PASSWORD).unwrap(), HIDDEN);
        let before = std::fs::read_to_string(&path).unwrap();
        for (key, value, says) in
            [("notify.enabled", "sometimes", "true or false"), ("notify.timeout", "soon", "seconds"), ("notify.timeout", "100000", "a day")]
        {
            let e = set_in_file(&path, key, value).unwrap_err();
            assert!(e.contains(key) && e.contains(says), "{e}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), before, "not changed by {key}");
        }
        set_in_file(&path, "notify.enabled", "").unwrap();
        assert_eq!(get_in_file(&path, "notify.enabled").unwrap(), "");
    }
}
