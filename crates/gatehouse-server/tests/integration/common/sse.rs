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
