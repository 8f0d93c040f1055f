//! [`AgentEvent`]: the one closed enum a turn yields, and the approval types.
//!
//! Front ends only adapt this stream: the desktop forwards it through a Tauri
//! channel, the CLI prints it. Everything in it is already persisted by the
//! time it is yielded (text up to the last flush).

use serde::{Deserialize, Serialize};

use crate::conversations::{ConversationId, FailureKind, KeptResult, MessageId, MessageStatus, Passage, Unavailable};
use crate::llm::{ContentPart, Usage};

/// Identifies one pending approval within a turn.
pub type ApprovalId = u64;

/// What happened in a turn, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AgentEvent {
    /// The turn began: the user message and the (empty) assistant message exist.
    Started { conversation_id: ConversationId, user_message_id: MessageId, assistant_message_id: MessageId },
    /// Knowledge-base passages given to the model as context, numbered from 1 in order, and the
    /// knowledge sources that gave none.
    Citations { passages: Vec<Passage>, unavailable: Vec<Unavailable> },
    /// Older history was shortened to fit the model's context window.
    ContextTrimmed {
        /// Tool results replaced by a short note.
        elided_tool_results: usize,
        /// Whole older messages left out.
        dropped_messages: usize,
        /// Estimated tokens of the request after trimming.
        estimated_tokens: u32,
        /// The context window it had to fit.
        context_window: u32,
    },
    /// Not every tool fits: `sent` go with each request, the other
    /// `searchable` are found through the search tool (`agent::tool_search`).
    ToolSearch { searchable: usize, sent: usize },
    /// A new tool round begins (0-based); rounds after the first follow tool results.
    Round { round: u32 },
    /// More answer text.
    TextDelta { text: String },
    /// More reasoning ("thinking") text.
    ReasoningDelta { text: String },
    /// The model started a tool call. `server`/`tool` name the real MCP tool
    /// when `name` matches one.
    ToolCallStarted { call_id: String, name: String, server: Option<String>, tool: Option<String> },
    /// More argument text for a call.
    ToolArgumentsDelta { call_id: String, delta: String },
    /// A call waits for the user; answer with `TurnControl::answer`.
    ApprovalNeeded {
        approval_id: ApprovalId,
        call_id: String,
        name: String,
        server: String,
        tool: String,
        /// The arguments as parsed JSON.
        arguments: serde_json::Value,
        /// The server runs at strict: offer only "allow once" and "deny"
        /// (an answer to allow for the conversation counts as once).
        strict: bool,
    },
    /// A running call reported progress.
    ToolProgress { call_id: String, progress: f64, total: Option<f64>, message: Option<String> },
    /// A running call logged something.
    ToolLog { call_id: String, level: String, message: String },
    /// A call passed approval and is running now.
    ToolRunning { call_id: String },
    /// A call finished (or failed: `is_error`, and the model sees the text).
    /// `outcome` says whether the tool ran at all. `content` is what the model
    /// is sent; `kept` names the whole result when that is only its start.
    ToolResult {
        call_id: String,
        content: Vec<ContentPart>,
        is_error: bool,
        duration_ms: u64,
        outcome: ToolOutcome,
        kept: Option<KeptResult>,
    },
    /// Token usage of the turn so far.
    Usage { usage: Usage },
    /// Something went wrong, of `kind`. `fatal` errors end the turn (a `Done` follows).
    Error { kind: FailureKind, message: String, fatal: bool },
    /// The turn is over; nothing follows.
    Done { status: MessageStatus, message_id: MessageId },
}

/// How a tool call ended, beyond its result's `is_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The tool ran (its result may still be an error).
    Ran,
    /// It never ran: unknown tool, invalid arguments, or the settings deny it.
    Refused,
    /// The user declined it.
    Declined,
    /// The turn was stopped before the call finished.
    Cancelled,
    /// It did not answer within its time limit.
    TimedOut,
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call.
    AllowOnce,
    /// Run this call and later calls of the same tool in this conversation.
    AllowForConversation,
    /// Do not run it; the model is told.
    Deny,
}

/// How a turn handles tools that need approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Emit [`AgentEvent::ApprovalNeeded`] and wait for the answer.
    Ask,
    /// Run everything that is not denied by configuration, except the calls
    /// of a strict server: those are asked as with [`ApprovalPolicy::Ask`].
    AutoApprove,
    /// Nobody can answer (no terminal): deny, telling the model `reason`.
    Deny { reason: String },
    /// A scheduled run, with nobody to ask: the tools in `allowed`
    /// (`server/tool`) run, every other call that would be asked is denied,
    /// and so is every call of a strict server.
    Unattended { allowed: std::collections::BTreeSet<String> },
}
