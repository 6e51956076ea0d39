//! A server's events over its HTTP API, the same for this computer's server
//! and a team server: the pending count with the log's head
//! (`GET /gates?status=pending`), one gate (`GET /gates/{id}`), and the
//! event stream (`GET /events`, Server-Sent Events) read in bursts.

use gatehouse_engine::{Event, Gate};
use serde::Deserialize;

use crate::connection::Server;

/// Why a call to the server failed.
#[derive(Debug)]
pub enum FeedError {
    /// The server no longer accepts the token (401): retrying cannot help.
    TokenRefused,
    /// Anything else: the network, the server's status, its answer.
    Other(String),
}

impl std::fmt::Display for FeedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TokenRefused => f.write_str("the server no longer accepts the window's token"),
            Self::Other(why) => f.write_str(why),
        }
    }
}

fn failed(e: reqwest::Error) -> FeedError {
    FeedError::Other(e.to_string())
}

async fn get(http: &reqwest::Client, server: &Server, path: &str) -> Result<reqwest::Response, FeedError> {
    let answer = http.get(server.api(path)).bearer_auth(server.token()).send().await.map_err(failed)?;
    match answer.status() {
        reqwest::StatusCode::UNAUTHORIZED => Err(FeedError::TokenRefused),
        status if !status.is_success() => Err(FeedError::Other(format!("{} answered {status}", server.api(path)))),
        _ => Ok(answer),
    }
}

/// How many gates are pending, and the log's head when they were counted.
pub async fn pending(http: &reqwest::Client, server: &Server) -> Result<(u64, u64), FeedError> {
    #[derive(Deserialize)]
    struct Listing {
        total: u64,
        head_seq: u64,
    }
    let listing: Listing = get(http, server, "gates?status=pending&limit=1").await?.json().await.map_err(failed)?;
    Ok((listing.total, listing.head_seq))
}

/// One gate.
pub async fn gate(http: &reqwest::Client, server: &Server, gate_id: &str) -> Result<Gate, FeedError> {
    #[derive(Deserialize)]
    struct Detail {
        gate: Gate,
    }
    let detail: Detail = get(http, server, &format!("gates/{gate_id}")).await?.json().await.map_err(failed)?;
    Ok(detail.gate)
}

/// The event stream after sequence number `after`.
pub struct Stream {
    answer: reqwest::Response,
    parser: SseParser,
}

impl Stream {
    /// Opens the stream of events after `after`.
    pub async fn open(http: &reqwest::Client, server: &Server, after: u64) -> Result<Self, FeedError> {
        let answer = get(http, server, &format!("events?after={after}")).await?;
        Ok(Self { answer, parser: SseParser::default() })
    }

    /// The next burst: every event that arrived together (never empty),
    /// with the highest sequence number read, which a burst of events this
    /// app cannot read still advances. `None` when the server ended the stream.
    pub async fn next_burst(&mut self) -> Result<Option<(Vec<Event>, Option<u64>)>, FeedError> {
        loop {
            let Some(chunk) = self.answer.chunk().await.map_err(failed)? else { return Ok(None) };
            let messages = self.parser.push(&chunk);
            if messages.is_empty() {
                continue;
            }
            let last = messages.iter().filter_map(|m| m.id).max();
            let events = messages
                .iter()
                .filter_map(|m| {
                    serde_json::from_str::<Event>(&m.data)
                        .inspect_err(|e| tracing::debug!(error = %e, "an event this app cannot read"))
                        .ok()
                })
                .collect();
            return Ok(Some((events, last)));
        }
    }
}

/// One Server-Sent Events message.
#[derive(Debug, PartialEq, Eq)]
pub struct Message {
    /// Its `id` (the event's sequence number).
    pub id: Option<u64>,
    /// Its `data` lines, joined by newlines.
    pub data: String,
}

/// Splits a byte stream into messages, whatever the chunk boundaries.
#[derive(Debug, Default)]
pub struct SseParser {
    pending: Vec<u8>,
}

impl SseParser {
    /// Adds `chunk` and returns the messages it completed (comments and
    /// keep-alives are no messages).
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Message> {
        // Lines may end in CRLF; dropping every CR leaves LF-ended lines.
        self.pending.extend(chunk.iter().copied().filter(|b| *b != b'\r'));
        let mut messages = Vec::new();
        while let Some(end) = self.pending.windows(2).position(|w| w == b"\n\n") {
            let block: Vec<u8> = self.pending.drain(..end + 2).collect();
            let text = String::from_utf8_lossy(&block[..end]);
            let (mut id, mut data) = (None, Vec::new());
            for line in text.lines() {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "id" => id = value.parse().ok(),
                    "data" => data.push(value),
                    _ => {}
                }
            }
            if !data.is_empty() {
                messages.push(Message { id, data: data.join("\n") });
            }
        }
        messages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_whole_whatever_the_chunks() {
        let stream =
            b": keep-alive\n\nid: 7\nevent: gate_opened\ndata: {\"a\":\n\nid: 8\r\ndata: one\r\ndata: two\r\n\r\n";
        let whole = SseParser::default().push(stream);
        assert_eq!(
            whole,
            vec![Message { id: Some(7), data: "{\"a\":".into() }, Message { id: Some(8), data: "one\ntwo".into() },]
        );
        for split in 1..stream.len() {
            let mut parser = SseParser::default();
            let mut got = parser.push(&stream[..split]);
            got.extend(parser.push(&stream[split..]));
            assert_eq!(got, whole, "split at {split}");
        }
    }
}
