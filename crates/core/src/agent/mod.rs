//! The turn loop: a user message in, a stream of [`AgentEvent`]s out.
//!
//! [`Agent::start`] runs one turn (see [`turn`]): it streams the model's
//! answer, runs the tools it calls through a [`ToolHost`] (the MCP registry,
//! Patchbay's built-in tools included), asks for approval through the returned
//! [`TurnControl`], keeps the request inside the context window ([`budget`]),
//! adds knowledge-base context from an optional [`Retriever`], finds tools
//! through search when they would not all fit ([`tool_search`]), cuts results
//! too large for the window and keeps them whole for `read_result` ([`results`]), and writes
//! everything to the conversation store as it happens.

pub mod budget;
mod events;
mod profile;
mod results;
mod retrieve;
pub mod tool_search;
mod tools;
mod turn;

/// The sampling settings are the request's ([`crate::llm::Sampling`]), named where assistants and turns use them.
pub use crate::llm::Sampling;
pub use events::{AgentEvent, ApprovalDecision, ApprovalId, ApprovalPolicy, ToolOutcome};
pub use profile::{ProviderSource, ResolvedProvider, resolve_provider};
pub use results::{READ_TOOL, UNKNOWN_WINDOW_CHARS};
pub use retrieve::{RetrievalError, Retrieved, Retriever};
pub use tool_search::{SEARCH_TOOL, ToolBudget, ToolEmbedder, ToolIndex};
pub use tools::{BUILTIN_SERVER, HostedTool, ToolEvents, ToolHost, ToolInvocation, ToolOutput, ToolSelection};
pub use turn::{Agent, ModelChoice, Turn, TurnAction, TurnControl, TurnLimits, TurnRequest};

use crate::config::ConfigError;
use crate::conversations::{ConversationError, FailureKind, MessageId};
use crate::llm::LlmError;

/// Errors that end a turn (or keep it from starting).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// Reading or writing the conversation failed.
    #[error(transparent)]
    Conversation(#[from] ConversationError),
    /// The provider failed.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The provider's stream ended without saying the answer was finished.
    #[error("{provider} ended its answer without finishing it (the stream stopped early)")]
    StreamEnded { provider: String },
    /// The provider sent arguments for a tool call it never started.
    #[error("{provider} sent arguments for tool call #{index}, which it never started")]
    UnknownToolCall { provider: String, index: usize },
    /// Regenerating needs an assistant message that answers something.
    #[error("message {message} has no question to answer")]
    NothingToAnswer { message: MessageId },
    /// Reading the provider configuration failed (or the named profile does not exist).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No provider is configured and the environment has no API key either.
    #[error(
        "no model provider is configured: add one in Settings, or set OPENAI_API_KEY (and OPENAI_BASE_URL) \
         or ARK_API_KEY (and ARK_BASE_URL)"
    )]
    NoProvider,
    /// The profile names a secret that is not in the keyring.
    #[error("provider {provider} needs its API key, but the keyring has no secret {secret:?}")]
    MissingApiKey { provider: String, secret: String },
    /// No approval with that id is waiting (already answered, or the turn ended).
    #[error("no approval {id} is waiting")]
    NoSuchApproval { id: u64 },
    /// No approval is waiting for that call (already answered, or the turn ended).
    #[error("no approval is waiting for call {call_id}")]
    NoApprovalFor { call_id: String },
}

impl AgentError {
    /// What kind of failure this is, kept with the answer it ended.
    pub fn kind(&self) -> FailureKind {
        match self {
            Self::Conversation(_) => FailureKind::Storage,
            Self::Llm(_) | Self::StreamEnded { .. } | Self::UnknownToolCall { .. } => FailureKind::Provider,
            Self::Config(_) | Self::NoProvider | Self::MissingApiKey { .. } => FailureKind::Config,
            Self::NothingToAnswer { .. } | Self::NoSuchApproval { .. } | Self::NoApprovalFor { .. } => {
                FailureKind::Internal
            }
        }
    }
}

#[cfg(test)]
mod tests;
