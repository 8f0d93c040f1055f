//! OpenAI-compatible chat completions through async-openai, for any base URL (OpenAI, DeepSeek,
//! Doubao/Ark, Ollama, vLLM, llama.cpp server).
//!
//! The request is built from async-openai's types; the stream is read with `create_stream_byot` into
//! lenient chunk types, since async-openai's has no `reasoning_content` and requires fields some local
//! servers omit. A reasoning effort goes in the field the server reads ([`ThinkingParam`]), fields
//! async-openai has no type for flattened into [`RequestBody`]. Tool messages carry only text here,
//! so an image a tool returned follows the tool results as a user message.

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls, ChatCompletionRequestAssistantMessage,
    ChatCompletionRequestAssistantMessageContent, ChatCompletionRequestMessage,
    ChatCompletionRequestMessageContentPartAudio, ChatCompletionRequestMessageContentPartImage,
    ChatCompletionRequestMessageContentPartText, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestSystemMessageContent, ChatCompletionRequestToolMessage,
    ChatCompletionRequestToolMessageContent, ChatCompletionRequestUserMessage, ChatCompletionRequestUserMessageContent,
    ChatCompletionRequestUserMessageContentPart, ChatCompletionStreamOptions, ChatCompletionTool, ChatCompletionTools,
    CreateChatCompletionRequest, FunctionCall, FunctionObject, ImageUrl, InputAudio, InputAudioFormat,
    ReasoningEffort as OpenAiEffort,
};
use futures::stream::{BoxStream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::http::{Decode, HttpSettings, decode_stream};
use super::{
    ChatMessage, ChatRequest, ContentPart, FinishReason, LlmError, Provider, ReasoningEffort, StreamEvent,
    ThinkingParam, Usage,
};
use crate::secrets::SecretValue;

/// A provider speaking the OpenAI chat-completions API.
#[derive(Clone)]
pub struct OpenAiProvider {
    settings: HttpSettings,
    client: Client<OpenAIConfig>,
    /// The field a reasoning effort goes in (resolved, never `Auto`).
    thinking: ThinkingParam,
}

/// Without the client, whose configuration shows the extra headers' values.
impl std::fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("settings", &self.settings)
            .field("thinking", &self.thinking)
            .finish_non_exhaustive()
    }
}

/// A chat-completions request: async-openai's type, plus the fields some
/// servers read that it has no type for.
#[derive(Debug, Clone, Serialize)]
pub struct RequestBody {
    #[serde(flatten)]
    pub base: CreateChatCompletionRequest,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl OpenAiProvider {
    /// A provider for `settings.base_url` (which includes the version, e.g. `.../v1`).
    pub fn new(settings: HttpSettings) -> Result<Self, LlmError> {
        let key = settings.api_key.as_ref().map(SecretValue::expose).unwrap_or_default().to_owned();
        reqwest::header::HeaderValue::from_str(&format!("Bearer {key}"))
            .map_err(|_| settings.request_error("the API key contains characters not allowed in a header".into()))?;
        // The key is always set explicitly: `OpenAIConfig::new` would otherwise
        // read OPENAI_API_KEY and send it to whatever base URL this profile has.
        let mut config = OpenAIConfig::new().with_api_base(settings.base()).with_api_key(key);
        for (name, value) in settings.header_map()? {
            if let Some(name) = name {
                config = config
                    .with_header(name.clone(), value.to_str().unwrap_or_default())
                    .map_err(|e| settings.request_error(format!("header {name}: {e}")))?;
            }
        }
        let http = crate::net::client_builder()
            .connect_timeout(std::time::Duration::from_secs(20))
            .build()
            .map_err(|e| settings.request_error(format!("HTTP client: {e}")))?;
        let thinking = ThinkingParam::Auto.resolve(&settings.base_url);
        Ok(Self { client: Client::build(http, config), settings, thinking })
    }

    /// The same provider with a reasoning effort sent as `thinking` says
    /// (`Auto`: chosen from the base URL).
    pub fn with_thinking(mut self, thinking: ThinkingParam) -> Self {
        self.thinking = thinking.resolve(&self.settings.base_url);
        self
    }

    fn map_error(&self, e: OpenAIError) -> LlmError {
        match e {
            OpenAIError::ApiError(api) => {
                self.settings.status_error(api.status_code.as_u16(), None, api.api_error.message)
            }
            OpenAIError::Reqwest(e) => {
                self.settings.transport_error(&format!("{}/chat/completions", self.settings.base()), &e)
            }
            OpenAIError::InvalidArgument(message) => self.settings.request_error(message),
            OpenAIError::JSONDeserialize(e, content) => self
                .settings
                .invalid(format!("unexpected data ({e}): {}", content.chars().take(200).collect::<String>())),
            other => self.settings.invalid(other.to_string()),
        }
    }

    /// The request body this provider sends for `request`.
    pub fn request_body(&self, request: &ChatRequest) -> Result<RequestBody, LlmError> {
        let mut body = CreateChatCompletionRequest {
            model: request.model.clone(),
            messages: convert_messages(&request.messages),
            stream: Some(true),
            stream_options: Some(ChatCompletionStreamOptions { include_usage: Some(true), ..Default::default() }),
            temperature: request.sampling.temperature,
            top_p: request.sampling.top_p,
            ..Default::default()
        };
        let mut extra = Map::new();
        if let Some(effort) = request.sampling.reasoning {
            self.set_reasoning(effort, &mut body, &mut extra);
        }
        // OpenAI's reasoning models refuse `max_tokens`; most other servers only know it.
        if self.settings.base_url.contains("api.openai.com") {
            body.max_completion_tokens = request.sampling.max_tokens;
        } else {
            #[allow(deprecated)]
            {
                body.max_tokens = request.sampling.max_tokens;
            }
        }
        if !request.tools.is_empty() {
            body.tools = Some(
                request
                    .tools
                    .iter()
                    .map(|t| {
                        ChatCompletionTools::Function(ChatCompletionTool {
                            function: FunctionObject {
                                name: t.name.clone(),
                                description: Some(t.description.clone()),
                                parameters: Some(object_schema(&t.input_schema)),
                                strict: None,
                            },
                        })
                    })
                    .collect(),
            );
        }
        Ok(RequestBody { base: body, extra })
    }

    /// Puts `effort` in the fields this server reads.
    fn set_reasoning(
        &self,
        effort: ReasoningEffort,
        body: &mut CreateChatCompletionRequest,
        extra: &mut Map<String, Value>,
    ) {
        let on = effort != ReasoningEffort::Off;
        let step = match effort {
            ReasoningEffort::Off => OpenAiEffort::None,
            ReasoningEffort::Low => OpenAiEffort::Low,
            ReasoningEffort::Medium => OpenAiEffort::Medium,
            ReasoningEffort::High => OpenAiEffort::High,
        };
        match self.thinking {
            ThinkingParam::Auto | ThinkingParam::ReasoningEffort => body.reasoning_effort = Some(step),
            ThinkingParam::ThinkingType => {
                extra.insert("thinking".into(), json!({"type": if on { "enabled" } else { "disabled" }}));
                body.reasoning_effort = on.then_some(step);
            }
            ThinkingParam::EnableThinking => {
                extra.insert("enable_thinking".into(), json!(on));
                let budget = match effort {
                    ReasoningEffort::Low => Some(2048),
                    ReasoningEffort::Medium => Some(8192),
                    ReasoningEffort::Off | ReasoningEffort::High => None,
                };
                if let Some(budget) = budget {
                    extra.insert("thinking_budget".into(), json!(budget));
                }
            }
            ThinkingParam::ChatTemplate => {
                extra.insert("chat_template_kwargs".into(), json!({"enable_thinking": on}));
                body.reasoning_effort = on.then_some(step);
            }
        }
    }
}

#[async_trait::async_trait]
impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.settings.name
    }

    /// OpenAI's chat completions refuse more than 128 tools.
    fn max_tools(&self) -> Option<usize> {
        Some(super::OPENAI_MAX_TOOLS)
    }

    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<BoxStream<'static, Result<StreamEvent, LlmError>>, LlmError> {
        let body = self.request_body(&request)?;
        let chat = self.client.chat();
        let start = chat.create_stream_byot::<_, Chunk>(body);
        let raw = tokio::select! {
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            r = tokio::time::timeout(self.settings.idle_timeout, start) => match r {
                Err(_) => return Err(LlmError::Timeout { provider: self.settings.name.clone(), after: self.settings.idle_timeout }),
                Ok(r) => r.map_err(|e| self.map_error(e))?,
            },
        };
        let me = self.clone();
        let source = raw.map(move |r| r.map_err(|e| me.map_error(e))).boxed();
        let decoder = OpenAiDecoder { settings: self.settings.clone(), calls: Vec::new(), finish: None, usage: None };
        Ok(decode_stream(self.settings.name.clone(), source, decoder, self.settings.idle_timeout, cancel))
    }
}

fn text_part(text: String) -> ChatCompletionRequestMessageContentPartText {
    ChatCompletionRequestMessageContentPartText { text, prompt_cache_breakpoint: None }
}

fn data_url(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

/// A user content part for `part`.
fn user_part(part: &ContentPart) -> ChatCompletionRequestUserMessageContentPart {
    use ChatCompletionRequestUserMessageContentPart as P;
    match part {
        ContentPart::Text { text } => P::Text(text_part(text.clone())),
        ContentPart::Image { mime_type, data } => P::ImageUrl(ChatCompletionRequestMessageContentPartImage {
            image_url: ImageUrl { url: data_url(mime_type, data), detail: None },
            prompt_cache_breakpoint: None,
        }),
        ContentPart::Audio { mime_type, data } if audio_format(mime_type).is_some() => {
            P::InputAudio(ChatCompletionRequestMessageContentPartAudio {
                input_audio: InputAudio { data: data.clone(), format: audio_format(mime_type).unwrap_or_default() },
                prompt_cache_breakpoint: None,
            })
        }
        other => P::Text(text_part(super::describe_part(other))),
    }
}

fn audio_format(mime_type: &str) -> Option<InputAudioFormat> {
    match mime_type {
        "audio/wav" | "audio/x-wav" | "audio/wave" => Some(InputAudioFormat::Wav),
        "audio/mpeg" | "audio/mp3" => Some(InputAudioFormat::Mp3),
        _ => None,
    }
}

fn user_message(parts: &[ContentPart]) -> ChatCompletionRequestMessage {
    let content = match parts {
        [ContentPart::Text { text }] => ChatCompletionRequestUserMessageContent::Text(text.clone()),
        _ => ChatCompletionRequestUserMessageContent::Array(parts.iter().map(user_part).collect()),
    };
    ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage { content, name: None })
}

/// Converts the neutral conversation into OpenAI messages.
fn convert_messages(messages: &[ChatMessage]) -> Vec<ChatCompletionRequestMessage> {
    let mut out = Vec::with_capacity(messages.len());
    // Media returned by the tool results of the current run of tool messages.
    let mut tool_media: Vec<ContentPart> = Vec::new();
    for message in messages {
        if !matches!(message, ChatMessage::Tool { .. }) {
            flush_tool_media(&mut out, &mut tool_media);
        }
        match message {
            ChatMessage::System { text } => {
                out.push(ChatCompletionRequestMessage::System(ChatCompletionRequestSystemMessage {
                    content: ChatCompletionRequestSystemMessageContent::Text(text.clone()),
                    name: None,
                }));
            }
            ChatMessage::User { parts } => out.push(user_message(parts)),
            ChatMessage::Assistant { text, tool_calls, .. } => {
                let calls: Vec<_> = tool_calls
                    .iter()
                    .map(|c| {
                        ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
                            id: c.id.clone(),
                            function: FunctionCall { name: c.name.clone(), arguments: c.arguments.clone() },
                        })
                    })
                    .collect();
                out.push(ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
                    content: (!text.is_empty() || calls.is_empty())
                        .then(|| ChatCompletionRequestAssistantMessageContent::Text(text.clone())),
                    tool_calls: (!calls.is_empty()).then_some(calls),
                    ..Default::default()
                }));
            }
            ChatMessage::Tool { call_id, name, parts, is_error } => {
                let mut text = String::new();
                if *is_error {
                    text.push_str("Error: ");
                }
                for part in parts {
                    match part {
                        ContentPart::Text { text: t } => text.push_str(t),
                        ContentPart::Image { mime_type, .. } | ContentPart::Audio { mime_type, .. } => {
                            text.push_str(&format!(
                                "[the tool {name} returned {mime_type} content; it follows in the next user message]"
                            ));
                            tool_media.push(part.clone());
                        }
                        link @ ContentPart::ResourceLink { .. } => text.push_str(&super::describe_part(link)),
                    }
                    text.push('\n');
                }
                out.push(ChatCompletionRequestMessage::Tool(ChatCompletionRequestToolMessage {
                    content: ChatCompletionRequestToolMessageContent::Text(text.trim_end().to_owned()),
                    tool_call_id: call_id.clone(),
                }));
            }
        }
    }
    flush_tool_media(&mut out, &mut tool_media);
    out
}

fn flush_tool_media(out: &mut Vec<ChatCompletionRequestMessage>, media: &mut Vec<ContentPart>) {
    if media.is_empty() {
        return;
    }
    let mut parts = vec![ContentPart::text("Content returned by the tool calls above:")];
    parts.append(media);
    out.push(user_message(&parts));
}

/// One streamed chunk, read leniently (local servers omit `id`, `created`, ...).
#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChoiceChunk>,
    #[serde(default)]
    usage: Option<UsageChunk>,
    #[serde(default)]
    error: Option<ErrorChunk>,
}

#[derive(Debug, Deserialize)]
struct ChoiceChunk {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    /// DeepSeek, Ark, vLLM (`--reasoning-parser`), llama.cpp.
    #[serde(default)]
    reasoning_content: Option<String>,
    /// OpenRouter and newer vLLM.
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCallChunk>,
}

#[derive(Debug, Deserialize)]
struct ToolCallChunk {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionChunk>,
}

#[derive(Debug, Default, Deserialize)]
struct FunctionChunk {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
struct UsageChunk {
    #[serde(default)]
    prompt_tokens: u32,
    #[serde(default)]
    completion_tokens: u32,
}

#[derive(Debug, Deserialize)]
struct ErrorChunk {
    #[serde(default)]
    message: String,
    #[serde(default)]
    code: Option<serde_json::Value>,
}

/// Assembles events from chunks: tracks parallel tool calls by their wire
/// index and holds the finish reason back until the usage chunk has passed.
#[derive(Debug)]
struct OpenAiDecoder {
    settings: HttpSettings,
    /// Wire index and id of each call, in order of appearance (our index).
    calls: Vec<(u32, String)>,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
}

impl OpenAiDecoder {
    fn tool_chunk(&mut self, chunk: ToolCallChunk, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let function = chunk.function.unwrap_or_default();
        let wire = chunk.index.unwrap_or_else(|| self.calls.last().map_or(0, |c| c.0));
        let known = self.calls.iter().rposition(|(w, _)| *w == wire);
        let id = chunk.id.filter(|id| !id.is_empty());
        let starts = match (&id, known) {
            (Some(id), Some(k)) => self.calls[k].1 != *id,
            (_, None) => true,
            (None, Some(_)) => false,
        };
        let index = if starts {
            let Some(name) = function.name.filter(|n| !n.is_empty()) else {
                return Err(self.settings.invalid(format!("tool call {wire} has arguments but no name")));
            };
            let id = id.unwrap_or_else(|| format!("call_{}", self.calls.len()));
            self.calls.push((wire, id.clone()));
            let index = self.calls.len() - 1;
            out.push(StreamEvent::ToolCallStart { index, id, name });
            index
        } else {
            known.unwrap_or_default()
        };
        if let Some(arguments) = function.arguments.filter(|a| !a.is_empty()) {
            out.push(StreamEvent::ToolCallDelta { index, arguments });
        }
        Ok(())
    }
}

impl Decode for OpenAiDecoder {
    type Item = Chunk;

    fn feed(&mut self, chunk: Chunk, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if let Some(error) = chunk.error {
            let status = error.code.as_ref().and_then(|c| c.as_u64()).and_then(|c| u16::try_from(c).ok());
            return Err(self.settings.status_error(status.unwrap_or(500), None, error.message));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(Usage { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens });
        }
        // Only the first choice is used (`n` is never set).
        let Some(choice) = chunk.choices.into_iter().next() else { return Ok(()) };
        let delta = choice.delta.unwrap_or_default();
        if let Some(text) = delta.reasoning_content.or(delta.reasoning).filter(|t| !t.is_empty()) {
            out.push(StreamEvent::ReasoningDelta { text });
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            out.push(StreamEvent::TextDelta { text });
        }
        for call in delta.tool_calls {
            self.tool_chunk(call, out)?;
        }
        if let Some(reason) = choice.finish_reason {
            self.finish = Some(match reason.as_str() {
                // Some servers say "stop" after tool calls.
                "stop" if !self.calls.is_empty() => FinishReason::ToolCalls,
                "stop" | "eos" => FinishReason::Stop,
                "tool_calls" | "function_call" => FinishReason::ToolCalls,
                "length" => FinishReason::Length,
                "content_filter" => FinishReason::ContentFilter,
                _ => FinishReason::Other(reason),
            });
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let Some(reason) = self.finish.take() else {
            return Err(self.settings.invalid("the stream ended before the response was complete".into()));
        };
        if let Some(usage) = self.usage.take() {
            out.push(StreamEvent::Usage { usage });
        }
        out.push(StreamEvent::Finish { reason });
        Ok(())
    }
}

/// A tool's schema as OpenAI-compatible servers take it: some refuse one
/// without `"type": "object"` (an empty schema, or one that leaves the type out).
fn object_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) if map.get("type").is_some_and(|t| !t.is_null() && t != "") => schema.clone(),
        Value::Object(map) => {
            let mut map = map.clone();
            map.insert("type".into(), Value::String("object".into()));
            Value::Object(map)
        }
        _ => json!({"type": "object"}),
    }
}
