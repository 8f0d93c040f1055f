//! A pipe to an MCP server (stdio, in-process) shared by rmcp and the registry's
//! [`Lane`](super::lane::Lane), with no task of its own in between.
//!
//! - **Writing.** [`Outbox`] is the one writer: each message is appended whole and written at once
//!   by the task that appends it, so rmcp's and the lane's messages never interleave.
//! - **Reading.** Whoever waits reads: rmcp's loop ([`PipeTransport::receive`]) or a lane call
//!   ([`PipeAnswer`]). An answer goes to its call's slot, a call's progress and logs are handled in
//!   order ([`InOrder`]), the rest waits for rmcp (at most [`QUEUED_FOR_RMCP`] messages; a call that
//!   finds that many stops reading). The pipe keeps the waker of the last task that found it empty;
//!   a waiter that leaves hands the pipe on, so what comes next is never left unread.
//! - **Parsing.** Lines over the limit are dropped; rmcp's codec parses each under its stdio rules;
//!   a lane's answer is read as its request asks ([`typed_answer`]). When the output ends, waiting
//!   calls fail as rmcp's would ([`ServiceError::TransportClosed`]).

use std::any::TypeId;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll, Waker};

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ErrorData, JsonRpcMessage,
    JsonRpcRequest, JsonRpcVersion2_0, MetaObject, RequestId, RequestMetaObject, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::ServiceError;
use rmcp::transport::async_rw::{JsonRpcMessageCodec, JsonRpcMessageCodecError};
use rmcp::transport::{DynamicTransportError, Transport};
use serde::Serialize;
use serde_json::error::Category;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tokio_util::bytes::{Buf, BytesMut};
use tokio_util::codec::Decoder;

use super::answer::{Answer, InOrder, Reads, typed_answer};
use super::task_shapes;

/// Messages read for rmcp and not yet taken, at most.
const QUEUED_FOR_RMCP: usize = 256;

/// Bytes of buffer room read into at a time.
const READ_BYTES: usize = 64 << 10;

/// Opens a pipe from its two ends: the transport rmcp serves (which owns the
/// writing end: dropping it closes the server's input) and the [`PipeEnd`] the
/// lane sends through. Spawns the outbox's writer task: call it inside the
/// runtime. `max_line` bounds one incoming line.
pub(crate) fn open(
    read: impl AsyncRead + Send + 'static,
    write: impl AsyncWrite + Send + 'static,
    max_line: usize,
    in_order: Arc<dyn InOrder>,
) -> (PipeTransport, PipeEnd) {
    let wake = Arc::new(Notify::new());
    let outbox = Arc::new(Outbox {
        state: Mutex::new(Writing {
            pipe: Box::pin(write),
            queued: BytesMut::new(),
            failed: None,
            flushing: Vec::new(),
        }),
        wake: wake.clone(),
    });
    tokio::spawn(drain(Arc::downgrade(&outbox), wake));
    let reader = Arc::new(Reader(Mutex::new(Reading {
        source: Box::pin(read),
        buf: BytesMut::new(),
        scanned: 0,
        max_line,
        discarding: false,
        codec: JsonRpcMessageCodec::default(),
        ended: false,
        for_rmcp: VecDeque::new(),
        rmcp: None,
        calls: HashMap::new(),
        probe: None,
        holder: None,
        in_order,
        outbox: Arc::downgrade(&outbox),
    })));
    let end = PipeEnd { outbox: Arc::downgrade(&outbox), reader: reader.clone() };
    (PipeTransport { outbox: Some(outbox), reader }, end)
}

/// The writing end of a pipe, shared by rmcp and the lane. Dropping it (rmcp
/// closing the transport) closes the pipe.
struct Outbox {
    state: Mutex<Writing>,
    /// Wakes [`drain`] when bytes are queued, and when the outbox is dropped.
    wake: Arc<Notify>,
}

struct Writing {
    pipe: Pin<Box<dyn AsyncWrite + Send>>,
    /// Bytes appended but not yet written, whole messages in order.
    queued: BytesMut,
    /// Set when a write failed: the pipe is broken and nothing more is written.
    failed: Option<io::ErrorKind>,
    /// Senders waiting for the queue to empty (their flush).
    flushing: Vec<Waker>,
}

impl Writing {
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
    fn lock(&self) -> MutexGuard<'_, Writing> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends one whole line and writes what the pipe takes now; the rest
    /// goes to [`drain`]. Fails when the pipe is broken.
    fn push(&self, line: &[u8]) -> io::Result<()> {
        let mut state = self.lock();
        if state.failed.is_none() {
            let idle = state.queued.is_empty();
            state.queued.extend_from_slice(line);
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

/// `message` as a line of the pipe. A tool call whose `_meta` is all in its
/// params (as the lane sends it) is written as it stands: rmcp's writer first
/// copies every request's params, arguments and all, into a `Value`, to merge
/// in the `_meta` the request's extensions may hold.
fn line(message: &ClientJsonRpcMessage) -> serde_json::Result<Vec<u8>> {
    #[derive(Serialize)]
    struct ToolCall<'a> {
        jsonrpc: JsonRpcVersion2_0,
        id: &'a RequestId,
        method: &'a CallToolRequestMethod,
        params: &'a CallToolRequestParams,
    }
    let mut line = match message {
        JsonRpcMessage::Request(JsonRpcRequest { id, request: ClientRequest::CallToolRequest(call), .. })
            if call.extensions.get::<RequestMetaObject>().is_none()
                && call.extensions.get::<MetaObject>().is_none() =>
        {
            serde_json::to_vec(&ToolCall {
                jsonrpc: JsonRpcVersion2_0,
                id,
                method: &call.method,
                params: &call.params,
            })?
        }
        _ => match task_shapes::advertised(message) {
            Some(initialize) => serde_json::to_vec(&initialize)?,
            None => serde_json::to_vec(message)?,
        },
    };
    line.push(b'\n');
    Ok(line)
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

/// The reading end of a pipe, read by whoever waits (see the module docs).
struct Reader(Mutex<Reading>);

impl Reader {
    fn lock(&self) -> MutexGuard<'_, Reading> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct Reading {
    source: Pin<Box<dyn AsyncRead + Send>>,
    buf: BytesMut,
    /// Bytes at the start of `buf` known to hold no newline.
    scanned: usize,
    /// The longest line taken; a longer one is dropped.
    max_line: usize,
    /// Dropping the rest of a line over `max_line`.
    discarding: bool,
    /// rmcp's codec, given one whole line at a time.
    codec: JsonRpcMessageCodec<ServerJsonRpcMessage>,
    /// The server's output ended, or rmcp closed the transport: nothing more is read.
    ended: bool,
    for_rmcp: VecDeque<ServerJsonRpcMessage>,
    /// rmcp's waker while it waits for a message.
    rmcp: Option<Waker>,
    /// The lane's calls by request id.
    calls: HashMap<RequestId, Slot>,
    /// The probe's request ([`PipeAnswer::mark_probe`]), once it was sent.
    probe: Option<RequestId>,
    /// Whose waker the pipe holds: the last waiter that found it empty.
    holder: Option<Waiter>,
    in_order: Arc<dyn InOrder>,
    /// For the "Invalid request" answers to messages that cannot be read.
    outbox: Weak<Outbox>,
}

/// A task waiting on the reader.
#[derive(Clone, PartialEq)]
enum Waiter {
    Rmcp,
    Call(RequestId),
}

enum Slot {
    Waiting {
        /// The call's waker, taken when it is woken.
        waker: Option<Waker>,
        /// How its answer is read ([`typed_answer`]).
        reads: Reads,
    },
    /// An answer not yet read: its call's, or the probe's late one, kept for [`PipeEnd::late`].
    Answered(Box<Answer>),
    /// The probe's, given up by its caller: a late answer is kept, never given to rmcp
    /// ([`PipeAnswer::mark_probe`]).
    Forgotten,
    /// The probe's, asked for its late answer before it came ([`PipeEnd::late`]): an answer
    /// now is dropped.
    Settled,
}

/// What the reader read.
enum Read {
    Message(ServerJsonRpcMessage),
    /// An answer read directly as its call's result type.
    Answer(RequestId, ServerResult),
}

impl Reading {
    /// The next message in the pipe, read with `cx`'s waker.
    fn read(&mut self, cx: &mut Context<'_>) -> Poll<Option<Read>> {
        loop {
            if let Some(newline) = self.buf[self.scanned..].iter().position(|b| *b == b'\n') {
                let mut line = self.buf.split_to(self.scanned + newline + 1);
                self.scanned = 0;
                if std::mem::take(&mut self.discarding) {
                    continue;
                }
                if line.len() > self.max_line + 1 {
                    tracing::error!(max_line = self.max_line, "dropped a line from an MCP server over the size limit");
                    continue;
                }
                if let Some(renamed) = task_shapes::as_custom(&line) {
                    line = renamed[..].into();
                }
                if let Some(answer) = self.typed_answer(&line) {
                    return Poll::Ready(Some(answer));
                }
                match self.codec.decode(&mut line) {
                    Ok(Some(message)) => return Poll::Ready(Some(Read::Message(message))),
                    // A notification that is not MCP's, skipped as rmcp skips it.
                    Ok(None) => {}
                    Err(JsonRpcMessageCodecError::Serde(e)) => self.unreadable(&e),
                    Err(e) => tracing::error!(error = %e, "dropped a message from an MCP server"),
                }
                continue;
            }
            self.scanned = self.buf.len();
            if self.buf.len() > self.max_line {
                tracing::error!(max_line = self.max_line, "dropped a line from an MCP server over the size limit");
                self.buf.clear();
                self.scanned = 0;
                self.discarding = true;
            }
            if self.buf.capacity() - self.buf.len() < READ_BYTES / 4 {
                self.buf.reserve(READ_BYTES);
            }
            match tokio_util::io::poll_read_buf(self.source.as_mut(), cx, &mut self.buf) {
                // The end of the output; an unfinished last line is not a message.
                Poll::Ready(Ok(0)) => return Poll::Ready(None),
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(e)) => {
                    tracing::error!(error = %e, "reading an MCP server's output failed");
                    return Poll::Ready(None);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// `line` as the answer to a waiting lane request, read as the request
    /// asks ([`typed_answer`]); `None` when it is not one (rmcp's codec reads
    /// it then). Each way of reading is tried only while a request waits for it.
    fn typed_answer(&self, line: &[u8]) -> Option<Read> {
        let reads_of = |id: &RequestId| match self.calls.get(id) {
            Some(Slot::Waiting { reads, .. }) => Some(*reads),
            _ => None,
        };
        let waited =
            |way: Reads| self.calls.values().any(|slot| matches!(slot, Slot::Waiting { reads, .. } if *reads == way));
        [Reads::ToolCall, Reads::Raw].into_iter().filter(|way| waited(*way)).find_map(|way| {
            let (id, result) = typed_answer(line, way)?;
            (reads_of(&id) == Some(way)).then_some(Read::Answer(id, result))
        })
    }

    /// A line that is not a message, as rmcp's stdio transport treats it: text
    /// that is not JSON is skipped (answering it could start an error storm),
    /// JSON of the wrong shape gets an "Invalid request" error.
    fn unreadable(&self, error: &serde_json::Error) {
        match error.classify() {
            Category::Syntax | Category::Eof => {
                tracing::debug!(%error, "skipped a line from an MCP server that is not JSON")
            }
            Category::Data | Category::Io => {
                tracing::debug!(%error, "a message from an MCP server has the wrong shape");
                let reply = ClientJsonRpcMessage::error(ErrorData::invalid_request("Invalid request", None), None);
                if let (Some(outbox), Ok(reply)) = (self.outbox.upgrade(), line(&reply)) {
                    let _ = outbox.push(&reply);
                }
            }
        }
    }

    /// Sorts what `by` read: an answer into its call's slot, a call's
    /// notification to [`InOrder`], anything else to rmcp. Wakes the one it is
    /// for, unless that is `by`.
    fn sort(&mut self, read: Read, by: &Waiter) {
        let message = match read {
            Read::Answer(id, result) => return self.answer(id, Ok(result), by),
            Read::Message(message) => message,
        };
        let answered = match &message {
            JsonRpcMessage::Response(response) => Some(&response.id),
            // A server that could not read a request answers without its id: the probe's.
            JsonRpcMessage::Error(error) => error.id.as_ref().or(self.probe.as_ref()),
            _ => None,
        }
        .filter(|id| matches!(self.calls.get(*id), Some(Slot::Waiting { .. } | Slot::Forgotten | Slot::Settled)))
        .cloned();
        if let Some(id) = &answered
            && matches!(self.calls.get(id), Some(Slot::Settled))
        {
            self.calls.remove(id);
            return;
        }
        match (answered, message) {
            (Some(id), JsonRpcMessage::Response(response)) => self.answer(id, Ok(response.result), by),
            (Some(id), JsonRpcMessage::Error(error)) => {
                self.answer(id, Err(ServiceError::McpError(error.error).into()), by);
            }
            (_, JsonRpcMessage::Notification(notification))
                if self.in_order.handle(&notification.notification, None) => {}
            (_, other) => {
                self.for_rmcp.push_back(other);
                if *by != Waiter::Rmcp
                    && let Some(rmcp) = self.rmcp.take()
                {
                    rmcp.wake();
                }
            }
        }
    }

    /// Puts `answer` in the slot of the call `id`, and wakes it unless it is `by`.
    fn answer(&mut self, id: RequestId, answer: Answer, by: &Waiter) {
        let is_by = matches!(by, Waiter::Call(caller) if *caller == id);
        if let Some(Slot::Waiting { waker: Some(waker), .. }) = self.calls.insert(id, Slot::Answered(Box::new(answer)))
            && !is_by
        {
            waker.wake();
        }
    }

    /// Reads, as `me` with `cx`'s waker, until `done` or the pipe is empty.
    fn read_until(&mut self, me: &Waiter, cx: &mut Context<'_>, done: impl Fn(&Self) -> bool) -> Poll<()> {
        while !done(self) {
            match self.read(cx) {
                Poll::Ready(Some(message)) => self.sort(message, me),
                Poll::Ready(None) => self.end(),
                Poll::Pending => {
                    self.holder = Some(me.clone());
                    return Poll::Pending;
                }
            }
        }
        Poll::Ready(())
    }

    /// rmcp's next message, or `None` once the pipe ended and rmcp has had everything.
    fn poll_rmcp(&mut self, cx: &mut Context<'_>) -> Poll<Option<ServerJsonRpcMessage>> {
        if self.read_until(&Waiter::Rmcp, cx, |r| r.ended || !r.for_rmcp.is_empty()).is_pending() {
            self.rmcp = Some(cx.waker().clone());
        }
        let full = self.for_rmcp.len() >= QUEUED_FOR_RMCP;
        match self.for_rmcp.pop_front() {
            Some(message) => {
                if full {
                    // Calls that stopped reading can read again.
                    self.wake_calls();
                }
                Poll::Ready(Some(message))
            }
            None if self.ended => Poll::Ready(None),
            None => Poll::Pending,
        }
    }

    /// The answer to the call `id`, read by the call itself.
    fn poll_answer(&mut self, id: &RequestId, cx: &mut Context<'_>) -> Poll<Answer> {
        let me = Waiter::Call(id.clone());
        let waiting = |r: &Self| matches!(r.calls.get(id), Some(Slot::Waiting { .. }));
        // Stops early when rmcp is behind: rmcp wakes the calls when it takes some.
        let _ = self.read_until(&me, cx, |r| !waiting(r) || r.ended || r.for_rmcp.len() >= QUEUED_FOR_RMCP);
        if let Some(Slot::Waiting { waker, .. }) = self.calls.get_mut(id)
            && !self.ended
        {
            if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *waker = Some(cx.waker().clone());
            }
            return Poll::Pending;
        }
        let answer = match self.calls.remove(id) {
            Some(Slot::Answered(answer)) => *answer,
            _ => Err(ServiceError::TransportClosed.into()),
        };
        self.leave(&me);
        Poll::Ready(answer)
    }

    /// `me` stops waiting. If the pipe holds its waker, another waiter gets it
    /// (rmcp if it waits, else a call): the pipe is read with that waiter's
    /// waker until it is empty, and whatever is read wakes the one it is for.
    fn leave(&mut self, me: &Waiter) {
        if self.holder.as_ref() != Some(me) {
            return;
        }
        self.holder = None;
        let next = match &self.rmcp {
            Some(waker) => Some((Waiter::Rmcp, waker.clone())),
            None => self.calls.iter().find_map(|(id, slot)| match slot {
                Slot::Waiting { waker: Some(waker), .. } => Some((Waiter::Call(id.clone()), waker.clone())),
                _ => None,
            }),
        };
        let Some((next, waker)) = next else { return };
        let stop = |r: &Self| r.ended || r.for_rmcp.len() >= QUEUED_FOR_RMCP;
        if self.read_until(me, &mut Context::from_waker(&waker), stop).is_pending() {
            self.holder = Some(next);
        }
    }

    /// Nothing more is read: waiting calls fail, rmcp gets what is queued, then the end.
    fn end(&mut self) {
        self.ended = true;
        self.holder = None;
        self.wake_calls();
        if let Some(rmcp) = self.rmcp.take() {
            rmcp.wake();
        }
    }

    fn wake_calls(&mut self) {
        for slot in self.calls.values_mut() {
            if let Slot::Waiting { waker, .. } = slot
                && let Some(waker) = waker.take()
            {
                waker.wake();
            }
        }
    }
}

/// The lane's side of a pipe.
#[derive(Clone)]
pub(crate) struct PipeEnd {
    outbox: Weak<Outbox>,
    reader: Arc<Reader>,
}

impl PipeEnd {
    /// The late answer to the probe `id`, given up by its caller, if it has come since; one
    /// that comes after this is dropped.
    pub(crate) fn late(&self, id: &RequestId) -> Option<Answer> {
        let mut reading = self.reader.lock();
        let slot = reading.calls.get_mut(id)?;
        match std::mem::replace(slot, Slot::Settled) {
            Slot::Answered(answer) => {
                reading.calls.remove(id);
                Some(*answer)
            }
            Slot::Forgotten | Slot::Settled => None,
            // Not a probe given up: left as it was.
            waiting @ Slot::Waiting { .. } => {
                *slot = waiting;
                None
            }
        }
    }

    /// Writes `message`, a request whose answer is awaited under `id`.
    pub(crate) fn send(&self, id: RequestId, message: &ClientJsonRpcMessage) -> Result<PipeAnswer, ServiceError> {
        let line = line(message).map_err(|e| {
            let error =
                io::Error::new(io::ErrorKind::InvalidData, format!("the request could not be written as JSON: {e}"));
            ServiceError::TransportSend(DynamicTransportError::from_parts(
                "stdio",
                TypeId::of::<PipeTransport>(),
                Box::new(error),
            ))
        })?;
        {
            let mut reading = self.reader.lock();
            if reading.ended {
                return Err(ServiceError::TransportClosed);
            }
            // Waiting before the write: the answer can be read before `push` returns.
            reading.calls.insert(id.clone(), Slot::Waiting { waker: None, reads: Reads::of(message) });
        }
        // Dropped on failure, it waits for nothing.
        let answer = PipeAnswer { reader: self.reader.clone(), id };
        match self.outbox.upgrade().map(|outbox| outbox.push(&line)) {
            Some(Ok(())) => Ok(answer),
            _ => Err(ServiceError::TransportClosed),
        }
    }
}

/// The answer to a request sent through a [`PipeEnd`], read by its caller.
/// Dropping it abandons the request: a late answer goes to rmcp, unless [`Self::mark_probe`].
pub(crate) struct PipeAnswer {
    reader: Arc<Reader>,
    id: RequestId,
}

impl PipeAnswer {
    /// Makes this the probe sent before the handshake: an error without an id answers it (a
    /// server that could not read it), and an answer after this is dropped unanswered is kept
    /// for [`PipeEnd::late`], not given to rmcp (which would take it for its handshake's).
    pub(crate) fn mark_probe(&self) {
        self.reader.lock().probe = Some(self.id.clone());
    }

    /// The server's answer, or [`ServiceError::TransportClosed`] when the pipe ended first.
    pub(crate) async fn answer(&self) -> Answer {
        std::future::poll_fn(|cx| self.reader.lock().poll_answer(&self.id, cx)).await
    }
}

impl Drop for PipeAnswer {
    fn drop(&mut self) {
        let mut reading = self.reader.lock();
        let probe = reading.probe.as_ref() == Some(&self.id);
        match reading.calls.get(&self.id) {
            None => return,
            Some(Slot::Waiting { .. }) if probe => {
                reading.calls.insert(self.id.clone(), Slot::Forgotten);
            }
            // The probe's answer, come as it was given up, is kept for [`PipeEnd::late`].
            Some(Slot::Answered(_)) if probe => {}
            Some(_) => {
                reading.calls.remove(&self.id);
            }
        }
        reading.leave(&Waiter::Call(self.id.clone()));
    }
}

/// rmcp's side of a pipe. Dropping or closing it closes the server's input
/// and ends the lane's calls.
pub(crate) struct PipeTransport {
    outbox: Option<Arc<Outbox>>,
    reader: Arc<Reader>,
}

impl Transport<RoleClient> for PipeTransport {
    type Error = io::Error;

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let outbox = self.outbox.clone();
        let pushed = match &outbox {
            Some(outbox) => line(&item).map_err(io::Error::from).and_then(|line| outbox.push(&line)),
            None => Err(io::Error::new(io::ErrorKind::NotConnected, "Transport is closed")),
        };
        async move {
            pushed?;
            match outbox {
                Some(outbox) => std::future::poll_fn(|cx| outbox.poll_flushed(cx)).await,
                None => Ok(()),
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        std::future::poll_fn(|cx| self.reader.lock().poll_rmcp(cx)).await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.lock().end();
        self.outbox = None;
        Ok(())
    }
}

impl Drop for PipeTransport {
    fn drop(&mut self) {
        self.reader.lock().end();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::task::ArcWake;
    use rmcp::model::{
        CustomRequest, EmptyResult, GetMeta, NumberOrString, ProgressToken, ServerNotification, ServerResult,
    };
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

    use super::*;
    use crate::mcp::wire::answer::LaneError;
    use crate::mcp::wire::lane::Lane;
    use crate::mcp::wire::lane::tests::{Seen, call, ping, progress, reply};

    type Lines = tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>;

    /// A client end (transport and lane) over a pipe of `bytes`, and the
    /// server's end: its lines and its writer.
    fn pipe_with(bytes: usize, in_order: Arc<dyn InOrder>) -> (PipeTransport, Lane, Lines, WriteHalf<DuplexStream>) {
        let (client, server) = tokio::io::duplex(bytes);
        let (read, write) = tokio::io::split(client);
        let (transport, end) = open(read, write, 1 << 20, in_order);
        let (server_read, server_write) = tokio::io::split(server);
        (transport, Lane::pipe(end), BufReader::new(server_read).lines(), server_write)
    }

    fn pipe(bytes: usize) -> (PipeTransport, Lane, Lines, WriteHalf<DuplexStream>) {
        pipe_with(bytes, Arc::new(Seen::default()))
    }

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Counted(AtomicUsize);

    impl ArcWake for Counted {
        fn wake_by_ref(counted: &Arc<Self>) {
            counted.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl Counted {
        fn wakes(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

    /// Polls `future` once with `waker`.
    fn poll_with<F: Future + Unpin>(future: &mut F, waker: &Arc<Counted>) -> Poll<F::Output> {
        Pin::new(future).poll(&mut Context::from_waker(&futures::task::waker(waker.clone())))
    }

    /// Waits until `waker` was woken `n` times (wakes come from the writer's side).
    async fn woken(waker: &Counted, n: usize) {
        tokio::time::timeout(std::time::Duration::from_secs(5), async {
            while waker.wakes() < n {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the waiter is woken");
    }
    #[tokio::test]
    async fn a_calls_notifications_are_handled_in_the_order_they_are_read_and_the_rest_goes_to_rmcp() {
        let seen = Arc::new(Seen::default());
        let (mut transport, _lane, _lines, mut server) = pipe_with(4096, seen.clone());
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

    /// A probe sent and given up before any answer.
    async fn given_up(lane: &Lane, lines: &mut Lines) -> RequestId {
        let asked = lane.request(ping()).unwrap();
        let id = asked.id.clone();
        assert!(asked.answer_within(std::time::Duration::from_millis(10)).await.is_none());
        lines.next_line().await.unwrap().unwrap();
        id
    }

    /// Asserts that rmcp's next message is its own answer (id 0), not the probe's.
    async fn rmcp_gets_only_its_own(transport: &mut PipeTransport) {
        match transport.receive().await {
            Some(JsonRpcMessage::Response(response)) => assert_eq!(response.id, NumberOrString::Number(0)),
            other => panic!("rmcp should get only its own answer, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_request_given_up_in_time_keeps_its_late_answer_from_rmcp() {
        let (mut transport, lane, mut lines, mut server) = pipe(4096);
        let id = given_up(&lane, &mut lines).await;
        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-1", "result": {"late": true}})).await;
        reply(&mut server, json!({"jsonrpc": "2.0", "id": 0, "result": {}})).await;
        rmcp_gets_only_its_own(&mut transport).await;
        let late = serde_json::to_value(lane.late(&id).unwrap().unwrap()).unwrap();
        assert_eq!(late["late"], true);
        assert!(lane.late(&id).is_none(), "taken once");
        assert!(transport.reader.lock().calls.is_empty());
    }

    #[tokio::test]
    async fn an_answer_after_the_probe_was_settled_is_dropped() {
        let (mut transport, lane, mut lines, mut server) = pipe(4096);
        let id = given_up(&lane, &mut lines).await;
        assert!(lane.late(&id).is_none(), "no answer by the end of the start");
        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-1", "result": {}})).await;
        reply(&mut server, json!({"jsonrpc": "2.0", "id": 0, "result": {}})).await;
        rmcp_gets_only_its_own(&mut transport).await;
        assert!(lane.late(&id).is_none());
        assert!(transport.reader.lock().calls.is_empty(), "nothing kept");
    }

    #[tokio::test]
    async fn an_error_without_an_id_answers_the_probe_given_up_or_not() {
        let (mut transport, lane, mut lines, mut server) = pipe(4096);
        let unnamed = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
        let asked = lane.request(ping()).unwrap();
        lines.next_line().await.unwrap().unwrap();
        reply(&mut server, unnamed.clone()).await;
        let answer = asked.answer_within(std::time::Duration::from_secs(5)).await;
        assert!(matches!(answer, Some(Err(LaneError::Service(ServiceError::McpError(_))))), "{answer:?}");

        let id = given_up(&lane, &mut lines).await;
        reply(&mut server, unnamed.clone()).await;
        reply(&mut server, json!({"jsonrpc": "2.0", "id": 0, "result": {}})).await;
        rmcp_gets_only_its_own(&mut transport).await;
        assert!(matches!(lane.late(&id), Some(Err(LaneError::Service(ServiceError::McpError(_))))), "answered late");
        // Once the probe is answered, an error without an id is rmcp's again.
        reply(&mut server, unnamed).await;
        assert!(matches!(transport.receive().await, Some(JsonRpcMessage::Error(_))));
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
        assert!(transport.reader.lock().calls.is_empty());
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

    fn list_changed() -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    }

    fn is_list_changed(message: Option<ServerJsonRpcMessage>) -> bool {
        matches!(message, Some(JsonRpcMessage::Notification(n)) if matches!(n.notification, ServerNotification::ToolListChangedNotification(_)))
    }

    #[tokio::test]
    async fn a_call_reads_its_own_answer_and_rmcp_is_woken_only_for_its_own_messages() {
        let (mut transport, lane, mut lines, mut server) = pipe(4096);
        let rmcp = Arc::new(Counted::default());
        let mut receive = Box::pin(transport.receive());
        assert!(poll_with(&mut receive, &rmcp).is_pending());

        let request = lane.request(ping()).unwrap();
        lines.next_line().await.unwrap().unwrap();
        let caller = Arc::new(Counted::default());
        let mut answer = Box::pin(request.answer());
        assert!(poll_with(&mut answer, &caller).is_pending());
        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-1", "result": {}})).await;
        woken(&caller, 1).await;
        assert!(matches!(poll_with(&mut answer, &caller), Poll::Ready(Ok(ServerResult::EmptyResult(_)))));
        assert_eq!(rmcp.wakes(), 0, "the call's answer does not wake rmcp");

        // The call handed the pipe back to rmcp: what comes next wakes it.
        reply(&mut server, list_changed()).await;
        woken(&rmcp, 1).await;
        match poll_with(&mut receive, &rmcp) {
            Poll::Ready(message) => assert!(is_list_changed(message)),
            Poll::Pending => panic!("rmcp should get the list change"),
        }
    }

    #[tokio::test]
    async fn a_call_that_stops_waiting_hands_the_pipe_to_a_call_that_still_waits() {
        let (_transport, lane, _lines, mut server) = pipe(4096);
        let (first, second) = (lane.request(ping()).unwrap(), lane.request(ping()).unwrap());
        let (first_waker, second_waker) = (Arc::new(Counted::default()), Arc::new(Counted::default()));
        let mut second = Box::pin(second.answer());
        assert!(poll_with(&mut second, &second_waker).is_pending());
        let mut first = Box::pin(first.answer());
        // The pipe now holds the first call's waker, not the second's.
        assert!(poll_with(&mut first, &first_waker).is_pending());
        drop(first);

        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-2", "result": {}})).await;
        woken(&second_waker, 1).await;
        assert!(matches!(poll_with(&mut second, &second_waker), Poll::Ready(Ok(ServerResult::EmptyResult(_)))));
        assert_eq!(first_waker.wakes(), 0);
    }

    #[tokio::test]
    async fn a_call_stops_reading_while_rmcp_is_behind_and_nothing_is_lost() {
        let (mut transport, lane, _lines, mut server) = pipe(1 << 20);
        let request = lane.request(ping()).unwrap();
        let flood = QUEUED_FOR_RMCP + 44;
        for _ in 0..flood {
            reply(&mut server, list_changed()).await;
        }
        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-1", "result": {}})).await;

        let caller = Arc::new(Counted::default());
        let mut answer = Box::pin(request.answer());
        assert!(poll_with(&mut answer, &caller).is_pending());
        assert_eq!(transport.reader.lock().for_rmcp.len(), QUEUED_FOR_RMCP, "the queue for rmcp is bounded");

        assert!(is_list_changed(transport.receive().await));
        assert_eq!(caller.wakes(), 1, "rmcp taking one lets the call read again");
        for _ in 1..flood {
            assert!(is_list_changed(transport.receive().await));
        }
        assert!(matches!(poll_with(&mut answer, &caller), Poll::Ready(Ok(ServerResult::EmptyResult(_)))));
    }

    #[tokio::test]
    async fn lines_that_are_not_messages_are_skipped_and_wrong_shapes_get_an_invalid_request_error() {
        let (mut transport, _lane, mut lines, mut server) = pipe(4096);
        let garbage =
            "this is not json\n\n{\"jsonrpc\":\"2.0\",\"id\":1}\n{\"jsonrpc\":\"1.0\",\"method\":\"custom/thing\"}\n";
        server.write_all(format!("{garbage}{}\n", list_changed()).as_bytes()).await.unwrap();
        assert!(is_list_changed(transport.receive().await));
        let sent: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(sent["error"]["code"], -32600, "{sent}");
        assert!(sent.get("id").is_none_or(Value::is_null), "{sent}");
        // One answer only: an unknown notification rmcp cannot read is skipped quietly.
        reply(&mut server, list_changed()).await;
        assert!(is_list_changed(transport.receive().await));
        let next = tokio::time::timeout(std::time::Duration::from_millis(100), lines.next_line()).await;
        assert!(next.is_err(), "nothing more was sent: {next:?}");
    }

    #[tokio::test]
    async fn a_tool_calls_answer_is_read_as_its_result_and_other_shapes_as_rmcp_reads_them() {
        let (_transport, lane, _lines, mut server) = pipe(4096);
        let (text, empty, failed) =
            (lane.request(call("a")).unwrap(), lane.request(call("b")).unwrap(), lane.request(call("c")).unwrap());
        let content = json!({"content": [{"type": "text", "text": "Echo: a"}], "isError": false});
        // Node's JSON.stringify puts the result before the id.
        server
            .write_all(format!("{{\"result\":{content},\"jsonrpc\":\"2.0\",\"id\":\"pb-1\"}}\n").as_bytes())
            .await
            .unwrap();
        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-2", "result": {}})).await;
        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-3", "error": {"code": -32602, "message": "bad"}})).await;
        match text.answer().await {
            Ok(ServerResult::CallToolResult(result)) => {
                assert_eq!(serde_json::to_value(&result.content).unwrap(), content["content"]);
                assert_eq!(result.is_error, Some(false));
            }
            other => panic!("expected the tool's result, got {other:?}"),
        }
        // Not a tool result: read as rmcp reads it (an empty result).
        assert!(matches!(empty.answer().await, Ok(ServerResult::EmptyResult(_))));
        assert!(
            matches!(failed.answer().await, Err(LaneError::Service(ServiceError::McpError(e))) if e.message == "bad")
        );
    }

    #[tokio::test]
    async fn a_custom_requests_answer_is_the_servers_own_json_and_others_are_read_as_before() {
        let (_transport, lane, mut lines, mut server) = pipe(4096);
        let listed = json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}]});
        let list = lane.request(ClientRequest::CustomRequest(CustomRequest::new("tools/list", None))).unwrap();
        let text = lane.request(call("a")).unwrap();
        let sent: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(sent["method"], "tools/list");
        // Answered out of order: each is read its own way.
        let content = json!({"content": [{"type": "text", "text": "Echo: a"}]});
        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-2", "result": content})).await;
        reply(&mut server, json!({"jsonrpc": "2.0", "id": "pb-1", "result": listed})).await;
        assert!(matches!(text.answer().await, Ok(ServerResult::CallToolResult(_))));
        // rmcp's `ListToolsResult` would drop `execution`; the raw answer keeps it.
        match list.answer().await {
            Ok(ServerResult::CustomResult(raw)) => assert_eq!(raw.0, listed),
            other => panic!("expected the server's JSON, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_dropped_and_the_next_one_read() {
        let (client, server) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(client);
        let (mut transport, _end) = open(read, write, 100, Arc::new(Seen::default()));
        let (_server_read, mut server) = tokio::io::split(server);
        let long = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x".repeat(500)}});
        // Whole in one read, and cut across reads (the pipe holds 4096 bytes).
        reply(&mut server, long.clone()).await;
        reply(&mut server, list_changed()).await;
        assert!(is_list_changed(transport.receive().await));
        let longer = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x".repeat(20_000)}});
        let writer = tokio::spawn(async move {
            reply(&mut server, longer).await;
            reply(&mut server, list_changed()).await;
            server
        });
        assert!(is_list_changed(transport.receive().await));
        let _server = writer.await.unwrap();
    }

    /// rmcp's line for `request` sent as `id`, with the progress token where
    /// rmcp's own requests carry it (the request's extensions).
    fn rmcp_line(mut request: ClientRequest, id: &str) -> Value {
        let id = NumberOrString::String(id.into());
        request.get_meta_mut().set_progress_token(ProgressToken(id.clone()));
        serde_json::to_value(ClientJsonRpcMessage::request(request, id)).unwrap()
    }

    #[tokio::test]
    async fn a_tool_call_is_written_as_rmcp_writes_it() {
        let (_transport, lane, mut lines, _server) = pipe(4096);
        let _sent = lane.request(call("hello")).unwrap();
        let sent: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(sent, rmcp_line(call("hello"), "pb-1"));
        assert_eq!(sent["params"]["_meta"]["progressToken"], "pb-1");
        assert_eq!(sent["params"]["arguments"]["message"], "hello");

        // `_meta` in the extensions too: rmcp's writer merges the two.
        let mut both = call("hi");
        if let ClientRequest::CallToolRequest(call) = &mut both {
            call.params.meta = Some(RequestMetaObject::new());
            call.params.meta.as_mut().unwrap().0.insert("from-params".into(), json!(1));
        }
        let written = line(&ClientJsonRpcMessage::request(both.clone(), NumberOrString::Number(7))).unwrap();
        let written: Value = serde_json::from_slice(&written).unwrap();
        assert_eq!(written["params"]["_meta"], json!({"from-params": 1}));
        let mut message = ClientJsonRpcMessage::request(both, NumberOrString::Number(7));
        if let JsonRpcMessage::Request(request) = &mut message {
            request.request.get_meta_mut().set_progress_token(ProgressToken(NumberOrString::Number(7)));
        }
        let merged: Value = serde_json::from_slice(&line(&message).unwrap()).unwrap();
        assert_eq!(merged["params"]["_meta"], json!({"from-params": 1, "progressToken": 7}));
    }
}
