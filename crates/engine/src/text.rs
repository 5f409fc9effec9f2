//! Banner text rules shared by every source (docs/notices.md §2): cleaned, one line, cut at a
//! word boundary.
//!
//! Text from the cloud or an agent is hostile until cleaned: a NUL or another control character
//! makes a D-Bus `Notify` call fail, an escape sequence rewrites a terminal, and a bidi override
//! shows a title other than the one sent. Every notice's words pass through [`one_line`] or
//! [`first_line`], which clean first, so nothing built from outside text reaches a banner, the
//! tray or the history uncleaned.

/// The body limit, in characters (seed 000's `MAX_BODY`).
pub const MAX_BODY_CHARS: usize = 200;

/// Whether `c` reorders or hides text rather than being text: the bidi embeddings, overrides,
/// isolates and marks (Unicode's `Bidi_Control`), which make "exe.txt" read as "txt.exe".
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` with control characters and bidi controls taken out. Whitespace controls (newline,
/// tab, carriage return …) become a space, or stay newlines where `keep_newlines` (a card's
/// task, which has lines); everything else of them (NUL, ESC, DEL, C1) is dropped.
pub fn clean(text: &str, keep_newlines: bool) -> String {
    text.chars()
        .filter_map(|c| match c {
            '\n' if keep_newlines => Some('\n'),
            '\r' if keep_newlines => None, // CRLF becomes LF
            c if c.is_control() => c.is_whitespace().then_some(' '),
            c if is_bidi_control(c) => None,
            c => Some(c),
        })
        .collect()
}

/// Cleans, then collapses all whitespace runs (newlines included) to one space and trims.
/// Returns `None` for text that is empty or only whitespace, so it is left out rather than shown
/// as a gap.
pub fn one_line(text: &str) -> Option<String> {
    let joined = clean(text, false).split_whitespace().collect::<Vec<_>>().join(" ");
    (!joined.is_empty()).then_some(joined)
}

/// Cuts `text` to at most `max` characters (not bytes), at a word boundary, ending with "…".
/// A single word longer than the limit is cut inside the word.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let room = max.saturating_sub(1); // the ellipsis takes one character
    let head: String = text.chars().take(room).collect();
    // Cut at the last space if the next character would split a word.
    let next_is_space = text.chars().nth(room).is_some_and(char::is_whitespace);
    let kept = if next_is_space {
        head.trim_end().to_string()
    } else {
        match head.rfind(' ') {
            Some(i) if i > 0 => head[..i].trim_end().to_string(),
            _ => head,
        }
    };
    format!("{kept}…")
}

/// The first non-empty line of `text`, cleaned and collapsed.
pub fn first_line(text: &str) -> Option<String> {
    clean(text, true).lines().find_map(one_line)
}

/// `one_line` then `cut` to the body limit: the rule for every banner body.
pub fn body(text: &str) -> Option<String> {
    one_line(text).map(|t| cut(&t, MAX_BODY_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapses_to_one_line() {
        assert_eq!(one_line("  a\n\n b\tc  "), Some("a b c".into()));
        assert_eq!(one_line(" \n\t "), None);
        assert_eq!(one_line(""), None);
    }

    #[test]
    fn cuts_at_a_word_boundary_counting_characters() {
        let words = "Größenänderung ".repeat(20); // 15 chars a word, multibyte
        let cut_text = body(&words).unwrap();
        assert!(cut_text.chars().count() <= MAX_BODY_CHARS, "{}", cut_text.chars().count());
        assert!(cut_text.ends_with("Größenänderung…"), "{cut_text}");
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("hello world again", 12), "hello world…");
        assert_eq!(cut("hello world again", 11), "hello…");
        assert_eq!(cut("abcdefghijklmnop", 5), "abcd…");
    }

    #[test]
    fn control_characters_and_bidi_overrides_never_reach_a_banner() {
        assert_eq!(one_line("a\0b\x1b[31mred\x7f\u{9b}c"), Some("ab[31mredc".into()));
        assert_eq!(one_line("invoice\u{202E}fdp.exe\u{2066}x\u{2069}"), Some("invoicefdp.exex".into()));
        assert_eq!(one_line("tab\there\r\nnext\u{b}\u{c}line"), Some("tab here next line".into()));
        assert_eq!(one_line("\0\u{202E}\x1b"), None, "nothing left is nothing shown");
        assert_eq!(first_line("\0\n\x1b\nSecond\0 line\nthird"), Some("Second line".into()));
        assert_eq!(clean("one\r\ntwo\0\n\tthree", true), "one\ntwo\n three");
    }

    #[test]
    fn first_line_skips_blank_lines() {
        assert_eq!(first_line("\n\n  Fix the test \nDetails"), Some("Fix the test".into()));
        assert_eq!(first_line("   \n"), None);
    }
}
