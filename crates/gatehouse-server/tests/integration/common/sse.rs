//! A minimal Server-Sent Events reader over a streaming reqwest response.

use std::time::Duration;

use serde_json::Value;

/// One parsed SSE message.
#[derive(Debug)]
pub struct Msg {
    pub id: u64,
    pub event: String,
    pub data: Value,
}

/// A minimal SSE reader over a streaming reqwest response.
pub struct Sse {
    pub resp: reqwest::Response,
    pub buf: String,
}

impl Sse {
    /// Connects; `Err(status, body)` when the server refuses.
    pub async fn open(
        http: &reqwest::Client,
        url: String,
        token: &str,
        last_id: Option<u64>,
    ) -> Result<Sse, (u16, Value)> {
        let mut req = http.get(url).bearer_auth(token);
        if let Some(id) = last_id {
            req = req.header("Last-Event-ID", id.to_string());
        }
        let resp = req.send().await.expect("connect");
        if resp.status() != 200 {
            let status = resp.status().as_u16();
            return Err((status, resp.json().await.unwrap_or(Value::Null)));
        }
        assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
        Ok(Sse { resp, buf: String::new() })
    }

    /// The next message, or `None` if none arrives within `wait`.
    pub async fn next(&mut self, wait: Duration) -> Option<Msg> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                if let Some(msg) = parse(&block) {
                    return Some(msg);
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.resp.chunk()).await.ok()?.expect("stream")?;
            self.buf.push_str(std::str::from_utf8(&chunk).expect("utf-8"));
        }
    }
}

impl Sse {
    /// Whether the server ends the stream cleanly within `wait` (messages
    /// before the end are skipped); `false` on a timeout or a broken stream.
    pub async fn ends_within(&mut self, wait: Duration) -> bool {
        let ended = tokio::time::timeout(wait, async {
            loop {
                match self.resp.chunk().await {
                    Ok(Some(_)) => continue,
                    other => break other.map(|chunk| chunk.is_none()),
                }
            }
        })
        .await;
        matches!(ended, Ok(Ok(true)))
    }
}

/// A message block; `None` for comment-only blocks (keep-alives).
fn parse(block: &str) -> Option<Msg> {
    let (mut id, mut event, mut data) = (None, None, String::new());
    for line in block.lines().filter(|l| !l.is_empty()) {
        let (field, value) = line.split_once(':')?;
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "id" => id = Some(value.parse().expect("numeric id")),
            "event" => event = Some(value.to_owned()),
            "data" => data.push_str(value),
            "" => {}
            other => panic!("unexpected field {other}"),
        }
    }
    Some(Msg { id: id?, event: event.expect("event type"), data: serde_json::from_str(&data).expect("JSON data") })
}

/// An event stream read by hand over a socket with a tiny receive buffer:
/// while nobody reads it, the server's writes soon fill the socket and the
/// server stops taking events for it, as with a slow client.
pub struct SlowReader {
    stream: tokio::net::TcpStream,
    /// What was read past the response's head.
    body: Vec<u8>,
}

impl SlowReader {
    /// Sends `GET path` with the token and reads the response's head,
    /// which must be a 200 with an event stream.
    pub async fn open(addr: std::net::SocketAddr, path: &str, token: &str) -> SlowReader {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.set_recv_buffer_size(4096).expect("a small receive buffer");
        let mut stream = socket.connect(addr).await.expect("connect");
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.expect("request");
        let mut head = Vec::new();
        let end = loop {
            let mut chunk = [0u8; 512];
            let n = stream.read(&mut chunk).await.expect("response");
            assert!(n > 0, "the server closed before answering: {}", String::from_utf8_lossy(&head));
            head.extend_from_slice(&chunk[..n]);
            if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
        };
        let text = String::from_utf8_lossy(&head[..end]).to_ascii_lowercase();
        assert!(text.starts_with("http/1.1 200"), "{text}");
        assert!(text.contains("text/event-stream") && text.contains("transfer-encoding: chunked"), "{text}");
        SlowReader { stream, body: head.split_off(end) }
    }

    /// Reads until the server ends the stream or `wait` passes: the ids of
    /// the messages read, and whether the stream ended.
    pub async fn ids_until_end(mut self, wait: Duration) -> (Vec<u64>, bool) {
        use tokio::io::AsyncReadExt;
        let deadline = tokio::time::Instant::now() + wait;
        let mut chunk = vec![0u8; 64 * 1024];
        let ended = loop {
            match tokio::time::timeout_at(deadline, self.stream.read(&mut chunk)).await {
                Ok(Ok(0)) => break true,
                Ok(Ok(n)) => self.body.extend_from_slice(&chunk[..n]),
                Ok(Err(_)) | Err(_) => break false,
            }
        };
        let (text, complete) = dechunk(&self.body);
        // A message cut off by the timeout is left out.
        let whole = &text[..text.rfind("\n\n").map_or(0, |end| end + 2)];
        let ids = whole.split("\n\n").filter_map(parse).map(|msg| msg.id).collect();
        (ids, ended && complete)
    }
}

/// The data of a chunked body, and whether it ended with its last chunk.
fn dechunk(mut body: &[u8]) -> (String, bool) {
    let mut data = Vec::new();
    loop {
        let Some(line) = body.windows(2).position(|w| w == b"\r\n") else { return (lossy(data), false) };
        let size = std::str::from_utf8(&body[..line]).ok().and_then(|s| usize::from_str_radix(s.trim(), 16).ok());
        let Some(size) = size else { return (lossy(data), false) };
        if size == 0 {
            return (lossy(data), true);
        }
        let start = line + 2;
        let Some(chunk) = body.get(start..start + size) else { return (lossy(data), false) };
        data.extend_from_slice(chunk);
        body = body.get(start + size + 2..).unwrap_or_default();
    }
}

fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).into_owned()
}
