use rusqlite::params;
use serde::Serialize;

use super::delivery::SHOWN_SINCE;
use super::*;
use crate::notice::{Notice, NoticeStatus, Source};

const RUN_ITEM: &str = "run:run_0123456789abcdef0123";

fn notice(key: &str) -> Notice {
    Notice {
        key: key.into(),
        item: crate::notice::Item::parse(RUN_ITEM).unwrap(),
        status: NoticeStatus::Run(crate::cloud::Outcome::Finished),
        title: "t".into(),
        body: "Run finished".into(),
        urgent: false,
        local: None,
        session_id: None,
        host: None,
    }
}

#[test]
fn a_key_is_inserted_once_and_told_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = Store::open(&dir.path().join("state.sqlite3")).unwrap();
    assert!(out.record_notice(&notice("k"), 1).unwrap());
    assert!(!out.record_notice(&notice("k"), 2).unwrap(), "a second insert of a key is ignored");
    assert_eq!(out.untold().unwrap().len(), 1);
    out.mark_told("k", Some(7), Reason::Shown, false, 3).unwrap();
    assert!(out.untold().unwrap().is_empty());
    assert!(!out.record_notice(&notice("k"), 4).unwrap(), "a told key is never untold again");
    assert_eq!(out.live_banner(&crate::notice::Item::parse(RUN_ITEM).unwrap()).unwrap(), Some(7));
}

#[test]
fn a_look_at_the_untold_keys_reads_those_saved_after_a_point_and_not_the_app_s_own() {
    let dir = tempfile::tempdir().unwrap();
    let out = Store::open(&dir.path().join("state.sqlite3")).unwrap();
    for k in ["a", "b", "c"] {
        out.record_notice(&notice(k), 1).unwrap();
    }
    let mut own = notice("app");
    own.status = NoticeStatus::App(crate::notice::AppStatus::Summary);
    out.record_notice(&own, 1).unwrap();
    out.mark_told("b", None, Reason::Shown, false, 2).unwrap();
    let all = out.untold_keys_except(Source::App, i64::MIN).unwrap();
    let keys: Vec<&str> = all.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(keys, ["a", "c"]);
    out.record_notice(&notice("d"), 3).unwrap();
    let since = out.untold_keys_except(Source::App, all[1].0).unwrap();
    assert_eq!(since.iter().map(|(_, k)| k.as_str()).collect::<Vec<_>>(), ["d"], "only what was saved after c");
}

#[test]
fn counting_a_source_s_recent_banners_reads_an_index_not_the_whole_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = Store::open(&dir.path().join("state.sqlite3")).unwrap();
    let conn = out.lock();
    let plan: Vec<String> = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {SHOWN_SINCE}"))
        .unwrap()
        .query_map(params!["run", 0], |r| r.get::<_, String>(3))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(plan.iter().any(|step| step.contains("USING INDEX notices_shown")), "{plan:?}");
    drop(conn);
    for (i, k) in ["a", "b", "c"].into_iter().enumerate() {
        out.record_notice(&notice(k), 1).unwrap();
        out.mark_told(k, None, if k == "b" { Reason::QuietHours } else { Reason::Shown }, false, 10 * i as i64).unwrap();
    }
    assert_eq!(out.shown_since(Source::Run, 0).unwrap(), 2, "a notice held back is no banner");
    assert_eq!(out.shown_since(Source::Run, 15).unwrap(), 1);
    assert_eq!(out.shown_since(Source::Handoff, 0).unwrap(), 0);
}

#[test]
fn reopening_keeps_everything_and_migrates_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/state.sqlite3");
    {
        let out = Store::open(&path).unwrap();
        out.add_follow(FollowKind::Run, "run_0123456789abcdef0123", "u1", 0, true, 5).unwrap();
        out.note_cancel("run_0123456789abcdef0123", 6).unwrap();
    }
    let out = Store::open(&path).unwrap();
    let f = out.active_follows("u1").unwrap();
    assert_eq!(f.len(), 1);
    assert!(f[0].made_here);
    assert!(Grouped(&out.lock()).cancel_noted("run_0123456789abcdef0123").unwrap());
    assert!(out.active_follows("u2").unwrap().is_empty());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}

#[test]
fn a_file_that_is_no_database_is_named_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite3");
    let garbage = b"this is not a database, but it is the user's file\n".repeat(100);
    std::fs::write(&path, &garbage).unwrap();
    let err = Store::open(&path).err().expect("refused");
    let msg = err.to_string();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{msg}");
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("left untouched"), "{msg}");
    assert_eq!(std::fs::read(&path).unwrap(), garbage, "the file was not touched");
}

#[test]
fn a_truncated_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite3");
    {
        let out = Store::open(&path).unwrap();
        for i in 0..200 {
            out.record_notice(&notice(&format!("k{i}")), i).unwrap();
        }
    }
    // A closed store is all in its file: the last connection to close folded the WAL in.
    assert!(!beside(&path, "-wal").exists(), "the WAL is gone once the store is closed");
    let bytes = std::fs::read(&path).unwrap();
    // Keep the header, wreck the pages after it.
    let mut wrecked = bytes.clone();
    for b in wrecked.iter_mut().skip(100).take(bytes.len() - 100) {
        *b = 0xA5;
    }
    std::fs::write(&path, &wrecked).unwrap();
    let err = Store::open(&path).err().expect("refused");
    assert!(matches!(err, StoreError::Corrupt { .. } | StoreError::Sql { .. }), "{err}");
    assert!(err.to_string().contains(&path.display().to_string()));
    assert_eq!(std::fs::read(&path).unwrap(), wrecked, "the file was not touched");
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite3");
    Store::open(&path).unwrap().lock().pragma_update(None, "user_version", 99).unwrap();
    let err = Store::open(&path).err().expect("refused");
    assert!(matches!(err, StoreError::TooNew { found: 99, .. }), "{err}");
}

#[test]
fn a_locked_database_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite3");
    drop(Store::open(&path).unwrap());
    // Another process's exclusive transaction, as a second connection here.
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("PRAGMA journal_mode = DELETE; BEGIN EXCLUSIVE;").ok();
    other.execute_batch("BEGIN EXCLUSIVE;").ok();
    let err = Store::open(&path).err().expect("refused while locked");
    assert!(matches!(err, StoreError::Locked { .. }), "{err}");
    assert!(err.to_string().contains("another cmux-tray"), "{err}");
}

#[test]
fn a_silent_handoff_notice_is_known_but_never_told() {
    let dir = tempfile::tempdir().unwrap();
    let out = Store::open(&dir.path().join("s.sqlite3")).unwrap();
    out.add_follow(FollowKind::Handoff, "ho_0123456789abcdef0123", "u", 3, false, 1).unwrap();
    let n = notice("handoff:ho_0123456789abcdef0123:1:needs-you");
    assert!(
        !out.record_handoff(
            HandoffStep { id: "ho_0123456789abcdef0123", version: 3, notice: Some(&n), silent: true, closes: false },
            "u",
            2
        )
        .unwrap()
    );
    assert!(
        !out.record_handoff(
            HandoffStep { id: "ho_0123456789abcdef0123", version: 4, notice: Some(&n), silent: false, closes: false },
            "u",
            3
        )
        .unwrap()
    );
    assert!(out.untold().unwrap().is_empty());
    assert_eq!(out.follow(FollowKind::Handoff, "ho_0123456789abcdef0123").unwrap().unwrap().cursor, 4);
}

#[test]
fn a_commit_is_on_the_disk_when_it_returns_and_no_write_waits_for_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let out = Store::open(&dir.path().join("state.sqlite3")).unwrap();
    let conn = out.lock();
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    let sync: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
    let auto: i64 = conn.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0)).unwrap();
    // docs/architecture.md, "Durable on return": WAL, synchronous = FULL (2), and SQLite's own
    // checkpoint (inside a commit) only once the WAL holds 4,096 pages, the checkpoint thread
    // doing it before.
    assert_eq!((mode.as_str(), sync, auto), ("wal", 2, 4_096));
}

#[test]
fn a_store_from_before_places_keeps_its_notices_and_sessions_and_takes_places_after_migrating() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite3");
    {
        // A store as schema 5 left it: a local notice, a terminal's session report.
        let conn = rusqlite::Connection::open(&path).unwrap();
        for sql in &schema::MIGRATIONS[..5] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 5).unwrap();
        conn.execute(
            "INSERT INTO notices (key, item, source, status, title, body, urgent, created_at, state, cmux_id, workspace_id)
             VALUES ('local:A', 'local:WS', 'local', 'posted', 'Old', 'b', 0, 1, 'told', 'A', 'WS')",
            [],
        )
        .unwrap();
        conn.execute("INSERT INTO sessions (session_id, workspace_id, surface_id, attached_at) VALUES ('s1', 'WS', 'SF', 1)", []).unwrap();
    }
    let out = Store::open(&path).unwrap();
    let old = out.notice("local:A").unwrap().unwrap();
    assert_eq!((old.title.as_str(), old.workspace_id.as_deref(), old.place.as_ref()), ("Old", Some("WS"), None));
    let shown = out.session_shown("s1").unwrap().unwrap();
    assert_eq!((shown.workspace_id.as_deref(), shown.surface_id.as_deref(), shown.place.as_ref()), (Some("WS"), Some("SF"), None));
    // A report by place alone, and a notice with a place, after the migration.
    let place = crate::place::Place {
        tmux: Some(crate::place::TmuxPane { socket: "/tmp/t".into(), session: None, window: None, pane: "%3".into() }),
        ..Default::default()
    };
    out.attach_session("s2", &SessionShown { place: Some(place.clone()), ..Default::default() }, 2).unwrap();
    assert_eq!(out.session_shown("s2").unwrap().unwrap().place, Some(place.clone()));
    let post = crate::notice::local::LocalPost { title: "New".into(), place: Some(place.clone()), ..Default::default() };
    assert!(out.record_notice(&crate::notice::local::local_notice(&crate::lang::Lang::english(), &post, "B"), 3).unwrap());
    assert_eq!(out.notice("local:B").unwrap().unwrap().place, Some(place));
}

/// The account's problem was an English sentence until schema 8; each sentence the app wrote
/// reads back as its kind, said in the person's language where it is shown.
#[test]
fn an_account_problem_stored_as_a_sentence_reads_back_as_its_kind() {
    use crate::store::AccountProblem;
    let sentences = [
        ("The cloud refused the access token: sign in again.", AccountProblem::TokenRefused),
        ("The cloud refused CMUX_TRAY_TOKEN: sign in again.", AccountProblem::EnvTokenRefused),
        (
            "The saved sign-in was not found in the keyring (Secret Service): sign in again.",
            AccountProblem::NotFound { kept: "the keyring (Secret Service)".into() },
        ),
        (
            "The saved sign-in is for https://cmux.example, and the settings now name http://127.0.0.1:9: sign in again.",
            AccountProblem::OtherCloud { from: "https://cmux.example".into(), here: "http://127.0.0.1:9".into() },
        ),
    ];
    for (sentence, kind) in sentences {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite3");
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            for sql in &schema::MIGRATIONS[..7] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 7).unwrap();
            conn.execute(
                "INSERT INTO account (only, user_id, email, team, signed_in_at, problem) VALUES (1, 'u', 'a@example.com', NULL, 1, ?1)",
                [sentence],
            )
            .unwrap();
        }
        let out = Store::open(&path).unwrap();
        let problem = out.account().unwrap().unwrap().problem.unwrap();
        assert_eq!(problem, kind);
        assert_eq!(problem.to_string(), sentence, "the whole story as it was");
    }
}

/// Every stored word: the words docs/notices.md names, each through SQLite and JSON and back
/// as itself; a word no variant names is an error naming the type and the word.
#[test]
fn every_state_source_kind_and_reason_round_trips_through_sqlite_and_json() {
    use std::fmt::Debug;

    use rusqlite::ToSql;
    use rusqlite::types::FromSql;
    use serde::de::DeserializeOwned;

    fn round_trip<T>(conn: &Connection, all: &[T], words: &[&str])
    where
        T: ToSql + FromSql + Serialize + DeserializeOwned + PartialEq + Debug + Copy,
    {
        assert_eq!(all.len(), words.len(), "{all:?}");
        for (value, word) in all.iter().zip(words) {
            let stored: String = conn.query_row("SELECT ?1", [value], |r| r.get(0)).unwrap();
            assert_eq!(stored, *word);
            let back: T = conn.query_row("SELECT ?1", [word], |r| r.get(0)).unwrap();
            assert_eq!(back, *value);
            let json = serde_json::to_string(value).unwrap();
            assert_eq!(json, format!("{word:?}"));
            assert_eq!(serde_json::from_str::<T>(&json).unwrap(), *value);
        }
    }
    let conn = Connection::open_in_memory().unwrap();
    round_trip(&conn, NoticeState::ALL, &["untold", "told", "silent"]);
    round_trip(&conn, Source::ALL, &["run", "handoff", "local", "app"]);
    round_trip(&conn, FollowKind::ALL, &["run", "handoff"]);
    round_trip(&conn, Reason::ALL, &["shown", "banners off", "paused", "quiet hours", "focused", "coalesced", "not shown"]);

    let unknown = conn.query_row("SELECT 'lost'", [], |r| r.get::<_, NoticeState>(0)).unwrap_err().to_string();
    assert!(unknown.contains(r#""lost" is not a NoticeState (one of "untold", "told", "silent")"#), "{unknown}");
    let unknown = serde_json::from_str::<Reason>(r#""asleep""#).unwrap_err().to_string();
    assert!(unknown.contains(r#""asleep" is not a Reason"#), "{unknown}");
}

/// The store's own columns take every word: a notice in each state and with each reason reads
/// back as it was written (the schema's CHECK and the queries' spelled-out words agree).
#[test]
fn the_store_keeps_every_state_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let out = Store::open(&dir.path().join("state.sqlite3")).unwrap();
    for (i, reason) in Reason::ALL.iter().enumerate() {
        let key = format!("k{i}");
        out.record_notice(&notice(&key), 1).unwrap();
        assert_eq!(out.notice(&key).unwrap().unwrap().state, NoticeState::Untold);
        out.mark_told(&key, None, *reason, false, 2).unwrap();
        let told = out.notice(&key).unwrap().unwrap();
        assert_eq!((told.state, told.delivery, told.source()), (NoticeState::Told, Some(*reason), Source::Run));
    }
    let step = HandoffStep { id: "ho_x", version: 1, notice: Some(&notice("silent")), silent: true, closes: false };
    out.record_handoff(step, "acct", 3).unwrap();
    assert_eq!(out.notice("silent").unwrap().unwrap().state, NoticeState::Silent);
    let held = out.held_unsummarized().unwrap();
    assert_eq!(held.iter().map(|n| n.delivery).collect::<Vec<_>>(), [Some(Reason::Paused), Some(Reason::QuietHours)]);
}

#[test]
fn a_follow_asked_from_here_marks_an_item_already_followed_made_here() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state.sqlite3")).unwrap();
    // Found in the cloud's list first, then the hand-over's own follow from this machine.
    assert!(store.add_follow(FollowKind::Handoff, "ho_1", "u1", 0, false, 5).unwrap());
    assert!(!store.add_follow(FollowKind::Handoff, "ho_1", "u1", 0, true, 6).unwrap());
    assert!(store.follow(FollowKind::Handoff, "ho_1").unwrap().unwrap().made_here);
    // A later follow from elsewhere takes nothing back.
    assert!(!store.add_follow(FollowKind::Handoff, "ho_1", "u1", 0, false, 7).unwrap());
    assert!(store.follow(FollowKind::Handoff, "ho_1").unwrap().unwrap().made_here);
}
