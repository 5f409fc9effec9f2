//! The docs hold against the code: every path docs/architecture.md names exists, and every
//! heading the README and the docs point to (`docs/x.md, "Heading"`, `see "Heading"`, a link's
//! `#anchor`) is there. Reads the files only; nothing is built or run.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is in the repository").to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A file's headings, without their `#`s, and the bold words that lead a paragraph or a list item.
fn headings(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            out.push(line.trim_start_matches('#').trim().to_string());
        } else if !in_code
            && let Some(lead) = line.strip_prefix("- **").or_else(|| line.strip_prefix("**"))
            && let Some((words, _)) = lead.split_once("**")
        {
            // A paragraph's or a list item's bold lead names a part as a heading does.
            out.push(words.trim_end_matches('.').to_string());
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, spaces as `-`, punctuation but `-` and `_` gone.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Each span between backticks, outside code blocks.
fn code_spans(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let parts: Vec<&str> = line.split('`').collect();
        spans.extend(parts.iter().skip(1).step_by(2).map(|s| s.to_string()));
    }
    spans
}

/// The repository's own paths a span names: it starts with one of the top folders and holds
/// nothing a path of this repository would not (a placeholder, a glob, a space, a URL).
fn repository_path(span: &str) -> Option<&str> {
    const TOP: [&str; 11] =
        ["crates/", "src-tauri/", "docs/", "tests/", "scripts/", "ui/", "icons/", "packaging/", "bench/", "fuzz/", ".github/"];
    let plain = span.chars().all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c));
    (plain && TOP.iter().any(|top| span.starts_with(top))).then_some(span)
}

#[test]
fn every_path_the_architecture_names_exists() {
    let doc = read("docs/architecture.md");
    let named: Vec<String> = code_spans(&doc).iter().filter_map(|s| repository_path(s)).map(String::from).collect();
    assert!(named.len() >= 40, "the map names the files it speaks of: {} found", named.len());
    let missing: Vec<&String> = named.iter().filter(|p| !root().join(p).exists()).collect();
    assert!(missing.is_empty(), "docs/architecture.md names paths that do not exist: {missing:?}");
}

/// A local notice's path from the socket to the banner and the click, in at most seven files
/// (the issue's promise to a newcomer), each a file that exists.
#[test]
fn a_local_notice_is_followed_in_at_most_seven_files() {
    let doc = read("docs/architecture.md");
    let section = doc.split("\n## ").find(|s| s.starts_with("A local notice's path")).expect("the section \"A local notice's path\"");
    let files: Vec<String> = section
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .filter_map(|l| code_spans(l).into_iter().next())
        .collect();
    assert!((1..=7).contains(&files.len()), "{} steps: {files:?}", files.len());
    for f in &files {
        assert!(f.ends_with(".rs") && root().join(f).is_file(), "{f} is a file of the repository");
    }
}

/// Every `docs/x.md "Heading"` (or `docs/x.md, "Heading"`), `see "Heading"` and `[…](x.md#anchor)`
/// in the README and the docs points to a heading that is there (a reference may name a
/// heading's start).
#[test]
fn every_heading_pointed_to_exists() {
    let mut files = vec!["README.md".to_string()];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            files.push(format!("docs/{name}"));
        }
    }
    let mut broken = Vec::new();
    for file in &files {
        let text = read(file);
        let own = headings(&text);
        for (target, heading) in quoted_references(&text) {
            let (target_file, known) = match &target {
                Some(doc) => (doc.clone(), headings(&read(doc))),
                None => (file.clone(), own.clone()),
            };
            if !known.iter().any(|h| h.starts_with(&heading)) {
                broken.push(format!("{file}: {target_file} \"{heading}\""));
            }
        }
        for (target, fragment) in anchored_links(file, &text) {
            let known = headings(&read(&target));
            if !known.iter().any(|h| anchor(h) == fragment) {
                broken.push(format!("{file}: {target}#{fragment}"));
            }
        }
    }
    assert!(broken.is_empty(), "references to headings that are not there:\n{}", broken.join("\n"));
}

/// `docs/x.md "H"`, `docs/x.md, "H"`, `docs/x.md ("H"` and a README's `see "H"`: the file (none:
/// this one) and the heading's words. A reference's quote ends at its closing quote.
fn quoted_references(text: &str) -> Vec<(Option<String>, String)> {
    let flat = text.replace('\n', " ");
    let mut out = Vec::new();
    let mut rest = flat.as_str();
    while let Some(at) = rest.find("docs/") {
        rest = &rest[at..];
        let end = rest.find(".md").filter(|e| rest[5..*e].chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        let Some(end) = end else {
            rest = &rest[5..];
            continue;
        };
        let doc = rest[..end + 3].to_string();
        let after = &rest[end + 3..];
        for lead in [" \"", ", \"", " (\""] {
            if let Some(quoted) = after.strip_prefix(lead)
                && let Some(close) = quoted.find('"')
            {
                out.push((Some(doc.clone()), quoted[..close].to_string()));
            }
        }
        rest = after;
    }
    let mut rest = flat.as_str();
    while let Some(at) = rest.find("see \"") {
        let quoted = &rest[at + 5..];
        if let Some(close) = quoted.find('"') {
            out.push((None, quoted[..close].to_string()));
        }
        rest = quoted;
    }
    out
}

/// Markdown links with a fragment: `[…](#a)` in this file, `[…](docs/x.md#a)` relative to it.
fn anchored_links(file: &str, text: &str) -> Vec<(String, String)> {
    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let link = &rest[at + 2..];
        let Some(close) = link.find(')') else { break };
        let target = &link[..close];
        if let Some((path, fragment)) = target.split_once('#')
            && !target.contains("://")
        {
            let path = if path.is_empty() { file.to_string() } else { dir.join(path).to_string_lossy().into_owned() };
            out.push((path, fragment.to_string()));
        }
        rest = &link[close..];
    }
    out
}
