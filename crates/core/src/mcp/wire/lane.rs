//! The direct lane: the registry's requests sent by the calling task and answered straight back to
//! it, past rmcp's service loop, which hands each request and answer between tasks four times (as
//! many again over streamable HTTP), each a wait for a core on a busy machine. rmcp keeps the rest:
//! the handshake, notifications, the server's requests and its own. Each lane request gets its own
//! id and progress token (`pb-N`, strings rmcp's numbers never equal) from [`Lane::request`].
//!
//! - Over a pipe (stdio, in-process) the caller writes to the outbox and reads its answer from the
//!   pipe itself ([`super::pipe`]); over streamable HTTP it POSTs in rmcp's session ([`HttpPost`])
//!   and reads the POST's response, handing what else it carries to rmcp ([`Laned`]).
//! - A tool call's answer is read as a `CallToolResult`, a custom request's as the server's own JSON
//!   ([`typed_answer`], [`Reads`]); when the connection ends, waiting requests fail as rmcp's would
//!   ([`ServiceError::TransportClosed`]).
//!
//! Used only with a protocol that has the `initialize` handshake (and for a stdio server's probe,
//! before any: [`LaneRequest::answer_within`]): from 2026-07-28 rmcp checks that a
//! server's request belongs to one of its own requests, which the lane's are not.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};

use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, GetExtensions, GetMeta, JsonRpcMessage, NumberOrString, ProgressToken,
    RequestId, RequestMetaObject, ServerJsonRpcMessage,
};
use rmcp::service::{InboundStreamOrigin, Peer, ServiceError};

use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::{SseError, StreamableHttpPostResponse};
use sse_stream::Sse;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::answer::{Answer, InOrder, LaneError, Reads, typed_answer};
use super::http::{HttpPost, PostFailure};
use super::pipe::{PipeAnswer, PipeEnd};

/// Sends the registry's requests to one server without rmcp's service loop.
#[derive(Clone)]
pub(crate) struct Lane {
    route: Route,
    /// The number of the last request.
    next: Arc<AtomicU64>,
}

#[derive(Clone)]
enum Route {
    /// Written to the pipe; the answer is read by the caller.
    Pipe(PipeEnd),
    /// POSTed by the caller; answered on the POST's own response.
    Http(Arc<HttpRoute>),
}

/// A lane request on its way: its id and progress token (for routing and
/// cancellation), and its answer. Dropping it abandons the request.
pub(crate) struct LaneRequest {
    pub(crate) id: RequestId,
    pub(crate) progress_token: ProgressToken,
    answer: Pending,
}

enum Pending {
    /// Read from the pipe by the caller.
    Pipe(PipeAnswer),
    /// The POST and the reading of its response, run by the caller.
    Http(BoxFuture<'static, Answer>),
}

impl LaneRequest {
    /// The server's answer, or [`ServiceError::TransportClosed`] when the
    /// connection ended first.
    pub(crate) async fn answer(self) -> Answer {
        match self.answer {
            Pending::Pipe(answer) => answer.answer().await,
            Pending::Http(exchange) => exchange.await,
        }
    }

    /// The answer if it comes within `wait`, for a probe sent before the handshake. A later
    /// one never reaches rmcp: over a pipe the reader keeps it for [`Lane::late`]
    /// ([`PipeAnswer::mark_probe`]), over HTTP it would come on the POST's own response,
    /// dropped with the exchange.
    pub(crate) async fn answer_within(self, wait: Duration) -> Option<Answer> {
        if let Pending::Pipe(answer) = &self.answer {
            answer.mark_probe();
        }
        tokio::time::timeout(wait, self.answer()).await.ok()
    }
}

impl Lane {
    /// The lane of a pipe ([`super::pipe::open`]).
    pub(crate) fn pipe(end: PipeEnd) -> Self {
        Lane { route: Route::Pipe(end), next: Arc::default() }
    }

    /// The lane, if the connection's protocol allows it (see the module docs).
    pub(crate) fn usable(self, peer: &Peer<RoleClient>) -> Option<Self> {
        if !peer.peer_info().is_some_and(|info| info.protocol_version.has_initialize()) {
            return None;
        }
        if let Route::Http(http) = &self.route {
            let _ = http.peer.set(peer.clone());
        }
        Some(self)
    }

    /// The late answer to the probe `id`, given up ([`LaneRequest::answer_within`]), if it has
    /// come since.
    pub(crate) fn late(&self, id: &RequestId) -> Option<Answer> {
        match &self.route {
            Route::Pipe(pipe) => pipe.late(id),
            Route::Http(_) => None,
        }
    }

    /// Sends `request` with a fresh id and progress token.
    pub(crate) fn request(&self, mut request: ClientRequest) -> Result<LaneRequest, ServiceError> {
        let id = NumberOrString::String(format!("pb-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1).into());
        let progress_token = ProgressToken(id.clone());
        match &mut request {
            // In the params, where a pipe writes a tool call as it stands (see `pipe::line`).
            ClientRequest::CallToolRequest(call) => {
                call.params.meta.get_or_insert_with(RequestMetaObject::new).set_progress_token(progress_token.clone())
            }
            other => other.get_meta_mut().set_progress_token(progress_token.clone()),
        }
        let message = ClientJsonRpcMessage::request(request, id.clone());
        let answer = match &self.route {
            Route::Pipe(pipe) => Pending::Pipe(pipe.send(id.clone(), &message)?),
            Route::Http(http) if http.closed.load(Ordering::Acquire) => return Err(ServiceError::TransportClosed),
            Route::Http(http) => Pending::Http(http.clone().exchange(id.clone(), message).boxed()),
        };
        Ok(LaneRequest { id, progress_token, answer })
    }
}

/// How long the rest of an answered POST's response is read, so that its
/// connection can be reused (rmcp's own worker waits as long).
const DRAIN: Duration = Duration::from_millis(50);

/// Messages a POST's stream carried besides its answer, queued for rmcp.
const OTHERS: usize = 64;

/// The HTTP side of a [`Lane`].
struct HttpRoute {
    post: Box<dyn HttpPost>,
    /// Messages a POST's stream carried besides its answer and the call's
    /// progress and logs (the server's own requests, other notifications),
    /// for rmcp's handler.
    others: mpsc::Sender<ServerJsonRpcMessage>,
    /// rmcp's side of the session, which re-initialises it when it expired.
    peer: OnceLock<Peer<RoleClient>>,
    /// The connection's token: cancelled when the session is lost for good.
    connection: CancellationToken,
    in_order: Arc<dyn InOrder>,
    /// Set by [`Laned`] when rmcp's stream ended.
    closed: Arc<AtomicBool>,
}

impl HttpRoute {
    /// POSTs `message` and reads the answer to `id` from the response. A
    /// session that expired is renewed through rmcp once, then posted again.
    async fn exchange(self: Arc<Self>, id: RequestId, message: ClientJsonRpcMessage) -> Answer {
        let reads = Reads::of(&message);
        let response = match self.post.post(message.clone()).await {
            Err(PostFailure::SessionExpired) => {
                self.renew().await?;
                self.post.post(message).await
            }
            response => response,
        };
        let response = response.map_err(|failure| match failure {
            PostFailure::SessionExpired => LaneError::from(ServiceError::TransportClosed),
            PostFailure::Failed(error) => error.into(),
        })?;
        match response {
            // A refusal of the POST itself names no id (a 4xx with a JSON-RPC
            // error: server-everything answers an unknown session so, where the
            // spec says 404). The session is no use, and rmcp would not notice:
            // the connection is closed, so that the registry connects again.
            StreamableHttpPostResponse::Json(JsonRpcMessage::Error(error), _) if error.id.is_none() => {
                tracing::warn!(reason = %error.error.message, "an MCP server refused a request outside its session; reconnecting");
                self.connection.cancel();
                Some(Err(ServiceError::McpError(error.error).into()))
            }
            StreamableHttpPostResponse::Json(message, _) => self.sort(&id, message).await,
            StreamableHttpPostResponse::Sse(stream, _) => self.read(&id, reads, stream).await,
            _ => None,
        }
        .unwrap_or_else(|| Err(LaneError::Unreadable("the server's response ended without an answer to the request".into())))
    }

    /// Has rmcp renew the session: its ping meets the expired session too,
    /// and rmcp initialises a new one before it retries.
    async fn renew(&self) -> Result<(), ServiceError> {
        let peer = self.peer.get().ok_or(ServiceError::TransportClosed)?;
        peer.send_request(ClientRequest::PingRequest(Default::default())).await.map(drop)
    }

    /// The answer to `id` from an SSE response; `None` when the stream ended
    /// without it. An event that is not JSON-RPC is skipped, as rmcp does,
    /// and named if the answer never comes.
    async fn read(
        &self,
        id: &RequestId,
        reads: Reads,
        mut stream: BoxStream<'static, Result<Sse, SseError>>,
    ) -> Option<Answer> {
        let mut skipped = None;
        while let Some(event) = stream.next().await {
            let data = match event {
                Ok(event) => event.data.unwrap_or_default(),
                Err(e) => return Some(Err(LaneError::Unreadable(format!("the answer's event stream failed: {e}")))),
            };
            if data.trim().is_empty() {
                continue;
            }
            let typed = typed_answer(data.as_bytes(), reads);
            let answer = match typed.filter(|(answered, _)| answered == id) {
                Some((_, result)) => Some(Ok(result)),
                None => match serde_json::from_str(&data) {
                    Ok(message) => self.sort(id, message).await,
                    Err(e) => {
                        tracing::warn!(error = %e, "skipped an event that is not JSON-RPC in an MCP server's answer");
                        skipped = Some(e);
                        continue;
                    }
                },
            };
            if let Some(answer) = answer {
                // Reading the rest lets the connection be reused; a task does it.
                if !matches!(stream.next().now_or_never(), Some(None)) {
                    tokio::spawn(async move {
                        let _ = tokio::time::timeout(DRAIN, async { while stream.next().await.is_some() {} }).await;
                    });
                }
                return Some(answer);
            }
        }
        skipped.map(|e| {
            Err(LaneError::Unreadable(format!(
                "the server's response ended without an answer to the request; it sent an event that is not JSON-RPC: {e}"
            )))
        })
    }

    /// The answer, when `message` answers `id`. A call's notifications are
    /// handled here, in order; anything else goes to rmcp, marked as carried
    /// by the response to `id`.
    async fn sort(&self, id: &RequestId, message: ServerJsonRpcMessage) -> Option<Answer> {
        let origin = InboundStreamOrigin::OutboundRequest(id.clone());
        let other = match message {
            JsonRpcMessage::Response(response) if response.id == *id => return Some(Ok(response.result)),
            JsonRpcMessage::Error(error) if error.id.as_ref() == Some(id) => {
                return Some(Err(ServiceError::McpError(error.error).into()));
            }
            JsonRpcMessage::Notification(notification) => {
                if self.in_order.handle(&notification.notification, Some(&origin)) {
                    return None;
                }
                JsonRpcMessage::Notification(notification)
            }
            JsonRpcMessage::Request(mut request) => {
                request.request.extensions_mut().insert(origin);
                JsonRpcMessage::Request(request)
            }
            other => other,
        };
        let _ = self.others.send(other).await;
        None
    }
}

/// Wraps a streamable HTTP transport so that the messages the [`Lane`]'s
/// POSTs carry besides their answers reach rmcp, and returns it with the lane.
/// `connection` is cancelled when a POST finds the session lost.
pub(crate) fn open_http<T: Transport<RoleClient>>(
    transport: T,
    post: impl HttpPost,
    connection: CancellationToken,
    in_order: Arc<dyn InOrder>,
) -> (Laned<T>, Lane) {
    let (others, from_lane) = mpsc::channel(OTHERS);
    let closed = Arc::new(AtomicBool::new(false));
    let route = HttpRoute {
        post: Box::new(post),
        others,
        peer: OnceLock::new(),
        connection,
        in_order: in_order.clone(),
        closed: closed.clone(),
    };
    let lane = Lane { route: Route::Http(Arc::new(route)), next: Arc::default() };
    (Laned { inner: transport, closed, from_lane, in_order }, lane)
}

/// Wraps a transport without a lane (legacy SSE) so that progress and logs
/// are handled in the order they are read: rmcp hands each notification to a
/// task of its own, and two of them may run in either order.
pub(crate) fn ordered<T: Transport<RoleClient>>(transport: T, in_order: Arc<dyn InOrder>) -> Laned<T> {
    // Nothing posts beside rmcp: the lane's channel is closed from the start.
    let (_, from_lane) = mpsc::channel(1);
    Laned { inner: transport, closed: Arc::new(AtomicBool::new(false)), from_lane, in_order }
}

/// rmcp's streamable HTTP transport with what the [`Lane`]'s POSTs carried
/// for rmcp added to what it receives (or a legacy SSE transport, [`ordered`]);
/// a call's notifications are handled in the order they are read.
pub(crate) struct Laned<T> {
    inner: T,
    /// Set when rmcp's stream ended: the lane takes no more requests.
    closed: Arc<AtomicBool>,
    /// What the lane's POSTs carried for rmcp.
    from_lane: mpsc::Receiver<ServerJsonRpcMessage>,
    in_order: Arc<dyn InOrder>,
}

impl<T> Laned<T> {
    fn refuse_calls(&self) {
        self.closed.store(true, Ordering::Release);
    }
}

impl<T> Drop for Laned<T> {
    fn drop(&mut self) {
        self.refuse_calls();
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Laned<T> {
    type Error = T::Error;

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            // Both are channels: a receive that loses the race loses nothing.
            let received = tokio::select! {
                Some(message) = self.from_lane.recv() => return Some(message),
                received = self.inner.receive() => received,
            };
            match received {
                None => {
                    self.refuse_calls();
                    return None;
                }
                Some(JsonRpcMessage::Notification(notification))
                    if self.in_order.handle(&notification.notification, None) => {}
                Some(message) => return Some(message),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.refuse_calls();
        self.inner.close().await
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use rmcp::model::{
        CallToolRequest, CallToolRequestParams, EmptyResult, PingRequest, ServerNotification, ServerRequest,
        ServerResult,
    };
    use rmcp::transport::async_rw::AsyncRwTransport;
    use serde_json::{Value, json};
    use std::sync::Mutex;

    use tokio::io::{AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};

    use super::*;

    /// Handles progress in order: each as its value and the request whose
    /// response carried it.
    #[derive(Default)]
    pub(crate) struct Seen(pub(crate) Mutex<Vec<(f64, Option<InboundStreamOrigin>)>>);

    impl InOrder for Seen {
        fn handle(&self, notification: &ServerNotification, origin: Option<&InboundStreamOrigin>) -> bool {
            let ServerNotification::ProgressNotification(progress) = notification else { return false };
            self.0.lock().unwrap().push((progress.params.progress, origin.cloned()));
            true
        }
    }

    pub(crate) fn progress(token: &str, value: u32) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": value}})
    }

    pub(crate) fn ping() -> ClientRequest {
        ClientRequest::PingRequest(PingRequest::default())
    }

    pub(crate) fn call(arguments: &str) -> ClientRequest {
        let mut params = CallToolRequestParams::new("echo");
        params.arguments = Some(json!({ "message": arguments }).as_object().cloned().unwrap_or_default());
        ClientRequest::CallToolRequest(CallToolRequest::new(params))
    }

    pub(crate) async fn reply(server: &mut WriteHalf<DuplexStream>, message: Value) {
        server.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }

    /// An [`HttpPost`] that answers every POST with the SSE events `events`
    /// makes from the request's id.
    struct Scripted<F>(F);

    impl<F: Fn(&RequestId) -> Vec<String> + Send + Sync + 'static> HttpPost for Scripted<F> {
        fn post(
            &self,
            message: ClientJsonRpcMessage,
        ) -> BoxFuture<'static, Result<StreamableHttpPostResponse, PostFailure>> {
            let JsonRpcMessage::Request(request) = message else { panic!("the lane posts requests") };
            let events: Vec<Result<Sse, SseError>> =
                (self.0)(&request.id).into_iter().map(|data| Ok(Sse::default().data(data))).collect();
            futures::future::ready(Ok(StreamableHttpPostResponse::Sse(futures::stream::iter(events).boxed(), None)))
                .boxed()
        }
    }

    type HttpClient = Laned<AsyncRwTransport<RoleClient, ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>>;

    /// An HTTP lane posting through `post`, its transport for rmcp, the far end
    /// of that transport's (idle) pipe, which keeps it open, the connection's
    /// token and the progress handled in order.
    fn http_lane(post: impl HttpPost) -> (HttpClient, Lane, DuplexStream, CancellationToken, Arc<Seen>) {
        let (client, server) = tokio::io::duplex(64);
        let (read, write) = tokio::io::split(client);
        let connection = CancellationToken::new();
        let seen = Arc::new(Seen::default());
        let (transport, lane) =
            open_http(AsyncRwTransport::new_client(read, write), post, connection.clone(), seen.clone());
        (transport, lane, server, connection, seen)
    }

    /// An [`HttpPost`] whose POSTs are refused as server-everything refuses an
    /// unknown session: HTTP 400 with a JSON-RPC error that names no id.
    struct Refusing;

    impl HttpPost for Refusing {
        fn post(&self, _: ClientJsonRpcMessage) -> BoxFuture<'static, Result<StreamableHttpPostResponse, PostFailure>> {
            let refusal = json!({"jsonrpc": "2.0", "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}});
            let refusal = serde_json::from_value(refusal).unwrap();
            futures::future::ready(Ok(StreamableHttpPostResponse::Json(refusal, None))).boxed()
        }
    }

    #[tokio::test]
    async fn a_post_refused_outside_the_session_fails_its_call_and_closes_the_connection() {
        let (_transport, lane, _pipe, connection, _) = http_lane(Refusing);
        match lane.request(ping()).unwrap().answer().await {
            Err(LaneError::Service(ServiceError::McpError(error))) => {
                assert!(error.message.contains("No valid session"), "{error:?}");
            }
            other => panic!("expected the server's refusal, got {other:?}"),
        }
        assert!(connection.is_cancelled(), "the registry connects again");
    }

    #[tokio::test]
    async fn an_http_answer_comes_from_its_post_with_the_calls_notifications_in_order() {
        let (mut transport, lane, _pipe, connection, seen) = http_lane(Scripted(|id: &RequestId| {
            let id = serde_json::to_string(id).unwrap();
            let mut events = vec![String::new()]; // a priming event: no message
            events.extend((1..=10).map(|n| progress("pb-1", n).to_string()));
            events.push(r#"{"jsonrpc":"2.0","id":7,"method":"roots/list"}"#.to_owned());
            events.push(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
            events
        }));
        let request = lane.request(ping()).unwrap();
        assert_eq!(request.id, NumberOrString::String("pb-1".into()));
        assert!(matches!(request.answer().await, Ok(ServerResult::EmptyResult(EmptyResult {}))));
        let origin = InboundStreamOrigin::OutboundRequest(NumberOrString::String("pb-1".into()));
        let seen = seen.0.lock().unwrap().clone();
        assert_eq!(seen, (1..=10).map(|n| (f64::from(n), Some(origin.clone()))).collect::<Vec<_>>());
        // The server's own request goes to rmcp, marked with the call it came with.
        match transport.receive().await {
            Some(JsonRpcMessage::Request(request)) => {
                assert!(matches!(request.request, ServerRequest::ListRootsRequest(_)));
                assert_eq!(request.request.extensions().get::<InboundStreamOrigin>(), Some(&origin));
            }
            other => panic!("rmcp should get the server's request, got {other:?}"),
        }
        assert!(!connection.is_cancelled());
    }

    #[tokio::test]
    async fn an_http_stream_without_the_answer_fails_the_call_and_garbage_is_skipped() {
        let someone_else = |_: &RequestId| vec![r#"{"jsonrpc":"2.0","id":"someone-else","result":{}}"#.to_owned()];
        let (_transport, lane, _pipe, _, _) = http_lane(Scripted(someone_else));
        match lane.request(ping()).unwrap().answer().await {
            Err(LaneError::Unreadable(reason)) => assert!(reason.contains("without an answer"), "{reason}"),
            other => panic!("expected the reason, got {other:?}"),
        }

        let (_transport, lane, _pipe, _, _) = http_lane(Scripted(|_: &RequestId| vec!["this is not json".to_owned()]));
        match lane.request(ping()).unwrap().answer().await {
            Err(LaneError::Unreadable(reason)) => assert!(reason.contains("not JSON-RPC"), "{reason}"),
            other => panic!("expected the reason, got {other:?}"),
        }

        // Garbage before the answer is skipped, as rmcp skips it.
        let (_transport, lane, _pipe, _, _) = http_lane(Scripted(|id: &RequestId| {
            let id = serde_json::to_string(id).unwrap();
            vec!["this is not json".to_owned(), format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)]
        }));
        assert!(matches!(lane.request(ping()).unwrap().answer().await, Ok(ServerResult::EmptyResult(_))));
    }

    #[tokio::test]
    async fn a_tool_calls_http_answer_is_read_as_its_result() {
        let (_transport, lane, _pipe, _, seen) = http_lane(Scripted(|id: &RequestId| {
            let id = serde_json::to_string(id).unwrap();
            vec![
                progress("pb-1", 1).to_string(),
                format!(r#"{{"result":{{"content":[{{"type":"text","text":"Echo: a"}}]}},"jsonrpc":"2.0","id":{id}}}"#),
            ]
        }));
        match lane.request(call("a")).unwrap().answer().await {
            Ok(ServerResult::CallToolResult(result)) => {
                assert_eq!(result.content[0].as_text().map(|t| t.text.as_str()), Some("Echo: a"));
            }
            other => panic!("expected the tool's result, got {other:?}"),
        }
        assert_eq!(seen.0.lock().unwrap().len(), 1, "the progress before it was handled");
    }
    #[tokio::test]
    async fn an_ordered_transport_handles_progress_as_read_and_passes_the_rest_to_rmcp() {
        let (client, server) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(client);
        let (server_read, mut server_write) = tokio::io::split(server);
        let seen = Arc::new(Seen::default());
        let mut transport = ordered(AsyncRwTransport::new_client(read, write), seen.clone());
        for n in 1..=5 {
            reply(&mut server_write, progress("7", n)).await;
        }
        reply(&mut server_write, json!({"jsonrpc": "2.0", "id": 1, "result": {}})).await;
        match transport.receive().await {
            Some(JsonRpcMessage::Response(response)) => assert_eq!(response.id, NumberOrString::Number(1)),
            other => panic!("rmcp should get the response, got {other:?}"),
        }
        let seen = seen.0.lock().unwrap().clone();
        assert_eq!(seen, (1..=5).map(|n| (f64::from(n), None)).collect::<Vec<_>>());
        drop((server_read, server_write));
        assert!(transport.receive().await.is_none(), "the stream's end reaches rmcp");
    }
}
