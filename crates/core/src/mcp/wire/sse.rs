//! The legacy SSE client transport (MCP 2024-11-05), which rmcp 3 lacks and many servers still speak,
//! and transport auto-detection.
//!
//! [`SseClientTransport`] opens `GET <url>` as an event stream; the first `endpoint` event names the
//! URL to POST to, which must have the stream's origin, so custom headers never leak to another
//! host. Events over [`SseConfig::max_event_bytes`] end the stream; a custom request's answer is read
//! as the server's own JSON ([`Pending`]). It implements rmcp's [`Transport`], so it serves as any
//! rmcp transport does.
//!
//! [`detect`] is the specification's compatibility probe for a bare URL: POST `initialize`
//! (streamable HTTP); on 400, 404 or 405 try the `GET`. A 401 or 403 is reported, never a reason to
//! fall back.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Client, StatusCode, Url};
use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ProtocolVersion, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::answer::{Reads, typed_answer};
use super::event_stream::{EventParser, EventStreamError};
use super::task_shapes;

/// Longest piece of a response body quoted in an error.
const BODY_EXCERPT: usize = 512;

/// Why the SSE transport failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// The HTTP request could not be made (connection refused, DNS, TLS, timeout).
    #[error("{method} {url} failed: {source}")]
    Request {
        method: &'static str,
        url: String,
        #[source]
        source: reqwest::Error,
    },
    /// The server needs credentials (401) or refused them (403).
    #[error("{method} {url}: the server requires authentication (HTTP {status}){}", auth_hint(.www_authenticate))]
    Unauthorized { method: &'static str, url: String, status: u16, www_authenticate: Option<String> },
    /// The server answered with another unexpected status.
    #[error("{method} {url}: HTTP {status}: {body}")]
    Status { method: &'static str, url: String, status: u16, body: String },
    /// The GET answered, but not with an event stream.
    #[error("GET {url} answered with content type {content_type:?}, not an event stream")]
    NotEventStream { url: String, content_type: String },
    /// No `endpoint` event arrived in time.
    #[error("the server at {url} did not announce its message endpoint within {after:?}")]
    EndpointTimeout { url: String, after: Duration },
    /// The announced endpoint is unusable.
    #[error("the server announced an unusable message endpoint {endpoint:?}: {reason}")]
    BadEndpoint { endpoint: String, reason: String },
    /// The event stream ended.
    #[error("the event stream from {url} ended: {reason}")]
    StreamEnded { url: String, reason: StreamEnd },
    /// The caller cancelled.
    #[error("cancelled")]
    Cancelled,
    /// A message could not be serialised.
    #[error("could not serialise a message: {0}")]
    Serialize(#[from] serde_json::Error),
}

fn auth_hint(www_authenticate: &Option<String>) -> String {
    www_authenticate.as_ref().map(|w| format!("; WWW-Authenticate: {w}")).unwrap_or_default()
}

/// Why the event stream stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamEnd {
    /// The server closed it.
    #[error("the server closed the stream")]
    Closed,
    /// Reading it failed.
    #[error("reading failed: {0}")]
    ReadFailed(String),
    /// One event exceeded the size limit.
    #[error("an event exceeded {limit} bytes")]
    EventTooLarge { limit: usize },
    /// The client closed it.
    #[error("the client closed the transport")]
    ClosedByClient,
}

/// How to reach a legacy SSE server.
#[derive(Debug, Clone)]
pub struct SseConfig {
    /// The event stream's URL, usually ending in `/sse`.
    pub url: Url,
    /// Headers sent on the GET and on every POST (e.g. `Authorization`).
    pub headers: HeaderMap,
    /// How long to wait for the `endpoint` event.
    pub endpoint_timeout: Duration,
    /// Time limit for each POST.
    pub post_timeout: Duration,
    /// Largest event accepted, in bytes.
    pub max_event_bytes: usize,
}

impl SseConfig {
    /// Defaults: 30 s for the endpoint and each POST, 64 MB per event.
    pub fn new(url: Url) -> Self {
        Self {
            url,
            headers: HeaderMap::new(),
            endpoint_timeout: Duration::from_secs(30),
            post_timeout: Duration::from_secs(30),
            max_event_bytes: 64 << 20,
        }
    }
}

/// The reader's verdict, shared with whoever holds an [`SseEndHandle`].
type SharedEnd = Arc<Mutex<Option<StreamEnd>>>;

/// Tells why the event stream of a transport ended, after it did.
#[derive(Debug, Clone)]
pub struct SseEndHandle(SharedEnd);

impl SseEndHandle {
    /// `None` while the stream is open.
    pub fn reason(&self) -> Option<StreamEnd> {
        self.0.lock().map(|end| end.clone()).unwrap_or(None)
    }
}

/// The ids of custom requests sent and not yet answered, whose answers are
/// read raw ([`Reads::Raw`]); at most [`PENDING_LIMIT`], the oldest forgotten
/// first (a request rmcp gave up on is never answered).
#[derive(Clone, Default)]
struct Pending(Arc<Mutex<VecDeque<RequestId>>>);

const PENDING_LIMIT: usize = 256;

impl Pending {
    fn sent(&self, message: &TxJsonRpcMessage<RoleClient>) {
        if Reads::of(message) != Reads::Raw {
            return;
        }
        let JsonRpcMessage::Request(request) = message else { return };
        let mut ids = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if ids.len() == PENDING_LIMIT {
            ids.pop_front();
        }
        ids.push_back(request.id.clone());
    }

    /// `data` as the answer to a pending custom request, read raw; `None` when it is not one.
    fn answer(&self, data: &str) -> Option<RxJsonRpcMessage<RoleClient>> {
        let mut ids = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if ids.is_empty() {
            return None;
        }
        let (id, result) = typed_answer(data.as_bytes(), Reads::Raw)?;
        let at = ids.iter().position(|pending| *pending == id)?;
        ids.remove(at);
        Some(JsonRpcMessage::response(result, id))
    }
}

/// A client transport over the legacy HTTP+SSE protocol. Dropping it closes the stream.
pub struct SseClientTransport {
    client: Client,
    endpoint: Url,
    headers: HeaderMap,
    post_timeout: Duration,
    messages: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    end: SharedEnd,
    cancel: CancellationToken,
    pending: Pending,
    _reader: DropGuard,
}

impl SseClientTransport {
    /// Opens the event stream and waits for the server to announce its endpoint.
    /// `cancel` ends the wait and, later, the whole transport.
    pub async fn connect(client: Client, config: SseConfig, cancel: CancellationToken) -> Result<Self, SseError> {
        let url = config.url.to_string();
        let get = client
            .get(config.url.clone())
            .headers(config.headers.clone())
            .header(header::ACCEPT, HeaderValue::from_static("text/event-stream"))
            .send();
        let response = tokio::select! {
            _ = cancel.cancelled() => return Err(SseError::Cancelled),
            r = tokio::time::timeout(config.endpoint_timeout, get) => match r {
                Err(_) => return Err(SseError::EndpointTimeout { url, after: config.endpoint_timeout }),
                Ok(r) => r.map_err(|source| SseError::Request { method: "GET", url: url.clone(), source })?,
            },
        };
        let response = check_status("GET", &url, response).await?;
        let content_type =
            response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        if !content_type.starts_with("text/event-stream") {
            return Err(SseError::NotEventStream { url, content_type });
        }

        let reader_cancel = cancel.child_token();
        let (endpoint_tx, endpoint_rx) = oneshot::channel();
        // A small buffer: a flooding server waits on TCP instead of filling memory.
        let (message_tx, messages) = mpsc::channel(32);
        let end: SharedEnd = Arc::new(Mutex::new(None));
        let pending = Pending::default();
        tokio::spawn(read_stream(
            response,
            EventParser::new(config.max_event_bytes),
            endpoint_tx,
            message_tx,
            (end.clone(), pending.clone()),
            reader_cancel.clone(),
        ));
        let reader = reader_cancel.clone().drop_guard();

        let announced = tokio::select! {
            // Cancelling also stops the reader: report the cancellation, not the ended stream.
            biased;
            _ = cancel.cancelled() => return Err(SseError::Cancelled),
            r = tokio::time::timeout(config.endpoint_timeout, endpoint_rx) => match r {
                Err(_) => return Err(SseError::EndpointTimeout { url, after: config.endpoint_timeout }),
                Ok(Err(_)) => {
                    let reason = end.lock().ok().and_then(|e| e.clone()).unwrap_or(StreamEnd::Closed);
                    return Err(SseError::StreamEnded { url, reason });
                }
                Ok(Ok(endpoint)) => endpoint,
            },
        };
        let endpoint = resolve_endpoint(&config.url, &announced)?;
        tracing::debug!(%endpoint, "SSE server announced its message endpoint");
        Ok(Self {
            client,
            endpoint,
            headers: config.headers,
            post_timeout: config.post_timeout,
            messages,
            end,
            cancel: reader_cancel,
            pending,
            _reader: reader,
        })
    }

    /// The URL messages are POSTed to.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// A handle that tells, once the stream has ended, why.
    pub fn end_handle(&self) -> SseEndHandle {
        SseEndHandle(self.end.clone())
    }
}

/// Joins the announced endpoint to the stream URL and insists on the same origin.
fn resolve_endpoint(stream: &Url, announced: &str) -> Result<Url, SseError> {
    let bad = |reason: &str| SseError::BadEndpoint { endpoint: announced.to_owned(), reason: reason.to_owned() };
    let endpoint = stream.join(announced.trim()).map_err(|e| bad(&e.to_string()))?;
    if endpoint.origin() != stream.origin() {
        return Err(bad(&format!("it is not on the stream's origin {}", stream.origin().ascii_serialization())));
    }
    Ok(endpoint)
}

/// Turns a non-success status into the matching error.
async fn check_status(
    method: &'static str,
    url: &str,
    response: reqwest::Response,
) -> Result<reqwest::Response, SseError> {
    if response.status().is_success() {
        return Ok(response);
    }
    Err(status_error(method, url, response).await)
}

/// The error for a response whose status is not a success.
async fn status_error(method: &'static str, url: &str, response: reqwest::Response) -> SseError {
    let status = response.status();
    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        let www_authenticate =
            response.headers().get(header::WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        return SseError::Unauthorized { method, url: url.to_owned(), status: status.as_u16(), www_authenticate };
    }
    SseError::Status { method, url: url.to_owned(), status: status.as_u16(), body: body_excerpt(response).await }
}

/// The first bytes of a body, read without buffering the rest.
async fn body_excerpt(response: reqwest::Response) -> String {
    let mut stream = response.bytes_stream();
    let mut body = Vec::new();
    while let Some(Ok(chunk)) = stream.next().await {
        body.extend_from_slice(&chunk[..chunk.len().min(BODY_EXCERPT - body.len())]);
        if body.len() >= BODY_EXCERPT {
            break;
        }
    }
    String::from_utf8_lossy(&body).trim().to_owned()
}

/// A `message` event's JSON-RPC message: the answer to a pending custom
/// request read raw, a server's request that asks to run as a task renamed
/// ([`task_shapes::as_custom`]), anything else as rmcp reads it.
fn message_of(pending: &Pending, data: String) -> serde_json::Result<RxJsonRpcMessage<RoleClient>> {
    let data = task_shapes::as_custom(data.as_bytes()).and_then(|r| String::from_utf8(r).ok()).unwrap_or(data);
    pending.answer(&data).map_or_else(|| serde_json::from_str(&data), Ok)
}

/// Reads the event stream until it ends or `cancel` fires; says why in `end`.
async fn read_stream(
    response: reqwest::Response,
    mut parser: EventParser,
    endpoint_tx: oneshot::Sender<String>,
    messages: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    (end, pending): (SharedEnd, Pending),
    cancel: CancellationToken,
) {
    let mut endpoint_tx = Some(endpoint_tx);
    let mut stream = response.bytes_stream();
    let mut events = Vec::new();
    let reason = 'read: loop {
        let chunk = tokio::select! {
            _ = cancel.cancelled() => break 'read StreamEnd::ClosedByClient,
            chunk = stream.next() => chunk,
        };
        let chunk = match chunk {
            None => break StreamEnd::Closed,
            Some(Err(e)) => break StreamEnd::ReadFailed(e.to_string()),
            Some(Ok(chunk)) => chunk,
        };
        if let Err(EventStreamError::TooLarge { limit }) = parser.feed(&chunk, &mut events) {
            break StreamEnd::EventTooLarge { limit };
        }
        for event in events.drain(..) {
            match event.name.as_str() {
                "endpoint" => match endpoint_tx.take() {
                    Some(tx) => {
                        let _ = tx.send(event.data);
                    }
                    None => tracing::warn!("SSE server announced a second endpoint; ignored"),
                },
                "message" => match message_of(&pending, event.data) {
                    Ok(message) => {
                        let sent = tokio::select! {
                            _ = cancel.cancelled() => break 'read StreamEnd::ClosedByClient,
                            sent = messages.send(message) => sent,
                        };
                        if sent.is_err() {
                            break 'read StreamEnd::ClosedByClient;
                        }
                    }
                    Err(error) => tracing::warn!(%error, "SSE server sent a message that is not JSON-RPC; ignored"),
                },
                other => tracing::debug!(event = other, "ignoring SSE event"),
            }
        }
    };
    tracing::debug!(%reason, "SSE stream ended");
    if let Ok(mut slot) = end.lock() {
        *slot = Some(reason);
    }
}

impl Transport<RoleClient> for SseClientTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.pending.sent(&item);
        let body = match task_shapes::advertised(&item) {
            Some(initialize) => serde_json::to_vec(&initialize),
            None => serde_json::to_vec(&item),
        };
        let request = body.map(|body| {
            self.client
                .post(self.endpoint.clone())
                .headers(self.headers.clone())
                .header(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .timeout(self.post_timeout)
                .body(body)
        });
        let url = self.endpoint.to_string();
        let cancel = self.cancel.clone();
        async move {
            let response = tokio::select! {
                _ = cancel.cancelled() => return Err(SseError::Cancelled),
                r = request?.send() => r.map_err(|source| SseError::Request { method: "POST", url: url.clone(), source })?,
            };
            check_status("POST", &url, response).await.map(drop)
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.messages.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.cancel.cancel();
        self.messages.close();
        Ok(())
    }
}

/// Which transport a URL-only server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DetectedTransport {
    /// Streamable HTTP (2025-03-26 and later).
    StreamableHttp,
    /// The legacy HTTP+SSE transport (2024-11-05).
    Sse,
}

/// What a status answering the streamable HTTP probe means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// The server speaks streamable HTTP.
    StreamableHttp,
    /// Try the legacy SSE transport.
    TrySse,
    /// Credentials are needed or were refused: report it, never fall back.
    Unauthorized,
    /// Something else is wrong: report the status.
    Fail,
}

/// Classifies the status of the streamable HTTP `initialize` probe.
pub fn classify_probe(status: StatusCode) -> ProbeOutcome {
    match status.as_u16() {
        200..=299 => ProbeOutcome::StreamableHttp,
        400 | 404 | 405 => ProbeOutcome::TrySse,
        401 | 403 => ProbeOutcome::Unauthorized,
        _ => ProbeOutcome::Fail,
    }
}

/// The `initialize` request used as the probe.
fn probe_body() -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": ProtocolVersion::LATEST_WITH_INITIALIZE,
            "capabilities": {},
            "clientInfo": {"name": "patchbay-probe", "version": env!("CARGO_PKG_VERSION")},
        },
    })
}

/// The `server/discover` request that a server of 2026-07-28 or later answers; an older one
/// refuses it (it has no session yet), so the `initialize` probe follows.
fn discover_body() -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": ProtocolVersion::V_2026_07_28,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "patchbay-probe", "version": env!("CARGO_PKG_VERSION")},
        }},
    })
}

/// Finds out whether `url` speaks streamable HTTP or legacy SSE, sending
/// `headers` on every request. Each request is bounded by `timeout`. A server
/// that answers `server/discover` speaks streamable HTTP (2026-07-28 has no
/// `initialize`, so the older probe alone would send such a server to SSE).
pub async fn detect(
    client: &Client,
    url: &Url,
    headers: &HeaderMap,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<DetectedTransport, SseError> {
    let url_text = url.to_string();
    let post = |body: serde_json::Value, extra: HeaderMap, within: Duration| {
        let request = client
            .post(url.clone())
            .headers(headers.clone())
            .headers(extra)
            .header(header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"))
            .timeout(within)
            .json(&body)
            .send();
        async {
            tokio::select! {
                _ = cancel.cancelled() => Err(SseError::Cancelled),
                r = request => r.map_err(|source| SseError::Request { method: "POST", url: url_text.clone(), source }),
            }
        }
    };
    let mut modern = HeaderMap::new();
    modern.insert("mcp-protocol-version", HeaderValue::from_static("2026-07-28"));
    modern.insert("mcp-method", HeaderValue::from_static("server/discover"));
    // An error or no answer in time is an older server's way too: the `initialize` probe follows.
    match post(discover_body(), modern, super::DISCOVER_WAIT.min(timeout / 2)).await {
        Ok(answer) if answer.status().is_success() => return Ok(DetectedTransport::StreamableHttp),
        Err(SseError::Cancelled) => return Err(SseError::Cancelled),
        _ => {}
    }
    let response = post(probe_body(), HeaderMap::new(), timeout).await?;
    match classify_probe(response.status()) {
        ProbeOutcome::StreamableHttp => {
            end_probe_session(client, url, headers, &response, timeout).await;
            Ok(DetectedTransport::StreamableHttp)
        }
        ProbeOutcome::Unauthorized | ProbeOutcome::Fail => Err(status_error("POST", &url_text, response).await),
        ProbeOutcome::TrySse => {
            drop(response);
            let get = client
                .get(url.clone())
                .headers(headers.clone())
                .header(header::ACCEPT, HeaderValue::from_static("text/event-stream"))
                .timeout(timeout)
                .send();
            let response = tokio::select! {
                _ = cancel.cancelled() => return Err(SseError::Cancelled),
                r = get => r.map_err(|source| SseError::Request { method: "GET", url: url_text.clone(), source })?,
            };
            let response = check_status("GET", &url_text, response).await?;
            let content_type =
                response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
            if content_type.starts_with("text/event-stream") {
                Ok(DetectedTransport::Sse)
            } else {
                Err(SseError::NotEventStream { url: url_text, content_type })
            }
        }
    }
}

/// Ends the session the probe opened, if the server made one (best effort).
async fn end_probe_session(
    client: &Client,
    url: &Url,
    headers: &HeaderMap,
    response: &reqwest::Response,
    timeout: Duration,
) {
    let Some(session) = response.headers().get("mcp-session-id").cloned() else { return };
    let deleted =
        client.delete(url.clone()).headers(headers.clone()).header("mcp-session-id", session).timeout(timeout).send();
    if let Err(error) = deleted.await {
        tracing::debug!(%error, "could not end the detection probe's session");
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest, CustomRequest, NumberOrString, ServerResult};

    use super::*;
    use crate::mcp::wire::lane::tests::ping;

    #[test]
    fn only_a_pending_custom_requests_answer_is_read_raw_and_only_once() {
        let pending = Pending::default();
        let custom = ClientRequest::CustomRequest(CustomRequest::new("tools/list", None));
        pending.sent(&ClientJsonRpcMessage::request(custom, NumberOrString::Number(7)));
        pending.sent(&ClientJsonRpcMessage::request(ping(), NumberOrString::Number(8)));
        let tools = r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"t","inputSchema":{},"execution":{"taskSupport":"required"}}]}}"#;
        match pending.answer(tools) {
            Some(JsonRpcMessage::Response(response)) => {
                let ServerResult::CustomResult(raw) = response.result else { panic!("{:?}", response.result) };
                assert_eq!(raw.0["tools"][0]["execution"]["taskSupport"], "required");
            }
            other => panic!("expected the raw answer, got {other:?}"),
        }
        // Answered once; the ping's answer is read as rmcp reads it.
        assert!(pending.answer(tools).is_none());
        assert!(pending.answer(r#"{"jsonrpc":"2.0","id":8,"result":{}}"#).is_none());
    }

    #[test]
    fn endpoint_must_stay_on_the_stream_origin() {
        let stream = Url::parse("http://127.0.0.1:3001/sse").unwrap();
        assert_eq!(
            resolve_endpoint(&stream, "/message?sessionId=x").unwrap().as_str(),
            "http://127.0.0.1:3001/message?sessionId=x"
        );
        assert_eq!(resolve_endpoint(&stream, "http://127.0.0.1:3001/m").unwrap().as_str(), "http://127.0.0.1:3001/m");
        assert!(matches!(resolve_endpoint(&stream, "http://evil.example/m"), Err(SseError::BadEndpoint { .. })));
        assert!(matches!(resolve_endpoint(&stream, "http://127.0.0.1:9/m"), Err(SseError::BadEndpoint { .. })));
    }

    #[test]
    fn probe_falls_back_only_on_400_404_405() {
        let outcome = |code| classify_probe(StatusCode::from_u16(code).unwrap());
        assert_eq!(outcome(200), ProbeOutcome::StreamableHttp);
        assert_eq!(outcome(202), ProbeOutcome::StreamableHttp);
        for code in [400, 404, 405] {
            assert_eq!(outcome(code), ProbeOutcome::TrySse, "{code}");
        }
        for code in [401, 403] {
            assert_eq!(outcome(code), ProbeOutcome::Unauthorized, "{code}");
        }
        for code in [406, 415, 500, 502] {
            assert_eq!(outcome(code), ProbeOutcome::Fail, "{code}");
        }
    }
}
