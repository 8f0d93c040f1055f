//! The direct lane: a request to a pipe-connected server (stdio, in-process)
//! written by the calling task and answered straight back to it.
//!
//! rmcp's service loop passes each request from the caller's task to its own
//! task, spawns a task to write it, is woken again when that task ends, and
//! passes the answer back: four hand-overs per call, and on a busy machine
//! each can wait for a core. The lane keeps rmcp for everything else (the
//! handshake, notifications, the server's own requests, rmcp's requests) and
//! takes the registry's requests off that path:
//!
//! - [`Outbox`] is the pipe's one writer. Each message is appended whole, and
//!   written at once by the task that appends it when the pipe has room, so
//!   messages from rmcp and from the lane never interleave and the common case
//!   costs no hand-over. What the pipe cannot take yet is written by the
//!   outbox's own task, in order; writers that flush wait for it.
//! - [`Lane::request`] gives a request its own id and progress token (strings,
//!   `pb-N`, which rmcp's numbers never equal), writes it, and waits for the
//!   answer on a oneshot.
//! - [`Laned`] wraps the transport rmcp reads from and takes the answers to
//!   lane requests out of the stream before rmcp sees them. When the stream
//!   ends, every waiting lane request fails as rmcp's would
//!   ([`ServiceError::TransportClosed`]).
//!
//! Used only with a protocol that has the `initialize` handshake: from
//! 2026-07-28 rmcp adds per-request metadata and checks that a server's
//! request belongs to one of its own, which the lane's requests are not.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll, Waker};

use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, GetMeta, JsonRpcMessage, NumberOrString, ProgressToken, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::Peer;
use rmcp::service::ServiceError;
use rmcp::transport::Transport;
use tokio::io::AsyncWrite;
use tokio::sync::{Notify, oneshot};
use tokio_util::bytes::{Buf, BytesMut};

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
type Answer = Result<ServerResult, ServiceError>;

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

/// Sends requests to one pipe-connected server without rmcp's service loop.
#[derive(Clone)]
pub(crate) struct Lane {
    outbox: Weak<Outbox>,
    calls: SharedCalls,
}

/// A lane request on its way: its id and progress token (for routing and
/// cancellation), and its answer.
pub(crate) struct LaneRequest {
    pub(crate) id: RequestId,
    pub(crate) progress_token: ProgressToken,
    answer: oneshot::Receiver<Answer>,
    calls: SharedCalls,
}

impl LaneRequest {
    /// The server's answer, or [`ServiceError::TransportClosed`] when the
    /// connection ended first.
    pub(crate) async fn answer(mut self) -> Answer {
        (&mut self.answer).await.unwrap_or(Err(ServiceError::TransportClosed))
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
        peer.peer_info().is_some_and(|info| info.protocol_version.has_initialize()).then_some(self)
    }

    /// Writes `request` with a fresh id and progress token.
    pub(crate) fn request(&self, mut request: ClientRequest) -> Result<LaneRequest, ServiceError> {
        let (tx, answer) = oneshot::channel();
        let id = {
            let mut calls = lock_calls(&self.calls);
            if calls.closed {
                return Err(ServiceError::TransportClosed);
            }
            calls.next += 1;
            let id = NumberOrString::String(format!("pb-{}", calls.next).into());
            calls.waiting.insert(id.clone(), tx);
            id
        };
        let progress_token = ProgressToken(id.clone());
        request.get_meta_mut().set_progress_token(progress_token.clone());
        let mut line = serde_json::to_vec(&ClientJsonRpcMessage::request(request, id.clone()))
            .map_err(|e| ServiceError::McpError(ErrorData::internal_error(e.to_string(), None)))?;
        line.push(b'\n');
        let written = match self.outbox.upgrade() {
            Some(outbox) => outbox.push(&line).is_ok(),
            None => false,
        };
        if !written {
            lock_calls(&self.calls).waiting.remove(&id);
            return Err(ServiceError::TransportClosed);
        }
        Ok(LaneRequest { id, progress_token, answer, calls: self.calls.clone() })
    }
}

/// A transport whose writing end is an [`Outbox`] shared with a [`Lane`]:
/// answers to lane requests go to their callers, everything else to rmcp.
pub(crate) struct Laned<T> {
    inner: T,
    calls: SharedCalls,
}

/// Wraps a pipe's writing end for a transport built by `transport`, and
/// returns the transport (for rmcp) with the [`Lane`] that shares its pipe.
/// Spawns the outbox's writer task: call it inside the runtime.
pub(crate) fn open<W, T>(pipe: W, transport: impl FnOnce(OutboxWriter) -> T) -> (Laned<T>, Lane)
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
    let lane = Lane { outbox: Arc::downgrade(&outbox), calls: calls.clone() };
    (Laned { inner: transport(OutboxWriter { outbox }), calls }, lane)
}

impl<T> Laned<T> {
    /// Fails every waiting lane request and takes no more.
    fn close_calls(&self) {
        let mut calls = lock_calls(&self.calls);
        calls.closed = true;
        calls.waiting.clear();
    }

    /// The message, or `None` when it answered a lane request (now delivered).
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
                    let _ = tx.send(Err(ServiceError::McpError(error.error)));
                    None
                }
                None => Some(JsonRpcMessage::Error(error)),
            },
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
            let Some(message) = self.inner.receive().await else {
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
    use rmcp::model::{CallToolRequest, CallToolRequestParams, EmptyResult, PingRequest};
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
        let (transport, lane) = open(write, |writer| AsyncRwTransport::new_client(read, writer));
        let (server_read, server_write) = tokio::io::split(server);
        (transport, lane, BufReader::new(server_read).lines(), server_write)
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
            Err(ServiceError::McpError(error)) => assert_eq!(error.message, "no"),
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
        assert!(matches!(waiting.answer().await, Err(ServiceError::TransportClosed)));
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
}
