//! What the package ships beside the binaries, made from the command line itself: completions
//! for bash, zsh and fish, and the man page (clap_complete, clap_mangen; docs/architecture.md
//! "The package"). The packages themselves are `scripts/package`'s, which CI runs.

// Linux only, as the whole end-to-end suite (support/lib.rs says why).
#![cfg(target_os = "linux")]

use std::process::Command;

use cmux_tray_e2e::bin;

fn generate(what: &str) -> String {
    let out = Command::new(bin("cmux-tray")).args(["generate", what]).output().unwrap();
    assert!(out.status.success(), "generate {what}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn completions_and_the_man_page_name_every_command_and_bash_loads_its_completion() {
    let commands = ["daemon", "status", "follow", "cancel", "notify", "wrap", "hook", "attach", "config", "pause", "login", "generate"];
    for shell in ["bash", "zsh", "fish"] {
        let text = generate(shell);
        for c in commands {
            assert!(text.contains(c), "{shell} completion without {c}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cmux-tray");
    std::fs::write(&file, generate("bash")).unwrap();
    let out = Command::new("bash").arg("-c").arg(format!("source '{}' && complete -p cmux-tray", file.display())).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("cmux-tray"));
    let man = generate("man");
    assert!(man.starts_with(".ie") && man.contains(".TH cmux-tray 1"), "{}", &man[..man.len().min(200)]);
    for c in commands {
        assert!(man.contains(&format!("cmux\\-tray\\-{c}")) || man.contains(c), "man page without {c}");
    }
}
