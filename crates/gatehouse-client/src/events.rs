//! The event stream (`GET /events`, Server-Sent Events) read in bursts: the
//! events that arrived together, parsed into the engine's [`Event`], with
//! the highest sequence number read (which advances past events this
//! client cannot read, so a follower never asks for them again).

use gatehouse_engine::Event;

use crate::error::{ClientError, Transport};

/// The event stream after some sequence number; [`crate::Client::events`] opens it.
pub struct EventStream {
    pub(crate) answer: reqwest::Response,
    pub(crate) parser: SseParser,
    pub(crate) server: String,
}

/// Events that arrived together.
#[derive(Debug)]
pub struct Burst {
    /// The events this client could read, in order.
    pub events: Vec<Event>,
    /// The highest sequence number in the burst, read or not.
    pub last_seq: Option<u64>,
}

impl EventStream {
    /// The next burst (never empty of messages); `None` when the server ended the stream.
    pub async fn next_burst(&mut self) -> Result<Option<Burst>, ClientError> {
        loop {
            let chunk =
                self.answer.chunk().await.map_err(|source| Transport { server: self.server.clone(), source })?;
            let Some(chunk) = chunk else { return Ok(None) };
            let messages = self.parser.push(&chunk);
            if messages.is_empty() {
                continue;
            }
            let last_seq = messages.iter().filter_map(|m| m.id).max();
            let events = messages
                .iter()
                .filter_map(|m| {
                    serde_json::from_str::<Event>(&m.data)
                        .inspect_err(|e| tracing::debug!(error = %e, "an event this client cannot read"))
                        .ok()
                })
                .collect();
            return Ok(Some(Burst { events, last_seq }));
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
