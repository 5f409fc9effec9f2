//! States, kinds and reasons that are stored and shown as words: each is declared once, with
//! its word, by `text_enum!`, which gives it `as_str`/`parse`, serde (the word as a JSON
//! string) and rusqlite's `ToSql`/`FromSql` (the word as TEXT). A word read back that names no
//! variant is an error naming the type and the word, never a default.

/// Declares an enum whose variants are stored and sent as fixed words:
///
/// ```ignore
/// crate::words::text_enum! {
///     /// Where a notice came from.
///     pub enum Source { Run = "run", Handoff = "handoff" }
/// }
/// ```
macro_rules! text_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident {
        $($(#[$vmeta:meta])* $variant:ident = $word:literal),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word it is stored and sent as.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }

            /// The variant a stored or sent word names.
            pub fn parse(word: &str) -> Option<Self> {
                match word {
                    $($word => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let word = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                $name::parse(&word).ok_or_else(|| {
                    serde::de::Error::custom($crate::words::unknown(stringify!($name), &word, $name::ALL.iter().map(|v| v.as_str())))
                })
            }
        }

        impl rusqlite::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(rusqlite::types::ToSqlOutput::Borrowed(rusqlite::types::ValueRef::Text(self.as_str().as_bytes())))
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                let word = value.as_str()?;
                $name::parse(word).ok_or_else(|| {
                    rusqlite::types::FromSqlError::Other(
                        $crate::words::unknown(stringify!($name), word, $name::ALL.iter().map(|v| v.as_str())).into(),
                    )
                })
            }
        }
    };
}

/// The error for a word that names no variant: which type, which word, and the words it knows.
pub(crate) fn unknown<'a>(type_name: &str, word: &str, known: impl Iterator<Item = &'a str>) -> String {
    let known: Vec<_> = known.map(|w| format!("{w:?}")).collect();
    format!("{word:?} is not a {type_name} (one of {})", known.join(", "))
}

/// A variant's word as an SQL string literal, for queries whose text must name it (a partial
/// index is used only when the query spells out its condition): `sql_word!(NoticeState::Untold)`
/// is `'untold'`.
macro_rules! sql_word {
    ($value:expr) => {{
        const WORD: &str = $value.as_str();
        const_format::concatcp!("'", WORD, "'")
    }};
}

pub(crate) use {sql_word, text_enum};
