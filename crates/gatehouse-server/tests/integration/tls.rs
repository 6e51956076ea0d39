//! HTTPS: with a certificate the server speaks TLS only, HTTP/1.1 and
//! HTTP/2 chosen by ALPN; event streams and long polls work over it, links
//! say https, and certificate or key files it cannot use are errors naming
//! the file (never a panic). The fixtures are a test CA and a certificate
//! it signed for 127.0.0.1 (`tests/fixtures/tls/generate.sh`).

use std::path::PathBuf;
use std::time::Duration;

use gatehouse_engine::{Engine, EngineConfig, TokenRole};
use gatehouse_server::{ConnectionLimits, RunningServer, ServerConfig, TlsConfig, TlsError};
use serde_json::{json, Value};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls").join(name)
}

struct Tls {
    server: RunningServer,
    reviewer: String,
    agent: String,
    _dir: tempfile::TempDir,
}

impl Tls {
    async fn start() -> Self {
        Self::start_with(ConnectionLimits::default()).await
    }

    async fn start_with(connections: ConnectionLimits) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path().join("gatehouse.db"), EngineConfig::default()).unwrap();
        let reviewer = engine.create_token("alice", TokenRole::Reviewer, "test").unwrap().1;
        let agent = engine.create_token("deployer", TokenRole::Agent, "test").unwrap().1;
        let tls = TlsConfig::from_pem_files(fixture("server.pem"), fixture("server-key.pem")).unwrap();
        let config = ServerConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            tls: Some(tls),
            connections,
            ..ServerConfig::default()
        };
        let server = gatehouse_server::start(engine, config).await.unwrap();
        Self { server, reviewer, agent, _dir: dir }
    }

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}/api/hitl{path}", self.server.addr.port())
    }
}

/// A client trusting only the test CA; HTTP/1.1 only, or HTTP/2 when the server offers it.
fn client(http1_only: bool) -> reqwest::Client {
    let ca = reqwest::Certificate::from_pem(&std::fs::read(fixture("ca.pem")).unwrap()).unwrap();
    let builder = reqwest::Client::builder().use_rustls_tls().tls_built_in_root_certs(false).add_root_certificate(ca);
    let builder = if http1_only { builder.http1_only() } else { builder };
    builder.timeout(Duration::from_secs(20)).build().unwrap()
}

async fn send(req: reqwest::RequestBuilder) -> (reqwest::Version, u16, Value) {
    let resp = req.send().await.expect("request");
    let (version, status) = (resp.version(), resp.status().as_u16());
    (version, status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_is_served_over_https_with_http1_and_http2() {
    let s = Tls::start().await;
    assert_eq!(s.server.url(), format!("https://{}", s.server.addr));
    assert_eq!(s.server.state.public_url(), format!("https://{}", s.server.addr), "links default to https");

    let (version, status, body) = send(client(true).get(s.url("/whoami")).bearer_auth(&s.reviewer)).await;
    assert_eq!((version, status), (reqwest::Version::HTTP_11, 200), "{body}");
    assert_eq!(body["name"], "alice");

    let (version, status, body) = send(client(false).get(s.url("/whoami")).bearer_auth(&s.reviewer)).await;
    assert_eq!((version, status), (reqwest::Version::HTTP_2, 200), "ALPN chose h2: {body}");

    let start = client(false).post(s.url("/run")).bearer_auth(&s.agent).json(&json!({"run_input": {}}));
    let (_, status, body) = send(start).await;
    assert_eq!(status, 201, "{body}");
    assert!(body["events_url"].as_str().unwrap().starts_with("https://"), "{body}");

    // The guards hold as over plain HTTP.
    let (_, status, _) = send(client(false).get(s.url("/whoami"))).await;
    assert_eq!(status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_requests_for_a_foreign_host_are_refused_too() {
    let s = Tls::start().await;
    // DNS rebinding over HTTP/2: the host comes as `:authority`, without a `Host` header.
    let rebound = reqwest::Client::builder()
        .use_rustls_tls()
        .danger_accept_invalid_certs(true)
        .resolve("evil.example", s.server.addr)
        .build()
        .unwrap();
    let url = format!("https://evil.example:{}/api/hitl/whoami", s.server.addr.port());
    let (version, status, body) = send(rebound.get(url).bearer_auth(&s.reviewer)).await;
    assert_eq!((version, status), (reqwest::Version::HTTP_2, 403), "{body}");
    assert!(body["message"].as_str().unwrap().contains("evil.example"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_is_not_served_on_a_tls_port() {
    let s = Tls::start().await;
    let plain = format!("http://127.0.0.1:{}/api/hitl/whoami", s.server.addr.port());
    let answer = reqwest::Client::new().get(plain).bearer_auth(&s.reviewer).send().await;
    assert!(answer.is_err(), "a plain request got an HTTP answer: {answer:?}");
    // The refused connection did not take the server down.
    let (_, status, _) = send(client(true).get(s.url("/whoami")).bearer_auth(&s.reviewer)).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_streams_and_long_polls_work_over_tls() {
    let s = Tls::start().await;
    let http = client(false);
    let (_, _, run) = send(http.post(s.url("/run")).bearer_auth(&s.agent).json(&json!({"run_input": {}}))).await;
    let run = run["run_id"].as_str().unwrap().to_owned();

    let mut stream = http.get(s.url("/events")).bearer_auth(&s.reviewer).send().await.unwrap();
    assert_eq!((stream.version(), stream.status().as_u16()), (reqwest::Version::HTTP_2, 200));
    assert!(stream.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));

    let gate = json!({"kind": "approval", "action": "deploy", "text": "Deploy?"});
    let (_, status, opened) =
        send(http.post(s.url(&format!("/runs/{run}/gates"))).bearer_auth(&s.agent).json(&gate)).await;
    assert_eq!(status, 201, "{opened}");
    let gate_id = opened["gate_id"].as_str().unwrap().to_owned();

    // The stream carries the new gate.
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !(seen.contains("event: gate_opened") && seen.contains(&gate_id)) {
        let chunk = tokio::time::timeout_at(deadline, stream.chunk()).await.expect("gate_opened in time").unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk.expect("the stream stays open")));
    }

    // A long poll on the same HTTP/2 connection is answered the moment the gate is decided.
    let wait = http.get(s.url(&format!("/gates/{gate_id}/wait?timeout=20"))).bearer_auth(&s.agent).send();
    let waiting = tokio::spawn(wait);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let resolve = http.post(s.url(&format!("/gates/{gate_id}/resolve"))).bearer_auth(&s.reviewer);
    let (_, status, body) = send(resolve.json(&json!({"action": "approve"}))).await;
    assert_eq!(status, 200, "{body}");
    let answered = tokio::time::timeout(Duration::from_secs(10), waiting).await.expect("woken").unwrap().unwrap();
    let gate: Value = answered.json().await.unwrap();
    assert_eq!(gate["status"], "resolved", "{gate}");
}

#[test]
fn unusable_certificate_or_key_files_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let (cert, key) = (fixture("server.pem"), fixture("server-key.pem"));
    let message = |e: TlsError| e.to_string();

    let missing = dir.path().join("missing.pem");
    let e = message(TlsConfig::from_pem_files(&missing, &key).unwrap_err());
    assert!(e.contains("cannot read the TLS certificate") && e.contains("missing.pem"), "{e}");
    let e = message(TlsConfig::from_pem_files(&cert, &missing).unwrap_err());
    assert!(e.contains("cannot read the TLS private key") && e.contains("missing.pem"), "{e}");

    // Each file swapped for the other.
    let e = message(TlsConfig::from_pem_files(&key, &key).unwrap_err());
    assert!(e.contains("no certificate") && e.contains("server-key.pem"), "{e}");
    let e = message(TlsConfig::from_pem_files(&cert, &cert).unwrap_err());
    assert!(e.contains("no private key") && e.contains("server.pem"), "{e}");

    let broken = write("broken.pem", "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n");
    let e = message(TlsConfig::from_pem_files(&broken, &key).unwrap_err());
    assert!(e.contains("not valid PEM") && e.contains("broken.pem"), "{e}");
    let cut = write("cut.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n");
    let e = message(TlsConfig::from_pem_files(&cut, &key).unwrap_err());
    assert!(e.contains("not valid PEM") && e.contains("cut.pem"), "{e}");
    let text = write("text.pem", "just some text\n");
    let e = message(TlsConfig::from_pem_files(&text, &key).unwrap_err());
    assert!(e.contains("no certificate") && e.contains("text.pem"), "{e}");

    // Well-formed PEM that is no certificate at all.
    let junk = write("junk.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    let e = message(TlsConfig::from_pem_files(&junk, &key).unwrap_err());
    assert!(e.contains("cannot serve TLS") && e.contains("junk.pem"), "{e}");

    let e = message(TlsConfig::from_pem_files(&cert, fixture("other-key.pem")).unwrap_err());
    assert!(e.contains("does not belong to the certificate") && e.contains("other-key.pem"), "{e}");

    assert!(TlsConfig::from_pem_files(&cert, &key).is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_https_a_silent_client_is_dropped_and_one_past_the_cap_gets_a_json_503() {
    use tokio::io::AsyncReadExt;
    let limits =
        ConnectionLimits { max_connections: 1, header_read_timeout: Duration::from_secs(1), ..Default::default() };
    let s = Tls::start_with(limits).await;

    // It holds the one slot without starting its handshake, until the deadline.
    let mut silent = tokio::net::TcpStream::connect(s.server.addr).await.unwrap();
    for http1_only in [true, false] {
        let (_, status, body) = send(client(http1_only).get(s.url("/gates")).bearer_auth(&s.reviewer)).await;
        assert_eq!((status, body["code"].as_str()), (503, Some("unavailable")), "{body}");
    }
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), silent.read_to_end(&mut rest)).await;
    assert!(closed.is_ok(), "the silent client was still connected after 5 s");

    let (_, status, body) = send(client(false).get(s.url("/gates")).bearer_auth(&s.reviewer)).await;
    assert_eq!(status, 200, "the slot is free again: {body}");
}
