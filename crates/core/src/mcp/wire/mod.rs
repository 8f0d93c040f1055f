//! The wire: the bottom floor of `mcp/`, how messages reach a server and come
//! back, below anything that knows what they mean. It imports nothing else of
//! `mcp/`.
//!
//! - [`frame`] bounds a stdio server's messages; [`event_stream`] reads
//!   `text/event-stream` bodies within a size limit.
//! - [`pipe`] is the transport of stdio and in-process servers; [`lane`] sends
//!   the registry's requests past rmcp's service loop; [`answer`] reads their answers.
//! - [`http`] bounds streamable HTTP answers and posts losslessly; [`sse`] is
//!   the legacy HTTP+SSE transport, [`sse_server`] its server side (for `kb serve`);
//!   [`in_process`] serves a server inside Patchbay.
//! - [`task_shapes`] is the seam for the task shapes rmcp does not speak.

use std::time::Duration;

/// How long a server has to answer `server/discover` before it is taken for one older than
/// 2026-07-28 (the transport detection's probe, and the start of a streamable HTTP connection).
pub const DISCOVER_WAIT: Duration = Duration::from_secs(5);

pub mod answer;
pub mod event_stream;
pub mod frame;
pub mod http;
pub mod in_process;
pub mod lane;
pub mod pipe;
pub mod sse;
pub mod sse_server;
pub mod task_shapes;

use serde::Serialize;

/// Which transport a connection uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TransportKind {
    Stdio,
    StreamableHttp,
    /// Legacy HTTP+SSE (2024-11-05).
    Sse,
    /// Inside Patchbay, over an in-memory pipe.
    InProcess,
}
