//! `hook install` and `hook uninstall`: this program's hook written into an agent's own settings
//! file, as the agent documents it, and taken out again.
//!
//! - Claude Code: `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`), a command
//!   hook `cmux-tray hook claude` under `hooks.Stop` and `hooks.Notification`.
//! - Codex: `~/.codex/config.toml` (or `$CODEX_HOME/config.toml`), `notify = ["…/cmux-tray",
//!   "hook", "codex"]`. Codex runs one `notify` program: one that is not ours is never replaced.
//!
//! Whatever else the file holds is kept (other hooks, other keys; the TOML's comments and
//! order). Installing twice changes nothing; a hook of ours with an older path to this program
//! is pointed at this one. Uninstall takes out only what is ours (a command whose program is a
//! `cmux-tray` and whose words go on `hook claude` / `hook codex`). The write is atomic and keeps
//! the file's mode.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use serde_json::{Value, json};

use crate::hook::Agent;

/// The Claude Code events whose hook this program reads (hook.rs).
const CLAUDE_EVENTS: [&str; 2] = ["Stop", "Notification"];

/// Where the agent keeps its settings.
pub fn settings_file(agent: Agent, env: &BTreeMap<String, String>) -> anyhow::Result<PathBuf> {
    let var = |k: &str| env.get(k).filter(|v| !v.trim().is_empty()).map(PathBuf::from);
    let home = || var("HOME").ok_or_else(|| anyhow!("HOME is not set: cannot find the agent's settings"));
    Ok(match agent {
        Agent::Claude => var("CLAUDE_CONFIG_DIR").map_or_else(|| home().map(|h| h.join(".claude")), Ok)?.join("settings.json"),
        Agent::Codex => var("CODEX_HOME").map_or_else(|| home().map(|h| h.join(".codex")), Ok)?.join("config.toml"),
    })
}

pub fn install(agent: Agent, env: &BTreeMap<String, String>) -> anyhow::Result<()> {
    let path = settings_file(agent, env)?;
    let program = this_program()?;
    let old = read(&path)?;
    let new = match agent {
        Agent::Claude => claude_installed(&path, old.as_deref(), &program)?,
        Agent::Codex => codex_installed(&path, old.as_deref(), &program)?,
    };
    if Some(new.as_str()) == old.as_deref() {
        println!("{}: the hook is there already", path.display());
        return Ok(());
    }
    write(&path, &new)?;
    match agent {
        Agent::Claude => println!("{}: `{program} hook claude` added to the Stop and Notification hooks", path.display()),
        Agent::Codex => println!("{}: notify = [\"{program}\", \"hook\", \"codex\"]", path.display()),
    }
    Ok(())
}

pub fn uninstall(agent: Agent, env: &BTreeMap<String, String>) -> anyhow::Result<()> {
    let path = settings_file(agent, env)?;
    let Some(old) = read(&path)? else {
        println!("{}: no such file, nothing to take out", path.display());
        return Ok(());
    };
    let new = match agent {
        Agent::Claude => claude_uninstalled(&path, &old)?,
        Agent::Codex => codex_uninstalled(&path, &old)?,
    };
    if new == old {
        println!("{}: no hook of cmux-tray's there, nothing changed", path.display());
        return Ok(());
    }
    write(&path, &new)?;
    println!("{}: cmux-tray's hook taken out", path.display());
    Ok(())
}

/// This program's path, as a hook must name it (the agent's PATH may not hold it).
fn this_program() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("where this program is")?;
    exe.to_str().map(String::from).ok_or_else(|| anyhow!("{}: the path is not UTF-8", exe.display()))
}

/// Whether a hook's words are ours: a program named `cmux-tray`, then `hook <agent>`.
fn is_ours<'a>(words: impl IntoIterator<Item = &'a str>, agent: &str) -> bool {
    let words: Vec<&str> = words.into_iter().collect();
    matches!(words.as_slice(), [program, "hook", a, ..]
        if *a == agent && Path::new(program).file_stem().is_some_and(|s| s == "cmux-tray"))
}

fn claude_command(program: &str) -> anyhow::Result<String> {
    let quoted = shlex::try_quote(program).map_err(|e| anyhow!("{program}: cannot be written as a shell word ({e})"))?;
    Ok(format!("{quoted} hook claude"))
}

fn claude_is_ours(hook: &Value) -> bool {
    hook["command"].as_str().and_then(shlex::split).is_some_and(|w| is_ours(w.iter().map(String::as_str), "claude"))
}

/// The settings with our hook under each of [`CLAUDE_EVENTS`].
fn claude_installed(path: &Path, old: Option<&str>, program: &str) -> anyhow::Result<String> {
    let mut root = parse_json(path, old)?;
    let command = claude_command(program)?;
    let hooks = object_at(path, root.as_object_mut().expect("checked"), "hooks")?;
    for event in CLAUDE_EVENTS {
        let groups = hooks.entry(event).or_insert_with(|| json!([]));
        let groups = groups.as_array_mut().ok_or_else(|| anyhow!("{}: hooks.{event} is not a list, not changed", path.display()))?;
        let mut found = false;
        for hook in groups.iter_mut().filter_map(|g| g["hooks"].as_array_mut()).flatten().filter(|h| claude_is_ours(h)) {
            hook["command"] = json!(command);
            found = true;
        }
        if !found {
            groups.push(json!({"hooks": [{"type": "command", "command": command}]}));
        }
    }
    Ok(pretty(&root))
}

fn claude_uninstalled(path: &Path, old: &str) -> anyhow::Result<String> {
    let mut root = parse_json(path, Some(old))?;
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else { return Ok(old.to_string()) };
    let mut changed = false;
    for groups in hooks.values_mut().filter_map(Value::as_array_mut) {
        for group in groups.iter_mut() {
            if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = list.len();
                list.retain(|h| !claude_is_ours(h));
                changed |= list.len() != before;
            }
        }
        // A group left with no hook was ours alone.
        groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|l| !l.is_empty()));
    }
    if !changed {
        return Ok(old.to_string());
    }
    hooks.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    if hooks.is_empty() {
        root.as_object_mut().expect("checked").remove("hooks");
    }
    Ok(pretty(&root))
}

fn parse_json(path: &Path, text: Option<&str>) -> anyhow::Result<Value> {
    let text = text.filter(|t| !t.trim().is_empty()).unwrap_or("{}");
    let value: Value = serde_json::from_str(text).with_context(|| format!("{}: not valid JSON, not changed", path.display()))?;
    if !value.is_object() {
        bail!("{}: not a JSON object, not changed", path.display());
    }
    Ok(value)
}

fn object_at<'a>(
    path: &Path,
    map: &'a mut serde_json::Map<String, Value>,
    key: &str,
) -> anyhow::Result<&'a mut serde_json::Map<String, Value>> {
    map.entry(key)
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| anyhow!("{}: {key} is not an object, not changed", path.display()))
}

fn pretty(value: &Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(value).expect("a Value serializes"))
}

fn codex_is_ours(item: &toml_edit::Item) -> bool {
    item.as_array().is_some_and(|a| {
        let words: Option<Vec<&str>> = a.iter().map(|v| v.as_str()).collect();
        words.is_some_and(|w| is_ours(w, "codex"))
    })
}

/// config.toml with `notify` naming this program; refused when another program has it.
fn codex_installed(path: &Path, old: Option<&str>, program: &str) -> anyhow::Result<String> {
    let mut doc: toml_edit::DocumentMut =
        old.unwrap_or("").parse().with_context(|| format!("{}: not valid TOML, not changed", path.display()))?;
    if let Some(item) = doc.get("notify")
        && !codex_is_ours(item)
    {
        bail!(
            "{}: notify is set to another program ({}); Codex runs one notify program, so it was not changed. \
             Take that line out (or have that program call `cmux-tray hook codex \"$1\"`), then run this again",
            path.display(),
            item.to_string().trim()
        );
    }
    let wanted: toml_edit::Array = [program, "hook", "codex"].into_iter().collect();
    if doc.get("notify").and_then(|i| i.as_array()).is_some_and(|a| a.to_string().trim() == wanted.to_string().trim()) {
        return Ok(old.unwrap_or_default().to_string());
    }
    doc["notify"] = toml_edit::value(wanted);
    Ok(doc.to_string())
}

fn codex_uninstalled(path: &Path, old: &str) -> anyhow::Result<String> {
    let mut doc: toml_edit::DocumentMut = old.parse().with_context(|| format!("{}: not valid TOML, not changed", path.display()))?;
    if !doc.get("notify").is_some_and(codex_is_ours) {
        return Ok(old.to_string());
    }
    doc.remove("notify");
    Ok(doc.to_string())
}

fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow!("{}: {e}", path.display())),
    }
}

/// Replaces the file whole (a temporary file renamed over it), keeping its mode; a new file
/// and its folder are made private, as the agent makes them.
fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().ok_or_else(|| anyhow!("{}: no folder", path.display()))?;
    if !dir.exists() {
        cmux_tray_engine::private::create_dir(dir).with_context(|| format!("{}: cannot make the folder", dir.display()))?;
    }
    let temporary =
        dir.join(format!(".{}.cmux-tray-{}", path.file_name().and_then(|n| n.to_str()).unwrap_or("settings"), std::process::id()));
    cmux_tray_engine::private::write_file(&temporary, text).with_context(|| format!("{}: cannot write", temporary.display()))?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(&temporary, meta.permissions()).with_context(|| format!("{}: its mode", temporary.display()))?;
    }
    std::fs::rename(&temporary, path).with_context(|| format!("{}: cannot replace", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "/usr/bin/cmux-tray";

    /// A settings file a person already has: a hook of their own on Stop, a PreToolUse hook,
    /// and other keys (the shapes of code.claude.com/docs/en/hooks).
    const CLAUDE_SETTINGS: &str = r#"{
  "model": "opus",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/home/ada/check.sh"}]}]
  }
}"#;

    fn path() -> PathBuf {
        PathBuf::from("/home/ada/.claude/settings.json")
    }

    #[test]
    fn claude_install_keeps_the_other_hooks_and_twice_is_once() {
        let once = claude_installed(&path(), Some(CLAUDE_SETTINGS), PROGRAM).unwrap();
        let v: Value = serde_json::from_str(&once).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "say done");
        assert_eq!(v["hooks"]["Stop"][1]["hooks"][0], json!({"type": "command", "command": "/usr/bin/cmux-tray hook claude"}));
        assert_eq!(v["hooks"]["Notification"][0]["hooks"][0]["command"], "/usr/bin/cmux-tray hook claude");
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash");
        assert_eq!(claude_installed(&path(), Some(&once), PROGRAM).unwrap(), once, "idempotent");
        // A moved program: the same hook, pointed at the new path, never a second one.
        let moved: Value = serde_json::from_str(&claude_installed(&path(), Some(&once), "/opt/my tools/cmux-tray").unwrap()).unwrap();
        assert_eq!(moved["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(moved["hooks"]["Stop"][1]["hooks"][0]["command"], "'/opt/my tools/cmux-tray' hook claude");
    }

    #[test]
    fn claude_uninstall_takes_out_only_ours() {
        let installed = claude_installed(&path(), Some(CLAUDE_SETTINGS), PROGRAM).unwrap();
        let back: Value = serde_json::from_str(&claude_uninstalled(&path(), &installed).unwrap()).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(CLAUDE_SETTINGS).unwrap());
        assert_eq!(claude_uninstalled(&path(), CLAUDE_SETTINGS).unwrap(), CLAUDE_SETTINGS, "nothing of ours: unchanged");
        // Into an empty file and out again: no empty `hooks` left behind.
        let fresh = claude_installed(&path(), None, PROGRAM).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&claude_uninstalled(&path(), &fresh).unwrap()).unwrap(), json!({}));
    }

    #[test]
    fn claude_refuses_a_file_it_cannot_read() {
        let e = claude_installed(&path(), Some("{ not json"), PROGRAM).unwrap_err().to_string();
        assert!(e.contains("settings.json: not valid JSON, not changed"), "{e}");
        let e = claude_installed(&path(), Some(r#"{"hooks": {"Stop": {}}}"#), PROGRAM).unwrap_err().to_string();
        assert!(e.contains("hooks.Stop is not a list"), "{e}");
    }

    const CODEX_CONFIG: &str = "# my Codex\nmodel = \"gpt-5\"\n\n[mcp_servers.docs]\ncommand = \"npx\"\n";

    #[test]
    fn codex_install_sets_notify_keeps_the_rest_and_uninstall_undoes_it() {
        let p = PathBuf::from("/home/ada/.codex/config.toml");
        let once = codex_installed(&p, Some(CODEX_CONFIG), PROGRAM).unwrap();
        let t: toml::Table = once.parse().unwrap();
        assert_eq!(t["notify"], toml::Value::Array(vec!["/usr/bin/cmux-tray".into(), "hook".into(), "codex".into()]));
        assert!(once.starts_with("# my Codex\n") && once.contains("[mcp_servers.docs]"), "{once}");
        assert_eq!(codex_installed(&p, Some(&once), PROGRAM).unwrap(), once, "idempotent");
        assert_eq!(codex_uninstalled(&p, &once).unwrap(), CODEX_CONFIG);
    }

    #[test]
    fn codex_never_replaces_another_notify_program() {
        let p = PathBuf::from("/home/ada/.codex/config.toml");
        let theirs = "notify = [\"notify-send\", \"Codex\"]\n";
        let e = codex_installed(&p, Some(theirs), PROGRAM).unwrap_err().to_string();
        assert!(e.contains("notify is set to another program") && e.contains("notify-send"), "{e}");
        assert_eq!(codex_uninstalled(&p, theirs).unwrap(), theirs);
    }
}
