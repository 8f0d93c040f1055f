//! Helpers shared by the `llm_*` tests: a rich sample request, settings for a
//! scripted server, and folding a provider's events into a summary; and a
//! turn's tool results as text, for the `agent_*` tests.

#![allow(dead_code)]

use futures::StreamExt;
use patchbay_core::llm::{
    ChatMessage, ChatRequest, ContentPart, FinishReason, HttpSettings, LlmError, Provider, Sampling, StreamEvent,
    ToolCall, ToolSpec, Usage,
};
use patchbay_core::secrets::SecretValue;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Each tool result of a turn's events: whether it is an error, and its text.
pub fn tool_results(events: &[patchbay_core::agent::AgentEvent]) -> Vec<(bool, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            patchbay_core::agent::AgentEvent::ToolResult { is_error, content, .. } => {
                let text = content
                    .iter()
                    .filter_map(|c| match c {
                        ContentPart::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<String>();
                Some((*is_error, text))
            }
            _ => None,
        })
        .collect()
}

/// A 1×1 PNG, base64.
pub const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// Settings pointing at a scripted server, with a key and an extra header.
pub fn settings(base_url: String) -> HttpSettings {
    let mut s = HttpSettings::new("scripted", base_url);
    s.api_key = Some(SecretValue::new("sk-test-123"));
    s.headers.insert("x-extra".into(), SecretValue::new("extra-value"));
    s
}

/// A tool whose schema uses what Gemini rejects.
pub fn fetch_tool() -> ToolSpec {
    ToolSpec {
        name: "fetch__fetch".into(),
        description: "Fetches a URL.".into(),
        input_schema: json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "url": {"type": "string", "format": "uri", "description": "The URL."},
                "max_length": {"anyOf": [{"type": "integer", "exclusiveMinimum": 0}, {"type": "null"}], "default": 5000},
                "mode": {"type": ["string", "null"], "enum": ["raw", "markdown", null]},
                "headers": {"$ref": "#/$defs/Headers"}
            },
            "required": ["url", "missing"],
            "$defs": {"Headers": {"type": "object", "properties": {"accept": {"type": "string"}}, "additionalProperties": {"type": "string"}}}
        }),
        origin: None,
    }
}

/// A tool whose schema uses JSON Schema 2020-12 as MCP servers send it (SEP-1613, SEP-2106):
/// `$schema`, `$defs` with an `$anchor`, `$ref`, `additionalProperties`, composition and
/// conditionals. Providers that take JSON Schema must get it unchanged.
pub fn schema_2020_12_tool() -> ToolSpec {
    ToolSpec {
        name: "crm__create_contact".into(),
        description: "Creates a contact.".into(),
        input_schema: json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {"$anchor": "addr", "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}, "required": ["city"]}
            },
            "properties": {
                "name": {"type": "string"},
                "home": {"$ref": "#/$defs/address"},
                "contact": {"anyOf": [{"type": "string", "format": "email"}, {"type": "string", "pattern": "^\\+"}]},
                "kind": {"enum": ["person", "company"]},
                "vat": {"type": "string"}
            },
            "allOf": [{"required": ["name"]}],
            "if": {"properties": {"kind": {"const": "company"}}},
            "then": {"required": ["vat"]},
            "else": {"not": {"required": ["vat"]}},
            "additionalProperties": false
        }),
        origin: None,
    }
}

/// A conversation with every message kind, an image from the user and an
/// image in a tool result.
pub fn sample_request(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.into(),
        messages: vec![
            ChatMessage::System { text: "You are helpful.".into() },
            ChatMessage::User {
                parts: vec![
                    ContentPart::text("What is on this page?"),
                    ContentPart::Image { mime_type: "image/png".into(), data: PNG.into() },
                ],
            },
            ChatMessage::Assistant {
                text: "Let me fetch it.".into(),
                reasoning: Some("need the page".into()),
                reasoning_signature: None,
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "fetch__fetch".into(),
                    arguments: r#"{"url":"http://127.0.0.1/page"}"#.into(),
                    // Gemini's thoughtSignature; the other formats have no place for it.
                    signature: Some("c2lnbmF0dXJlLTE=".into()),
                }],
            },
            ChatMessage::Tool {
                call_id: "call_1".into(),
                name: "fetch__fetch".into(),
                parts: vec![
                    ContentPart::text("A page about cats."),
                    ContentPart::Image { mime_type: "image/png".into(), data: PNG.into() },
                ],
                is_error: false,
            },
            ChatMessage::User { parts: vec![ContentPart::text("Summarise it.")] },
        ],
        tools: vec![fetch_tool()],
        sampling: Sampling { temperature: Some(0.5), max_tokens: Some(1000), ..Sampling::default() },
    }
}

/// A one-message request.
pub fn hello(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.into(),
        messages: vec![ChatMessage::User { parts: vec![ContentPart::text("hello")] }],
        tools: Vec::new(),
        sampling: Sampling::default(),
    }
}

/// What a response amounted to.
#[derive(Debug, Default, PartialEq)]
pub struct Summary {
    pub text: String,
    pub reasoning: String,
    /// (id, name, arguments) by index.
    pub calls: Vec<(String, String, String)>,
    /// (index, signature) of the calls that carried one.
    pub signatures: Vec<(usize, String)>,
    /// The proof attached to the reasoning, if any.
    pub reasoning_signature: Option<String>,
    pub usage: Option<Usage>,
    pub finish: Option<FinishReason>,
    pub events: usize,
}

/// Streams `request` and folds the events; the error, if any, ends it.
pub async fn run(provider: &dyn Provider, request: ChatRequest) -> (Summary, Option<LlmError>) {
    let mut stream = match provider.stream(request, CancellationToken::new()).await {
        Ok(s) => s,
        Err(e) => return (Summary::default(), Some(e)),
    };
    let mut s = Summary::default();
    while let Some(item) = stream.next().await {
        s.events += 1;
        match item {
            Err(e) => return (s, Some(e)),
            Ok(StreamEvent::TextDelta { text }) => s.text.push_str(&text),
            Ok(StreamEvent::ReasoningDelta { text }) => s.reasoning.push_str(&text),
            Ok(StreamEvent::ToolCallStart { index, id, name }) => {
                assert_eq!(index, s.calls.len(), "tool calls start in index order");
                s.calls.push((id, name, String::new()));
            }
            Ok(StreamEvent::ToolCallDelta { index, arguments }) => s.calls[index].2.push_str(&arguments),
            Ok(StreamEvent::ToolCallSignature { index, signature }) => s.signatures.push((index, signature)),
            Ok(StreamEvent::ReasoningSignature { signature }) => s.reasoning_signature = Some(signature),
            Ok(StreamEvent::Usage { usage }) => s.usage = Some(usage),
            Ok(StreamEvent::Finish { reason }) => s.finish = Some(reason),
        }
    }
    (s, None)
}

/// A turn through the agent on `provider` (named after its model), with the
/// built-in tools (`current_time`) served in process and every call approved.
pub async fn builtin_turn(
    provider: std::sync::Arc<dyn Provider>,
    model: &str,
    conversation: i64,
    text: &str,
    sampling: patchbay_core::agent::Sampling,
) -> patchbay_core::agent::TurnRequest {
    use patchbay_core::agent::{ApprovalPolicy, ModelChoice, ToolSelection, TurnAction, TurnLimits, TurnRequest};
    let secrets = std::sync::Arc::new(patchbay_core::secrets::MemoryStore::new());
    let tools = patchbay_core::builtin::standalone_tools(secrets, None).await.unwrap();
    TurnRequest {
        conversation,
        action: TurnAction::Send { text: text.into(), attachments: Vec::new() },
        model: ModelChoice {
            provider_name: provider.name().to_owned(),
            provider,
            model: model.into(),
            sampling,
            context_window: None,
        },
        system_prompt: None,
        tools: std::sync::Arc::new(tools),
        selection: ToolSelection::All,
        approval: ApprovalPolicy::AutoApprove,
        retriever: None,
        tool_embedder: None,
        limits: TurnLimits::default(),
    }
}
