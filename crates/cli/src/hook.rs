//! Agent hooks: what Claude Code and Codex tell their hook commands, turned into one notice.
//!
//! Claude Code runs `cmux-tray hook claude` with a JSON payload on stdin (its hooks reference,
//! code.claude.com/docs/en/hooks: `hook_event_name`, `session_id`, `cwd`; `Stop` with
//! `last_assistant_message`; `Notification` with `message`, `title` and `notification_type`).
//! Codex runs the `notify` program of its config.toml with one JSON argument appended last
//! (`type: agent-turn-complete`, its only type: openai/codex `docs/config.md`, "notify"). A hook
//! always exits 0: a failing hook must never block the agent. The payloads as documented are
//! kept in `crates/cli/tests/fixtures/`, their sources named there.

use serde_json::Value;

use cmux_tray_engine::config::Paths;
use cmux_tray_engine::text;

use crate::notify::{self, Post, project_of};
use crate::{environment, notify_config};

/// The agents whose hooks this reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    Claude,
    Codex,
}

/// The notice for a Claude Code hook payload; `None` when it is not worth one.
///
/// `Stop` (the turn ended) and `Notification` are read; every other event is ignored
/// (docs/terminals.md): `SubagentStop` is a step inside a turn whose own `Stop` follows, and the
/// tool, prompt, session and compaction events are not ends.
pub fn claude(payload: &Value, idle_reminders: bool) -> Option<Post> {
    let subtitle = project(payload);
    let title = "Claude Code".to_string();
    match payload["hook_event_name"].as_str()? {
        "Stop" => {
            let body = said(&payload["last_assistant_message"]).unwrap_or_else(|| "Turn complete".into());
            Some(Post { title, subtitle, body, needs_you: false })
        }
        "Notification" => {
            let message = said(&payload["message"]);
            let (needs_you, fallback) = match payload["notification_type"].as_str().unwrap_or("") {
                // A tool waits for leave, or an MCP server asks a question: the person is needed.
                "permission_prompt" => (true, "Waiting for your permission"),
                "elicitation_dialog" => (true, "Waiting for your answer"),
                "idle_prompt" if idle_reminders => (false, "Waiting for your input"),
                "idle_prompt" => return None,
                // The person just signed in: they are at the terminal already.
                "auth_success" => return None,
                _ => (false, "Waiting for your input"),
            };
            Some(Post { title, subtitle, body: message.unwrap_or_else(|| fallback.into()), needs_you })
        }
        _ => None,
    }
}

/// The notice for a Codex `notify` payload; `None` for other event types.
pub fn codex(payload: &Value) -> Option<Post> {
    if payload["type"].as_str()? != "agent-turn-complete" {
        return None;
    }
    let body = said(&payload["last-assistant-message"]).unwrap_or_else(|| "Turn complete".into());
    Some(Post { title: "Codex".into(), subtitle: project(payload), body, needs_you: false })
}

/// An agent's message as a banner's line: its first line, cleaned of control characters and of
/// the Markdown marks that would show as such (a heading's `#`, a quote's `>`, `**`, backticks).
fn said(value: &Value) -> Option<String> {
    let line = text::first_line(value.as_str()?)?;
    let bare = line.trim_start_matches(['#', '>', '*', '-', ' ']).replace("**", "").replace('`', "");
    text::one_line(&bare)
}

/// The agent's session: Claude Code's `session_id`, Codex's `thread-id`. A hand-off that carries
/// this session to the cloud names it as its `sessionId`, so the hook reports it (session.attach)
/// and a click on the hand-off's banner comes back to this terminal.
pub fn session_of(payload: &Value) -> Option<String> {
    let id = payload["session_id"].as_str().or_else(|| payload["thread-id"].as_str())?.trim();
    (!id.is_empty() && id.len() <= 200 && id.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))).then(|| id.to_string())
}

fn project(payload: &Value) -> String {
    payload["cwd"].as_str().map(|c| project_of(std::path::Path::new(c))).unwrap_or_default()
}

/// Runs a hook. `args`: what the agent passed after `hook claude` / `hook codex` (Codex appends
/// its payload as the last argument; anything before it, an option this version does not know,
/// is ignored). Never fails: what went wrong is said on stderr.
pub(crate) async fn hook_main(paths: &Paths, agent: Agent, args: Vec<String>) {
    let text = match agent {
        Agent::Codex => match args.last() {
            Some(p) => p.clone(),
            None => {
                eprintln!("cmux-tray hook codex: no payload argument (Codex appends it to its notify command)");
                return;
            }
        },
        Agent::Claude => {
            let mut s = String::new();
            if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
                eprintln!("cmux-tray hook claude: reading stdin: {e}");
                return;
            }
            s
        }
    };
    let payload: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("cmux-tray hook: the payload is not JSON ({e})");
            return;
        }
    };
    let idle = notify_config(paths).idle_reminders.unwrap_or(false);
    let post = match agent {
        Agent::Claude => claude(&payload, idle),
        Agent::Codex => codex(&payload),
    };
    let caller = notify::Caller::new(environment());
    if let Some(session) = session_of(&payload)
        && let Err(why) = notify::attach(paths, &caller, &session).await
    {
        tracing::debug!("cmux-tray hook: session not reported: {why}");
    }
    if let Some(post) = post
        && let Err(why) = notify::send(paths, &caller, &notify::Overrides::default(), &post).await
    {
        eprintln!("cmux-tray hook: notice not sent: {why}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A payload as the agent's documentation shows it (`tests/fixtures/`, sources in its README).
    fn fixture(name: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    fn words(p: &Post) -> (&str, &str, &str, bool) {
        (p.title.as_str(), p.subtitle.as_str(), p.body.as_str(), p.needs_you)
    }

    #[test]
    fn claude_stop_says_the_first_line_of_the_last_message() {
        let p = claude(&fixture("claude-stop.json"), false).unwrap();
        assert_eq!(words(&p), ("Claude Code", "...", "I've completed the refactoring. Here's a summary...", false));
        let mut long = fixture("claude-stop.json");
        long["cwd"] = json!("/home/ada/parser");
        long["last_assistant_message"] = json!("## **Done:** the `parser` is fixed\u{1b}[31m\n\nDetails follow.");
        let p = claude(&long, false).unwrap();
        assert_eq!(words(&p), ("Claude Code", "parser", "Done: the parser is fixed[31m", false));
        long["last_assistant_message"] = json!(" \n ");
        assert_eq!(claude(&long, false).unwrap().body, "Turn complete");
    }

    #[test]
    fn claude_permission_prompts_and_questions_need_you() {
        let p = claude(&fixture("claude-notification-permission.json"), false).unwrap();
        assert_eq!(words(&p), ("Claude Code", "...", "Claude needs your permission to use Bash", true));
        let p = claude(&fixture("claude-notification-elicitation.json"), false).unwrap();
        assert!(p.needs_you, "an MCP server's question waits for the person");
    }

    #[test]
    fn idle_reminders_are_off_by_default_and_a_sign_in_is_no_notice() {
        let idle = fixture("claude-notification-idle.json");
        assert!(claude(&idle, false).is_none());
        let p = claude(&idle, true).unwrap();
        assert_eq!((p.title.as_str(), p.needs_you), ("Claude Code", false));
        assert!(claude(&fixture("claude-notification-auth-success.json"), true).is_none());
    }

    #[test]
    fn subagent_stops_and_other_events_are_ignored() {
        assert!(claude(&fixture("claude-subagent-stop.json"), true).is_none());
        assert!(claude(&json!({"hook_event_name": "PreToolUse"}), true).is_none());
        assert!(claude(&json!({}), true).is_none());
    }

    #[test]
    fn the_agents_session_is_read_when_it_has_an_ids_shape() {
        assert_eq!(session_of(&json!({"session_id": "4f1c-22aa"})).as_deref(), Some("4f1c-22aa"));
        assert_eq!(session_of(&json!({"thread-id": "th_1"})).as_deref(), Some("th_1"));
        assert_eq!(session_of(&json!({"session_id": "a b; rm"})), None);
        assert_eq!(session_of(&json!({})), None);
        assert_eq!(session_of(&fixture("codex-agent-turn-complete.json")).as_deref(), Some("b5f6c1c2-1111-2222-3333-444455556666"));
    }

    #[test]
    fn codex_turn_complete() {
        let p = codex(&fixture("codex-agent-turn-complete.json")).unwrap();
        assert_eq!(words(&p), ("Codex", "project", "Rename complete and verified cargo build succeeds.", false));
        assert!(codex(&json!({"type": "something-else"})).is_none());
    }
}
