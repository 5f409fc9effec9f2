//! docs/configuration.md's table of every setting, rendered from the declaration
//! (`setting_keys::SETTINGS`); a test says the docs hold exactly this table.

use crate::policy::delivery_settings::{self as delivery, DeliverySettings};
use crate::setting_keys::{Place, SETTINGS, Unset};

/// The table, one row per setting in the declaration's order.
pub fn docs_table() -> String {
    let english = crate::lang::Lang::english();
    let defaults = DeliverySettings::default();
    let mut out = String::from("| key | takes | not set | settings window | what |\n|---|---|---|---|---|\n");
    for s in SETTINGS {
        let unset = match s.unset {
            Unset::DeliveryDefault => match delivery::get(&defaults, s.key).unwrap_or_default() {
                none if none.is_empty() => "none".to_string(),
                value => format!("`{value}`"),
            },
            Unset::Is(words) => words.to_string(),
        };
        let window = match (s.place, s.label) {
            (Place::Nowhere, _) | (_, None) => "—".to_string(),
            (place, Some(label)) => format!("{}: “{}”", place.words(), english.say(label, None)),
        };
        let file_only = if s.settable { "" } else { " (the file only: not `config set`)" };
        out.push_str(&format!("| `{}` | {} | {unset} | {window} | {}{file_only} |\n", s.key, s.kind.allowed(), s.about));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The markers the docs hold the table between.
    const TABLE_START: &str = "<!-- settings: rendered from crates/engine/src/setting_keys.rs (config::docs_table) -->";
    const TABLE_END: &str = "<!-- end of settings -->";

    /// The docs cannot drift from the declaration: a key, a bound or a label changed on one side
    /// only fails here, with the table to paste.
    /// What the declaration says applies when a `[notify]` key is not set is what the client uses.
    #[test]
    fn the_declared_client_defaults_are_the_clients() {
        use crate::local::client::{DEFAULT_LINK_WAIT, DEFAULT_TIMEOUT, DEFAULT_WRAP_THRESHOLD};
        use crate::setting_keys::Key;
        for (key, default) in [
            (Key::NotifyTimeout, DEFAULT_TIMEOUT),
            (Key::NotifyWrapThreshold, DEFAULT_WRAP_THRESHOLD),
            (Key::NotifyLinkWait, DEFAULT_LINK_WAIT),
        ] {
            let said = default.as_secs().to_string();
            assert!(matches!(key.setting().unset, Unset::Is(t) if t == said), "{key}: {:?}, the client's {said}", key.setting().unset);
        }
    }

    #[test]
    fn the_docs_table_is_the_declarations() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/configuration.md");
        let docs = std::fs::read_to_string(&path).unwrap();
        let start = docs.find(TABLE_START).expect("docs/configuration.md holds the settings' table") + TABLE_START.len();
        let end = docs[start..].find(TABLE_END).expect("the table's end marker") + start;
        let rendered = docs_table();
        assert!(
            docs[start..end].trim() == rendered.trim(),
            "docs/configuration.md's settings table differs from the declaration; it should read:\n{rendered}"
        );
    }
}
