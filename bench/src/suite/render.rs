//! The README's results table and docs/benchmarks.md's latest run, made from the results one
//! run wrote (`scripts/bench --write-docs` keeps them as `docs/bench/results.json`), so that no
//! figure is typed by hand; and the checks that fail when the committed text differs from what
//! the results render, or when a figure is older than the code it measures.

use std::path::Path;

use anyhow::Context;
use serde::Deserialize;

use super::stats::{self, Figure};

/// Where the results of the run the docs show are kept, from the checkout's root.
pub const RESULTS: &str = "docs/bench/results.json";

/// A rendered part of a Markdown file: the file, and the comments it sits between.
struct Part {
    file: &'static str,
    begin: &'static str,
    end: &'static str,
}

const README_TABLE: Part = Part { file: "README.md", begin: "<!-- bench:table -->", end: "<!-- bench:table end -->" };
const DOCS_LATEST: Part = Part { file: "docs/benchmarks.md", begin: "<!-- bench:latest -->", end: "<!-- bench:latest end -->" };

/// What every row's figures depend on besides its own code: the dependencies' versions and the
/// bench's statistics.
#[cfg(test)]
const EVERY_ROW: &[&str] = &["Cargo.lock", "bench/src/suite/stats.rs", "bench/src/suite/procfs.rs"];

/// The code each row measures (its module in bench/src/suite/ says how): a change to any of it after
/// the measured commit makes the row's figures stale.
#[cfg(test)]
const MEASURES: &[(u8, &[&str])] = &[
    (1, &["crates/engine", "crates/cli", "crates/cloud-sim", "bench/src/suite/latency.rs"]),
    (2, &["crates/engine", "crates/cli", "crates/cloud-sim", "bench/src/suite/scale.rs"]),
    (
        3,
        &[
            "crates/engine",
            "crates/app",
            "crates/channel",
            "src-tauri",
            "ui",
            "bench/src/suite/app.rs",
            "bench/src/bin/cmux-bench-webview.rs",
        ],
    ),
    (4, &["crates/engine", "crates/cli", "bench/src/suite/local.rs", "bench/src/suite/socket.rs"]),
    (5, &["crates/engine", "crates/app", "crates/channel", "bench/src/suite/app.rs"]),
    (6, &["crates/engine", "crates/cli", "bench/src/suite/load.rs"]),
];

/// One run's results as the bench writes them (`results.json`).
#[derive(Debug, Deserialize)]
pub struct Run {
    pub date: String,
    /// The commit measured, with " (with changes not committed)" after it for a changed tree.
    pub commit: String,
    pub who: String,
    pub machine: String,
    pub command: String,
    pub figures: Vec<Figure>,
    pub notes: Vec<String>,
}

impl Run {
    pub fn read(path: &Path) -> anyhow::Result<Run> {
        let text = std::fs::read_to_string(path).with_context(|| format!("the bench's results {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("the bench's results {}", path.display()))
    }

    fn short_commit(&self) -> &str {
        self.commit.get(..12).unwrap_or(&self.commit)
    }
}

/// The README's table: each figure that has a goal, its goal in the figure's own unit.
pub fn readme_table(run: &Run) -> String {
    let mut out = format!(
        "From one run of `scripts/bench` on commit `{}` ({}; {}; {}), rendered by `scripts/bench \
         --write-docs`; every figure, its method and the run's notes: \
         [docs/benchmarks.md](docs/benchmarks.md#the-latest-run).\n\n",
        run.short_commit(),
        run.date,
        run.who,
        run.machine
    );
    out.push_str("| row | figure | goal | measured (spread) | met |\n| --- | --- | --- | --- | --- |\n");
    for f in run.figures.iter().filter(|f| f.goal.is_some()) {
        let met = match f.meets_goal() {
            Some(true) => "yes",
            _ => "**not met**",
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} {} ({}–{}) | {met} |\n",
            f.row,
            f.name,
            f.goal_words(),
            stats::num(f.median),
            f.unit,
            stats::num(f.spread.0),
            stats::num(f.spread.1)
        ));
    }
    out
}

/// docs/benchmarks.md's latest run: the whole table the run wrote, and its notes.
pub fn latest_section(run: &Run) -> String {
    let mut out = stats::markdown(&run.figures, &run.machine, &format!("{}; commit {}", run.command, run.commit), &run.date);
    out = out.replacen("# cmux-tray benchmarks\n\n", "", 1);
    out.push_str(&format!("\nRun by {}.\n\n", run.who));
    for n in &run.notes {
        out.push_str(&format!("- {n}\n"));
    }
    out
}

/// Keeps `results` as the docs' results and renders the README's table and the docs' latest run
/// from them, in the checkout at `root`.
pub fn write_docs(results: &Path, root: &Path) -> anyhow::Result<()> {
    let run = Run::read(results)?;
    std::fs::create_dir_all(root.join(RESULTS).parent().unwrap_or(root))?;
    std::fs::copy(results, root.join(RESULTS)).with_context(|| format!("copying {} to {RESULTS}", results.display()))?;
    for (part, text) in [(README_TABLE, readme_table(&run)), (DOCS_LATEST, latest_section(&run))] {
        let path = root.join(part.file);
        let old = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
        std::fs::write(&path, replaced(&old, &part, &text)?).with_context(|| path.display().to_string())?;
    }
    Ok(())
}

/// `text` cut at `part`'s comments: what is before the first, between them (its leading line
/// break left out), and after the second.
fn split<'a>(text: &'a str, part: &Part) -> anyhow::Result<(&'a str, &'a str, &'a str)> {
    let (before, rest) = text.split_once(part.begin).with_context(|| format!("{}: no {} in it", part.file, part.begin))?;
    let (inside, after) = rest.split_once(part.end).with_context(|| format!("{}: no {} after {}", part.file, part.end, part.begin))?;
    Ok((before, inside.strip_prefix('\n').unwrap_or(inside), after))
}

/// `text` with what stands between `part`'s comments made `new`.
fn replaced(text: &str, part: &Part, new: &str) -> anyhow::Result<String> {
    let (before, _, after) = split(text, part)?;
    Ok(format!("{before}{}\n{new}{}{after}", part.begin, part.end))
}

/// What stands between `part`'s comments in `text`.
#[cfg(test)]
fn between<'a>(text: &'a str, part: &Part) -> anyhow::Result<&'a str> {
    Ok(split(text, part)?.1)
}

/// The rows whose figures are older than their code, each said with the commit that changed it.
#[cfg(test)]
fn stale_rows(run: &Run, root: &Path) -> anyhow::Result<Vec<String>> {
    if run.commit.contains(' ') {
        anyhow::bail!("the results are of commit {:?}: a run on a changed tree measures no commit", run.commit);
    }
    let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(root).args(args).output();
    let mut stale = Vec::new();
    let rows: std::collections::BTreeSet<u8> = run.figures.iter().map(|f| f.row).collect();
    for row in rows {
        let own = MEASURES.iter().find(|(r, _)| *r == row).map(|(_, p)| *p).with_context(|| format!("row {row}: no code declared"))?;
        let mut args = vec!["log", "-1", "--format=%H", "--"];
        args.extend(EVERY_ROW.iter().chain(own));
        let out = git(&args).context("git, to read the history")?;
        let last = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || last.is_empty() {
            anyhow::bail!("git log found no history of row {row}'s code (a shallow clone?): {}", String::from_utf8_lossy(&out.stderr));
        }
        let ancestor = git(&["merge-base", "--is-ancestor", &last, &run.commit]).context("git merge-base")?;
        match ancestor.status.code() {
            Some(0) => {}
            Some(1) => stale.push(format!("row {row} was measured on {}, but {last} changed its code since", run.commit)),
            _ => anyhow::bail!("git cannot tell whether {last} is in {}: {}", run.commit, String::from_utf8_lossy(&ancestor.stderr)),
        }
    }
    Ok(stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
    }

    fn committed() -> Run {
        Run::read(&root().join(RESULTS)).expect("the committed results: scripts/bench --write-docs keeps them")
    }

    /// The README's table and the docs' latest run are what the committed results render: a
    /// figure changed by hand, or results kept without rendering, fail here.
    #[test]
    fn the_readme_and_the_docs_say_what_the_committed_results_say() {
        let run = committed();
        for (part, want) in [(README_TABLE, readme_table(&run)), (DOCS_LATEST, latest_section(&run))] {
            let text = std::fs::read_to_string(root().join(part.file)).unwrap();
            let have = between(&text, &part).unwrap();
            assert!(
                have == want,
                "{} differs from {RESULTS} rendered (scripts/bench --write-docs):\n--- have\n{have}\n--- want\n{want}",
                part.file
            );
        }
    }

    /// No committed figure names a commit older than the last change to the code it measures.
    #[test]
    fn no_committed_figure_is_older_than_the_code_it_measures() {
        let stale = stale_rows(&committed(), root()).unwrap();
        assert!(stale.is_empty(), "figures older than their code (run scripts/bench --write-docs again):\n{}", stale.join("\n"));
    }

    #[test]
    fn a_part_is_replaced_between_its_comments_alone() {
        let text = "a\n<!-- bench:table -->\nold\n<!-- bench:table end -->\nb\n";
        let new = replaced(text, &README_TABLE, "new\n").unwrap();
        assert_eq!(new, "a\n<!-- bench:table -->\nnew\n<!-- bench:table end -->\nb\n");
        assert_eq!(between(&new, &README_TABLE).unwrap(), "new\n");
        assert!(replaced("no comments", &README_TABLE, "x").unwrap_err().to_string().contains("README.md: no <!-- bench:table -->"));
    }

    #[test]
    fn every_row_declares_the_code_it_measures_and_each_path_exists() {
        for row in 1..=6u8 {
            let (_, paths) = MEASURES.iter().find(|(r, _)| *r == row).unwrap_or_else(|| panic!("row {row}"));
            for p in paths.iter().chain(EVERY_ROW) {
                assert!(root().join(p).exists(), "row {row}: {p} does not exist");
            }
        }
    }
}
