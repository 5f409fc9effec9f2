//! The fuzz targets' seeds and every input a fuzz run found (fuzz/corpus/, fuzz/regressions/,
//! both committed, and fuzz/artifacts/, a local run's own), replayed through the very checks
//! libFuzzer runs (fuzz/checks/), on the stable toolchain and the tests' own build: the quick form
//! of `scripts/fuzz` that CI runs. The fuzzing itself (new inputs) is `scripts/fuzz`, which keeps
//! what it finds under fuzz/regressions/ (docs/testing.md).

#[path = "../../../fuzz/checks/cloud_answers.rs"]
mod cloud_answers;
#[path = "../../../fuzz/checks/config.rs"]
mod config;
#[path = "../../../fuzz/checks/links.rs"]
mod links;
#[path = "../../../fuzz/checks/quiet_hours.rs"]
mod quiet_hours;
#[path = "../../../fuzz/checks/socket_line.rs"]
mod socket_line;

use std::path::Path;

/// Every input kept for `target`, through `check`; a panic names the file. Returns how many ran.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut ran = 0;
    for kept in ["corpus", "regressions", "artifacts"] {
        let dir = fuzz.join(kept).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if std::panic::catch_unwind(|| check(&data)).is_err() {
                panic!("{target}: {} fails its check (scripts/fuzz {target} finds more like it)", path.display());
            }
            ran += 1;
        }
    }
    assert!(ran > 0, "{target}: no seeds under fuzz/corpus/{target}/");
    ran
}

#[test]
fn the_socket_line_seeds_pass() {
    replay("socket_line", socket_line::check);
}

#[test]
fn the_cloud_answer_seeds_pass() {
    replay("cloud_answers", cloud_answers::check);
}

#[test]
fn the_config_seeds_pass() {
    replay("config", config::check);
}

#[test]
fn the_link_seeds_pass() {
    replay("links", links::check);
}

#[test]
fn the_quiet_hours_seeds_pass() {
    replay("quiet_hours", quiet_hours::check);
}
