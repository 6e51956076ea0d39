//! Where the redaction test looks for its canary: the server's log, the
//! stored rows (SQLite's files or PostgreSQL's rows), webhook bodies, and
//! the answers of every MCP tool.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use gatehouse_engine::Database;
use serde_json::{json, Value};

use super::bodies::Generator;
use super::{CANARIES, MARK};
use crate::common::TestServer;

/// Everything the server wrote to its log, from every test in this binary.
pub(super) fn server_log() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let subscriber = tracing_subscriber::fmt()
            // What `gatehouse serve` logs unless told otherwise (`GATEHOUSE_LOG`).
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || LogWriter(sink.clone()))
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
        log
    })
}

pub(super) struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Where a stored copy of the canary would be: the SQLite file and its WAL
/// as bytes, or every row of the test's PostgreSQL schema as text.
pub(super) async fn stored_bytes(s: &TestServer) -> Vec<u8> {
    match &s.database {
        Database::Sqlite(path) => {
            let mut bytes = Vec::new();
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let file = format!("{}{suffix}", path.display());
                bytes.extend(std::fs::read(&file).unwrap_or_default());
            }
            bytes
        }
        Database::Postgres(url) => {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
            tokio::spawn(conn);
            let schema = s.schema.clone().expect("schema");
            let tables = client
                .query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1", &[&schema])
                .await
                .expect("tables");
            let mut dump = String::new();
            for row in tables {
                let table: String = row.get(0);
                let rows =
                    client.query(&format!("SELECT t::text FROM \"{schema}\".\"{table}\" t"), &[]).await.expect("dump");
                rows.iter().for_each(|r| dump.push_str(&r.get::<_, String>(0)));
            }
            dump.into_bytes()
        }
    }
}

/// A webhook receiver that keeps every body it gets.
pub(super) async fn hook_receiver() -> (String, Arc<Mutex<Vec<String>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    let app = axum::Router::new().fallback(move |body: String| {
        let sink = sink.clone();
        async move {
            sink.lock().expect("hooks").push(body);
            "ok"
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    (url, got)
}

/// Calls every MCP tool at `/mcp` with arguments generated from its input
/// schema (a canary in every string; a real run and gate where it names
/// one, asynchronous where it may wait), while a reviewer rejects whatever
/// waits; answers with every result. The gate tools must succeed.
pub(super) async fn mcp_calls(s: &TestServer) -> Vec<String> {
    use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::ServiceExt;

    let uri = format!("http://{}/mcp", s.server.addr);
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(uri).auth_header(&s.agent),
    );
    let info = ClientConfig::new(ClientCapabilities::default(), Implementation::new("canary", "1.0.0"));
    let session = info.serve(transport).await.expect("MCP session");
    let (http, base, token) = (s.http.clone(), s.base.clone(), s.reviewer.clone());
    let rejecter = tokio::spawn(async move {
        loop {
            let list: Value =
                http.get(format!("{base}/gates")).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
            for gate in list["gates"].as_array().cloned().unwrap_or_default() {
                let id = gate["id"].as_str().unwrap_or_default();
                let url = format!("{base}/gates/{id}/resolve");
                let _ = http.post(url).bearer_auth(&token).json(&json!({"action": "reject"})).send().await;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let run = s.run().await;
    let gate = s.gate(&run, json!({"kind": "question", "text": "Region?", "mode": "async"})).await;
    let mut results = Vec::new();
    for tool in session.list_all_tools().await.expect("tools") {
        let schema = Value::Object((*tool.input_schema).clone());
        let defs = schema["$defs"].as_object().cloned().unwrap_or_default();
        for (family, canary) in CANARIES {
            let mut args = Generator { schemas: &defs, canary, pick: 0 }.body(&schema);
            for (field, value) in [("run_id", json!(run)), ("gate_id", json!(gate)), ("mode", json!("async"))] {
                if let Some(slot) = args.get_mut(field) {
                    *slot = value;
                }
            }
            args.as_object_mut().expect("arguments").remove("wait_seconds");
            let Value::Object(arguments) = args else { unreachable!() };
            let call = session.call_tool(CallToolRequestParams::new(tool.name.to_string()).with_arguments(arguments));
            let result = tokio::time::timeout(Duration::from_secs(5), call).await.expect("the tool answers");
            let text = format!("{result:?}");
            let gate_tool = tool.name.starts_with("request_") || tool.name == "ask_human";
            assert!(
                !gate_tool || result.as_ref().is_ok_and(|r| r.is_error != Some(true)),
                "{} ({family}): {text}",
                tool.name
            );
            results.push(format!("MCP {} ({family}): {text}", tool.name));
        }
    }
    rejecter.abort();
    results
}

/// Where `MARK` sits in `haystack`, with some context, if anywhere.
pub(super) fn leak(haystack: &[u8]) -> Option<String> {
    let at = haystack.windows(MARK.len()).position(|w| w == MARK.as_bytes())?;
    let from = at.saturating_sub(120);
    Some(String::from_utf8_lossy(&haystack[from..(at + 60).min(haystack.len())]).into_owned())
}

/// `text` percent-encoded for a query string or a path segment.
pub(super) fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
