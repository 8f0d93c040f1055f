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

pub mod about;
pub mod approval;
pub mod apps;
pub mod catalogue;
pub mod client;
pub mod client_tasks;
pub mod connect;
pub mod content;
pub mod egress;
pub mod host;
pub mod icons;
pub mod launch;
pub mod naming;
pub mod oauth;
pub mod rate;
pub mod registry;
pub mod requests;
pub mod sandbox;
pub mod stdio;
pub mod tasks;
pub mod traces;
pub mod uri_template;
pub mod wire;

use std::path::PathBuf;
use std::time::Duration;

pub use client::{CallEvent, LogMessage};
pub use host::RegistryTools;
pub use launch::{LaunchReport, LoginEnv};
pub use registry::{
    CallOptions, LogLevel, McpEvent, McpRegistry, RegistryOptions, ServerSnapshot, ServerStatus, WireIds,
};
pub use requests::{
    DenyAll, ElicitationAnswer, ElicitationKind, ElicitationRequest, HookSupport, McpRoot, Refusal, SamplingMessage,
    SamplingReply, SamplingRequest, SamplingRole, ServerRequests, sample_with,
};
pub use wire::TransportKind;
pub use wire::in_process::{InProcessServer, serve_on};

use crate::secrets::SecretError;

/// Errors from starting MCP servers and talking to them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// No server by that name is configured.
    #[error("no MCP server named {name:?}")]
    UnknownServer { name: String },
    /// The server is not ready (stopped, starting, failed).
    #[error("MCP server {server:?} is not ready ({status})")]
    NotReady { server: String, status: ServerStatus },
    /// A tool's view (MCP Apps) cannot be shown.
    #[error("MCP server {server:?}: the view {uri} cannot be shown: {reason}")]
    AppView { server: String, uri: String, reason: String },
    /// An icon could not be fetched.
    #[error("icon {url}: {reason}")]
    Icon { url: String, reason: String },
    /// A resource template's URI template cannot be read.
    #[error("URI template {template:?} is not valid: {reason}")]
    UriTemplate { template: String, reason: String },
    /// The command was not found.
    #[error("command {command:?} not found on PATH; looked in {}", join(searched))]
    CommandNotFound { command: String, searched: Vec<PathBuf> },
    /// The process could not be started.
    #[error("could not start {command}: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// A configured secret is missing from the secret store.
    #[error("MCP server {server:?}: {field} names secret {secret:?}, which is not in the keyring")]
    MissingSecret { server: String, field: String, secret: String },
    /// The secret store failed.
    #[error(transparent)]
    Secret(#[from] SecretError),
    /// A configured HTTP header is not valid.
    #[error("MCP server {server:?}: header {header:?} is invalid: {reason}")]
    InvalidHeader { server: String, header: String, reason: String },
    /// The configuration is not for a stdio server.
    #[error("MCP server {server:?} is not a stdio server")]
    NotStdio { server: String },
    /// The configured URL is not a valid URL.
    #[error("MCP server {server:?}: {url:?} is not a valid URL: {reason}")]
    InvalidUrl { server: String, url: String, reason: String },
    /// Detecting the transport or opening a legacy SSE stream failed.
    #[error("MCP server {server:?}: {source}")]
    Sse {
        server: String,
        #[source]
        source: wire::sse::SseError,
    },
    /// A tool called as a task got an answer that cannot be used.
    #[error("MCP server {server:?}: {source}")]
    Task {
        server: String,
        #[source]
        source: tasks::TaskError,
    },
    /// The server did not finish starting in time.
    #[error("MCP server {server:?} did not start within {}s", after.as_secs())]
    StartTimeout { server: String, after: Duration },
    /// The MCP handshake failed.
    #[error("MCP server {server:?} failed to initialise: {reason}")]
    Initialize { server: String, reason: String },
    /// The server process exited while starting.
    #[error("MCP server {server:?} exited{} during start-up: {stderr_tail}", code.map(|c| format!(" with code {c}")).unwrap_or_default())]
    ServerExited { server: String, reason: String, code: Option<i32>, stderr_tail: String },
    /// A request got no answer (nor progress) in time.
    #[error("MCP server {server:?} did not answer within {}s", after.as_secs())]
    Timeout { server: String, after: Duration },
    /// The caller cancelled the request.
    #[error("request to MCP server {server:?} was cancelled")]
    Cancelled { server: String },
    /// The connection closed before the answer arrived.
    #[error("connection to MCP server {server:?} closed")]
    ConnectionClosed { server: String },
    /// The server answered with a JSON-RPC error.
    #[error("MCP server {server:?} returned error {code}: {message}")]
    Server { server: String, code: i32, message: String, data: Option<serde_json::Value> },
    /// The server answered with a message larger than the limit; it was dropped
    /// unread (the connection stays usable).
    /// `size` is known over stdio; over HTTP the answer is refused as soon as it
    /// crosses the limit, so only "larger" is known.
    #[error("MCP server {server:?} sent an answer {}the limit of {limit} bytes; it was dropped", size_words(*.size))]
    MessageTooLarge { server: String, limit: usize, size: Option<usize> },
    /// A remote server refused a request for want of authorization: its token
    /// expired or was revoked, or it lacks a scope the request needs. The
    /// server is marked failed so the window offers its Sign in button.
    #[error(
        "MCP server {server:?} refused the request for want of authorization: sign in again (the sign-in expired or lacks a permission this request needs; a configured token may be wrong)"
    )]
    SignInRequired { server: String },
    /// Getting a token for a remote server failed: discovery (or its
    /// metadata was refused), the grant, or the stored sign-in could not be
    /// read. Boxed: rmcp's OAuth errors are large.
    #[error("MCP server {server:?}: authorization failed: {source}")]
    Authorization {
        server: String,
        #[source]
        source: Box<oauth::OAuthError>,
    },
    /// A server configured as in-process has no server attached to the registry.
    #[error("MCP server {server:?} is served inside Patchbay, but this registry has no such server attached")]
    NotAttached { server: String },
    /// The server's level needs the sandbox, which cannot run here.
    #[error(
        "MCP server {server:?} runs at the {level} level, which needs the sandbox, but the sandbox cannot run here: {reason}. Install bubblewrap (and keep patchbay-sandbox-init beside Patchbay's program), or run it without a sandbox, with your full rights, by choosing the permissive level knowingly: `patchbay mcp policy {server} --level permissive`"
    )]
    SandboxUnavailable { server: String, level: String, reason: String },
    /// A call went over one of the server's rate limits; it was not sent.
    #[error(
        "{scope} of MCP server {server:?} allows {limit} calls per minute; this call was not made. The limit resets in {} s.",
        resets_in.as_secs().max(1)
    )]
    RateLimited { server: String, scope: String, limit: u32, resets_in: Duration },
    /// The server broke the protocol.
    #[error("MCP server {server:?}: {reason}")]
    Protocol { server: String, reason: String },
}

/// "of 12 bytes, more than " or "larger than ", for [`McpError::MessageTooLarge`].
fn size_words(size: Option<usize>) -> String {
    match size {
        Some(size) => format!("of {size} bytes, more than "),
        None => "larger than ".to_owned(),
    }
}

fn join(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":")
}
