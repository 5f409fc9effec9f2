//! A list answer cannot exhaust memory (docs/cloud-api.md, "A bad entry in a list"): a server
//! that answers every page of the hand-off list with 4 MiB of `[0,0,…]` and a new cursor, for
//! ever, costs the client one page and a bounded list of problems.
//!
//! This test binary counts every allocation (`peak`, its global allocator), so it measures the heap
//! the client holds at its highest while reading.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use cmux_tray_engine::cloud::client::PAGE_CAP;
use cmux_tray_engine::cloud::{CloudClient, Credentials, Network};
use secrecy::SecretString;

mod peak;

/// docs/cloud-api.md, "Lists": at most 20,000 entries, 20 of the unreadable kept with why.
const LIST_ITEMS_CAP: usize = 20_000;
const LIST_PROBLEMS_KEPT: usize = 20;

/// Serves every request on loopback (HTTP/1.1) with a page just under the client's cap: zeros
/// where hand-offs belong, and a cursor that moves on, so the client could read 200 pages.
fn hostile_list_server() -> (String, std::sync::Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let pages = std::sync::Arc::new(AtomicUsize::new(0));
    let served = pages.clone();
    std::thread::spawn(move || {
        let zeros = "0,".repeat((PAGE_CAP - 64) / 2);
        for mut conn in listener.incoming().flatten() {
            let served = served.clone();
            let zeros = zeros.clone();
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                loop {
                    while !head.ends_with(b"\r\n\r\n") {
                        if conn.read(&mut byte).unwrap_or(0) == 0 {
                            return;
                        }
                        head.push(byte[0]);
                    }
                    head.clear();
                    let n = served.fetch_add(1, Ordering::Relaxed);
                    let body = format!("{{\"handoffs\":[{zeros}0],\"nextCursor\":\"c{n}\"}}");
                    let answer = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
                    if conn.write_all(answer.as_bytes()).and_then(|_| conn.write_all(body.as_bytes())).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (origin, pages)
}

#[tokio::test]
async fn pages_of_zeros_for_ever_cost_one_page_and_a_bounded_list_of_problems() {
    let (origin, pages) = hostile_list_server();
    let client = CloudClient::new(&origin, &origin, &Network::default()).unwrap();
    let cred = Credentials { access_token: SecretString::from("t0ken"), team: None };
    let before = peak::start();
    let listing = client.list_handoffs(&cred).await.expect("a list, with its problems");
    let peak = peak::rose_since(before);
    let (items, problems) = listing.into_parts();
    println!(
        "read {} page(s) of {} KiB; heap at most {} KiB above the start; {} problems kept",
        pages.load(Ordering::Relaxed),
        PAGE_CAP / 1024,
        peak / 1024,
        problems.len()
    );
    assert!(items.is_empty());
    assert_eq!(pages.load(Ordering::Relaxed), 1, "no page is asked for once the list holds {LIST_ITEMS_CAP} entries");
    assert_eq!(problems.len(), LIST_PROBLEMS_KEPT + 2, "{problems:#?}");
    assert!(problems[0].starts_with("hand-off list page 1, entry 1: invalid type"), "{}", problems[0]);
    assert_eq!(problems[LIST_PROBLEMS_KEPT], format!("and {} more entries could not be read", LIST_ITEMS_CAP - LIST_PROBLEMS_KEPT));
    let left = (PAGE_CAP - 64) / 2 + 1 - LIST_ITEMS_CAP;
    assert_eq!(problems[LIST_PROBLEMS_KEPT + 1], format!("{left} entries past the first {LIST_ITEMS_CAP} were not read"));
    // The page itself (4 MiB) and the HTTP client's buffers; never the page as JSON values
    // (2 million of them, 64 MiB), let alone a problem for each.
    assert!(peak < 24 * 1024 * 1024, "the client held {} MiB while reading", peak / (1024 * 1024));
}
