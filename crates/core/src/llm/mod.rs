//! Language-model providers behind one [`Provider`] trait.
//!
//! The turn loop (`crate::agent`) speaks only the neutral types in
//! [`types`]: a [`ChatRequest`] in, a stream of [`StreamEvent`]s out. Each
//! provider module converts to and from its wire format (OpenAI-compatible
//! through async-openai, Anthropic Messages, Gemini, and prompt-based tool
//! calling for models without native tools).

pub mod types;

pub use types::{
    ChatMessage, ChatRequest, ContentPart, FinishReason, Provider, StreamEvent, ToolCall, ToolSpec, Usage,
};

use std::time::Duration;

/// Errors from a provider, by what the caller can do about them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The API key is missing, wrong or lacks permission (HTTP 401/403).
    #[error("{provider} rejected the credentials (HTTP {status}): {message}")]
    Auth { provider: String, status: u16, message: String },
    /// Rate limited (HTTP 429); `retry_after` when the server said.
    #[error("{provider} is rate limiting requests: {message}")]
    RateLimited { provider: String, retry_after: Option<Duration>, message: String },
    /// The model or endpoint does not exist (HTTP 404).
    #[error("{provider}: not found (HTTP 404): {message}")]
    NotFound { provider: String, message: String },
    /// The server failed (HTTP 5xx) or answered with another error status.
    #[error("{provider} answered HTTP {status}: {message}")]
    Http { provider: String, status: u16, message: String },
    /// The server could not be reached (DNS, connection refused, TLS).
    #[error("cannot reach {provider} at {url}: {message}")]
    Connect { provider: String, url: String, message: String },
    /// No data arrived within the time limit.
    #[error("{provider} sent nothing for {after:?}")]
    Timeout { provider: String, after: Duration },
    /// The stream broke or carried something that is not the expected format.
    #[error("{provider} sent an invalid stream: {message}")]
    InvalidStream { provider: String, message: String },
    /// The request could not be built (bad configuration, unsupported content).
    #[error("cannot build the request for {provider}: {message}")]
    Request { provider: String, message: String },
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}
