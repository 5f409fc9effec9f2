//! Real network parts between the engine and the simulator: nginx from Debian as the HTTP/2 front
//! a cloud has (TLS with a test CA the engine trusts through `SSL_CERT_FILE`), and a company's
//! CONNECT proxy that alone can resolve the cloud's name.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::wait_until;

/// A CA made for one test, and a server certificate it signed for `localhost`, `127.0.0.1` and
/// the names given (webpki refuses a self-signed certificate used as the server's own).
pub struct TestCa {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TestCa {
    pub fn new(dir: &Path, names: &[&str]) -> TestCa {
        use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.distinguished_name.push(DnType::CommonName, "cmux-tray test CA");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = Issuer::from_params(&ca, &ca_key);
        let mut all: Vec<String> = vec!["localhost".into(), "127.0.0.1".into()];
        all.extend(names.iter().map(|n| n.to_string()));
        let mut server = CertificateParams::new(all).unwrap();
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_key = KeyPair::generate().unwrap();
        let server_cert = server.signed_by(&server_key, &issuer).unwrap();
        let (ca_path, cert, key) = (dir.join("ca.pem"), dir.join("server.pem"), dir.join("server.key"));
        std::fs::write(&ca_path, ca_cert.pem()).unwrap();
        std::fs::write(&cert, server_cert.pem()).unwrap();
        std::fs::write(&key, server_key.serialize_pem()).unwrap();
        TestCa { ca: ca_path, cert, key }
    }
}

/// How the nginx front listens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listen {
    /// TLS, ALPN `h2` and `http/1.1`: a cloud's front.
    TlsH2,
    /// Plain HTTP/1.1 only: a local development server.
    Http1,
}

/// What the front allows.
#[derive(Clone, Copy, Debug)]
pub struct Front {
    pub listen: Listen,
    /// `http2_max_concurrent_streams` (nginx's default: 128).
    pub streams: u32,
    /// `keepalive_requests`: GOAWAY after this many requests on a connection (default 1,000).
    pub requests: u32,
}

impl Default for Front {
    fn default() -> Self {
        Front { listen: Listen::TlsH2, streams: 128, requests: 1000 }
    }
}

/// nginx, run by the test in a folder of its own, in front of the simulator.
pub struct Nginx {
    child: Child,
    pub port: u16,
    dir: PathBuf,
    front: Front,
}

impl Nginx {
    /// nginx on a free loopback port, proxying to `upstream` (the simulator's `127.0.0.1:PORT`),
    /// with `tls`'s certificate when it listens with TLS.
    pub fn start(dir: &Path, upstream: SocketAddr, tls: &TestCa, front: Front) -> Nginx {
        let dir = dir.join("nginx");
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_port();
        let listen = match front.listen {
            Listen::TlsH2 => format!(
                "listen 127.0.0.1:{port} ssl http2;\n    ssl_certificate {};\n    ssl_certificate_key {};",
                tls.cert.display(),
                tls.key.display()
            ),
            Listen::Http1 => format!("listen 127.0.0.1:{port};"),
        };
        let d = dir.display();
        let conf = format!(
            r#"daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 65536;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 20000; }}
http {{
  log_format conn '$connection $status $server_protocol $request_uri';
  access_log {d}/access.log conn;
  client_body_temp_path {d}/body;
  proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi;
  scgi_temp_path {d}/scgi;
  upstream cloud {{ server {upstream}; keepalive 256; }}
  server {{
    {listen}
    http2_max_concurrent_streams {streams};
    keepalive_requests {requests};
    location / {{
      proxy_pass http://cloud;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 600s;
    }}
  }}
}}
"#,
            streams = front.streams,
            requests = front.requests,
        );
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(nginx())
            .args(["-c", &conf_path.display().to_string(), "-p", &dir.display().to_string(), "-e", &format!("{d}/error.log")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts (package nginx)");
        let nginx = Nginx { child, port, dir, front };
        wait_until("nginx listening", Duration::from_secs(10), || TcpStream::connect(("127.0.0.1", port)).is_ok());
        nginx
    }

    /// The connections nginx served, each with the requests it took (its access log).
    pub fn connections(&self) -> HashMap<u64, usize> {
        let log = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        let mut seen = HashMap::new();
        for id in log.lines().filter_map(|l| l.split_whitespace().next()?.parse::<u64>().ok()) {
            *seen.entry(id).or_default() += 1;
        }
        seen
    }

    /// The protocol of each request nginx served (`$server_protocol`: `HTTP/2.0`, `HTTP/1.1`),
    /// with how many came over each.
    pub fn protocols(&self) -> HashMap<String, usize> {
        let log = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        let mut seen = HashMap::new();
        for protocol in log.lines().filter_map(|l| l.split_whitespace().nth(2)) {
            *seen.entry(protocol.to_string()).or_default() += 1;
        }
        seen
    }

    /// The connections nginx ended with a GOAWAY for having taken `keepalive_requests` requests
    /// (as its access log shows them: a request still held is not there yet, so at least these).
    pub fn goaways_sent(&self) -> usize {
        self.connections().values().filter(|&&n| n >= self.front.requests as usize).count()
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Debian's nginx lives in /usr/sbin, which a normal user's PATH may not have.
fn nginx() -> PathBuf {
    ["/usr/sbin/nginx", "/usr/bin/nginx"].iter().map(PathBuf::from).find(|p| p.exists()).unwrap_or_else(|| "nginx".into())
}

/// A port free right now on loopback.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A company's HTTP proxy: `CONNECT host:port` only, names resolved from its own table (the
/// cloud's name resolves nowhere else), optionally asking for a user name and password. A thread
/// per tunnel. It records every tunnel it opened and every refusal.
pub struct ConnectProxy {
    pub port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl ConnectProxy {
    /// `names`: what this proxy resolves (name → address); `login`: the `user:password` it
    /// requires, if any.
    pub fn start(names: &[(&str, SocketAddr)], login: Option<&str>) -> ConnectProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let names: Arc<HashMap<String, SocketAddr>> = Arc::new(names.iter().map(|(n, a)| (n.to_string(), *a)).collect());
        let login = login.map(|l| format!("Basic {}", base64_encode(l.as_bytes())));
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let (names, login, log) = (names.clone(), login.clone(), l.clone());
                std::thread::spawn(move || tunnel(client, &names, login.as_deref(), &log));
            }
        });
        ConnectProxy { port, log }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Each request it saw: "tunnel HOST:PORT", or "refused HOST:PORT CODE".
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

fn tunnel(client: TcpStream, names: &HashMap<String, SocketAddr>, login: Option<&str>, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut auth = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("proxy-authorization")
        {
            auth = Some(value.trim().to_string());
        }
    }
    let mut client = client;
    let target = line.split_whitespace().nth(1).unwrap_or_default().to_string();
    let refuse = |client: &mut TcpStream, code: &str| {
        log.lock().unwrap().push(format!("refused {target} {}", &code[..3]));
        let _ = client.write_all(format!("HTTP/1.1 {code}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").as_bytes());
    };
    if !line.starts_with("CONNECT ") {
        return refuse(&mut client, "405 Method Not Allowed");
    }
    if login.is_some() && auth.as_deref() != login {
        return refuse(&mut client, "407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"corp\"");
    }
    let (host, port) = target.rsplit_once(':').unwrap_or((&target, "443"));
    let Some(addr) = names.get(host).map(|a| SocketAddr::new(a.ip(), port.parse().unwrap_or(443))) else {
        return refuse(&mut client, "502 Bad Gateway");
    };
    let Ok(server) = TcpStream::connect(addr) else { return refuse(&mut client, "502 Bad Gateway") };
    log.lock().unwrap().push(format!("tunnel {target}"));
    if client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").is_err() {
        return;
    }
    let buffered = reader.buffer().to_vec();
    let (mut up_from, mut up_to) = (reader.into_inner(), server.try_clone().unwrap());
    let (mut down_from, mut down_to) = (server, client);
    let _ = up_to.write_all(&buffered);
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut up_from, &mut up_to);
        let _ = up_to.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut down_from, &mut down_to);
    let _ = down_to.shutdown(std::net::Shutdown::Write);
    let _ = up.join();
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
