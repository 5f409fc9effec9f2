//! The terminal tools' children (tmux, `kitty @`, `wezterm cli`) are clients of a server the
//! engine does not control, and a client does what its server says: tmux's `save-buffer` and
//! `load-buffer` write and read files through their client. So on Linux each runs under a
//! Landlock ruleset of its own: no right to write, make or remove any file, and the right to
//! read only the system's folders and the tool's own installation (never the person's home).
//!
//! Where the kernel has no Landlock (older than 5.13, or not enabled at boot) the tools run
//! without it, with one log line saying so: an agent cannot use Landlock there either, and the
//! sandboxes it can use (namespaces, seccomp, `NoNewPrivs`) are refused by `trust`. Elsewhere
//! than Linux nothing is added here (macOS refuses sandboxed servers in `trust`).

use std::path::Path;

/// Confines what `command` runs (`program`, the file on the PATH) to reading the system's
/// folders. An error when the rules cannot be made: the tool is then not run.
#[cfg(target_os = "linux")]
pub fn confine(command: &mut tokio::process::Command, program: &Path) -> std::io::Result<()> {
    let mut ruleset = Some(linux::ruleset(program).map_err(std::io::Error::other)?);
    // SAFETY: the closure makes two syscalls (prctl, landlock_restrict_self) on a ruleset built
    // before the fork, and allocates nothing on success.
    unsafe {
        command.pre_exec(move || match ruleset.take() {
            Some(r) => r.restrict_self().map(|_| ()).map_err(std::io::Error::other),
            None => Ok(()),
        });
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn confine(_command: &mut tokio::process::Command, _program: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::{Path, PathBuf};

    use landlock::{
        ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, path_beneath_rules,
    };

    /// The file rights Landlock knows up to Linux 6.10 (ABI 5), all taken away but reading.
    const RIGHTS: ABI = ABI::V5;

    /// Where a tool's program, its libraries, locales and terminfo live.
    const SYSTEM: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/nix/store", "/dev/urandom"];

    /// The rules for one run of `program`: reading the system's folders and the program's own
    /// installation, nothing written anywhere.
    pub fn ruleset(program: &Path) -> Result<RulesetCreated, landlock::RulesetError> {
        has_landlock();
        let read = AccessFs::from_read(RIGHTS);
        Ruleset::default()
            .handle_access(AccessFs::from_all(RIGHTS))?
            .create()?
            .add_rules(path_beneath_rules(SYSTEM.iter().map(PathBuf::from).chain(installation(program)), read))?
            // What a program throws away goes somewhere.
            .add_rules(path_beneath_rules(["/dev/null"], AccessFs::from_file(RIGHTS)))
    }

    /// The folder the program's file is in (links resolved), and beside a `bin` folder its
    /// `lib` (kitty's installer puts `kitty.app/bin/kitty` and its Python in `kitty.app/lib`).
    fn installation(program: &Path) -> Vec<PathBuf> {
        let Some(dir) = program.canonicalize().ok().and_then(|p| p.parent().map(Path::to_path_buf)) else { return vec![] };
        let lib = (dir.file_name().is_some_and(|n| n == "bin")).then(|| dir.with_file_name("lib"));
        std::iter::once(dir).chain(lib).collect()
    }

    /// Whether the kernel has Landlock, asked once; said in the log once when it has not.
    fn has_landlock() -> bool {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HAS.get_or_init(|| {
            let has = Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessFs::Execute)
                .and_then(|r| r.create())
                .is_ok();
            if !has {
                tracing::warn!("this kernel has no Landlock: terminal tools run without a file sandbox of their own");
            }
            has
        })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_tool_may_read_its_own_installation_beside_a_bin_folder() {
            let dir = tempfile::tempdir().unwrap();
            let app = dir.path().canonicalize().unwrap().join("kitty.app");
            std::fs::create_dir_all(app.join("bin")).unwrap();
            std::fs::write(app.join("bin/kitty"), "").unwrap();
            assert_eq!(installation(&app.join("bin/kitty")), [app.join("bin"), app.join("lib")]);
            assert_eq!(installation(Path::new("/nonexistent/tool")), Vec::<PathBuf>::new());
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// A program confined as the terminals' tools are can read the system's folders but writes
    /// no file and reads none of the person's (this kernel has Landlock: `landlock_create_ruleset`).
    #[tokio::test]
    async fn a_terminal_tool_writes_no_file_and_reads_none_of_the_persons() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "the person's").unwrap();
        let written = dir.path().join("written");
        let script = format!("cat /etc/passwd >/dev/null || exit 9; echo x > {}; cat {}", written.display(), secret.display());
        let mut sh = tokio::process::Command::new("/bin/sh");
        sh.args(["-c", &script]);
        super::confine(&mut sh, std::path::Path::new("/bin/sh")).unwrap();
        let out = sh.output().await.unwrap();
        let (said, e) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_ne!(out.status.code(), Some(9), "the system's folders are read: {e}");
        assert!(!written.exists(), "the tool wrote a file (has this kernel Landlock? `landlock_create_ruleset`)");
        assert!(!said.contains("the person's"), "the tool read the person's file: {said}");
        assert!(e.contains("Permission denied"), "{e}");
    }
}
