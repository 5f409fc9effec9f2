//! Banner text rules shared by every source (seed 000): one line, cut at a word boundary.

/// The body limit, in characters (seed 000's `MAX_BODY`).
pub const MAX_BODY_CHARS: usize = 200;

/// Collapses all whitespace runs (newlines included) to one space and trims. Returns `None` for
/// text that is empty or only whitespace, so it is left out rather than shown as a gap.
pub fn one_line(text: &str) -> Option<String> {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
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

/// The first non-empty line of `text`, collapsed.
pub fn first_line(text: &str) -> Option<String> {
    text.lines().find_map(one_line)
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
    fn first_line_skips_blank_lines() {
        assert_eq!(first_line("\n\n  Fix the test \nDetails"), Some("Fix the test".into()));
        assert_eq!(first_line("   \n"), None);
    }
}
