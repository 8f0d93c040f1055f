//! The conversation model: conversations, messages and their parts, tool
//! calls, attachments and passages, as stored and as the front ends read them.

use serde::{Deserialize, Serialize};

use crate::llm::{ContentPart, Usage};

/// A conversation's id.
pub type ConversationId = i64;
/// A message's id.
pub type MessageId = i64;

/// What "allow for this conversation" is pinned to: a grant counts only for
/// the same server (its stored identity, which a server added later under the
/// same name does not share), the same tool, and the same definition.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolPin {
    /// The server's identity (see `ConfigStore::server_ids`).
    pub server_id: String,
    /// The server's own name for the tool.
    pub tool: String,
    /// The hex fingerprint of the tool's definition as it was listed.
    pub fingerprint: String,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }

    pub(super) fn parse(s: &str) -> Self {
        if s == "user" { Self::User } else { Self::Assistant }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of failure ended an answer or interrupted a turn, kept with the
/// answer so that every front end shows it as what it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The model provider refused or failed (HTTP errors, a cut stream, its content filter).
    Provider,
    /// The conversation could not be read or written.
    Storage,
    /// The provider's settings are missing or wrong.
    Config,
    /// A limit of the turn was reached: tool rounds, or output tokens.
    Limit,
    /// The knowledge base could not be searched for the question.
    Knowledge,
    /// Anything else.
    Internal,
}

impl FailureKind {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Provider => "provider",
            Self::Storage => "storage",
            Self::Config => "config",
            Self::Limit => "limit",
            Self::Knowledge => "knowledge",
            Self::Internal => "internal",
        }
    }

    /// A stored kind; answers stored before kinds were kept have none.
    pub(super) fn parse(s: Option<&str>) -> Option<Self> {
        Some(match s? {
            "provider" => Self::Provider,
            "storage" => Self::Storage,
            "config" => Self::Config,
            "limit" => Self::Limit,
            "knowledge" => Self::Knowledge,
            _ => Self::Internal,
        })
    }
}

/// Where a message stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// Being written by a running Patchbay process.
    Streaming,
    /// Finished normally.
    Complete,
    /// Stopped by the user; the text so far is kept.
    Stopped,
    /// Ended by an error (see the message's `error`).
    Error,
    /// Ended because the tool-round limit was reached.
    RoundLimit,
    /// Patchbay stopped (crashed, was killed, lost power) while this answer
    /// streamed; the text written so far is kept, the message's `error` says
    /// what happened. Set by [`ConversationStore::recover_interrupted`].
    Interrupted,
}

impl MessageStatus {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Streaming => "streaming",
            Self::Complete => "complete",
            Self::Stopped => "stopped",
            Self::Error => "error",
            Self::RoundLimit => "round_limit",
            Self::Interrupted => "interrupted",
        }
    }

    pub(super) fn parse(s: &str) -> Self {
        match s {
            "complete" => Self::Complete,
            "stopped" => Self::Stopped,
            "error" => Self::Error,
            "round_limit" => Self::RoundLimit,
            "interrupted" => Self::Interrupted,
            _ => Self::Streaming,
        }
    }
}

/// Something attached to a user message: an MCP resource, a prompt's text, a
/// document read to text, an image or an audio clip (see [`crate::attach`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// What the user sees ("README.md", "prompt: review", "photo.png").
    pub title: String,
    /// The resource's URI, when it is one.
    #[serde(default)]
    pub uri: Option<String>,
    /// The text given to the model (empty for media).
    pub text: String,
    /// An image or audio clip, given to the model as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<Media>,
}

/// An image or audio clip attached by the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Media {
    /// `image/…` or `audio/…`.
    pub mime_type: String,
    /// The bytes, base64-encoded.
    pub data: String,
}

impl Attachment {
    /// The content the model is given for it.
    pub(crate) fn to_part(&self) -> ContentPart {
        match &self.media {
            Some(Media { mime_type, data }) if mime_type.starts_with("audio/") => {
                ContentPart::Audio { mime_type: mime_type.clone(), data: data.clone() }
            }
            Some(Media { mime_type, data }) => ContentPart::Image { mime_type: mime_type.clone(), data: data.clone() },
            None => ContentPart::text(attachment_text(self)),
        }
    }
}

/// A knowledge-base passage given to the model as context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Passage {
    /// The passage text.
    pub text: String,
    /// The document it comes from (path or URI).
    pub source: String,
    /// The heading it sits under, when the document has headings.
    #[serde(default)]
    pub heading: Option<String>,
    /// First and last line in the source, 1-based.
    #[serde(default)]
    pub lines: Option<(u32, u32)>,
    /// How relevant it is to what was asked, 0 to 1 (the scale of an assistant's minimum
    /// relevance). `None` for a passage cited by an older Patchbay, which kept a ranking score
    /// under another name (`score`, BM25 or fusion) that means nothing to a reader: it is not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance: Option<f32>,
    /// Where the question's words are in `text`, to mark them: `[start, end)`
    /// in UTF-16 code units (see [`crate::text::analyze::marks`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<[usize; 2]>,
    /// The knowledge source it came from, when not the local knowledge base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

/// A knowledge source that gave no passages for an answer, and why: the citations name it
/// rather than leave it out silently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Unavailable {
    /// The source's name.
    pub name: String,
    pub why: String,
}

/// One conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    pub id: ConversationId,
    pub title: String,
    /// The assistant preset it started from.
    pub assistant: Option<String>,
    /// Overrides the assistant's system prompt when set.
    pub system_prompt: Option<String>,
    /// The last message of the branch the user sees.
    pub active_leaf: Option<MessageId>,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    pub updated_at: i64,
    /// Kept at the top of the list.
    pub pinned: bool,
}

/// Status of a recorded tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// The model is still writing its arguments, or it waits for approval.
    Pending,
    /// Running.
    Running,
    /// Finished (successfully or with `is_error`).
    Done,
    /// Cancelled before it finished.
    Cancelled,
}

impl ToolCallStatus {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "done",
            Self::Cancelled => "cancelled",
        }
    }

    pub(super) fn parse(s: &str) -> Self {
        match s {
            "running" => Self::Running,
            "done" => Self::Done,
            "cancelled" => Self::Cancelled,
            _ => Self::Pending,
        }
    }
}

/// A tool call as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    pub id: i64,
    /// The tool round it belongs to (0-based).
    pub round: u32,
    /// The provider's call id.
    pub call_id: String,
    /// Model-facing tool name.
    pub name: String,
    /// The real MCP server and tool, when the name matched a tool.
    pub server: Option<String>,
    pub tool: Option<String>,
    /// Arguments as the model wrote them.
    pub arguments: String,
    pub status: ToolCallStatus,
    /// The result content, once finished.
    pub result: Option<Vec<ContentPart>>,
    pub is_error: bool,
    /// Milliseconds since the Unix epoch.
    pub started_at: i64,
    pub duration_ms: Option<i64>,
    /// Opaque provider state sent back with the call (Gemini's `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The whole result, when the model was sent only part of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<super::KeptResult>,
}

/// A piece of an assistant message, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Part {
    Text { round: u32, text: String },
    Reasoning { round: u32, text: String },
    ToolCall { round: u32, call: Box<ToolCallRecord> },
}

/// One message with its parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub id: MessageId,
    pub conversation_id: ConversationId,
    pub parent_id: Option<MessageId>,
    pub role: Role,
    pub status: MessageStatus,
    /// The visible text (for an assistant message, every round's text).
    pub text: String,
    pub attachments: Vec<Attachment>,
    pub citations: Vec<Passage>,
    /// Knowledge sources that failed or ran out of time for this answer.
    #[serde(default)]
    pub unavailable: Vec<Unavailable>,
    /// Assistant messages: text, reasoning and tool calls in order.
    pub parts: Vec<Part>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub usage: Option<Usage>,
    pub error: Option<String>,
    /// What kind of failure `error` is, when the turn said.
    pub error_kind: Option<FailureKind>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A message on the active branch, with its siblings for "2 / 3" navigation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BranchMessage {
    pub message: Message,
    /// Every message with the same parent, oldest first (including this one).
    pub siblings: Vec<MessageId>,
}

/// A stretch of the active branch, and how many branch messages come before it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BranchPage {
    pub messages: Vec<BranchMessage>,
    pub earlier: usize,
}

/// A search match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    pub conversation_id: ConversationId,
    pub title: String,
    pub message_id: MessageId,
    pub role: Role,
    /// A piece of the text around the match, the match between `[` and `]`.
    pub snippet: String,
}

/// The note an interrupted message carries in its `error`.
pub const INTERRUPTED_NOTE: &str =
    "Interrupted: Patchbay stopped before this answer was finished. The text written until then is kept.";

/// How an attachment reads to the model. Its name and URI are escaped: a file
/// may be called `a" uri="x` or `</attachment>`.
pub(super) fn attachment_text(a: &Attachment) -> String {
    let attr = |v: &str| v.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    match &a.uri {
        Some(uri) => {
            format!("<attachment title=\"{}\" uri=\"{}\">\n{}\n</attachment>", attr(&a.title), attr(uri), a.text)
        }
        None => format!("<attachment title=\"{}\">\n{}\n</attachment>", attr(&a.title), a.text),
    }
}
