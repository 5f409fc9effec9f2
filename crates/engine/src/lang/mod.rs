//! The words people read, in their language, and times in their locale.
//!
//! Every sentence the engine, the tray and the pages show is a message of one Fluent catalogue
//! per language (`crates/engine/lang/<code>.ftl`, compiled in), looked up by its id with
//! [`say!`]. A message the chosen language lacks is said in English. Dates and times come from
//! ICU4X's CLDR data for the person's locale (12- or 24-hour clock, day and month order):
//! [`Dates`]. The CLI's own output stays English (it is read by scripts and pasted into issues).
//!
//! The language follows the system (`LC_ALL`, `LC_MESSAGES`, `LANG`; on macOS and Windows the
//! system's setting), unless `[general] language` names one; times follow `LC_TIME` the same way.

pub mod dates;
mod locale;

use std::sync::OnceLock;

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource};

pub use dates::Dates;
pub use locale::SystemLocale;

crate::words::text_enum! {
    /// A language the catalogue speaks in full (`lang/<code>.ftl`).
    pub enum Language {
        English = "en",
        German = "de",
    }
}

impl Language {
    /// The catalogue's text.
    fn catalogue(self) -> &'static str {
        match self {
            Language::English => include_str!("../../lang/en.ftl"),
            Language::German => include_str!("../../lang/de.ftl"),
        }
    }

    /// The language a locale's language subtag names, if the catalogue speaks it.
    pub fn of_code(code: &str) -> Option<Language> {
        Language::ALL.iter().copied().find(|l| l.as_str().eq_ignore_ascii_case(code))
    }

    /// Its name in itself ("Deutsch"), as a choice of languages lists it.
    pub fn own_name(self) -> String {
        Lang::in_language(self).say("language-name", None)
    }
}

/// Builds a `FluentArgs` and says a message with them: `say!(lang, "menu-paused", until = u)`.
#[macro_export]
macro_rules! say {
    ($lang:expr, $id:literal) => {
        $lang.say($id, None)
    };
    ($lang:expr, $id:literal, $($name:ident = $value:expr),+ $(,)?) => {{
        let mut args = $crate::lang::Args::new();
        $(args.set(stringify!($name), $value);)+
        $lang.say($id, Some(&args))
    }};
}
pub use say;

/// A message's variables.
pub type Args<'a> = FluentArgs<'a>;

/// The variables with their text cleaned: a team's name or an email from the cloud may carry a
/// newline or a bidi override (U+202E), which would break a menu's line or turn the words
/// around them (`text::clean`: a newline becomes a space, bidi controls go; the narrow spaces
/// a locale puts in a time stay).
fn cleaned<'a>(args: &'a Args<'a>) -> Args<'a> {
    let mut out = Args::new();
    for (name, value) in args.iter() {
        match value {
            fluent_bundle::FluentValue::String(text) => out.set(name, crate::text::clean(text, false)),
            other => out.set(name, other.clone()),
        }
    }
    out
}

/// A language's catalogue and the locale dates are said in. Each catalogue is parsed when a
/// message is first said from it: English in a German session only once a message is missing
/// (docs/benchmarks.md, row 3: what the idle tray holds).
pub struct Lang {
    language: Language,
    messages: OnceLock<FluentBundle<FluentResource>>,
    /// English, for a message the language lacks (a catalogue behind the code).
    english: OnceLock<FluentBundle<FluentResource>>,
    dates: Dates,
}

impl std::fmt::Debug for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lang").field("language", &self.language).field("dates", &self.dates).finish()
    }
}

fn bundle(language: Language) -> FluentBundle<FluentResource> {
    let id: unic_langid::LanguageIdentifier = language.as_str().parse().expect("a language code is a language identifier");
    let mut bundle = FluentBundle::new_concurrent(vec![id]);
    // Without the bidi isolation marks: every language here runs left to right, and a tray menu
    // or a banner server shows the marks as boxes.
    bundle.set_use_isolating(false);
    let resource = FluentResource::try_new(language.catalogue().to_string()).expect("a catalogue parses (lang tests)");
    bundle.add_resource(resource).expect("a catalogue names each message once (lang tests)");
    bundle
}

impl Lang {
    /// A language with dates in its own default region's way.
    pub fn in_language(language: Language) -> Lang {
        Lang::new(language, Dates::new(Some(language.as_str().parse().expect("a language code is a locale"))))
    }

    /// English with the clock and day order the C locale gives (24-hour, the day first).
    pub fn english() -> Lang {
        Lang::new(Language::English, Dates::c_locale())
    }

    pub fn new(language: Language, dates: Dates) -> Lang {
        Lang { language, messages: OnceLock::new(), english: OnceLock::new(), dates }
    }

    /// This language's catalogue, parsed at its first use.
    fn messages(&self) -> &FluentBundle<FluentResource> {
        self.messages.get_or_init(|| bundle(self.language))
    }

    /// English, parsed at the first message this language lacks; none when this is English.
    fn fallback(&self) -> Option<&FluentBundle<FluentResource>> {
        (self.language != Language::English).then(|| self.english.get_or_init(|| bundle(Language::English)))
    }

    /// The language and dates of this system, or of `chosen` (`[general] language`) with the
    /// system's region (English chosen in Germany: a 24-hour clock, the day first).
    pub fn of_system(system: &SystemLocale, chosen: Option<Language>) -> Lang {
        let language = chosen.or(system.language).unwrap_or(Language::English);
        Lang::new(language, Dates::new(system.time_locale(chosen)))
    }

    pub fn language(&self) -> Language {
        self.language
    }

    pub fn dates(&self) -> &Dates {
        &self.dates
    }

    /// A message in this language (else in English, else its id), with its variables.
    pub fn say(&self, id: &str, args: Option<&Args>) -> String {
        let args = args.map(cleaned);
        let fallback = || self.fallback();
        for bundle in std::iter::once(Some(self.messages())).chain(std::iter::once_with(fallback)).flatten() {
            if let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) {
                let mut errors = Vec::new();
                let said = bundle.format_pattern(pattern, args.as_ref(), &mut errors).into_owned();
                if !errors.is_empty() {
                    tracing::warn!(id, ?errors, "a message's variables were not all given");
                }
                return said;
            }
        }
        tracing::warn!(id, "no message with this id in the catalogue");
        id.to_string()
    }

    /// Whether the catalogue has a message with this id (the tests that hold every id the code
    /// says to the catalogue).
    pub fn has(&self, id: &str) -> bool {
        self.messages().has_message(id)
    }

    /// Every message of a page (ids starting `page-`), said with each variable left as `{name}`
    /// for the page to fill (the pages run no Fluent of their own).
    pub fn page_words(&self) -> std::collections::BTreeMap<String, String> {
        let resource = FluentResource::try_new(Language::English.catalogue().to_string()).expect("the catalogue parses");
        let mut words = std::collections::BTreeMap::new();
        for entry in resource.entries() {
            let fluent_syntax::ast::Entry::Message(m) = entry else { continue };
            let id = m.id.name;
            if !id.starts_with("page-") {
                continue;
            }
            let mut args = Args::new();
            for name in variables(self.messages().get_message(id).and_then(|m| m.value()).map(|p| &p.elements[..]).unwrap_or(&[])) {
                args.set(name, format!("{{{name}}}"));
            }
            words.insert(id.to_string(), self.say(id, Some(&args)));
        }
        words
    }
}

/// The variables a pattern names (`{ $name }`), selectors' included.
fn variables<'s>(elements: &[fluent_syntax::ast::PatternElement<&'s str>]) -> Vec<&'s str> {
    use fluent_syntax::ast::{Expression, InlineExpression, PatternElement};
    let mut names = Vec::new();
    let inline = |e: &InlineExpression<&'s str>, names: &mut Vec<&'s str>| {
        if let InlineExpression::VariableReference { id } = e {
            names.push(id.name);
        }
    };
    for element in elements {
        let PatternElement::Placeable { expression } = element else { continue };
        match expression {
            Expression::Inline(e) => inline(e, &mut names),
            Expression::Select { selector, variants } => {
                inline(selector, &mut names);
                for v in variants {
                    names.extend(variables(&v.value.elements));
                }
            }
        }
    }
    names.sort_unstable();
    names.dedup();
    names
}

#[cfg(test)]
mod tests;
