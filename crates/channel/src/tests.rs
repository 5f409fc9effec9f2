use serde_json::json;
use tokio::io::BufReader;

use super::*;
use crate::call::{HistoryFilter, NoticeKind};

async fn read_all(bytes: &[u8]) -> Vec<Result<Option<ToTray>, String>> {
    let mut reader = BufReader::new(bytes);
    let mut out = Vec::new();
    loop {
        let next = read::<ToTray>(&mut reader).await.map_err(|e| e.to_string());
        let end = matches!(next, Ok(None) | Err(_));
        out.push(next);
        if end {
            return out;
        }
    }
}

/// The lines as docs/architecture.md "Two processes" writes them.
#[tokio::test]
async fn the_documented_lines_are_read_as_their_messages() {
    let lines = concat!(
        r#"{"type":"launched","argv":["cmux-tray-app","cmux-tray://open/x"]}"#,
        "\n",
        r#"{"type":"attach","page":"signin","query":null}"#,
        "\n",
        r#"{"type":"detach"}"#,
        "\n",
        r#"{"type":"call","id":7,"command":"history_view","args":{"filter":{"kind":"run"}}}"#,
        "\n",
    );
    let read = read_all(lines.as_bytes()).await;
    assert_eq!(
        read,
        vec![
            Ok(Some(ToTray::Launched { argv: vec!["cmux-tray-app".into(), "cmux-tray://open/x".into()] })),
            Ok(Some(ToTray::Attach { page: Page::SignIn, query: None, key: None })),
            Ok(Some(ToTray::Detach)),
            Ok(Some(ToTray::Call {
                id: 7,
                call: Call::HistoryView { filter: HistoryFilter { kind: Some(NoticeKind::Run), query: String::new() } }
            })),
            Ok(None),
        ]
    );
}

#[test]
fn the_trays_messages_are_the_documented_lines() {
    let cases = [
        (FromTray::Attached { chosen: true }, json!({"type": "attached", "chosen": true})),
        (FromTray::Answer { id: 3, result: Ok(json!([1])) }, json!({"type": "answer", "id": 3, "ok": [1]})),
        (
            FromTray::Answer { id: 4, result: Err("no sign-in under way".into()) },
            json!({"type": "answer", "id": 4, "error": "no sign-in under way"}),
        ),
        (FromTray::Changed, json!({"type": "changed"})),
        (FromTray::Detached, json!({"type": "detached"})),
        (
            FromTray::Open { page: Page::History, query: Some("run=r1".into()) },
            json!({"type": "open", "page": "history", "query": "run=r1"}),
        ),
    ];
    for (message, line) in cases {
        assert_eq!(serde_json::to_value(&message).unwrap(), line);
        assert_eq!(serde_json::from_value::<FromTray>(line).unwrap(), message);
    }
}

#[tokio::test]
async fn a_bad_line_is_named_and_a_cut_one_is_not_taken_for_a_message() {
    let read = read_all(b"{\"type\":\"attach\",\"page\":\"about\"}\n").await;
    let Err(e) = &read[0] else { panic!("{read:?}") };
    assert!(e.contains("unreadable") && e.contains("not a message") && e.contains("33 bytes"), "{e}");

    let read = read_all(br#"{"type":"changed""#).await;
    assert!(matches!(&read[0], Err(e) if e.contains("channel")), "{read:?}");
}

#[tokio::test]
async fn a_line_past_the_limit_is_refused_without_reading_it_whole() {
    let long = vec![b'x'; MAX_LINE as usize + 10];
    let read = read_all(&long).await;
    assert!(matches!(&read[0], Err(e) if e.contains("longer than")), "{read:?}");
}

/// A line the tray cannot read may carry a pasted token: what is said of it never quotes it.
#[tokio::test]
async fn an_unreadable_line_is_said_without_its_words() {
    let line = br#"{"type":"call","id":1,"command":"sign_in_with_token","args":{"token":"tok_secret_1234567890"}"#;
    let mut bytes = line.to_vec();
    bytes.extend_from_slice(b" junk\n");
    let read = read_all(&bytes).await;
    let Err(e) = &read[0] else { panic!("{read:?}") };
    assert!(e.contains("unreadable") && !e.contains("tok_secret") && !e.contains("sign_in_with_token"), "{e}");
}

#[test]
fn the_key_is_read_from_its_line_and_admits_only_itself() {
    let key = ChannelKey::generate();
    let read = ChannelKey::read_line(key.line().as_bytes()).unwrap();
    assert!(key.admits(Some(&read)));
    assert!(!key.admits(Some(&ChannelKey::generate())));
    assert!(!key.admits(None));
    assert!(!format!("{key:?}").contains(&key.line().trim_end().to_string()));
    for bad in ["", "short\n", &"g".repeat(64)] {
        assert!(ChannelKey::read_line(bad.as_bytes()).is_err(), "{bad:?}");
    }
}

/// Every command the pages call (ui/*.html), with the arguments as they pass them, is read as
/// its call and goes on the line as the page wrote it; a name no call has is refused by name.
#[test]
fn every_call_the_pages_make_is_read_and_sent_as_written() {
    let calls = [
        ("view", json!({})),
        ("history_view", json!({"filter": {"kind": null, "query": ""}})),
        ("notice", json!({"key": "k"})),
        ("card", json!({"runId": "run_1"})),
        ("handoff_card", json!({"handoffId": "ho_1"})),
        ("settings_view", json!({})),
        ("time_zones", json!({})),
        ("set_setting", json!({"key": "delivery.sound", "value": "true"})),
        ("set_quiet_windows", json!({"windows": []})),
        ("pause", json!({"how": "hour"})),
        ("resume", json!({})),
        ("mark_all_read", json!({})),
        ("open_notice", json!({"key": "k"})),
        ("open_item", json!({"item": "run:run_1"})),
        ("viewing", json!({"item": null})),
        ("sign_in_start", json!({})),
        ("sign_in_wait", json!({})),
        ("open_sign_in_page", json!({})),
        ("open_at_login", json!({})),
        ("set_open_at_login", json!({"enabled": true})),
        ("connection", json!({})),
        ("log_dir", json!({})),
        ("restart", json!({})),
        ("open_window", json!({"page": "signin"})),
        ("account", json!({})),
        ("choose_team", json!({"team": "team_1"})),
        ("sign_out", json!({})),
        ("sign_in_with_token", json!({"token": "t"})),
        ("page_words", json!({})),
        ("languages", json!({})),
        ("install_update", json!({})),
        ("quit", json!({})),
    ];
    for (command, args) in calls.clone() {
        let call = Call::read(command, args.clone()).unwrap_or_else(|e| panic!("{command}: {e}"));
        assert_eq!(call.command(), command);
        let line = serde_json::to_value(ToTray::Call { id: 1, call }).unwrap();
        assert_eq!(line, json!({"type": "call", "id": 1, "command": command, "args": args}), "{command}");
    }
    assert!(Call::read("view", serde_json::Value::Null).is_ok(), "no arguments are none");
    // The windows' Tauri build declares the same commands, one permission each.
    let declared = include_str!("../../../src-tauri/build.rs");
    let mut declared: Vec<&str> = declared.lines().filter_map(|l| l.trim().strip_prefix('"')?.strip_suffix("\",")).collect();
    declared.sort();
    let mut read: Vec<&str> = calls.iter().map(|(c, _)| *c).collect();
    read.sort();
    assert_eq!(read, declared, "the calls here and the commands src-tauri/build.rs declares");
    let unknown = Call::read("drop_tables", json!({})).unwrap_err();
    assert!(unknown.contains("drop_tables"), "{unknown}");
    let missing = Call::read("card", json!({})).unwrap_err();
    assert!(missing.contains("runId"), "{missing}");
    let page = Call::read("open_window", json!({"page": "about"})).unwrap_err();
    assert!(page.contains("about"), "{page}");
}
