//! [`McpError`], the one error of `mcp/`, and how the errors of rmcp and of
//! the wire become it. It sits above the wire and OAuth (whose errors it
//! wraps) and below everything that reports one.

use std::path::PathBuf;
use std::time::Duration;

use rmcp::service::ServiceError;

use super::oauth::{self, OAuthError};
use super::status::ServerStatus;
use super::wire::answer::LaneError;
use super::wire::frame;
use super::wire::sse::SseError;
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
    /// A configured value refers to an environment variable that is not set.
    #[error(
        "MCP server {server:?}: {field} refers to the environment variable {variable}, which is not set \
         in the environment Patchbay was started from"
    )]
    MissingEnvVar { server: String, field: String, variable: String },
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
        source: SseError,
    },
    /// A tool called as a task got an answer that cannot be used.
    #[error("MCP server {server:?}: {source}")]
    Task {
        server: String,
        #[source]
        source: TaskError,
    },
    /// The server did not finish starting in time.
    #[error("MCP server {server:?} did not start within {}s", after.as_secs())]
    StartTimeout { server: String, after: Duration },
    /// The MCP handshake failed.
    #[error("MCP server {server:?} failed to initialise: {reason}")]
    Initialize { server: String, reason: String },
    /// The server refused the handshake for speaking only `supported`, revisions that start by
    /// `server/discover` (which it did not answer in time, if it was asked).
    #[error("MCP server {server:?} refused the initialize handshake: it speaks only MCP {}, which starts by server/discover", supported.join(", "))]
    NewerRevisionOnly { server: String, supported: Vec<String> },
    /// The server process exited while starting.
    #[error("MCP server {server:?} exited{} during start-up: {stderr_tail}", code.map(|c| format!(" with code {c}")).unwrap_or_default())]
    ServerExited { server: String, reason: String, code: Option<i32>, stderr_tail: String },
    /// A request got no answer (nor progress) in time.
    #[error("MCP server {server:?} did not answer within {}s", after.as_secs())]
    Timeout { server: String, after: Duration },
    /// The caller cancelled the request.
    #[error("request to MCP server {server:?} was cancelled")]
    Cancelled { server: String },
    /// A start asked for once the registry had begun to shut down: a server started then
    /// would outlive the stop.
    #[error("MCP server {server:?} was not started: Patchbay is quitting")]
    ShuttingDown { server: String },
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
        source: Box<OAuthError>,
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

/// Why a task's answer could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("the server's answer is not a task or a tool result: {0}")]
    NotATask(String),
    #[error("the server's task status is unreadable: {0}")]
    Status(String),
    #[error("the task's result is not a tool result: {0}")]
    Result(String),
}

impl McpError {
    /// Classifies an rmcp error for `server`.
    pub(crate) fn from_service(server: &str, error: ServiceError) -> Self {
        let server = server.to_owned();
        match error {
            ServiceError::McpError(data) => match frame::too_large(&data) {
                Some((limit, size)) => McpError::MessageTooLarge { server, limit, size },
                None => {
                    McpError::Server { server, code: data.code.0, message: data.message.into_owned(), data: data.data }
                }
            },
            ServiceError::Timeout { timeout } => McpError::Timeout { server, after: timeout },
            ServiceError::TransportClosed => McpError::ConnectionClosed { server },
            ServiceError::Cancelled { .. } => McpError::Cancelled { server },
            ServiceError::TransportSend(e) if oauth::needs_sign_in(&e) => McpError::SignInRequired { server },
            other => McpError::Protocol { server, reason: other.to_string() },
        }
    }
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
