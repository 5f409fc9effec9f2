//! A pipelining client's answers never sit whole in memory (docs/local-socket.md, "Pipelining"):
//! 16 `notification.list` asked together over notices with long bodies are written out as they
//! are ready, not all built before one write.
//!
//! This test binary counts every allocation (`peak`, its global allocator), so it measures the heap
//! the engine holds at its highest while answering.

use cmux_tray_engine::desktop::Recording;
use cmux_tray_engine::local::endpoint;
use cmux_tray_engine::local::{self, ServerOptions};
use cmux_tray_engine::{Engine, EngineOptions};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

mod peak;

const NOTICES: usize = 300;
const BODY: usize = 60_000;
const LISTS: usize = 16;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_asked_together_are_written_as_they_are_ready() {
    let dir = tempfile::tempdir().unwrap();
    let desktop = std::sync::Arc::new(Recording::new());
    let opts = EngineOptions::new("http://127.0.0.1:9", "http://127.0.0.1:9", dir.path().join("state.sqlite3"), desktop);
    let engine = Engine::start(opts).await.unwrap();
    let socket = if cfg!(windows) {
        format!(r"\\.\pipe\cmux-tray-test-replies-{}", std::process::id()).into()
    } else {
        dir.path().join("run/cmux.sock")
    };
    let listener = local::bind(&socket).await.unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    tokio::spawn(local::serve(listener, engine.clone(), ServerOptions::default(), stop.clone(), Default::default()));

    let (read, mut write) = tokio::io::split(endpoint::connect(&socket).await.unwrap());
    let mut read = BufReader::new(read);
    let body = "x".repeat(BODY);
    for i in 0..NOTICES {
        let line = json!({"id": i, "method": "notification.create", "params": {"title": format!("Long {i}"), "body": body}});
        write.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        let mut reply = String::new();
        read.read_line(&mut reply).await.unwrap();
        assert!(reply.contains("\"ok\":true"), "{reply}");
    }

    // Read as they come, counted and dropped, while the server writes.
    let reader = tokio::spawn(async move {
        let (mut lines, mut bytes, mut line) = (0, 0, String::new());
        while lines < LISTS {
            line.clear();
            bytes += read.read_line(&mut line).await.unwrap();
            assert!(line.contains("\"ok\":true"), "{}", &line[..line.len().min(200)]);
            lines += 1;
        }
        bytes
    });
    let before = peak::start();
    let asks: String =
        (0..LISTS).map(|i| format!("{}\n", json!({"id": 1000 + i, "method": "notification.list", "params": {"limit": 5000}}))).collect();
    write.write_all(asks.as_bytes()).await.unwrap();
    let bytes = reader.await.unwrap();
    let peak = peak::rose_since(before);
    let one = bytes / LISTS;
    println!("{LISTS} lists of {} MiB each asked together; the heap rose at most {} MiB", one >> 20, peak >> 20);
    // A few answers at a time (one built as rows, as JSON and as text, then written; the test's
    // own reader holds one more), never all of them together: all 16 built first were 855 MiB
    // here (50 answers' worth).
    assert!(peak < 12 * one, "{} MiB held for {LISTS} answers of {} MiB", peak >> 20, one >> 20);
    stop.cancel();
}
