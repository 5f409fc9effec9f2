//! Agent hooks: what Claude Code and Codex tell their hook commands, turned into one notice.
//!
//! Claude Code runs `cmux-tray hook claude` with a JSON payload on stdin (`hook_event_name`
//! `Stop` or `Notification`, `notification_type`, `message`, `session_id`, `cwd`). Codex runs
//! `cmux-tray hook codex '<json>'` with one JSON argument (`type: agent-turn-complete`). A hook
//! always exits 0: a failing hook must never block the agent.

use serde_json::Value;

use cmux_tray_engine::config::Paths;

use crate::args::Agent;
use crate::notify::{self, Post, project_of};
use crate::{environment, notify_config};

/// The notice for a Claude Code hook payload; `None` when it is not worth one.
pub fn claude(payload: &Value, idle_reminders: bool) -> Option<Post> {
    let subtitle = project(payload);
    let message = payload["message"].as_str().unwrap_or("").trim().to_string();
    match payload["hook_event_name"].as_str()? {
        "Stop" => Some(Post { title: "Claude Code".into(), subtitle, body: "Turn complete".into() }),
        "Notification" => {
            let kind = payload["notification_type"].as_str().unwrap_or("");
            let asks_permission = kind == "permission_prompt" || message.to_lowercase().contains("permission");
            if kind == "idle_prompt" && !idle_reminders {
                return None;
            }
            let title = if asks_permission { "Claude Code needs you" } else { "Claude Code" };
            let body = if message.is_empty() { "Waiting for your input".into() } else { message };
            Some(Post { title: title.into(), subtitle, body })
        }
        _ => None,
    }
}

/// The notice for a Codex `notify` payload; `None` for other event types.
pub fn codex(payload: &Value) -> Option<Post> {
    if payload["type"].as_str()? != "agent-turn-complete" {
        return None;
    }
    let last = payload["last-assistant-message"].as_str().map(str::trim).filter(|s| !s.is_empty());
    Some(Post { title: "Codex".into(), subtitle: project(payload), body: last.unwrap_or("Turn complete").to_string() })
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

pub(crate) async fn hook_main(paths: &Paths, agent: Agent, payload: Option<String>) {
    let text = match (agent, payload) {
        (Agent::Codex, Some(p)) => p,
        (Agent::Codex, None) => {
            eprintln!("cmux-tray hook codex: no payload argument");
            return;
        }
        (Agent::Claude, _) => {
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

    #[test]
    fn claude_stop_and_permission_prompts() {
        let stop = json!({"hook_event_name": "Stop", "session_id": "s", "cwd": "/home/a/parser"});
        let p = claude(&stop, false).unwrap();
        assert_eq!((p.title.as_str(), p.subtitle.as_str(), p.body.as_str()), ("Claude Code", "parser", "Turn complete"));
        let ask = json!({"hook_event_name": "Notification", "notification_type": "permission_prompt",
                         "message": "Claude needs your permission to use Bash", "cwd": "/p"});
        let p = claude(&ask, false).unwrap();
        assert_eq!((p.title.as_str(), p.body.as_str()), ("Claude Code needs you", "Claude needs your permission to use Bash"));
    }

    #[test]
    fn idle_reminders_are_off_by_default() {
        let idle = json!({"hook_event_name": "Notification", "notification_type": "idle_prompt",
                          "message": "Claude is waiting for your input"});
        assert!(claude(&idle, false).is_none());
        assert_eq!(claude(&idle, true).unwrap().title, "Claude Code");
        assert!(claude(&json!({"hook_event_name": "PreToolUse"}), true).is_none());
        assert!(claude(&json!({}), true).is_none());
    }

    #[test]
    fn the_agents_session_is_read_when_it_has_an_ids_shape() {
        assert_eq!(session_of(&json!({"session_id": "4f1c-22aa"})).as_deref(), Some("4f1c-22aa"));
        assert_eq!(session_of(&json!({"thread-id": "th_1"})).as_deref(), Some("th_1"));
        assert_eq!(session_of(&json!({"session_id": "a b; rm"})), None);
        assert_eq!(session_of(&json!({})), None);
    }

    #[test]
    fn codex_turn_complete() {
        let p = codex(&json!({"type": "agent-turn-complete", "turn-id": "1", "cwd": "/w/api",
                              "input-messages": ["fix it"], "last-assistant-message": "Fixed the bug."}))
        .unwrap();
        assert_eq!((p.title.as_str(), p.subtitle.as_str(), p.body.as_str()), ("Codex", "api", "Fixed the bug."));
        assert!(codex(&json!({"type": "something-else"})).is_none());
    }
}
