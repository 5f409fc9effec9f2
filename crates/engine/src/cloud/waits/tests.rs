//! Against real h2 servers on loopback, each told how to behave as a real front does: a low
//! stream limit, GOAWAY after some requests, streams reset, PINGs that stop being answered,
//! HTTP/1.1 only; and over TLS with ALPN.

use std::sync::atomic::AtomicUsize;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

use super::*;
use crate::cloud::proxy::Straight;

/// How a test server behaves.
#[derive(Clone, Default)]
struct Front {
    /// SETTINGS_MAX_CONCURRENT_STREAMS (h2's default, unlimited, when `None`).
    streams: Option<u32>,
    /// Answer only once released (a held wait), rather than at once.
    hold: bool,
    /// After this many requests on a connection, GOAWAY (as nginx's `keepalive_requests`).
    goaway_after: Option<usize>,
    /// Reset this many of the first streams with REFUSED_STREAM.
    refuse_first: usize,
}

/// What the server saw.
#[derive(Default)]
struct Seen {
    /// Requests being held right now, over all connections.
    held: AtomicUsize,
    /// The most ever held on one connection at once.
    most_on_one: AtomicUsize,
    connections: AtomicUsize,
    requests: AtomicUsize,
    release: Notify,
}

async fn serve(front: Front) -> (Url, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = Url::parse(&format!("http://127.0.0.1:{}/", listener.local_addr().unwrap().port())).unwrap();
    let seen = Arc::new(Seen::default());
    let refused = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            s.connections.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(connection(tcp, front.clone(), s.clone(), refused.clone()));
        }
    });
    (url, seen)
}

async fn connection<T>(io: T, front: Front, seen: Arc<Seen>, refused: Arc<AtomicUsize>)
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut builder = h2::server::Builder::new();
    if let Some(n) = front.streams {
        builder.max_concurrent_streams(n);
    }
    let Ok(mut conn) = builder.handshake::<_, Bytes>(io).await else { return };
    let on_this = Arc::new(AtomicUsize::new(0));
    let mut taken = 0;
    while let Some(Ok((_request, mut respond))) = conn.accept().await {
        taken += 1;
        seen.requests.fetch_add(1, Ordering::Relaxed);
        if refused.fetch_add(1, Ordering::Relaxed) < front.refuse_first {
            respond.send_reset(h2::Reason::REFUSED_STREAM);
            continue;
        }
        let (seen, on_this) = (seen.clone(), on_this.clone());
        let hold = front.hold;
        tokio::spawn(async move {
            if hold {
                seen.held.fetch_add(1, Ordering::Relaxed);
                let now = on_this.fetch_add(1, Ordering::Relaxed) + 1;
                seen.most_on_one.fetch_max(now, Ordering::Relaxed);
                seen.release.notified().await;
                on_this.fetch_sub(1, Ordering::Relaxed);
                seen.held.fetch_sub(1, Ordering::Relaxed);
            }
            if let Ok(mut body) = respond.send_response(http::Response::new(()), false) {
                let _ = body.send_data(Bytes::from_static(b"{}"), true);
            }
        });
        if front.goaway_after == Some(taken) {
            conn.graceful_shutdown();
        }
    }
}

fn waits(origin: &Url) -> Arc<WaitConnections> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let tls = rustls::ClientConfig::builder().with_root_certificates(rustls::RootCertStore::empty()).with_no_client_auth();
    Arc::new(WaitConnections::new(origin, Route::Straight(Straight::Loopback), &tls).unwrap())
}

fn spawn_waits(waits: &Arc<WaitConnections>, origin: &Url, n: usize) -> Vec<tokio::task::JoinHandle<Result<Answer, WaitFailed>>> {
    (0..n)
        .map(|_| {
            let (waits, url) = (waits.clone(), origin.join("v1/x/wait").unwrap());
            tokio::spawn(async move { waits.get(&url, &HeaderMap::new(), Duration::from_secs(25), 1024).await })
        })
        .collect()
}

/// Polls `cond` every 10 ms (of tokio's clock, paused in one test) for up to 30 s.
async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..3000 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("not within 30 s: {what}");
}

#[tokio::test]
async fn a_connection_carries_no_more_waits_than_the_server_allows_and_none_queues() {
    let (origin, seen) = serve(Front { streams: Some(16), hold: true, ..Default::default() }).await;
    let waits = waits(&origin);
    let held = spawn_waits(&waits, &origin, 40);
    until("all 40 held at the server at once", || seen.held.load(Ordering::Relaxed) == 40).await;
    assert_eq!(seen.most_on_one.load(Ordering::Relaxed), 16, "never more than the server's 16 on a connection");
    assert_eq!(waits.count(), 3, "16, 16 and 8");
    seen.release.notify_waiters();
    for wait in held {
        assert_eq!(wait.await.unwrap().unwrap().status, StatusCode::OK);
    }
    // Places given back are taken again: 40 more need no fourth connection.
    let again = spawn_waits(&waits, &origin, 40);
    until("40 more held", || seen.held.load(Ordering::Relaxed) == 40).await;
    assert_eq!(waits.count(), 3);
    seen.release.notify_waiters();
    for wait in again {
        wait.await.unwrap().unwrap();
    }
}

#[tokio::test]
async fn without_a_limit_from_the_server_a_connection_takes_100() {
    let (origin, seen) = serve(Front { hold: true, ..Default::default() }).await;
    let waits = waits(&origin);
    let held = spawn_waits(&waits, &origin, 250);
    until("all 250 held", || seen.held.load(Ordering::Relaxed) == 250).await;
    assert_eq!(seen.most_on_one.load(Ordering::Relaxed), WAITS_PER_CONNECTION);
    assert_eq!(waits.count(), 3);
    seen.release.notify_waiters();
    for wait in held {
        wait.await.unwrap().unwrap();
    }
}

#[tokio::test]
async fn after_a_goaway_every_wait_is_answered_on_another_connection_without_an_error() {
    let (origin, seen) = serve(Front { goaway_after: Some(5), ..Default::default() }).await;
    let waits = waits(&origin);
    let url = origin.join("v1/x/wait").unwrap();
    let started = Instant::now();
    for i in 0..40 {
        let answer = waits.get(&url, &HeaderMap::new(), Duration::from_secs(25), 1024).await;
        assert!(answer.is_ok(), "wait {i}: {:?}", answer.err());
    }
    assert!(seen.connections.load(Ordering::Relaxed) >= 8, "a connection each 5 requests");
    // Sent again at once, never backed off: 40 on loopback take well under one backoff (2 s).
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_refused_stream_is_sent_again_at_once_and_its_connection_kept() {
    let (origin, seen) = serve(Front { refuse_first: 2, ..Default::default() }).await;
    let waits = waits(&origin);
    let answer = waits.get(&origin.join("v1/x/wait").unwrap(), &HeaderMap::new(), Duration::from_secs(25), 1024).await;
    assert_eq!(answer.unwrap().status, StatusCode::OK, "answered at the third send");
    assert_eq!(seen.requests.load(Ordering::Relaxed), 3);
    assert_eq!(seen.connections.load(Ordering::Relaxed), 1, "a stream's reset leaves the connection");
    assert_eq!(waits.count(), 1);
}

#[tokio::test]
async fn a_server_that_refuses_every_stream_fails_the_wait_after_three_sends() {
    let (origin, seen) = serve(Front { refuse_first: usize::MAX, ..Default::default() }).await;
    let waits = waits(&origin);
    let failed = waits.get(&origin.join("v1/x/wait").unwrap(), &HeaderMap::new(), Duration::from_secs(25), 1024).await;
    match failed {
        Err(WaitFailed::Stream(why)) => assert!(why.contains("REFUSED_STREAM"), "{why}"),
        other => panic!("{:?}", other.err()),
    }
    assert_eq!(seen.requests.load(Ordering::Relaxed), SENDS);
}

/// A connection whose packets stop (a suspend, a network that changed) answers no PING: it is
/// dropped within the PING's limits, and its wait sent again on a new connection, long before
/// the wait's own deadline (25 s).
#[tokio::test(start_paused = true)]
async fn a_connection_that_answers_no_ping_is_dropped_and_its_wait_sent_again() {
    let (origin, seen) = serve(Front { hold: true, ..Default::default() }).await;
    // A relay whose first connection goes silent on demand, both ways, closing nothing.
    let relay = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let relayed = Url::parse(&format!("http://127.0.0.1:{}/", relay.local_addr().unwrap().port())).unwrap();
    let silent = Arc::new(AtomicBool::new(false));
    let (to, first) = (origin.clone(), silent.clone());
    tokio::spawn(async move {
        let mut cut = Some(first);
        while let Ok((client, _)) = relay.accept().await {
            let server = TcpStream::connect((to.host_str().unwrap(), to.port().unwrap())).await.unwrap();
            tokio::spawn(pipe(client, server, cut.take().unwrap_or_default()));
        }
    });
    let waits = waits(&relayed);
    let wait = spawn_waits(&waits, &relayed, 1).pop().unwrap();
    until("the wait held", || seen.held.load(Ordering::Relaxed) == 1).await;
    silent.store(true, Ordering::Relaxed);
    let cut_at = Instant::now();
    // New connections pass again; the first is dead.
    until("a second connection", || seen.connections.load(Ordering::Relaxed) == 2).await;
    let found = cut_at.elapsed();
    // docs/cloud-api.md, "PING": found within 8 s (5 s of silence, 3 s for the answer).
    assert!(found <= Duration::from_secs(9), "dropped {found:?} after the cut");
    // The server still holds the first (nothing told it the client went), and now the second.
    until("held again on the new connection", || seen.held.load(Ordering::Relaxed) == 2).await;
    seen.release.notify_waiters();
    assert_eq!(wait.await.unwrap().unwrap().status, StatusCode::OK);
}

/// Copies both ways while `silent` is false; while true, reads and drops (packets lost).
async fn pipe(a: TcpStream, b: TcpStream, silent: Arc<AtomicBool>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut ar, mut aw) = a.into_split();
    let (mut br, mut bw) = b.into_split();
    let s = silent.clone();
    let up = async move {
        let mut buf = [0u8; 16384];
        while let Ok(n @ 1..) = ar.read(&mut buf).await {
            if !s.load(Ordering::Relaxed) && bw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    };
    let down = async move {
        let mut buf = [0u8; 16384];
        while let Ok(n @ 1..) = br.read(&mut buf).await {
            if !silent.load(Ordering::Relaxed) && aw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    };
    tokio::join!(up, down);
}

#[tokio::test]
async fn an_http_1_1_server_over_h2c_is_remembered_and_left_to_reqwest() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = Url::parse(&format!("http://127.0.0.1:{}/", listener.local_addr().unwrap().port())).unwrap();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut tcp, _)) = listener.accept().await {
            let mut buf = [0u8; 1024];
            let _ = tcp.read(&mut buf).await;
            let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await;
        }
    });
    let waits = waits(&origin);
    let failed = waits.get(&origin.join("v1/x/wait").unwrap(), &HeaderMap::new(), Duration::from_secs(25), 1024).await;
    assert!(matches!(failed, Err(WaitFailed::NoHttp2)), "{:?}", failed.err());
    assert!(waits.declined());
}

/// The TLS path against a real rustls server on loopback, with a certificate made for the
/// test: what the cloud does (ALPN `h2`), and what a server or proxy without HTTP/2 does.
mod over_tls {
    use tokio_rustls::TlsAcceptor;

    use super::*;

    /// A server for `localhost` that offers `alpn` and answers every HTTP/2 request with
    /// 200 and the `authorization` it was sent; and a client config that trusts it.
    async fn server(alpn: &[&[u8]]) -> (Url, rustls::ClientConfig) {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let made = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(made.signing_key.serialize_der().into());
        let mut config =
            rustls::ServerConfig::builder().with_no_client_auth().with_single_cert(vec![made.cert.der().clone()], key).unwrap();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
                        return; // an HTTP/1.1 server: the client must not speak HTTP/2 to it
                    }
                    let mut conn = h2::server::handshake(tls).await.unwrap();
                    while let Some(Ok((request, mut respond))) = conn.accept().await {
                        let auth = request.headers().get("authorization").map(|v| v.as_bytes().to_vec()).unwrap_or_default();
                        let mut body = respond.send_response(http::Response::new(()), false).unwrap();
                        body.send_data(Bytes::from(auth), true).unwrap();
                    }
                });
            }
        });
        let mut roots = rustls::RootCertStore::empty();
        roots.add(made.cert.der().clone()).unwrap();
        let mut client = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
        // As `CloudClient` offers them (client.rs).
        client.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        (Url::parse(&format!("https://localhost:{port}/")).unwrap(), client)
    }

    fn headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("authorization", sensitive("Bearer t0ken").unwrap());
        headers
    }

    fn over(origin: &Url, tls: &rustls::ClientConfig) -> Arc<WaitConnections> {
        Arc::new(WaitConnections::new(origin, Route::Straight(Straight::Loopback), tls).unwrap())
    }

    #[tokio::test]
    async fn a_wait_is_an_h2_stream_when_the_server_picks_h2() {
        let (origin, client) = server(&[b"h2", b"http/1.1"]).await;
        let waits = over(&origin, &client);
        for _ in 0..2 {
            let answer = waits.get(&origin.join("v1/x/wait").unwrap(), &headers(), Duration::from_secs(10), 1024).await.unwrap();
            assert_eq!(answer.status, StatusCode::OK);
            assert_eq!(answer.body, b"Bearer t0ken");
        }
        assert!(!waits.declined());
        assert_eq!(waits.count(), 1, "both waits went over the one TLS connection");
    }

    #[tokio::test]
    async fn a_server_that_picks_http_1_1_is_remembered_and_left_to_reqwest() {
        let (origin, client) = server(&[b"http/1.1"]).await;
        let waits = over(&origin, &client);
        let failed = waits.get(&origin.join("v1/x/wait").unwrap(), &headers(), Duration::from_secs(10), 1024).await;
        assert!(matches!(failed, Err(WaitFailed::NoHttp2)), "{:?}", failed.err());
        assert!(waits.declined());
    }

    #[tokio::test]
    async fn a_certificate_the_client_does_not_trust_fails_the_connect_and_names_why() {
        let (origin, _) = server(&[b"h2"]).await;
        let stranger = rustls::ClientConfig::builder().with_root_certificates(rustls::RootCertStore::empty()).with_no_client_auth();
        let waits = over(&origin, &stranger);
        let failed = waits.get(&origin.join("v1/x/wait").unwrap(), &headers(), Duration::from_secs(10), 1024).await;
        match failed {
            Err(WaitFailed::Connect(why)) => assert!(why.to_string().contains("certificate"), "{why}"),
            other => panic!("{:?}", other.err()),
        }
        assert!(!waits.declined(), "a refused certificate is not a server without HTTP/2");
    }
}
