//! The config file and `config set`'s values (docs/configuration.md): whatever the text, it is
//! read or refused with the key and the reason, never a panic.

use cmux_tray_engine::config::Settings;
use cmux_tray_engine::policy::delivery_settings as settings;
use cmux_tray_engine::setting_keys::{Key, Reader, SETTINGS};

/// One input: returns, or panics on what the contract above forbids.
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = Settings::from_text(std::path::Path::new("config.toml"), &text);
    // The first line names a key, the rest is its value as `config set` gets it.
    let (key, value) = text.split_once('\n').unwrap_or((&text, ""));
    if let Some(key) = Key::parse(key).filter(|k| k.setting().reader == Reader::Delivery) {
        let _ = settings::value_for(key, value);
    }
    for known in SETTINGS.iter().filter(|s| s.reader == Reader::Delivery) {
        let _ = settings::value_for(known.key, &text);
    }
    if let Ok(table) = text.parse::<toml::Table>() {
        let _ = settings::parse(table.get("delivery").and_then(|d| d.as_table()));
    }
}
