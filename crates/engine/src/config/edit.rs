//! Changing the config file from `cmux-tray config set` and the settings window: one key at a
//! time, keeping the rest of the file as the person wrote it (comments, order, spacing).
//!
//! It must never write a file the engine would refuse: the value is checked first, and then the
//! whole new file is read the way the engine reads it. The write is atomic (a temporary file
//! renamed over the old one), so a crash leaves the old file or the new one, never half of one.

use std::path::Path;

use super::Settings;
use crate::policy::delivery_settings as delivery;
use crate::setting_keys::{self, Key, Kind, Reader};

/// What `config get` shows for a key that is set but never printed.
pub const HIDDEN: &str = "(set, not shown)";

/// A `[notify]` value from the command line, as the file will hold it.
fn notify_value(key: Key, text: &str) -> Result<toml::Value, String> {
    let t = text.trim();
    match key.setting().kind {
        Kind::Bool => match t.to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" | "1" => Ok(toml::Value::Boolean(true)),
            "false" | "off" | "no" | "0" => Ok(toml::Value::Boolean(false)),
            _ => Err(format!("{key} = {text:?}: expected true or false")),
        },
        Kind::Seconds { .. } => match (t.parse::<i64>(), t.parse::<f64>()) {
            (Ok(n), _) => Ok(toml::Value::Integer(n)),
            (_, Ok(f)) => Ok(toml::Value::Float(f)),
            _ => Err(format!("{key} = {text:?}: expected seconds (a number)")),
        },
        _ => Ok(toml::Value::String(t.into())),
    }
}

/// The key `config get|set` was given, if it takes it.
fn settable(key: &str) -> Result<Key, String> {
    Key::parse(key).filter(|k| k.setting().settable).ok_or_else(|| unknown(key))
}

/// The value in force for `key` as the file says it, without the environment: a `[notify]`
/// key not set is empty (its default applies), `[local] password` is never printed.
pub fn get_in_file(path: &Path, key: &str) -> Result<String, String> {
    let key = settable(key)?;
    let text = read(path)?;
    let not_toml = |e: toml::de::Error| format!("{}: not valid TOML: {e}", path.display());
    match key.setting().reader {
        Reader::Delivery => {
            let table: toml::Table = text.parse().map_err(not_toml)?;
            let (settings, _) = delivery::parse(table.get(delivery::DELIVERY).and_then(|d| d.as_table()))
                .map_err(|e| format!("{}: {e}", path.display()))?;
            return delivery::get(&settings, key).ok_or_else(|| unknown(key.as_str()));
        }
        Reader::Notify => {
            let table: toml::Table = text.parse().map_err(not_toml)?;
            let (section, name) = key.split();
            return Ok(match table.get(section).and_then(|n| n.get(name)) {
                None => String::new(),
                Some(toml::Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
            });
        }
        Reader::Engine => {}
    }
    let s = Settings::from_text(path, &text).map_err(|e| e.to_string())?;
    Ok(match key {
        Key::Password => {
            if s.socket_password.is_some() {
                HIDDEN.into()
            } else {
                String::new()
            }
        }
        Key::ApiUrl => s.api_url,
        Key::AuthUrl => s.auth_url,
        Key::Proxy => proxy_in_file(&text),
        Key::SocketPath => s.socket_path.map(|p| p.display().to_string()).unwrap_or_default(),
        Key::UpdateFeed => s.update_feed.unwrap_or_default(),
        Key::Language => s.language.map(|l| l.as_str().to_string()).unwrap_or_default(),
        other => return Err(unknown(other.as_str())),
    })
}

/// Changes one key in the config file (see the module's doc).
pub fn set_in_file(path: &Path, key: &str, text: &str) -> Result<(), String> {
    let key = settable(key)?;
    let reader = key.setting().reader;
    let value = match reader {
        Reader::Delivery => Some(delivery::value_for(key, text).map_err(|e| e.to_string())?),
        Reader::Notify => (!text.trim().is_empty()).then(|| notify_value(key, text)).transpose()?,
        Reader::Engine => {
            let text = text.trim();
            (!text.is_empty()).then(|| toml::Value::String(text.into()))
        }
    };
    let old = read(path)?;
    let mut doc: toml_edit::DocumentMut = old.parse().map_err(|e| format!("{}: not valid TOML, not changed: {e}", path.display()))?;
    let parts: Vec<&str> = key.as_str().split('.').collect();
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
    if reader == Reader::Delivery
        && doc.get(delivery::DELIVERY).and_then(|d| d.get(delivery::SCHEMA_KEY)).is_none()
        && let Some(d) = doc.get_mut(delivery::DELIVERY).and_then(|d| d.as_table_mut())
    {
        d.insert(delivery::SCHEMA_KEY, toml_edit::value(delivery::SCHEMA));
        d.sort_values_by(|a, _, b, _| (a.get() != delivery::SCHEMA_KEY).cmp(&(b.get() != delivery::SCHEMA_KEY)));
    }
    let new = doc.to_string();
    // Never write a file the engine would refuse: the whole of it must read, not just this key.
    let whole: toml::Table = new.parse().map_err(|e| format!("{}: {e}", path.display()))?;
    let refused = |e: String| format!("{e} (the file was not changed)");
    delivery::parse(whole.get(delivery::DELIVERY).and_then(|d| d.as_table())).map_err(|e| refused(format!("{}: {e}", path.display())))?;
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
    let known: Vec<&str> = setting_keys::settable().map(Key::as_str).collect();
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
        set_in_file(&path, "local.password", "hunter2").unwrap();
        let t: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        assert_eq!(t["notify"]["enabled"].as_bool(), Some(false));
        assert_eq!(t["notify"]["timeout"].as_float(), Some(2.5));
        assert_eq!(t["notify"]["wrap_threshold"].as_integer(), Some(30));
        assert_eq!(get_in_file(&path, "notify.enabled").unwrap(), "false");
        assert_eq!(get_in_file(&path, "notify.socket_path").unwrap(), "/run/user/1000/cmux.sock");
        assert_eq!(get_in_file(&path, "notify.idle_reminders").unwrap(), "", "not set");
        assert_eq!(get_in_file(&path, "local.password").unwrap(), HIDDEN);
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
