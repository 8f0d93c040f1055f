//! The direct lane: the registry's requests sent by the calling task and
//! answered straight back to it, past rmcp's service loop.
//!
//! rmcp's service loop passes each request from the caller's task to its own
//! task, spawns a task to write it, is woken again when that task ends, and
//! passes the answer back: four hand-overs per call, and on a busy machine
//! each can wait for a core. Over streamable HTTP its worker adds as many
//! again (a channel to the worker, a task per response stream, a channel back).
//! The lane keeps rmcp for everything else (the handshake, notifications, the
//! server's own requests, rmcp's requests) and takes the registry's requests
//! off that path:
//!
//! - Every lane request gets its own id and progress token (strings, `pb-N`,
//!   which rmcp's numbers never equal) from [`Lane::request`].
//! - **Pipes** (stdio, in-process). [`Outbox`] is the pipe's one writer. Each
//!   message is appended whole, and written at once by the task that appends
//!   it when the pipe has room, so messages from rmcp and from the lane never
//!   interleave and the common case costs no hand-over. What the pipe cannot
//!   take yet is written by the outbox's own task, in order; writers that
//!   flush wait for it. [`Laned`] wraps the transport rmcp reads from and
//!   takes the answers to lane requests out of the stream before rmcp sees
//!   them; the caller waits on a oneshot.
//! - **Streamable HTTP.** The caller POSTs the request itself, in the session
//!   rmcp holds and with the headers rmcp last posted with ([`HttpPost`]), and
//!   reads the answer from the POST's own response. Whatever else that
//!   response carries (progress, logs, the server's requests) goes to rmcp
//!   through [`Laned`]. A session the server no longer knows is renewed by
//!   rmcp (a ping meets it, and rmcp initialises again), then the request is
//!   posted once more.
//! - When rmcp's stream ends, every waiting lane request fails as rmcp's would
//!   ([`ServiceError::TransportClosed`]) and no more are taken.
//!
//! Used only with a protocol that has the `initialize` handshake: from
//! 2026-07-28 rmcp adds per-request metadata and headers, and checks that a
//! server's request belongs to one of its own, which the lane's requests are not.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};

use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, GetExtensions, GetMeta, JsonRpcMessage, NumberOrString,
    ProgressToken, RequestId, ServerJsonRpcMessage, ServerNotification, ServerResult,
};
use rmcp::service::{InboundStreamOrigin, Peer, ServiceError};

use super::McpError;
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::{SseError, StreamableHttpPostResponse};
use sse_stream::Sse;
use tokio::io::AsyncWrite;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::bytes::{Buf, BytesMut};
use tokio_util::sync::CancellationToken;

/// The writing end of a pipe, shared by rmcp (through [`OutboxWriter`]) and
/// the [`Lane`]. Dropping the [`OutboxWriter`] (rmcp closing the transport)
/// closes the pipe.
struct Outbox {
    state: Mutex<State>,
    /// Wakes [`drain`] when bytes are queued, and when the outbox is dropped.
    wake: Arc<Notify>,
}

struct State {
    pipe: Pin<Box<dyn AsyncWrite + Send>>,
    /// Bytes appended but not yet written, whole messages in order.
    queued: BytesMut,
    /// Set when a write failed: the pipe is broken and nothing more is written.
    failed: Option<io::ErrorKind>,
    /// Writers waiting for the queue to empty (their flush).
    flushing: Vec<Waker>,
}

impl State {
    /// Writes queued bytes until the pipe would block (`Pending`), fails, or
    /// the queue is empty. With a no-op waker this is a plain non-blocking
    /// write; [`drain`] calls it with its own.
    fn write_queued(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        while !self.queued.is_empty() {
            match self.pipe.as_mut().poll_write(cx, &self.queued) {
                Poll::Ready(Ok(0)) => return self.fail(io::ErrorKind::WriteZero),
                Poll::Ready(Ok(n)) => self.queued.advance(n),
                Poll::Ready(Err(e)) => return self.fail(e.kind()),
                Poll::Pending => return Poll::Pending,
            }
        }
        if let Poll::Ready(Err(e)) = self.pipe.as_mut().poll_flush(cx) {
            return self.fail(e.kind());
        }
        self.flushing.drain(..).for_each(Waker::wake);
        Poll::Ready(())
    }

    fn fail(&mut self, kind: io::ErrorKind) -> Poll<()> {
        self.failed = Some(kind);
        self.queued.clear();
        self.flushing.drain(..).for_each(Waker::wake);
        Poll::Ready(())
    }
}

impl Outbox {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends one whole message and writes what the pipe takes now; the rest
    /// goes to [`drain`]. Fails when the pipe is broken.
    fn push(&self, message: &[u8]) -> io::Result<()> {
        let mut state = self.lock();
        if state.failed.is_none() {
            let idle = state.queued.is_empty();
            state.queued.extend_from_slice(message);
            // Only when nothing waits for [`drain`]: it owns the pipe's wake-up then.
            if idle && state.write_queued(&mut Context::from_waker(Waker::noop())).is_pending() {
                self.wake.notify_one();
            }
        }
        match state.failed {
            Some(kind) => Err(closed(kind)),
            None => Ok(()),
        }
    }

    /// Ready once everything appended so far is written (or writing failed).
    fn poll_flushed(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut state = self.lock();
        if let Some(kind) = state.failed {
            return Poll::Ready(Err(closed(kind)));
        }
        if state.queued.is_empty() {
            return Poll::Ready(Ok(()));
        }
        if !state.flushing.iter().any(|w| w.will_wake(cx.waker())) {
            state.flushing.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

fn closed(kind: io::ErrorKind) -> io::Error {
    io::Error::new(kind, "the server's input is closed")
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.wake.notify_one();
    }
}

/// Writes what the pipe could not take at once; ends when the outbox is gone.
async fn drain(outbox: Weak<Outbox>, wake: Arc<Notify>) {
    loop {
        wake.notified().await;
        let written = std::future::poll_fn(|cx| match outbox.upgrade() {
            Some(outbox) => outbox.lock().write_queued(cx).map(|()| true),
            None => Poll::Ready(false),
        });
        if !written.await {
            return;
        }
    }
}

/// rmcp's writer: an [`AsyncWrite`] that appends each buffer whole to the
/// [`Outbox`]. rmcp's framed writer hands over only whole encoded messages.
pub(crate) struct OutboxWriter {
    outbox: Arc<Outbox>,
}

impl AsyncWrite for OutboxWriter {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Poll::Ready(self.outbox.push(buf).map(|()| buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.outbox.poll_flushed(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.outbox.poll_flushed(cx)
    }
}

/// An answer to a lane request, as rmcp's service loop would give it.
type Answer = Result<ServerResult, LaneError>;

/// Why a lane request got no answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LaneError {
    /// As rmcp's service loop would report it: the connection closed, the
    /// server answered with an error, a POST failed.
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// The server's response to a POST could not be read as the answer.
    #[error("{0}")]
    Unreadable(String),
}

impl LaneError {
    /// The registry's error for `server`.
    pub(crate) fn for_server(self, server: &str) -> McpError {
        match self {
            LaneError::Service(error) => McpError::from_service(server, error),
            LaneError::Unreadable(reason) => McpError::Protocol { server: server.to_owned(), reason },
        }
    }
}

/// Handles a call's notifications (progress, logs) where they are read, in
/// the order the server sent them: rmcp hands each notification to a task of
/// its own, and the newest task often runs first.
pub(crate) trait InOrder: Send + Sync + 'static {
    /// Whether `notification` was handled (else rmcp gets it). `origin`: the
    /// request whose HTTP response carried it.
    fn handle(&self, notification: &ServerNotification, origin: Option<&InboundStreamOrigin>) -> bool;
}

#[derive(Default)]
struct Calls {
    waiting: HashMap<RequestId, oneshot::Sender<Answer>>,
    next: u64,
    /// False once the server's stream ended: no more requests are taken.
    closed: bool,
}

type SharedCalls = Arc<Mutex<Calls>>;

fn lock_calls(calls: &SharedCalls) -> std::sync::MutexGuard<'_, Calls> {
    calls.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Sends the registry's requests to one server without rmcp's service loop.
#[derive(Clone)]
pub(crate) struct Lane {
    route: Route,
    calls: SharedCalls,
}

#[derive(Clone)]
enum Route {
    /// Written to the pipe's [`Outbox`]; answered through [`Laned`]'s reader.
    Pipe(Weak<Outbox>),
    /// POSTed by the caller; answered on the POST's own response.
    Http(Arc<HttpRoute>),
}

/// A lane request on its way: its id and progress token (for routing and
/// cancellation), and its answer.
pub(crate) struct LaneRequest {
    pub(crate) id: RequestId,
    pub(crate) progress_token: ProgressToken,
    answer: Pending,
    calls: SharedCalls,
}

enum Pending {
    /// Delivered by [`Laned`] when the answer comes down the pipe.
    Pipe(oneshot::Receiver<Answer>),
    /// The POST and the reading of its response, run by the caller.
    Http(BoxFuture<'static, Answer>),
}

impl LaneRequest {
    /// The server's answer, or [`ServiceError::TransportClosed`] when the
    /// connection ended first.
    pub(crate) async fn answer(mut self) -> Answer {
        match &mut self.answer {
            Pending::Pipe(answer) => answer.await.unwrap_or(Err(ServiceError::TransportClosed.into())),
            Pending::Http(exchange) => exchange.await,
        }
    }
}

impl Drop for LaneRequest {
    /// An abandoned request (cancelled, timed out) waits for no answer.
    fn drop(&mut self) {
        lock_calls(&self.calls).waiting.remove(&self.id);
    }
}

impl Lane {
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

    /// Sends `request` with a fresh id and progress token.
    pub(crate) fn request(&self, mut request: ClientRequest) -> Result<LaneRequest, ServiceError> {
        let id = {
            let mut calls = lock_calls(&self.calls);
            if calls.closed {
                return Err(ServiceError::TransportClosed);
            }
            calls.next += 1;
            NumberOrString::String(format!("pb-{}", calls.next).into())
        };
        let progress_token = ProgressToken(id.clone());
        request.get_meta_mut().set_progress_token(progress_token.clone());
        let message = ClientJsonRpcMessage::request(request, id.clone());
        let answer = match &self.route {
            Route::Pipe(outbox) => Pending::Pipe(self.write(outbox, &id, &message)?),
            Route::Http(http) => Pending::Http(http.clone().exchange(id.clone(), message).boxed()),
        };
        Ok(LaneRequest { id, progress_token, answer, calls: self.calls.clone() })
    }

    /// Writes `message` to the pipe, its answer awaited under `id`.
    fn write(
        &self,
        outbox: &Weak<Outbox>,
        id: &RequestId,
        message: &ClientJsonRpcMessage,
    ) -> Result<oneshot::Receiver<Answer>, ServiceError> {
        let mut line = serde_json::to_vec(message)
            .map_err(|e| ServiceError::McpError(ErrorData::internal_error(e.to_string(), None)))?;
        line.push(b'\n');
        let (tx, answer) = oneshot::channel();
        // Waiting before the write: the answer can come before `push` returns.
        lock_calls(&self.calls).waiting.insert(id.clone(), tx);
        if outbox.upgrade().is_none_or(|outbox| outbox.push(&line).is_err()) {
            lock_calls(&self.calls).waiting.remove(id);
            return Err(ServiceError::TransportClosed);
        }
        Ok(answer)
    }
}

/// How the HTTP lane posts: a message sent in the session rmcp holds, as rmcp
/// would post it ([`super::http::BoundedHttp`] implements it).
pub(crate) trait HttpPost: Send + Sync + 'static {
    fn post(
        &self,
        message: ClientJsonRpcMessage,
    ) -> BoxFuture<'static, Result<StreamableHttpPostResponse, PostFailure>>;
}

/// Why a lane POST got no response to read.
pub(crate) enum PostFailure {
    /// The server no longer knows the session (it restarted): rmcp renews it.
    SessionExpired,
    /// Anything else, as rmcp would report it.
    Failed(ServiceError),
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
}

impl HttpRoute {
    /// POSTs `message` and reads the answer to `id` from the response. A
    /// session that expired is renewed through rmcp once, then posted again.
    async fn exchange(self: Arc<Self>, id: RequestId, message: ClientJsonRpcMessage) -> Answer {
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
            StreamableHttpPostResponse::Sse(stream, _) => self.read(&id, stream).await,
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
    async fn read(&self, id: &RequestId, mut stream: BoxStream<'static, Result<Sse, SseError>>) -> Option<Answer> {
        let mut skipped = None;
        while let Some(event) = stream.next().await {
            let data = match event {
                Ok(event) => event.data.unwrap_or_default(),
                Err(e) => return Some(Err(LaneError::Unreadable(format!("the answer's event stream failed: {e}")))),
            };
            if data.trim().is_empty() {
                continue;
            }
            let message = match serde_json::from_str(&data) {
                Ok(message) => message,
                Err(e) => {
                    tracing::warn!(error = %e, "skipped an event that is not JSON-RPC in an MCP server's answer");
                    skipped = Some(e);
                    continue;
                }
            };
            if let Some(answer) = self.sort(id, message).await {
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
    let route =
        HttpRoute { post: Box::new(post), others, peer: OnceLock::new(), connection, in_order: in_order.clone() };
    let calls = SharedCalls::default();
    let lane = Lane { route: Route::Http(Arc::new(route)), calls: calls.clone() };
    (Laned { inner: transport, calls, from_lane: Some(from_lane), in_order }, lane)
}

/// A transport whose writing end is an [`Outbox`] shared with a [`Lane`]:
/// answers to lane requests go to their callers, everything else to rmcp.
pub(crate) struct Laned<T> {
    inner: T,
    calls: SharedCalls,
    /// What the HTTP lane's POSTs carried for rmcp.
    from_lane: Option<mpsc::Receiver<ServerJsonRpcMessage>>,
    in_order: Arc<dyn InOrder>,
}

/// Wraps a pipe's writing end for a transport built by `transport`, and
/// returns the transport (for rmcp) with the [`Lane`] that shares its pipe.
/// Spawns the outbox's writer task: call it inside the runtime.
pub(crate) fn open<W, T>(
    pipe: W,
    in_order: Arc<dyn InOrder>,
    transport: impl FnOnce(OutboxWriter) -> T,
) -> (Laned<T>, Lane)
where
    W: AsyncWrite + Send + 'static,
    T: Transport<RoleClient>,
{
    let wake = Arc::new(Notify::new());
    let outbox = Arc::new(Outbox {
        state: Mutex::new(State { pipe: Box::pin(pipe), queued: BytesMut::new(), failed: None, flushing: Vec::new() }),
        wake: wake.clone(),
    });
    tokio::spawn(drain(Arc::downgrade(&outbox), wake));
    let calls = SharedCalls::default();
    let lane = Lane { route: Route::Pipe(Arc::downgrade(&outbox)), calls: calls.clone() };
    (Laned { inner: transport(OutboxWriter { outbox }), calls, from_lane: None, in_order }, lane)
}

impl<T> Laned<T> {
    /// Fails every waiting lane request and takes no more.
    fn close_calls(&self) {
        let mut calls = lock_calls(&self.calls);
        calls.closed = true;
        calls.waiting.clear();
    }

    /// The message, or `None` when it answered a lane request or was a call's
    /// notification (now delivered).
    fn claim(&self, message: ServerJsonRpcMessage) -> Option<ServerJsonRpcMessage> {
        let waiting = |id: &RequestId| lock_calls(&self.calls).waiting.remove(id);
        match message {
            JsonRpcMessage::Response(response) => match waiting(&response.id) {
                Some(tx) => {
                    let _ = tx.send(Ok(response.result));
                    None
                }
                None => Some(JsonRpcMessage::Response(response)),
            },
            JsonRpcMessage::Error(error) => match error.id.as_ref().and_then(waiting) {
                Some(tx) => {
                    let _ = tx.send(Err(ServiceError::McpError(error.error).into()));
                    None
                }
                None => Some(JsonRpcMessage::Error(error)),
            },
            JsonRpcMessage::Notification(notification) if self.in_order.handle(&notification.notification, None) => {
                None
            }
            other => Some(other),
        }
    }
}

impl<T> Drop for Laned<T> {
    fn drop(&mut self) {
        self.close_calls();
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Laned<T> {
    type Error = T::Error;

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let received = match &mut self.from_lane {
                // Both are channels or framed reads: a receive that loses the race loses nothing.
                Some(from_lane) => tokio::select! {
                    Some(message) = from_lane.recv() => return Some(message),
                    received = self.inner.receive() => received,
                },
                None => self.inner.receive().await,
            };
            let Some(message) = received else {
                self.close_calls();
                return None;
            };
            if let Some(message) = self.claim(message) {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.close_calls();
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolRequest, CallToolRequestParams, EmptyResult, PingRequest, ServerRequest};
    use rmcp::transport::async_rw::AsyncRwTransport;
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

    use super::*;

    type Client = Laned<AsyncRwTransport<RoleClient, ReadHalf<DuplexStream>, OutboxWriter>>;

    /// A client end (transport and lane) over a pipe of `bytes`, and the
    /// server's end: its lines and its writer.
    fn pipe(
        bytes: usize,
    ) -> (Client, Lane, tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>, WriteHalf<DuplexStream>) {
        let (client, server) = tokio::io::duplex(bytes);
        let (read, write) = tokio::io::split(client);
        let (transport, lane) =
            open(write, Arc::new(Seen::default()), |writer| AsyncRwTransport::new_client(read, writer));
        let (server_read, server_write) = tokio::io::split(server);
        (transport, lane, BufReader::new(server_read).lines(), server_write)
    }

    /// Handles progress in order: each as its value and the request whose
    /// response carried it.
    #[derive(Default)]
    struct Seen(Mutex<Vec<(f64, Option<InboundStreamOrigin>)>>);

    impl InOrder for Seen {
        fn handle(&self, notification: &ServerNotification, origin: Option<&InboundStreamOrigin>) -> bool {
            let ServerNotification::ProgressNotification(progress) = notification else { return false };
            self.0.lock().unwrap().push((progress.params.progress, origin.cloned()));
            true
        }
    }

    fn progress(token: &str, value: u32) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": value}})
    }

    #[tokio::test]
    async fn a_calls_notifications_are_handled_in_the_order_they_are_read_and_the_rest_goes_to_rmcp() {
        let (client, server) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(client);
        let seen = Arc::new(Seen::default());
        let (mut transport, _lane) = open(write, seen.clone(), |writer| AsyncRwTransport::new_client(read, writer));
        let (_server_read, mut server) = tokio::io::split(server);
        for value in 1..=20 {
            reply(&mut server, progress("pb-1", value)).await;
        }
        reply(&mut server, json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})).await;
        match transport.receive().await {
            Some(JsonRpcMessage::Notification(notification)) => {
                assert!(matches!(notification.notification, ServerNotification::ToolListChangedNotification(_)));
            }
            other => panic!("rmcp should get the list change, got {other:?}"),
        }
        let values: Vec<f64> = seen.0.lock().unwrap().iter().map(|(value, _)| *value).collect();
        assert_eq!(values, (1..=20).map(f64::from).collect::<Vec<_>>());
    }

    fn ping() -> ClientRequest {
        ClientRequest::PingRequest(PingRequest::default())
    }

    fn call(arguments: &str) -> ClientRequest {
        let mut params = CallToolRequestParams::new("echo");
        params.arguments = Some(json!({ "message": arguments }).as_object().cloned().unwrap_or_default());
        ClientRequest::CallToolRequest(CallToolRequest::new(params))
    }

    async fn reply(server: &mut WriteHalf<DuplexStream>, message: Value) {
        server.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }

    #[tokio::test]
    async fn answers_go_to_their_lane_request_and_everything_else_to_rmcp() {
        let (mut transport, lane, mut lines, mut server) = pipe(4096);
        let first = lane.request(ping()).unwrap();
        let sent: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(sent["id"], "pb-1");
        assert_eq!(sent["method"], "ping");
        assert_eq!(sent["params"]["_meta"]["progressToken"], "pb-1");
        assert_eq!(first.progress_token, ProgressToken(first.id.clone()));

        let second = lane.request(ping()).unwrap();
        assert_eq!(second.id, NumberOrString::String("pb-2".into()));
        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-1", "result": {}})).await;
        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-2", "error": {"code": -32601, "message": "no"}})).await;
        reply(&mut server, json!({"jsonrpc": "2.0", "id": 7, "result": {}})).await;

        // The two lane answers are claimed on the way; rmcp sees only its own.
        match transport.receive().await {
            Some(JsonRpcMessage::Response(response)) => assert_eq!(response.id, NumberOrString::Number(7)),
            other => panic!("rmcp should get the answer to id 7, got {other:?}"),
        }
        assert!(matches!(first.answer().await, Ok(ServerResult::EmptyResult(EmptyResult {}))));
        match second.answer().await {
            Err(LaneError::Service(ServiceError::McpError(error))) => assert_eq!(error.message, "no"),
            other => panic!("expected the server's error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn an_abandoned_request_leaves_its_late_answer_to_rmcp() {
        let (mut transport, lane, mut lines, mut server) = pipe(4096);
        drop(lane.request(ping()).unwrap());
        lines.next_line().await.unwrap().unwrap();
        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-1", "result": {}})).await;
        match transport.receive().await {
            Some(JsonRpcMessage::Response(response)) => assert_eq!(response.id, NumberOrString::String("pb-1".into())),
            other => panic!("the late answer should pass through, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn the_end_of_the_stream_fails_waiting_requests_and_refuses_new_ones() {
        let (mut transport, lane, lines, server) = pipe(4096);
        let waiting = lane.request(ping()).unwrap();
        drop((lines, server));
        assert!(transport.receive().await.is_none());
        assert!(matches!(waiting.answer().await, Err(LaneError::Service(ServiceError::TransportClosed))));
        assert!(matches!(lane.request(ping()), Err(ServiceError::TransportClosed)));
    }

    #[tokio::test]
    async fn a_broken_pipe_fails_the_request_that_finds_it() {
        let (transport, lane, lines, server) = pipe(4096);
        drop((lines, server));
        assert!(matches!(lane.request(ping()), Err(ServiceError::TransportClosed)));
        // The failed request waits for nothing.
        assert!(lock_calls(&transport.calls).waiting.is_empty());
    }

    #[tokio::test]
    async fn messages_from_rmcp_and_the_lane_stay_whole_on_a_pipe_that_is_full() {
        const EACH: usize = 20;
        // A pipe far smaller than one message: almost every byte waits for the drain task.
        let (mut transport, lane, mut lines, _server) = pipe(64);
        let big = "x".repeat(20_000);
        let rmcp_side = {
            let big = big.clone();
            tokio::spawn(async move {
                for n in 0..EACH {
                    let message = ClientJsonRpcMessage::request(call(&big), NumberOrString::Number(n as i64));
                    transport.send(message).await.unwrap();
                }
                transport
            })
        };
        let lane_side = tokio::spawn(async move {
            let mut requests = Vec::new();
            for _ in 0..EACH {
                requests.push(lane.request(call(&big)).unwrap());
                tokio::task::yield_now().await;
            }
            requests
        });
        let mut ids = Vec::new();
        for _ in 0..2 * EACH {
            let line = lines.next_line().await.unwrap().unwrap();
            let message: Value = serde_json::from_str(&line).expect("each line is one whole message");
            assert_eq!(message["params"]["arguments"]["message"].as_str().map(str::len), Some(20_000));
            ids.push(message["id"].clone());
        }
        let (_transport, _requests) = (rmcp_side.await.unwrap(), lane_side.await.unwrap());
        let numbers: Vec<_> = ids.iter().filter_map(Value::as_i64).collect();
        let strings: Vec<_> = ids.iter().filter_map(Value::as_str).collect();
        assert_eq!(numbers, (0..EACH as i64).collect::<Vec<_>>(), "rmcp's messages arrive in order");
        assert_eq!(strings, (1..=EACH).map(|n| format!("pb-{n}")).collect::<Vec<_>>(), "and the lane's");
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
}
