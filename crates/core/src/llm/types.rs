//! Provider-neutral chat types and the [`Provider`] trait.

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::LlmError;

/// A piece of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Plain or markdown text.
    Text { text: String },
    /// An image, base64-encoded.
    Image { mime_type: String, data: String },
    /// Audio, base64-encoded.
    Audio { mime_type: String, data: String },
    /// A link to a resource the model may ask for.
    ResourceLink { uri: String, name: Option<String>, mime_type: Option<String> },
}

impl ContentPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id (generated when the format has none, as in Gemini).
    pub id: String,
    /// The model-facing tool name.
    pub name: String,
    /// The arguments as the model wrote them (JSON text, possibly invalid).
    pub arguments: String,
    /// Opaque provider state attached to the call, sent back unchanged with
    /// it in later requests (Gemini's `thoughtSignature`; Gemini 3 answers
    /// 400 to a conversation whose function calls lost theirs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// One message of the conversation as sent to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// Instructions.
    System { text: String },
    /// The user's turn.
    User { parts: Vec<ContentPart> },
    /// The model's turn: text, optional reasoning, and tool calls.
    Assistant {
        text: String,
        #[serde(default)]
        reasoning: Option<String>,
        /// Opaque proof the provider attached to the reasoning, to be sent
        /// back with it while the turn's tool calls go on (Anthropic's thinking
        /// block `signature`; without it the thinking is not sent back).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning_signature: Option<String>,
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool { call_id: String, name: String, parts: Vec<ContentPart>, is_error: bool },
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Model-facing name, `^[a-zA-Z0-9_-]{1,64}$`.
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: serde_json::Value,
    /// The server and tool the name stands for, when it stands for one: what
    /// a prompt-based call names instead of `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<ToolOrigin>,
}

/// The server and the tool's own name behind a model-facing tool name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOrigin {
    /// The server's configured name.
    pub server: String,
    /// The tool's name on that server.
    pub tool: String,
}

/// Everything one model request needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Model id.
    pub model: String,
    /// The conversation, system message first when there is one.
    pub messages: Vec<ChatMessage>,
    /// Tools the model may call (empty: none).
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// Temperature, top-p, output limit and reasoning effort.
    #[serde(flatten)]
    pub sampling: Sampling,
}

/// Sampling settings sent with a request: an assistant's, a turn's, a title's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct Sampling {
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    #[serde(default)]
    pub top_p: Option<f32>,
    /// Output token limit.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// How hard a reasoning model thinks before answering (`None`: the model's default).
    #[serde(default)]
    pub reasoning: Option<ReasoningEffort>,
}

/// How much a reasoning model thinks: each API's own setting (OpenAI's
/// `reasoning_effort`, Anthropic's adaptive thinking with `output_config.effort`,
/// Gemini's `thinkingLevel`) at the same three steps, or `Off`: asked not to
/// think, where the model can answer without (Anthropic's disabled thinking,
/// a Gemini thinking budget of 0, the OpenAI-compatible field of
/// [`ThinkingParam`](crate::config::ThinkingParam)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    Off,
    Low,
    Medium,
    High,
}

impl ReasoningEffort {
    /// `off`, `low`, `medium` or `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// Token counts reported by the provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Usage {
    pub input_tokens: u32,
    pub output_tokens: u32,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its answer.
    Stop,
    /// It wants tool results.
    ToolCalls,
    /// It hit the output token limit.
    Length,
    /// The provider filtered the output.
    ContentFilter,
    /// Anything else, as the provider named it.
    Other(String),
}

/// One event of a streamed model response, in arrival order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// More answer text.
    TextDelta { text: String },
    /// More reasoning ("thinking") text.
    ReasoningDelta { text: String },
    /// A tool call begins; `index` orders parallel calls.
    ToolCallStart { index: usize, id: String, name: String },
    /// More argument text for the call at `index`.
    ToolCallDelta { index: usize, arguments: String },
    /// Opaque state the provider attached to the call at `index`, to be
    /// sent back with it (see [`ToolCall::signature`]).
    ToolCallSignature { index: usize, signature: String },
    /// Opaque proof attached to the reasoning so far (see
    /// `ChatMessage::Assistant::reasoning_signature`).
    ReasoningSignature { signature: String },
    /// Token usage.
    Usage { usage: Usage },
    /// The response is complete.
    Finish { reason: FinishReason },
}

/// A model provider: turns a request into a stream of events.
///
/// Implementations must stop network work promptly when `cancel` fires or the
/// stream is dropped, and must report every failure as an [`LlmError`] item
/// or return value, never by ending the stream early without a `Finish`.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// A short name for messages ("openai", the profile name).
    fn name(&self) -> &str;

    /// The most tools one request may carry, when the API has a limit.
    fn max_tools(&self) -> Option<usize> {
        None
    }

    /// Starts a streamed completion.
    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<BoxStream<'static, Result<StreamEvent, LlmError>>, LlmError>;
}
