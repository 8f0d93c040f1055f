//! The MCP host: a registry of MCP servers shared by every conversation, the
//! settings page and the CLI, built on rmcp's client.
//!
//! - [`McpRegistry`] starts servers in parallel, tracks their [`ServerStatus`]
//!   (snapshot and [`McpEvent`] stream), restarts crashed ones with backoff,
//!   keeps their [`catalogue::Catalogue`] fresh and runs tool calls, resource
//!   reads and prompt gets with timeouts and cancellation.
//! - [`launch`] finds a stdio server's command the way the user's shell would and
//!   builds its environment; a failed start leaves a [`LaunchReport`] (the
//!   launch doctor).
//! - [`sandbox`] wraps a stdio server in its security policy (bubblewrap on
//!   Linux); [`egress`] is the filtering proxy of a server limited to some domains.
//! - [`stdio`] owns server processes: own process group, parent-death signal on
//!   Linux, stderr in a bounded ring buffer, no orphans on shutdown.
//! - [`frame`] bounds the size of a stdio server's messages and fails the call an
//!   oversized answer belonged to ([`McpError::MessageTooLarge`]).
//! - [`lane`] sends the registry's requests to a stdio, in-process or streamable
//!   HTTP server from the caller's task and hands the answers straight back, past
//!   rmcp's service loop.
//! - [`pipe`] is the transport of stdio and in-process servers: one writer and one
//!   reader shared by rmcp and the lane, used by whichever task sends or waits.
//! - [`client`] routes progress and log notifications to the call that caused them,
//!   and answers the server's requests; [`client_tasks`] runs those a server asks to run as tasks.
//! - [`requests`] defines the [`ServerRequests`] hook for sampling and
//!   elicitation, and the roots shared with servers.
//! - [`connect`] opens stdio, streamable HTTP, legacy SSE and in-process connections.
//! - [`http`] makes an oversized streamable HTTP answer fail its own call, as [`frame`] does for stdio.
//! - [`in_process`] runs servers inside Patchbay (its built-in tools) over an in-memory pipe.
//! - [`event_stream`] reads `text/event-stream` bodies within a size limit.
//! - [`sse`] is the legacy HTTP+SSE client transport and the auto-detection probe.
//! - [`naming`] maps (server, tool) to model-facing tool names and back.
//! - [`approval`] decides whether a call may run, pinned to the tool's definition.
//! - [`content`] converts and caps tool results for the model and the UI.
//! - [`host`] serves the registry's tools to the chat engine ([`RegistryTools`]).
//! - [`uri_template`] reads and expands resource templates' URI templates.
//! - [`icons`] chooses the icons servers give themselves and their tools, and fetches them safely.
//! - [`tasks`] reads and writes the task-augmented tool calls of 2025-11-25 (experimental).
//! - [`apps`] reads MCP Apps metadata: the view a tool names, who may call it, and the view's page and policy.

pub mod error;
pub mod host;
pub mod launch;
pub mod oauth;
pub mod protocol;
pub mod registry;
pub mod status;
pub mod traces;
pub mod wire;

pub use error::McpError;
pub use host::RegistryTools;
pub use launch::{LaunchReport, LoginEnv};
pub use protocol::events::{CallEvent, LogMessage, McpEvent};
pub use protocol::requests::{
    DenyAll, ElicitationAnswer, ElicitationKind, ElicitationRequest, HookSupport, McpRoot, Refusal, SamplingMessage,
    SamplingReply, SamplingRequest, SamplingRole, ServerRequests, sample_with,
};
pub use registry::{CallOptions, LogLevel, McpRegistry, RegistryOptions, ServerSnapshot, WireIds};
pub use status::ServerStatus;
pub use wire::TransportKind;
pub use wire::in_process::{InProcessServer, serve_on};
