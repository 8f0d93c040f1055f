//! A `text/event-stream` reader with a size limit, shared by the legacy SSE
//! transport ([`super::sse`]) and the streamable HTTP answers Patchbay reads
//! itself ([`super::http::Lossless`]).
//!
//! [`EventParser`] takes bytes as they come and gives complete events; an
//! event (or a line) larger than its limit is refused as soon as it crosses
//! the limit, so memory stays bounded whatever the server sends. [`events`]
//! reads a response body as a stream of [`Sse`] events with that parser.

use bytes::Bytes;
use futures::stream::{self, BoxStream, Stream};
use futures::{StreamExt, TryStreamExt};
use sse_stream::Sse;

/// An event stream as rmcp's HTTP clients give it.
pub(crate) type EventStream = BoxStream<'static, Result<Sse, rmcp::transport::streamable_http_client::SseError>>;

/// Why an event stream was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventStreamError {
    /// One event (or one line) exceeded the size limit.
    #[error("an event exceeded {limit} bytes")]
    TooLarge { limit: usize },
}

/// One parsed server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// The `event` field; `message` when the event named none.
    pub(crate) name: String,
    pub(crate) data: String,
    /// The `id` field, when the event had one.
    pub(crate) id: Option<String>,
}

/// An incremental `text/event-stream` parser with a size limit.
pub(crate) struct EventParser {
    line: Vec<u8>,
    name: String,
    data: String,
    id: Option<String>,
    limit: usize,
}

impl EventParser {
    pub(crate) fn new(limit: usize) -> Self {
        Self { line: Vec::new(), name: String::new(), data: String::new(), id: None, limit }
    }

    /// Feeds bytes; completed events are appended to `out`.
    pub(crate) fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<Event>) -> Result<(), EventStreamError> {
        let too_large = EventStreamError::TooLarge { limit: self.limit };
        while let Some(pos) = chunk.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&chunk[..pos]);
            chunk = &chunk[pos + 1..];
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.line_done(&String::from_utf8_lossy(&line), out);
            if self.data.len() > self.limit {
                return Err(too_large);
            }
        }
        self.line.extend_from_slice(chunk);
        if self.line.len() + self.data.len() > self.limit {
            return Err(too_large);
        }
        Ok(())
    }

    fn line_done(&mut self, line: &str, out: &mut Vec<Event>) {
        if line.is_empty() {
            let id = self.id.take();
            if !self.data.is_empty() {
                self.data.pop(); // the newline after the last data line
                let name = if self.name.is_empty() { "message".to_owned() } else { std::mem::take(&mut self.name) };
                out.push(Event { name, data: std::mem::take(&mut self.data), id });
            }
            self.name.clear();
            return;
        }
        if line.starts_with(':') {
            return; // a comment, e.g. a keep-alive
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.name = value.to_owned(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "id" => self.id = Some(value.to_owned()),
            _ => {} // `retry` does not matter: Patchbay does not resume these streams.
        }
    }
}

/// `body` read as server-sent events, none larger than `limit`. A body that
/// fails, or an event over the limit, ends the stream with the error
/// ([`EventStreamError`] inside [`sse_stream::Error::Body`]).
pub(crate) fn events<S, E>(body: S, limit: usize) -> BoxStream<'static, Result<Sse, sse_stream::Error>>
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let body = body.map_err(|e| sse_stream::Error::Body(Box::new(e))).boxed();
    // The state is `None` once the stream failed: nothing is read after an error.
    stream::unfold(Some((body, EventParser::new(limit))), |state| async move {
        let (mut body, mut parser) = state?;
        let mut parsed = Vec::new();
        let (items, next) = match body.next().await? {
            Err(e) => (vec![Err(e)], None),
            Ok(chunk) => {
                let fed = parser.feed(&chunk, &mut parsed);
                let mut items: Vec<Result<Sse, sse_stream::Error>> = parsed.into_iter().map(|e| Ok(e.into())).collect();
                match fed {
                    Ok(()) => (items, Some((body, parser))),
                    Err(too_large) => {
                        items.push(Err(sse_stream::Error::Body(Box::new(too_large))));
                        (items, None)
                    }
                }
            }
        };
        Some((stream::iter(items), next))
    })
    .flatten()
    .boxed()
}

impl From<Event> for Sse {
    fn from(event: Event) -> Self {
        let sse = Sse::default().event(event.name).data(event.data);
        match event.id {
            Some(id) => sse.id(id),
            None => sse,
        }
    }
}

/// Whether `error` is an event stream's refusal of an event over its limit.
pub(crate) fn is_too_large(error: &sse_stream::Error) -> bool {
    matches!(error, sse_stream::Error::Body(body) if body.downcast_ref::<EventStreamError>().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&str], limit: usize) -> Result<Vec<Event>, EventStreamError> {
        let mut parser = EventParser::new(limit);
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk.as_bytes(), &mut out)?;
        }
        Ok(out)
    }

    fn event(name: &str, data: &str) -> Event {
        Event { name: name.into(), data: data.into(), id: None }
    }

    #[test]
    fn parses_events_split_across_chunks() {
        let events = parse(
            &[
                "event: endpoint\r\ndata: /messages?session",
                "Id=1\r\n\r\n: keep-alive\n\n",
                "data: {\"a\":\ndata: 1}\n\n",
            ],
            1024,
        )
        .unwrap();
        assert_eq!(events, vec![event("endpoint", "/messages?sessionId=1"), event("message", "{\"a\":\n1}")]);
    }

    #[test]
    fn an_event_name_or_id_does_not_leak_into_the_next_event() {
        let events = parse(&["event: endpoint\nid: 0\n\nevent: other\nid: 7\ndata: x\n\ndata: y\n\n"], 1024).unwrap();
        let other = Event { id: Some("7".into()), ..event("other", "x") };
        assert_eq!(events, vec![other, event("message", "y")]);
    }

    #[test]
    fn oversized_events_and_lines_are_refused() {
        let too_large = Err(EventStreamError::TooLarge { limit: 8 });
        assert_eq!(parse(&["data: 0123456789\n"], 8), too_large);
        assert_eq!(parse(&["data: 0123456789"], 8), too_large);
        assert_eq!(parse(&["data: 0123\n", "data: 4567\n"], 8), too_large);
    }

    fn body(chunks: &[&'static str]) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
        stream::iter(chunks.iter().map(|chunk| Ok(Bytes::from_static(chunk.as_bytes()))).collect::<Vec<_>>())
    }

    #[tokio::test]
    async fn a_body_is_read_as_events_with_their_ids() {
        let read: Vec<_> = events(body(&["id: 1\ndata: {}\n\nda", "ta: [1]\n\n"]), 64).collect().await;
        let read: Vec<Sse> = read.into_iter().map(Result::unwrap).collect();
        assert_eq!(read.len(), 2);
        assert_eq!((read[0].id.as_deref(), read[0].data.as_deref()), (Some("1"), Some("{}")));
        assert_eq!((read[1].id.as_deref(), read[1].data.as_deref()), (None, Some("[1]")));
    }

    #[tokio::test]
    async fn an_event_over_the_limit_ends_the_stream_after_the_events_before_it() {
        let read: Vec<_> = events(body(&["data: a\n\ndata: 0123456789", "data: more\n\n"]), 8).collect().await;
        assert_eq!(read.len(), 2, "{read:?}");
        assert_eq!(read[0].as_ref().unwrap().data.as_deref(), Some("a"));
        let error = read[1].as_ref().unwrap_err();
        assert!(is_too_large(error), "{error}");
        assert!(error.to_string().contains("exceeded 8 bytes"), "{error}");
    }
}
