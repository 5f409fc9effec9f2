//! Which language and locale the system asks for: the POSIX variables where they are set (a
//! person's session on Linux, and a program started from a shell anywhere), else the system's
//! own setting (macOS, Windows: `sys-locale`).

use std::collections::BTreeMap;

use icu_locale_core::Locale;

use super::Language;

/// The locale the system asks for: the messages' language and the times' locale.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SystemLocale {
    /// The language of messages, when the catalogue speaks it.
    pub language: Option<Language>,
    /// The locale of times (`LC_TIME`'s), `None` for C/POSIX or none set.
    pub time: Option<Locale>,
}

impl SystemLocale {
    /// This process's.
    pub fn from_env() -> SystemLocale {
        let env: BTreeMap<String, String> =
            ["LC_ALL", "LC_MESSAGES", "LC_TIME", "LANG"].iter().filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?))).collect();
        SystemLocale::from_vars(&env, sys_locale::get_locale)
    }

    /// From these variables, asking `system` when none of a category's is set.
    pub fn from_vars(env: &BTreeMap<String, String>, system: impl Fn() -> Option<String>) -> SystemLocale {
        // POSIX: LC_ALL overrides the category, which overrides LANG; an empty one counts as unset.
        let category = |name: &str| {
            ["LC_ALL", name, "LANG"].iter().find_map(|k| env.get(*k).map(|v| v.trim()).filter(|v| !v.is_empty())).map(String::from)
        };
        let messages = category("LC_MESSAGES").or_else(&system);
        let time = category("LC_TIME").or_else(&system);
        SystemLocale {
            language: messages.as_deref().and_then(posix_locale).and_then(|l| Language::of_code(l.id.language.as_str())),
            time: time.as_deref().and_then(posix_locale),
        }
    }

    /// The locale times are said in: the system's; with a language chosen, that language in
    /// the system's region.
    pub fn time_locale(&self, chosen: Option<Language>) -> Option<Locale> {
        let Some(language) = chosen else { return self.time.clone() };
        let mut locale: Locale = language.as_str().parse().ok()?;
        locale.id.region = self.time.as_ref().and_then(|t| t.id.region);
        Some(locale)
    }
}

/// A POSIX locale name (`de_DE.UTF-8@euro`) or a BCP 47 one (`de-DE`) as a locale; `None` for
/// C and POSIX, which name no language.
pub fn posix_locale(name: &str) -> Option<Locale> {
    let base = name.split(['.', '@']).next().unwrap_or("");
    if base.is_empty() || base == "C" || base == "POSIX" {
        return None;
    }
    base.replace('_', "-").parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_posix_variables_decide_in_their_order() {
        let none = || None;
        let s = SystemLocale::from_vars(&vars(&[("LANG", "de_DE.UTF-8")]), none);
        assert_eq!((s.language, s.time.map(|t| t.to_string())), (Some(Language::German), Some("de-DE".into())));
        let s = SystemLocale::from_vars(&vars(&[("LANG", "de_DE.UTF-8"), ("LC_TIME", "en_US.UTF-8")]), none);
        assert_eq!((s.language, s.time.map(|t| t.to_string())), (Some(Language::German), Some("en-US".into())));
        let s = SystemLocale::from_vars(&vars(&[("LANG", "de_DE.UTF-8"), ("LC_ALL", "C.UTF-8")]), || Some("de-DE".into()));
        assert_eq!((s.language, s.time), (None, None), "LC_ALL=C names no language, and the system is not asked");
        let s = SystemLocale::from_vars(&vars(&[("LANG", "fr_FR.UTF-8")]), none);
        assert_eq!((s.language, s.time.map(|t| t.to_string())), (None, Some("fr-FR".into())), "no French catalogue, French dates");
        let s = SystemLocale::from_vars(&vars(&[("LANG", "")]), || Some("de-AT".into()));
        assert_eq!((s.language, s.time.map(|t| t.to_string())), (Some(Language::German), Some("de-AT".into())), "the system's own");
    }

    #[test]
    fn a_chosen_language_keeps_the_systems_region() {
        let s = SystemLocale::from_vars(&vars(&[("LANG", "de_DE.UTF-8")]), || None);
        assert_eq!(s.time_locale(Some(Language::English)).map(|l| l.to_string()), Some("en-DE".into()));
        assert_eq!(s.time_locale(None).map(|l| l.to_string()), Some("de-DE".into()));
        assert_eq!(posix_locale("de_DE.ISO-8859-15@euro").map(|l| l.to_string()), Some("de-DE".into()));
        assert_eq!(posix_locale("POSIX"), None);
    }
}
