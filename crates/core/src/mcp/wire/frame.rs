//! A size limit on the messages a stdio server sends, that fails the call the
//! oversized message answered instead of leaving it to time out.
//!
//! rmcp's stdio transport drops a line longer than its limit without a word, so
//! a tool that returns 100 MB used to end in a timeout a minute later.
//! [`BoundedLines`] sits between the child's stdout and rmcp: lines up to
//! [`MAX_MESSAGE_BYTES`] pass through untouched (no copy is kept), a longer line
//! is cut off where it crosses the limit (rmcp sees an unparsable fragment and
//! ignores it), the rest of it is skipped, and when the line was a response its
//! `id` (found by a streaming scan, wherever it sits in the object) gets a
//! JSON-RPC error in its place: [`TOO_LARGE_CODE`] with the limit and the size in
//! `data`, which [`McpError::from_service`](super::McpError) turns into
//! [`McpError::MessageTooLarge`](super::McpError::MessageTooLarge). Memory stays
//! bounded by the limit whatever the server sends.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};

/// The largest message accepted from a stdio server: 16 MiB, the same as rmcp's
/// limit for one streamable HTTP event, so a result acceptable over HTTP is
/// acceptable over stdio. It is above the UI's 10 MB copy of a result.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// The JSON-RPC error code put in place of an oversized response.
pub const TOO_LARGE_CODE: i32 = -32_099;
/// The key in the error's `data` that marks it as Patchbay's (with the limit as value).
pub const LIMIT_KEY: &str = "patchbayMessageLimit";
/// The key in the error's `data` holding the oversized message's size in bytes.
pub const SIZE_KEY: &str = "size";

/// Longest top-level key remembered by the scan (`id`, `method`).
const KEY_BYTES: usize = 8;
/// Longest `id` value kept.
const ID_BYTES: usize = 256;
/// Bytes read from the child at a time.
const CHUNK: usize = 64 << 10;

/// An [`AsyncRead`] of newline-delimited JSON-RPC that never passes on a line
/// longer than its limit; see the module docs.
pub struct BoundedLines<R> {
    inner: R,
    limit: usize,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    /// Bytes of the current line seen so far.
    line: usize,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    scan: Scan,
    /// Bytes to hand out before anything else (a cut line's newline, an error).
    pending: VecDeque<u8>,
}

impl<R> BoundedLines<R> {
    /// Wraps `inner` with a limit of `limit` bytes per line (newline excluded).
    pub fn new(inner: R, limit: usize) -> Self {
        Self {
            inner,
            limit,
            buf: vec![0; CHUNK].into_boxed_slice(),
            pos: 0,
            len: 0,
            line: 0,
            discarding: false,
            scan: Scan::default(),
            pending: VecDeque::new(),
        }
    }

    /// The oversized line ended: queue an error answering it, if it was a response.
    fn finish_oversized(&mut self) {
        let scan = std::mem::take(&mut self.scan);
        let size = self.line;
        self.line = 0;
        self.discarding = false;
        if scan.has_method {
            // A request or notification from the server; there is no call to fail.
            tracing::warn!(size, limit = self.limit, "dropped an oversized message from an MCP server");
            return;
        }
        let Some(id) = scan.id.as_deref().and_then(|raw| serde_json::from_slice::<Value>(raw).ok()) else {
            tracing::warn!(size, limit = self.limit, "dropped an oversized message without an id from an MCP server");
            return;
        };
        if !(id.is_string() || id.is_number()) {
            return;
        }
        let error = too_large_answer(id, self.limit, Some(size));
        self.pending.extend(error.to_string().bytes());
        self.pending.push_back(b'\n');
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if !this.pending.is_empty() {
                let n = out.remaining().min(this.pending.len());
                let (front, back) = this.pending.as_slices();
                let from_front = n.min(front.len());
                out.put_slice(&front[..from_front]);
                out.put_slice(&back[..n - from_front]);
                this.pending.drain(..n);
                return Poll::Ready(Ok(()));
            }
            if this.pos == this.len {
                let mut read = ReadBuf::new(&mut this.buf);
                ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
                let n = read.filled().len();
                if n == 0 {
                    return Poll::Ready(Ok(()));
                }
                (this.pos, this.len) = (0, n);
            }
            let available = &this.buf[this.pos..this.len];
            let newline = available.iter().position(|&b| b == b'\n');
            let content = newline.unwrap_or(available.len());
            if this.discarding {
                this.scan.feed(&available[..content]);
                this.line += content;
                match newline {
                    Some(at) => {
                        this.pos += at + 1;
                        this.finish_oversized();
                    }
                    None => this.pos = this.len,
                }
                continue;
            }
            if this.line + content > this.limit {
                // End what rmcp has of this line (an unparsable fragment it ignores) and skip the rest.
                this.discarding = true;
                this.pending.push_back(b'\n');
                continue;
            }
            let take = newline.map_or(content, |at| at + 1).min(out.remaining());
            let chunk = &available[..take];
            out.put_slice(chunk);
            this.pos += take;
            if chunk.last() == Some(&b'\n') {
                this.line = 0;
                this.scan = Scan::default();
            } else {
                this.scan.feed(chunk);
                this.line += take;
            }
            return Poll::Ready(Ok(()));
        }
    }
}

/// The JSON-RPC error put in place of an oversized answer to request `id`:
/// [`TOO_LARGE_CODE`], with the limit and, when the transport knows it, the
/// answer's size in `data`.
pub(crate) fn too_large_answer(id: Value, limit: usize, size: Option<usize>) -> Value {
    let (message, data) = match size {
        Some(size) => (
            format!("the answer was {size} bytes, more than the {limit} byte limit"),
            json!({ LIMIT_KEY: limit, SIZE_KEY: size }),
        ),
        None => (format!("the answer was larger than the {limit} byte limit"), json!({ LIMIT_KEY: limit })),
    };
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": TOO_LARGE_CODE, "message": message, "data": data } })
}

/// The limit and size (when known) carried by an error put in place of an
/// oversized answer ([`too_large_answer`]); `None` for any other error.
pub(crate) fn too_large(error: &rmcp::model::ErrorData) -> Option<(usize, Option<usize>)> {
    if error.code.0 != TOO_LARGE_CODE {
        return None;
    }
    let data = error.data.as_ref()?;
    let number = |key: &str| data.get(key)?.as_u64().and_then(|n| usize::try_from(n).ok());
    Some((number(LIMIT_KEY)?, number(SIZE_KEY)))
}

/// A streaming scan of one JSON object for its top-level `id` and `method`,
/// in constant memory.
#[derive(Default)]
struct Scan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    expect_key: bool,
    /// Capturing the key being read (depth 1).
    key: Option<Vec<u8>>,
    /// The last complete top-level key.
    last_key: Vec<u8>,
    /// Capturing the value of `id`.
    capturing_id: bool,
    id: Option<Vec<u8>>,
    has_method: bool,
}

impl Scan {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if self.capturing_id && !(self.depth == 1 && !self.in_string && matches!(b, b',' | b'}')) {
            let id = self.id.get_or_insert_with(Vec::new);
            if id.len() < ID_BYTES && !(id.is_empty() && b.is_ascii_whitespace()) {
                id.push(b);
            }
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if let Some(key) = self.key.take() {
                    self.last_key = key;
                }
            } else if let Some(key) = &mut self.key
                && key.len() <= KEY_BYTES
            {
                key.push(b);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.key = Some(Vec::new());
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_key = true;
                }
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.capturing_id = false;
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 => {
                self.expect_key = false;
                match self.last_key.as_slice() {
                    b"id" => {
                        self.capturing_id = true;
                        self.id = Some(Vec::new());
                    }
                    b"method" => self.has_method = true,
                    _ => {}
                }
            }
            b',' if self.depth == 1 => {
                self.expect_key = true;
                self.capturing_id = false;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    async fn through(input: &[u8], limit: usize) -> String {
        let mut out = Vec::new();
        BoundedLines::new(input, limit).read_to_end(&mut out).await.unwrap();
        String::from_utf8(out).unwrap()
    }

    #[tokio::test]
    async fn lines_within_the_limit_pass_unchanged() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n";
        assert_eq!(through(input, 64).await.as_bytes(), input);
    }

    #[tokio::test]
    async fn an_oversized_response_becomes_an_error_for_its_id_wherever_the_id_is() {
        let big = "y".repeat(500);
        // The TypeScript SDK writes `id` after `result`.
        let input = format!(
            "{{\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{big}\\\"id\\\":9\"}}]}},\"jsonrpc\":\"2.0\",\"id\":\"a-7\"}}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{}}}}\n"
        );
        let out = through(input.as_bytes(), 100).await;
        let lines: Vec<&str> = out.lines().collect();
        // The cut fragment ends at once, then the error, then the next message untouched.
        assert_eq!(lines[0], "");
        let error: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(error["id"], "a-7");
        assert_eq!(error["error"]["code"], TOO_LARGE_CODE);
        assert_eq!(error["error"]["data"][LIMIT_KEY], 100);
        assert_eq!(error["error"]["data"][SIZE_KEY], input.lines().next().unwrap().len());
        assert_eq!(lines[2], "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
    }

    #[tokio::test]
    async fn an_oversized_request_or_notification_is_dropped() {
        let big = "z".repeat(300);
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"sampling/createMessage\",\"params\":\"{big}\"}}\n{{\"id\":5,\"result\":1}}\n"
        );
        let out = through(input.as_bytes(), 100).await;
        assert_eq!(out, "\n{\"id\":5,\"result\":1}\n");
    }

    #[tokio::test]
    async fn a_partial_line_before_the_cut_is_ended() {
        let input = format!("{{\"id\":1,\"result\":\"{}\"}}\n", "q".repeat(200));
        // A reader with a tiny buffer gets part of the line before the limit is crossed.
        let mut reader = BoundedLines::new(input.as_bytes(), 50);
        let mut out = Vec::new();
        let mut small = [0u8; 7];
        loop {
            let n = reader.read(&mut small).await.unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&small[..n]);
        }
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].len() <= 50, "the fragment is bounded: {}", lines[0].len());
        let error: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(error["id"], 1);
    }
}
