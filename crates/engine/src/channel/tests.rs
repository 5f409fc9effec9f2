use serde_json::json;
use tokio::io::BufReader;

use super::*;

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
        r#"{"type":"call","id":7,"command":"history_view","args":{"filter":{"kind":"all"}}}"#,
        "\n",
    );
    let read = read_all(lines.as_bytes()).await;
    assert_eq!(
        read,
        vec![
            Ok(Some(ToTray::Launched { argv: vec!["cmux-tray-app".into(), "cmux-tray://open/x".into()] })),
            Ok(Some(ToTray::Attach { page: Page::SignIn, query: None, key: None })),
            Ok(Some(ToTray::Detach)),
            Ok(Some(ToTray::Call { id: 7, command: "history_view".into(), args: json!({"filter": {"kind": "all"}}) })),
            Ok(None),
        ]
    );
}

#[test]
fn the_trays_messages_are_the_documented_lines() {
    let cases = [
        (FromTray::Attached { chosen: true }, json!({"type": "attached", "chosen": true})),
        (FromTray::answer(3, Ok(json!([1]))), json!({"type": "answer", "id": 3, "ok": [1]})),
        (FromTray::answer(4, Err("no sign-in under way".into())), json!({"type": "answer", "id": 4, "error": "no sign-in under way"})),
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
