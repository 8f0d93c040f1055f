//! Servers that run inside Patchbay: an rmcp server on one end of an
//! in-memory pipe, the registry's client on the other.
//!
//! Patchbay's own tools (`current_time`, `knowledge_search`) are such a
//! server, so their calls take the same path as every other MCP tool: the
//! registry's inventory, the approval policy, time limits, cancellation and
//! the stored JSON-RPC trace. Messages cross the pipe as the same
//! newline-delimited JSON as stdio, bounded by [`BoundedLines`] like stdio.

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::{RoleServer, Service};
use tokio::io::DuplexStream;
use tokio_util::sync::CancellationToken;

use super::answer::InOrder;
use super::frame::{BoundedLines, MAX_MESSAGE_BYTES};
use super::lane::Lane;
use super::pipe::{self, PipeTransport};

/// Bytes buffered in each direction of the pipe.
const PIPE_BYTES: usize = 1 << 20;

/// A server the registry starts in this process.
pub trait InProcessServer: Send + Sync {
    /// Serves MCP on `io` until the client closes it or `cancel` fires.
    /// Called at every (re)start; must return at once (spawn the work).
    fn spawn(&self, io: DuplexStream, cancel: CancellationToken);
}

/// Serves `service` on `io` on a new task, until the client closes the pipe or
/// `cancel` fires: the usual body of [`InProcessServer::spawn`].
pub fn serve_on<S>(service: S, io: DuplexStream, cancel: CancellationToken)
where
    S: Service<RoleServer> + Send + 'static,
{
    tokio::spawn(async move {
        let running = tokio::select! {
            () = cancel.cancelled() => return,
            running = service.serve_with_ct(io, cancel.child_token()) => match running {
                Ok(running) => running,
                Err(e) => {
                    tracing::warn!(error = %e, "an in-process MCP server could not start");
                    return;
                }
            },
        };
        tokio::select! {
            () = cancel.cancelled() => {}
            _ = running.waiting() => {}
        }
    });
}

/// Starts `server` and returns the client's end of the pipe as a transport,
/// with the [`Lane`] that writes to the same pipe.
pub(crate) fn open(
    server: &dyn InProcessServer,
    in_order: Arc<dyn InOrder>,
    cancel: CancellationToken,
) -> (PipeTransport, Lane) {
    let (client, served) = tokio::io::duplex(PIPE_BYTES);
    server.spawn(served, cancel);
    let (read, write) = tokio::io::split(client);
    let (transport, end) =
        pipe::open(BoundedLines::new(read, MAX_MESSAGE_BYTES), write, MAX_MESSAGE_BYTES + 1, in_order);
    (transport, Lane::pipe(end))
}
