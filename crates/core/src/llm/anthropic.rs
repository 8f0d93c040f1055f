//! Anthropic Messages API, native format, over reqwest.
//!
//! The system prompt is its own field; tools carry `input_schema`; the
//! model's calls are `tool_use` blocks and their results go back as
//! `tool_result` blocks (text and image blocks) in a user message. The
//! stream is a sequence of typed SSE events (`message_start`,
//! `content_block_start`/`_delta`/`_stop`, `message_delta`, `message_stop`,
//! `error`).
//!
//! Sampling settings are not sent: the current Messages API (SDK 2.x
//! `MessageCreateParams`) has no `temperature` or `top_p`. A reasoning effort
//! turns on adaptive thinking at that `output_config.effort`; the thinking
//! block's `signature` (a `signature_delta`) goes back with the thinking while
//! the turn's tool calls go on, as the API requires.

use std::collections::HashMap;

use futures::stream::BoxStream;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::http::{Decode, HttpSettings, decode_stream, parse_json, sse_events};
use super::{
    ChatMessage, ChatRequest, ContentPart, FinishReason, LlmError, Provider, ReasoningEffort, StreamEvent, Usage,
};

/// The API version header value.
const API_VERSION: &str = "2023-06-01";

/// Output limit when the request sets none (the API requires one).
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// A provider speaking the Anthropic Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    settings: HttpSettings,
    client: reqwest::Client,
}

impl AnthropicProvider {
    /// A provider for `settings.base_url` (`https://api.anthropic.com`, with or without `/v1`).
    pub fn new(settings: HttpSettings) -> Result<Self, LlmError> {
        Ok(Self { client: settings.client()?, settings })
    }

    fn url(&self) -> String {
        let base = self.settings.base();
        if base.ends_with("/v1") { format!("{base}/messages") } else { format!("{base}/v1/messages") }
    }

    fn headers(&self) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        self.settings.insert_key(&mut headers, "x-api-key")?;
        Ok(headers)
    }
}

/// The request body sent for `request`.
pub fn request_body(request: &ChatRequest) -> Value {
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter_map(|m| if let ChatMessage::System { text } = m { Some(text.as_str()) } else { None })
        .collect();
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.sampling.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "stream": true,
        "messages": convert_messages(&request.messages),
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
    }
    // The Messages API of SDK 2.x takes no sampling parameters
    // (`temperature`, `top_p`): sending them is rejected.
    match request.sampling.reasoning {
        None => {}
        Some(ReasoningEffort::Off) => body["thinking"] = json!({"type": "disabled"}),
        Some(effort) => {
            body["thinking"] = json!({"type": "adaptive"});
            body["output_config"] = json!({"effort": effort.as_str()});
        }
    }
    body
}

fn content_block(part: &ContentPart) -> Value {
    match part {
        ContentPart::Text { text } => json!({"type": "text", "text": text}),
        ContentPart::Image { mime_type, data } => {
            json!({"type": "image", "source": {"type": "base64", "media_type": mime_type, "data": data}})
        }
        other => json!({"type": "text", "text": super::describe_part(other)}),
    }
}

fn convert_messages(messages: &[ChatMessage]) -> Vec<Value> {
    let mut out = Vec::new();
    for message in messages {
        match message {
            ChatMessage::System { .. } => {}
            ChatMessage::User { parts } => {
                let blocks = parts
                    .iter()
                    .filter(|p| !matches!(p, ContentPart::Text { text } if text.is_empty()))
                    .map(content_block)
                    .collect();
                super::push_merged(&mut out, "content", "user", blocks);
            }
            ChatMessage::Assistant { text, reasoning, reasoning_signature, tool_calls } => {
                let mut blocks = Vec::new();
                // Thinking goes back only with the proof the API gave for it.
                if let Some(signature) = reasoning_signature {
                    blocks.push(json!({
                        "type": "thinking",
                        "thinking": reasoning.as_deref().unwrap_or_default(),
                        "signature": signature,
                    }));
                }
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": super::arguments_object(&call.arguments),
                    }));
                }
                super::push_merged(&mut out, "content", "assistant", blocks);
            }
            ChatMessage::Tool { call_id, parts, is_error, .. } => {
                let content: Vec<Value> = parts.iter().map(content_block).collect();
                let mut block = json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                super::push_merged(&mut out, "content", "user", vec![block]);
            }
        }
    }
    out
}

#[async_trait::async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        &self.settings.name
    }

    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<BoxStream<'static, Result<StreamEvent, LlmError>>, LlmError> {
        let body = request_body(&request);
        let url = self.url();
        let response = self.settings.post_json(&self.client, &url, self.headers()?, &body, &cancel).await?;
        let decoder = AnthropicDecoder {
            settings: self.settings.clone(),
            tools: HashMap::new(),
            usage: Usage::default(),
            stop: None,
            stopped: false,
        };
        let source = sse_events(&self.settings, response);
        Ok(decode_stream(self.settings.name.clone(), source, decoder, self.settings.idle_timeout, cancel))
    }
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: u32,
        content_block: Block,
    },
    ContentBlockDelta {
        index: u32,
        delta: BlockDelta,
    },
    ContentBlockStop {},
    MessageDelta {
        #[serde(default)]
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<UsageBody>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: ErrorBody,
    },
}

#[derive(Debug, Deserialize)]
struct MessageStart {
    #[serde(default)]
    usage: Option<UsageBody>,
}

#[derive(Debug, Default, Deserialize)]
struct UsageBody {
    #[serde(default)]
    input_tokens: Option<u32>,
    #[serde(default)]
    output_tokens: Option<u32>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u32>,
    #[serde(default)]
    cache_read_input_tokens: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    ToolUse {
        id: String,
        name: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Default, Deserialize)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ErrorBody {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
}

/// Turns Anthropic's SSE events into neutral events.
#[derive(Debug)]
struct AnthropicDecoder {
    settings: HttpSettings,
    /// Content block index of each tool_use block → our tool call index.
    tools: HashMap<u32, usize>,
    usage: Usage,
    stop: Option<FinishReason>,
    stopped: bool,
}

impl AnthropicDecoder {
    fn add_usage(&mut self, usage: UsageBody) {
        if let Some(input) = usage.input_tokens {
            let cached = usage.cache_creation_input_tokens.unwrap_or(0) + usage.cache_read_input_tokens.unwrap_or(0);
            self.usage.input_tokens = input + cached;
        }
        if let Some(output) = usage.output_tokens {
            self.usage.output_tokens = output;
        }
    }
}

impl Decode for AnthropicDecoder {
    type Item = eventsource_stream::Event;

    fn feed(&mut self, event: eventsource_stream::Event, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if event.data.trim().is_empty() {
            return Ok(());
        }
        let parsed: Event = parse_json(&self.settings.name, &format!("event {:?}", event.event), &event.data)?;
        match parsed {
            Event::MessageStart { message } => self.add_usage(message.usage.unwrap_or_default()),
            Event::ContentBlockStart { index, content_block } => match content_block {
                Block::Text { text } if !text.is_empty() => out.push(StreamEvent::TextDelta { text }),
                Block::Thinking { thinking, signature } => {
                    if !thinking.is_empty() {
                        out.push(StreamEvent::ReasoningDelta { text: thinking });
                    }
                    if !signature.is_empty() {
                        out.push(StreamEvent::ReasoningSignature { signature });
                    }
                }
                Block::ToolUse { id, name } => {
                    let ours = self.tools.len();
                    self.tools.insert(index, ours);
                    out.push(StreamEvent::ToolCallStart { index: ours, id, name });
                }
                _ => {}
            },
            Event::ContentBlockDelta { index, delta } => match delta {
                BlockDelta::TextDelta { text } => out.push(StreamEvent::TextDelta { text }),
                BlockDelta::ThinkingDelta { thinking } => out.push(StreamEvent::ReasoningDelta { text: thinking }),
                BlockDelta::SignatureDelta { signature } => out.push(StreamEvent::ReasoningSignature { signature }),
                BlockDelta::InputJsonDelta { partial_json } => {
                    let Some(&ours) = self.tools.get(&index) else {
                        return Err(self
                            .settings
                            .invalid(format!("input_json_delta for block {index}, not a tool_use")));
                    };
                    if !partial_json.is_empty() {
                        out.push(StreamEvent::ToolCallDelta { index: ours, arguments: partial_json });
                    }
                }
                BlockDelta::Other => {}
            },
            Event::ContentBlockStop {} | Event::Ping {} => {}
            Event::MessageDelta { delta, usage } => {
                if let Some(usage) = usage {
                    self.add_usage(usage);
                }
                if let Some(reason) = delta.stop_reason {
                    self.stop = Some(match reason.as_str() {
                        "end_turn" | "stop_sequence" => FinishReason::Stop,
                        "tool_use" => FinishReason::ToolCalls,
                        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
                        "refusal" => FinishReason::ContentFilter,
                        _ => FinishReason::Other(reason),
                    });
                }
            }
            Event::MessageStop {} => self.stopped = true,
            Event::Error { error } => {
                let status = match error.kind.as_str() {
                    "authentication_error" => 401,
                    "permission_error" => 403,
                    "not_found_error" => 404,
                    "rate_limit_error" => 429,
                    "invalid_request_error" => 400,
                    "request_too_large" => 413,
                    "overloaded_error" => 529,
                    _ => 500,
                };
                return Err(self.settings.status_error(status, None, error.message));
            }
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if !self.stopped {
            return Err(self.settings.invalid("the stream ended before message_stop".into()));
        }
        out.push(StreamEvent::Usage { usage: self.usage });
        let reason = self.stop.take().unwrap_or(FinishReason::Stop);
        out.push(StreamEvent::Finish { reason });
        Ok(())
    }
}
