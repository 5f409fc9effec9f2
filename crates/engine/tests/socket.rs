//! cmux's socket protocol, byte for byte, against the real socket served by an engine: a Unix
//! socket, or on Windows the named pipe (the same tests, through `local::endpoint`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cmux_tray_engine::desktop::Recording;
use cmux_tray_engine::local::endpoint::{self, ClientStream};
use cmux_tray_engine::local::{self, ServerOptions};
use cmux_tray_engine::{Engine, EngineOptions};
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, ReadHalf, WriteHalf};
use tokio_util::sync::CancellationToken;

struct Served {
    _dir: tempfile::TempDir,
    socket: PathBuf,
    engine: Engine,
    desktop: Arc<Recording>,
    stop: CancellationToken,
    server: tokio::task::JoinHandle<()>,
}

async fn serve(password: Option<&str>) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let desktop = Arc::new(Recording::new());
    // Not signed in: the cloud is never asked; the socket needs none of it.
    let opts = EngineOptions::new("http://127.0.0.1:9", "http://127.0.0.1:9", dir.path().join("state.sqlite3"), desktop.clone());
    let engine = Engine::start(opts).await.unwrap();
    let socket = place(dir.path());
    let listener = local::bind(&socket).await.unwrap();
    let stop = CancellationToken::new();
    let options = ServerOptions { password: password.map(|p| SecretString::from(p.to_string())) };
    let server = tokio::spawn(local::serve(listener, engine.clone(), options, stop.clone(), Default::default()));
    Served { _dir: dir, socket, engine, desktop, stop, server }
}

/// Where a test serves: a socket in its own temporary folder, or on Windows a pipe named after
/// that folder (pipes live in one namespace, so each test needs a name of its own).
fn place(dir: &Path) -> PathBuf {
    if cfg!(windows) {
        PathBuf::from(format!(r"\\.\pipe\cmux-tray-test-{}", dir.file_name().unwrap().to_string_lossy()))
    } else {
        dir.join("run/cmux.sock")
    }
}

struct Client {
    reader: BufReader<ReadHalf<ClientStream>>,
    writer: WriteHalf<ClientStream>,
}

impl Client {
    async fn connect(s: &Served) -> Client {
        let (r, w) = tokio::io::split(endpoint::connect(&s.socket).await.unwrap());
        Client { reader: BufReader::new(r), writer: w }
    }

    async fn send(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).await.unwrap();
    }

    async fn line(&mut self) -> String {
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(5), self.reader.read_line(&mut line)).await.expect("a reply").unwrap();
        line
    }

    /// One request line, one reply line.
    async fn ask(&mut self, request: &str) -> String {
        self.send(&format!("{request}\n")).await;
        self.line().await
    }

    async fn ask_json(&mut self, request: Value) -> Value {
        serde_json::from_str(&self.ask(&request.to_string()).await).unwrap()
    }

    /// True when the server closed the connection.
    async fn closed(&mut self) -> bool {
        let mut buf = Vec::new();
        matches!(tokio::time::timeout(Duration::from_secs(5), self.reader.read_to_end(&mut buf)).await, Ok(Ok(_)))
    }
}

async fn settle(s: &Served, banners: usize) {
    for _ in 0..200 {
        if s.desktop.posted().len() >= banners {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("expected {banners} banners, got {:?}", s.desktop.posted());
}

#[tokio::test]
async fn v1_ping_and_notify_in_every_shape() {
    let s = serve(None).await;
    let mut c = Client::connect(&s).await;
    assert_eq!(c.ask("ping").await, "PONG\n");
    assert_eq!(c.ask("list_notifications").await, "No notifications\n");
    for payload in ["a|b|c", "a|b", "a", "|b|c"] {
        assert_eq!(c.ask(&format!("notify {payload}")).await, "OK\n", "{payload}");
    }
    settle(&s, 4).await;
    let words: Vec<(String, String)> = s.desktop.posted().into_iter().map(|(_, b)| (b.title, b.body)).collect();
    assert_eq!(
        words,
        [("a".into(), "b — c".into()), ("a".into(), "b".into()), ("a".into(), "".into()), ("Notification".into(), "b — c".into())]
    );
    c.send("list_notifications\n").await;
    let mut lines = Vec::new();
    for _ in 0..4 {
        lines.push(c.line().await);
    }
    let fields: Vec<Vec<String>> = lines.iter().map(|l| l.trim_end().split('|').map(String::from).collect()).collect();
    assert!(fields[0][0].starts_with("0:") && fields[0][0].len() == 2 + 36, "{lines:?}");
    assert_eq!(fields[0][1..], ["none", "none", "unread", "a", "b", "c"]);
    assert_eq!(fields[1][4..], ["a", "", "b"]);
    assert_eq!(fields[2][4..], ["a", "", ""]);
    assert_eq!(fields[3][4..], ["Notification", "b", "c"]);
    let ws = "D9C269B8-1A2B-4C3D-8E9F-0123456789AB";
    assert_eq!(c.ask(&format!("notify_target {ws} B9DD280A-0000-0000-0000-000000000001 Built|proj|ok")).await, "OK\n");
    assert_eq!(c.ask("notify_target onlyone").await, "ERROR: Usage: notify_target <workspace_id> <surface_id> <title>|<subtitle>|<body>\n");
    assert_eq!(c.ask("frobnicate").await, "ERROR: Unknown command\n");
    assert_eq!(c.ask("auth secret").await, "OK: Authentication not required\n");
    assert_eq!(c.ask("clear_notifications").await, "OK\n");
    assert_eq!(c.ask("list_notifications").await, "No notifications\n");
    s.stop.cancel();
}

#[tokio::test]
async fn v2_methods_and_their_exact_replies() {
    let s = serve(None).await;
    let mut c = Client::connect(&s).await;
    assert_eq!(c.ask(r#"{"id":1,"method":"system.ping"}"#).await, "{\"id\":1,\"ok\":true,\"result\":{\"pong\":true}}\n");
    assert_eq!(c.ask(r#"{"id":"x","method":"system.ping","params":{}}"#).await, "{\"id\":\"x\",\"ok\":true,\"result\":{\"pong\":true}}\n");

    let bare = c.ask_json(json!({"id": 2, "method": "notification.create_for_caller", "params": {"title": "Done"}})).await;
    assert_eq!(bare["ok"], true);
    assert_eq!((bare["result"]["workspace_id"].clone(), bare["result"]["surface_id"].clone()), (Value::Null, Value::Null));
    assert_eq!(bare["result"]["id"].as_str().unwrap().len(), 36);
    let ws = "D9C269B8-1A2B-4C3D-8E9F-0123456789AB";
    let sf = "B9DD280A-0000-0000-0000-000000000001";
    let with = c
        .ask_json(json!({"id": 3, "method": "notification.create_for_caller",
            "params": {"title": "Tests", "subtitle": "parser", "body": "green", "preferred_workspace_id": ws,
                       "preferred_surface_id": sf, "caller_tty": "/dev/pts/3", "prefer_tty": false}}))
        .await;
    assert_eq!((with["result"]["workspace_id"].as_str(), with["result"]["surface_id"].as_str()), (Some(ws), Some(sf)));
    let made = c.ask_json(json!({"id": 4, "method": "notification.create", "params": {"workspace_id": ws}})).await;
    assert_eq!(made["result"]["workspace_id"], ws);

    let list = c.ask_json(json!({"id": 5, "method": "notification.list"})).await;
    let items = list["result"]["notifications"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(items[1]["title"], "Tests");
    assert_eq!(items[1]["subtitle"], "parser");
    assert_eq!(items[1]["body"], "green");
    assert_eq!(items[1]["is_read"], false);
    assert_eq!(items[2]["title"], "Notification", "title defaults");
    assert!(items[0]["created_at"].as_str().unwrap().ends_with('Z'));
    let id = items[1]["id"].clone();
    let r = c.ask_json(json!({"id": 6, "method": "notification.mark_read", "params": {"id": id}})).await;
    assert_eq!(r["result"]["marked_read"], 1);
    let r = c.ask_json(json!({"id": 7, "method": "notification.mark_read", "params": {"id": "nope"}})).await;
    assert_eq!(r["error"]["code"], "not_found");
    let r = c.ask_json(json!({"id": 8, "method": "notification.mark_read", "params": {"all": true}})).await;
    assert_eq!(r["result"]["marked_read"], 2);
    let r = c.ask_json(json!({"id": 9, "method": "notification.create", "params": {"title": 7}})).await;
    assert_eq!(r["error"]["code"], "invalid_params");
    let r = c
        .ask_json(json!({"id": 10, "method": "session.attach", "params": {"session_id": "sess_1", "workspace_id": ws, "surface_id": sf}}))
        .await;
    assert_eq!(r["result"], json!({}));
    let shown = s.engine.store().session_shown("sess_1").unwrap().unwrap();
    assert_eq!((shown.workspace_id.as_deref(), shown.surface_id.as_deref(), shown.place), (Some(ws), Some(sf), None));
    let r =
        c.ask_json(json!({"id": 11, "method": "surface.focus", "params": {"workspace_id": ws, "surface_id": sf, "focused": true}})).await;
    assert_eq!(r["ok"], true);
    assert!(s.engine.is_focused(ws, Some(sf)));
    let r = c.ask_json(json!({"id": 12, "method": "system.capabilities"})).await;
    assert!(r["result"]["methods"].as_array().unwrap().contains(&json!("notification.create_for_caller")));
    let r = c.ask_json(json!({"id": 13, "method": "cloud.follow", "params": {"kind": "run", "id": "run_../x"}})).await;
    assert_eq!(r["error"]["code"], "invalid_params");
    let r = c.ask_json(json!({"id": 14, "method": "notification.clear"})).await;
    assert_eq!(r, json!({"id": 14, "ok": true, "result": {}}));
    s.stop.cancel();
}

#[tokio::test]
async fn decoding_errors_and_unknown_methods() {
    let s = serve(None).await;
    let mut c = Client::connect(&s).await;
    let r: Value = serde_json::from_str(&c.ask("{not json").await).unwrap();
    assert_eq!((r["ok"].clone(), r["error"]["code"].clone(), r.get("id")), (json!(false), json!("parse_error"), None));
    let r: Value = serde_json::from_str(&c.ask("[]").await).unwrap();
    assert_eq!((r["error"]["code"].clone(), r.get("id")), (json!("invalid_request"), None));
    let r = c.ask_json(json!({"id": 42, "params": {}})).await;
    assert_eq!((r["error"]["code"].clone(), r["id"].clone()), (json!("invalid_request"), json!(42)));
    let r = c.ask_json(json!({"id": "q", "method": "no.such"})).await;
    assert_eq!((r["error"]["code"].clone(), r["id"].clone()), (json!("method_not_found"), json!("q")));
    // Replies never contain a raw newline.
    let r = c.ask(&json!({"id": 1, "method": "notification.create", "params": {"title": "a\nb", "body": "c\nd"}}).to_string()).await;
    assert_eq!(r.matches('\n').count(), 1);
    s.stop.cancel();
}

#[tokio::test]
async fn five_requests_pipelined_in_one_write_are_answered_in_order() {
    let s = serve(None).await;
    let mut c = Client::connect(&s).await;
    c.send(concat!(
        "ping\n",
        "{\"id\":1,\"method\":\"system.ping\"}\n",
        "notify one|two|three\n",
        "{\"id\":2,\"method\":\"no.such\"}\n",
        "{\"id\":3,\"method\":\"notification.list\"}\n",
    ))
    .await;
    assert_eq!(c.line().await, "PONG\n");
    assert!(c.line().await.starts_with("{\"id\":1,\"ok\":true"));
    assert_eq!(c.line().await, "OK\n");
    assert!(c.line().await.contains("method_not_found"));
    let last: Value = serde_json::from_str(&c.line().await).unwrap();
    assert_eq!(last["id"], 3);
    assert_eq!(last["result"]["notifications"][0]["title"], "one");
    s.stop.cancel();
}

#[tokio::test]
async fn notices_pipelined_together_share_one_commit_and_each_is_answered_in_its_place() {
    let s = serve(None).await;
    let mut c = Client::connect(&s).await;
    let create = |id: u32, title: Value| json!({"id": id, "method": "notification.create", "params": {"title": title}}).to_string();
    let before = s.engine.store().grouped_commits();
    // One write: notices, one with a bad title among them (answered where it was asked, and
    // saving nothing), a bad notify_target, then a list that must see every notice before it.
    let lines = [
        "notify one".to_string(),
        create(2, json!("two")),
        create(3, json!(5)),
        "notify_target".to_string(),
        "notify_target ws sf four".to_string(),
        json!({"id": 6, "method": "notification.list"}).to_string(),
        "notify five".to_string(),
    ];
    c.send(&(lines.join("\n") + "\n")).await;
    assert_eq!(c.line().await, "OK\n");
    let two: Value = serde_json::from_str(&c.line().await).unwrap();
    assert_eq!((two["id"].clone(), two["ok"].clone()), (json!(2), json!(true)));
    let three: Value = serde_json::from_str(&c.line().await).unwrap();
    assert_eq!((three["id"].clone(), three["error"]["code"].clone()), (json!(3), json!("invalid_params")));
    assert!(c.line().await.starts_with("ERROR: Usage: notify_target"));
    assert_eq!(c.line().await, "OK\n");
    let list: Value = serde_json::from_str(&c.line().await).unwrap();
    let titles: Vec<&str> = list["result"]["notifications"].as_array().unwrap().iter().map(|n| n["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["one", "two", "four"]);
    assert_eq!(c.line().await, "OK\n");
    // The three before the list in one commit, the one after it in another.
    assert_eq!(s.engine.store().grouped_commits() - before, 2);
    assert_eq!(s.engine.local_notices(10).unwrap().len(), 4);
    s.stop.cancel();
}

#[tokio::test]
async fn a_one_mebibyte_line_is_refused_and_others_are_still_served() {
    let s = serve(None).await;
    let mut big = Client::connect(&s).await;
    let mut other = Client::connect(&s).await;
    let line = format!("notify {}\n", "x".repeat(1024 * 1024));
    // The server stops reading at the limit, so write from another task.
    let (mut reader, mut writer) = (big.reader, big.writer);
    tokio::spawn(async move {
        let _ = writer.write_all(line.as_bytes()).await;
    });
    let mut reply = String::new();
    reader.read_line(&mut reply).await.unwrap();
    assert_eq!(reply, "ERROR: Line too long (limit 64 KiB)\n");
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), reader.read_to_end(&mut rest)).await.expect("closed");
    assert_eq!(other.ask("ping").await, "PONG\n");
    assert!(s.desktop.posted().is_empty());
    big = Client::connect(&s).await;
    assert_eq!(big.ask("ping").await, "PONG\n");
    s.stop.cancel();
}

/// docs/local-socket.md: "A line longer than 64 KiB (its `\n` aside) is refused".
#[tokio::test]
async fn a_line_of_64_kib_is_served_and_one_byte_more_is_refused() {
    const LIMIT: usize = 64 * 1024;
    let s = serve(None).await;
    let mut c = Client::connect(&s).await;
    let exactly = format!("notify a|{}", "x".repeat(LIMIT - "notify a|".len()));
    assert_eq!(exactly.len(), LIMIT);
    assert_eq!(c.ask(&exactly).await, "OK\n");
    let (mut reader, mut writer) = (c.reader, c.writer);
    tokio::spawn(async move {
        let _ = writer.write_all(format!("{exactly}x\n").as_bytes()).await;
    });
    let mut reply = String::new();
    reader.read_line(&mut reply).await.unwrap();
    assert_eq!(reply, "ERROR: Line too long (limit 64 KiB)\n");
    settle(&s, 1).await;
    s.stop.cancel();
}

/// docs/local-socket.md: bytes that are not UTF-8 are read as U+FFFD and the notice still arrives.
#[tokio::test]
async fn a_line_that_is_not_utf8_still_makes_its_banner() {
    let s = serve(None).await;
    let mut c = Client::connect(&s).await;
    c.writer.write_all(b"notify Build \xff done|ok\nping\n").await.unwrap();
    assert_eq!(c.line().await, "OK\n");
    assert_eq!(c.line().await, "PONG\n");
    settle(&s, 1).await;
    assert_eq!(s.desktop.posted()[0].1.title, "Build \u{fffd} done");
    s.stop.cancel();
}

#[tokio::test]
async fn a_client_that_sends_nothing_does_not_hold_up_another() {
    let s = serve(None).await;
    let _silent: Vec<ClientStream> = futures_join(&s, 20).await;
    let mut c = Client::connect(&s).await;
    let start = std::time::Instant::now();
    assert_eq!(c.ask("ping").await, "PONG\n");
    assert!(start.elapsed() < Duration::from_secs(2));
    s.stop.cancel();
}

async fn futures_join(s: &Served, n: usize) -> Vec<ClientStream> {
    let mut v = Vec::new();
    for _ in 0..n {
        v.push(endpoint::connect(&s.socket).await.unwrap());
    }
    v
}

#[tokio::test]
async fn password_mode_with_right_and_wrong_passwords() {
    let s = serve(Some("hunter2")).await;
    let mut c = Client::connect(&s).await;
    assert_eq!(c.ask("ping").await, "ERROR: Authentication required\n");
    let r = c.ask_json(json!({"id": 1, "method": "system.ping"})).await;
    assert_eq!(r["error"]["code"], "auth_required");
    assert_eq!(c.ask("auth wrong").await, "ERROR: Invalid password\n");
    assert_eq!(c.ask("auth hunter2").await, "OK: Authenticated\n");
    assert_eq!(c.ask("ping").await, "PONG\n");
    // Sent together with the password: what follows it is answered as authorised, and what
    // precedes it is not.
    let mut piped = Client::connect(&s).await;
    piped.send("notify before\nauth hunter2\nnotify after\n").await;
    assert_eq!(piped.line().await, "ERROR: Authentication required\n");
    assert_eq!(piped.line().await, "OK: Authenticated\n");
    assert_eq!(piped.line().await, "OK\n");
    let titles: Vec<String> = s.engine.local_notices(10).unwrap().into_iter().map(|n| n.title).collect();
    assert_eq!(titles, ["after"]);
    let mut v2 = Client::connect(&s).await;
    let r = v2.ask_json(json!({"id": 1, "method": "auth.login", "params": {"password": "nope"}})).await;
    assert_eq!(r["error"]["code"], "auth_failed");
    let r = v2.ask_json(json!({"id": 2, "method": "auth.login", "params": {"password": "hunter2"}})).await;
    assert_eq!(r["result"]["authenticated"], true);
    let r = v2.ask_json(json!({"id": 3, "method": "notification.create", "params": {"title": "in"}})).await;
    assert_eq!(r["ok"], true);
    // The client library authenticates first when given the password.
    let ok = local::request(&s.socket, &local::requests::Ping, Some("hunter2"), Duration::from_secs(2)).await;
    assert_eq!(ok.unwrap(), json!({"pong": true}));
    let bad = local::request(&s.socket, &local::requests::Ping, Some("x"), Duration::from_secs(2)).await;
    assert!(bad.unwrap_err().to_string().contains("auth_failed"));
    s.stop.cancel();
}

#[tokio::test(start_paused = true)]
async fn before_authorisation_a_connection_gets_two_seconds() {
    let s = serve(Some("hunter2")).await;
    let mut c = Client::connect(&s).await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(c.line().await, "ERROR: Authentication timed out\n");
    assert!(c.closed().await);
    s.stop.cancel();
}

#[tokio::test]
#[cfg(unix)] // a uid and setpriv; on Windows the pipe's ACL keeps other users out
async fn a_peer_of_another_uid_is_refused() {
    // Never a silent pass: without root the peer cannot run as another user, and the test says so.
    assert_eq!(
        rustix::process::getuid().as_raw(),
        0,
        "this test runs a socket peer as another user (setpriv), which needs root; CI and scripts/test run as root"
    );
    let s = serve(None).await;
    // Let the other user reach the socket at all, so the peer check is what refuses it.
    use std::os::unix::fs::PermissionsExt;
    // The socket's folder and the test's own temporary folder: never the shared /tmp above them
    // (once /tmp itself was set 0711 here, and apt could no longer make its temporary files).
    for dir in s.socket.ancestors().skip(1).take(2) {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    std::fs::set_permissions(&s.socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let socket = s.socket.clone();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c"])
            .arg(concat!(
                "import socket,sys\n",
                "s=socket.socket(socket.AF_UNIX)\n",
                "s.connect(sys.argv[1])\n",
                "s.settimeout(5)\n",
                "try:\n  s.sendall(b'ping\\n'); data=s.recv(100)\n",
                "except (BrokenPipeError, ConnectionResetError):\n  data=b''\n",
                "print(repr(data))\n",
            ))
            .arg(&socket)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "b''", "closed without a byte of reply");
    // The owner is still served.
    assert_eq!(Client::connect(&s).await.ask("ping").await, "PONG\n");
    s.stop.cancel();
}

#[tokio::test]
async fn a_live_socket_is_not_stolen_and_the_server_stops_when_asked() {
    let s = serve(None).await;
    let err = local::bind(&s.socket).await.unwrap_err();
    assert!(err.to_string().contains("another cmux-tray is serving"), "{err}");
    assert_eq!(Client::connect(&s).await.ask("ping").await, "PONG\n");
    s.stop.cancel();
    s.server.await.unwrap();
}

#[tokio::test]
#[cfg(unix)] // a pipe leaves no file behind to go stale
async fn a_stale_socket_is_replaced() {
    let s = serve(None).await;
    // A socket file left by a crash (nobody listening) is replaced.
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let stale = dir.path().join("cmux.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    assert!(stale.exists());
    let _listener = local::bind(&stale).await.expect("replaced");
    assert_eq!(std::fs::metadata(&stale).unwrap().permissions().mode() & 0o777, 0o600);
    s.stop.cancel();
}

#[tokio::test]
#[cfg(unix)] // files and folder modes; a pipe's name is no path on disk
async fn a_mistyped_socket_path_deletes_nothing_and_a_shared_folder_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    // A regular file where the socket would go (socket_path pointing at a document).
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    let err = local::bind(&file).await.unwrap_err().to_string();
    assert!(err.contains("not a socket") && err.contains("notes.txt"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine", "the file is untouched");
    // A folder others may enter (as /tmp is): refused, named, nothing made in it.
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let err = local::bind(&shared.join("cmux.sock")).await.unwrap_err().to_string();
    assert!(err.contains("others may enter it (mode 1777)") && err.contains("shared"), "{err}");
    assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);
    // A missing folder is made 0700.
    let made = dir.path().join("a/b/cmux.sock");
    drop(local::bind(&made).await.unwrap());
    assert_eq!(std::fs::metadata(made.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
}

#[tokio::test]
#[cfg(unix)] // a pipe leaves no file behind
async fn stopping_removes_our_socket_but_not_one_another_process_put_there_since() {
    let s = serve(None).await;
    s.stop.cancel();
    s.server.await.unwrap();
    assert!(!s.socket.exists(), "our own socket is removed at stop");
    // Another engine took the path over while this one still ran: its socket stays.
    let s = serve(None).await;
    std::fs::remove_file(&s.socket).unwrap();
    let _theirs = std::os::unix::net::UnixListener::bind(&s.socket).unwrap();
    s.stop.cancel();
    s.server.await.unwrap();
    assert!(s.socket.exists(), "another process's socket is left alone");
}

#[tokio::test]
async fn past_256_connections_the_next_is_told_so_and_the_others_go_on() {
    let s = serve(None).await;
    let mut held = Vec::new();
    for _ in 0..256 {
        let mut c = Client::connect(&s).await;
        assert_eq!(c.ask("ping").await, "PONG\n");
        held.push(c);
    }
    let mut refused = Client::connect(&s).await;
    assert_eq!(refused.line().await, "ERROR: Too many connections (limit 256); try again when one has closed\n");
    assert!(refused.closed().await);
    assert_eq!(held[0].ask("ping").await, "PONG\n", "the others are unaffected");
    drop(held.pop());
    // Closed on the server's side once it read the end: then there is room for one more.
    let mut next = loop {
        let mut c = Client::connect(&s).await;
        c.send("ping\n").await;
        let line = c.line().await;
        if line == "PONG\n" {
            break c;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(next.ask("ping").await, "PONG\n");
    s.stop.cancel();
}

#[tokio::test]
async fn a_list_answers_with_the_newest_notices_up_to_its_limit() {
    let s = serve(None).await;
    let mut c = Client::connect(&s).await;
    for i in 0..5 {
        let made = c.ask_json(json!({"id": i, "method": "notification.create", "params": {"title": format!("n{i}")}})).await;
        assert_eq!(made["ok"], true);
    }
    let list = c.ask_json(json!({"id": 9, "method": "notification.list", "params": {"limit": 2}})).await;
    let titles: Vec<&str> = list["result"]["notifications"].as_array().unwrap().iter().map(|n| n["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["n3", "n4"], "the newest two, oldest first");
    let bad = c.ask_json(json!({"id": 10, "method": "notification.list", "params": {"limit": 0}})).await;
    assert_eq!(bad["error"]["code"], "invalid_params");
    let marked = c.ask_json(json!({"id": 11, "method": "notification.mark_read", "params": {"id": "NOT-A-NOTICE"}})).await;
    assert_eq!(marked["error"]["code"], "not_found");
    s.stop.cancel();
}

#[tokio::test]
async fn a_long_body_is_listed_whole_though_its_banner_was_cut() {
    let s = serve(None).await;
    let mut c = Client::connect(&s).await;
    let body = "the parser suite passed ".repeat(12).trim_end().to_string(); // 287 characters
    let made = c
        .ask_json(json!({"id": 1, "method": "notification.create", "params": {"title": "Tests", "subtitle": "parser", "body": body}}))
        .await;
    assert_eq!(made["ok"], true, "{made}");
    let list = c.ask_json(json!({"id": 2, "method": "notification.list"})).await;
    let item = &list["result"]["notifications"][0];
    assert_eq!(item["body"], body.as_str(), "the body as sent, not the banner's cut one");
    assert_eq!(item["subtitle"], "parser");
    s.stop.cancel();
}

/// Saving a notice waits for the store (here another process holds its write lock for a while);
/// meanwhile the engine's one runtime thread goes on: another client's `ping` is answered at once,
/// and the notice is answered `OK` once it is saved. A save that held the runtime's thread (or
/// the connection a read on it needs) would hold every task, the `ping` with them.
#[cfg(unix)]
#[tokio::test(flavor = "current_thread")]
async fn a_save_waiting_for_the_store_holds_no_other_client_back() {
    let s = serve(None).await;
    let mut saver = Client::connect(&s).await;
    let mut pinger = Client::connect(&s).await;
    assert_eq!(pinger.ask("ping").await, "PONG\n");
    let db = s._dir.path().join("state.sqlite3");
    let (locked, release) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
    let holder = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(db).unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        locked.0.send(()).unwrap();
        let _ = release.1.recv_timeout(Duration::from_secs(10));
        conn.execute_batch("ROLLBACK").unwrap();
    });
    locked.1.recv().unwrap();
    // Timed from the save on: a runtime stalled by it delays the sleep as well as the ping.
    let asked = std::time::Instant::now();
    saver.send("notify Waits|for|the store\n").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(pinger.ask("ping").await, "PONG\n");
    let answered = asked.elapsed();
    release.0.send(()).unwrap();
    holder.join().unwrap();
    assert!(answered < Duration::from_millis(600), "a ping 100 ms after another client's save was answered {answered:?} after it");
    assert_eq!(saver.line().await, "OK\n", "the notice is saved once the store is free");
}

/// A socket another user serves where ours is looked for (a shared `/tmp` path, a mistyped
/// `socket_path`) hears nothing from a client: not a notice, not the password. The client asks
/// the kernel who serves the socket before it sends a byte.
#[tokio::test]
#[cfg(unix)] // a uid and setpriv; on Windows the client checks the pipe server's SID the same way
async fn a_client_sends_nothing_to_a_socket_another_user_serves() {
    assert_eq!(
        rustix::process::getuid().as_raw(),
        0,
        "this test serves a socket as another user (setpriv), which needs root; CI and scripts/test run as root"
    );
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let socket = dir.path().join("cmux.sock");
    let (path, heard) = (socket.clone(), dir.path().join("heard"));
    let fake = std::thread::spawn(move || {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c"])
            .arg(concat!(
                "import os,socket,sys\n",
                "s=socket.socket(socket.AF_UNIX)\n",
                "s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666); s.listen(1)\n",
                "open(sys.argv[2]+'.listening','w').close()\n",
                "c,_=s.accept(); c.settimeout(3)\n",
                "try:\n  data=c.recv(4096)\n",
                "except OSError:\n  data=b''\n",
                "open(sys.argv[2],'w').write(repr(data))\n",
            ))
            .arg(&path)
            .arg(&heard)
            .output()
            .unwrap()
    });
    // Connected only once it listens: a socket bound but not yet listening refuses.
    let listening = dir.path().join("heard.listening");
    for _ in 0..250 {
        if listening.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let asked =
        cmux_tray_engine::local::client::request(&socket, &cmux_tray_engine::local::requests::Ping, Some("s3cret"), Duration::from_secs(5))
            .await;
    let e = asked.unwrap_err().to_string();
    assert!(e.contains("served by another user"), "{e}");
    let out = fake.join().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(dir.path().join("heard")).unwrap(), "b''", "the fake server heard something");
}
