use std::collections::BTreeMap;

use fluent_syntax::ast::Entry;

use super::*;

/// Each message of a catalogue with the variables it names.
fn messages(language: Language) -> BTreeMap<String, Vec<String>> {
    let resource = fluent_syntax::parser::parse(language.catalogue())
        .unwrap_or_else(|(_, errors)| panic!("lang/{}.ftl does not parse: {errors:?}", language.as_str()));
    resource
        .body
        .iter()
        .filter_map(|e| match e {
            Entry::Message(m) => Some((
                m.id.name.to_string(),
                variables(m.value.as_ref().map(|p| &p.elements[..]).unwrap_or(&[])).into_iter().map(String::from).collect(),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn every_language_says_every_message_with_the_same_variables() {
    let english = messages(Language::English);
    assert!(english.len() > 200, "the English catalogue has {} messages", english.len());
    for &language in Language::ALL {
        let other = messages(language);
        let missing: Vec<_> = english.keys().filter(|id| !other.contains_key(*id)).collect();
        let extra: Vec<_> = other.keys().filter(|id| !english.contains_key(*id)).collect();
        assert!(missing.is_empty() && extra.is_empty(), "lang/{}.ftl: missing {missing:?}, not in English {extra:?}", language.as_str());
        for (id, names) in &english {
            assert_eq!(&other[id], names, "lang/{}.ftl: {id} names other variables than English", language.as_str());
        }
        // Every message builds (a bundle refuses a message named twice).
        let _ = Lang::in_language(language);
    }
}

/// The ids the code says (`say!(…, "id"`), from the sources of a crate.
pub fn said_ids(src: &std::path::Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("lang/tests.rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (at, _) in text.match_indices("say!(") {
                    let rest = &text[at..];
                    let Some(open) = rest.find('"') else { continue };
                    let id: String = rest[open + 1..].chars().take_while(|c| *c != '"').collect();
                    if rest[..open].contains(')') || id.contains(' ') {
                        continue; // the macro's own docs and rules
                    }
                    found.push((path.display().to_string(), id));
                }
            }
        }
    }
    found
}

#[test]
fn every_id_the_engine_and_the_tray_say_is_in_the_catalogue() {
    let english = Lang::english();
    // The tray app says its menu's words from the same catalogue.
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let said: Vec<_> = ["engine/src", "app/src"].iter().flat_map(|dir| said_ids(&crates.join(dir))).collect();
    assert!(said.len() > 100, "found {} ids said", said.len());
    let unknown: Vec<_> = said.iter().filter(|(_, id)| !english.has(id)).collect();
    assert!(unknown.is_empty(), "said but not in lang/en.ftl: {unknown:?}");
}

#[test]
fn a_message_is_said_with_its_variables_and_in_english_where_a_language_lacks_it() {
    let german = Lang::in_language(Language::German);
    assert_eq!(say!(german, "coalesced-runs", n = 5), "5 Runs beendet");
    assert_eq!(say!(german, "summary-away", n = 1), "1 Meldung, während du weg warst");
    assert_eq!(say!(german, "summary-away", n = 3), "3 Meldungen, während du weg warst");
    assert_eq!(say!(Lang::english(), "menu-sign-in-again", email = "ada@example.com"), "Sign in again (ada@example.com)");
    assert_eq!(german.say("no-such-message", None), "no-such-message");
    assert_eq!(Language::German.own_name(), "Deutsch");
}

#[test]
fn a_pages_words_leave_their_variables_for_the_page() {
    let words = Lang::in_language(Language::German).page_words();
    assert_eq!(words["page-signed-in-as"], "Angemeldet als {email}");
    assert_eq!(words["page-history"], "Verlauf");
    assert!(words.keys().all(|id| id.starts_with("page-")));
}

/// What the cloud names (a team, an email) is said on one line, with no control of its own.
#[test]
fn a_variables_newline_and_bidi_override_never_reach_the_words() {
    let english = Lang::english();
    let said = say!(english, "menu-account-team", email = "ada@example.com", team = "Plat\u{202E}mrof\nSign out");
    assert_eq!(said, "ada@example.com — Platmrof Sign out");
    assert_eq!(say!(english, "coalesced-runs", n = 5), "5 Runs ended", "numbers are said as numbers");
}

/// The idle tray holds only the catalogue it speaks (docs/benchmarks.md, row 3): none is parsed
/// before its first word, and a German session parses English only for a message it lacks.
#[test]
fn a_catalogue_is_parsed_at_its_first_word_and_english_only_when_a_message_is_missing() {
    let german = Lang::in_language(Language::German);
    assert_eq!((german.messages.get().is_some(), german.english.get().is_some()), (false, false), "nothing parsed before a word");
    assert_eq!(say!(german, "coalesced-runs", n = 5), "5 Runs beendet");
    assert_eq!((german.messages.get().is_some(), german.english.get().is_some()), (true, false), "German alone for a German word");
    assert_eq!(german.say("no-such-message", None), "no-such-message");
    assert!(german.english.get().is_some(), "English once a message was missing");
    let english = Lang::english();
    let _ = say!(english, "coalesced-runs", n = 5);
    assert!(english.english.get().is_none(), "English is not its own fallback");
}
