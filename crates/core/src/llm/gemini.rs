//! Google Gemini API, native format, over reqwest.
//!
//! `streamGenerateContent?alt=sse` with `contents` (roles `user`/`model`),
//! `systemInstruction`, `tools[].functionDeclarations`, `functionCall` parts
//! from the model and `functionResponse` parts back, images as `inlineData`.
//! Gemini accepts only an OpenAPI subset of JSON Schema, so tool schemas go
//! through [`gemini_schema`] first.
//!
//! Thinking models (2.5, 3) put a `thoughtSignature` on `functionCall`
//! parts; it travels as [`super::ToolCall::signature`] (and is stored with
//! the call) and goes back on the same part in every later request, which
//! Gemini 3 requires. Signatures on text parts are optional to return and
//! are not kept.

use futures::stream::BoxStream;
use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::http::{Decode, HttpSettings, decode_stream, parse_json, sse_events};
use super::{
    ChatMessage, ChatRequest, ContentPart, FinishReason, LlmError, Provider, ReasoningEffort, StreamEvent, Usage,
};

/// A provider speaking the Gemini API.
#[derive(Debug, Clone)]
pub struct GeminiProvider {
    settings: HttpSettings,
    client: reqwest::Client,
}

impl GeminiProvider {
    /// A provider for `settings.base_url` (`https://generativelanguage.googleapis.com`, with or without `/v1beta`).
    pub fn new(settings: HttpSettings) -> Result<Self, LlmError> {
        Ok(Self { client: settings.client()?, settings })
    }

    fn url(&self, model: &str) -> String {
        let base = self.settings.base();
        let versioned = base.ends_with("/v1beta") || base.ends_with("/v1") || base.ends_with("/v1alpha");
        let base = if versioned { base.to_owned() } else { format!("{base}/v1beta") };
        let model = model.strip_prefix("models/").unwrap_or(model);
        format!("{base}/models/{model}:streamGenerateContent?alt=sse")
    }

    fn headers(&self) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        self.settings.insert_key(&mut headers, "x-goog-api-key")?;
        Ok(headers)
    }
}

/// The request body sent for `request`.
pub fn request_body(request: &ChatRequest) -> Value {
    let system: Vec<Value> = request
        .messages
        .iter()
        .filter_map(|m| if let ChatMessage::System { text } = m { Some(json!({"text": text})) } else { None })
        .collect();
    let mut body = json!({"contents": convert_messages(&request.messages)});
    if !system.is_empty() {
        body["systemInstruction"] = json!({"parts": system});
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let mut declaration = json!({"name": t.name, "description": t.description});
                let parameters = gemini_schema(&t.input_schema);
                if parameters.get("properties").is_some() {
                    declaration["parameters"] = parameters;
                }
                declaration
            })
            .collect();
        body["tools"] = json!([{"functionDeclarations": declarations}]);
    }
    let mut config = Map::new();
    if let Some(t) = request.sampling.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if let Some(p) = request.sampling.top_p {
        config.insert("topP".into(), json!(p));
    }
    if let Some(m) = request.sampling.max_tokens {
        config.insert("maxOutputTokens".into(), json!(m));
    }
    match request.sampling.reasoning {
        None => {}
        // Models that must think (the Pro ones) refuse a budget of 0, and say so.
        Some(ReasoningEffort::Off) => {
            config.insert("thinkingConfig".into(), json!({"thinkingBudget": 0}));
        }
        // The thoughts come back as parts marked `thought`, shown as reasoning.
        Some(effort) => {
            config.insert(
                "thinkingConfig".into(),
                json!({"thinkingLevel": effort.as_str().to_ascii_uppercase(), "includeThoughts": true}),
            );
        }
    }
    if !config.is_empty() {
        body["generationConfig"] = Value::Object(config);
    }
    body
}

fn part(part: &ContentPart) -> Value {
    match part {
        ContentPart::Text { text } => json!({"text": text}),
        ContentPart::Image { mime_type, data } | ContentPart::Audio { mime_type, data } => {
            json!({"inlineData": {"mimeType": mime_type, "data": data}})
        }
        link @ ContentPart::ResourceLink { .. } => json!({"text": super::describe_part(link)}),
    }
}

fn convert_messages(messages: &[ChatMessage]) -> Vec<Value> {
    let mut out = Vec::new();
    for message in messages {
        match message {
            ChatMessage::System { .. } => {}
            ChatMessage::User { parts } => {
                super::push_merged(&mut out, "parts", "user", parts.iter().map(part).collect())
            }
            ChatMessage::Assistant { text, tool_calls, .. } => {
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(json!({"text": text}));
                }
                for call in tool_calls {
                    let mut function_call =
                        json!({"functionCall": {"name": call.name, "args": super::arguments_object(&call.arguments)}});
                    if let Some(signature) = &call.signature {
                        function_call["thoughtSignature"] = json!(signature);
                    }
                    parts.push(function_call);
                }
                super::push_merged(&mut out, "parts", "model", parts);
            }
            ChatMessage::Tool { name, parts, is_error, .. } => {
                let text: Vec<&str> = parts
                    .iter()
                    .filter_map(|p| if let ContentPart::Text { text } = p { Some(text.as_str()) } else { None })
                    .collect();
                let key = if *is_error { "error" } else { "output" };
                let mut out_parts =
                    vec![json!({"functionResponse": {"name": name, "response": {key: text.join("\n")}}})];
                out_parts.extend(parts.iter().filter(|p| !matches!(p, ContentPart::Text { .. })).map(part));
                super::push_merged(&mut out, "parts", "user", out_parts);
            }
        }
    }
    out
}

/// Keys Gemini's `Schema` accepts; everything else is dropped.
const KEPT_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "items",
    "anyOf",
    "propertyOrdering",
];

/// How deep `$ref`s are inlined before a recursive schema is cut off.
const MAX_REF_DEPTH: usize = 8;

/// Converts a JSON Schema into the subset Gemini accepts: `$ref`s inlined
/// from `$defs`/`definitions`, `type: [T, "null"]` and `anyOf`/`oneOf` with
/// a null branch turned into `nullable`, `allOf` merged, `const` into `enum`,
/// unsupported formats and keywords (`$schema`, `additionalProperties`,
/// `default`, `examples`, ...) dropped, types upper-cased.
pub fn gemini_schema(schema: &Value) -> Value {
    let defs = schema.get("$defs").or_else(|| schema.get("definitions")).cloned().unwrap_or(Value::Null);
    convert(schema, &defs, 0)
}

fn resolve<'a>(reference: &str, defs: &'a Value) -> Option<&'a Value> {
    let name = reference.strip_prefix("#/$defs/").or_else(|| reference.strip_prefix("#/definitions/"))?;
    defs.get(name)
}

fn convert(schema: &Value, defs: &Value, depth: usize) -> Value {
    let Some(object) = schema.as_object() else {
        // `true` / `{}`: anything; Gemini needs a type, a string is the most permissive.
        return json!({"type": "STRING"});
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        return match resolve(reference, defs) {
            Some(target) if depth < MAX_REF_DEPTH => {
                let mut inlined = convert(target, defs, depth + 1);
                if let Some(d) = object.get("description") {
                    inlined["description"] = d.clone();
                }
                inlined
            }
            _ => json!({"type": "OBJECT", "description": format!("(recursive or unknown reference {reference})")}),
        };
    }
    let mut out = Map::new();
    let mut nullable = object.get("nullable").and_then(Value::as_bool).unwrap_or(false);

    // allOf: merge the branches into this schema.
    let mut merged = object.clone();
    if let Some(all) = object.get("allOf").and_then(Value::as_array) {
        for branch in all {
            let branch = match branch.get("$ref").and_then(Value::as_str).and_then(|r| resolve(r, defs)) {
                Some(target) => target,
                None => branch,
            };
            if let Some(b) = branch.as_object() {
                for (k, v) in b {
                    match (k.as_str(), merged.get_mut(k)) {
                        ("properties", Some(Value::Object(existing))) => {
                            if let Some(more) = v.as_object() {
                                existing.extend(more.clone());
                            }
                        }
                        ("required", Some(Value::Array(existing))) => {
                            existing.extend(v.as_array().cloned().unwrap_or_default())
                        }
                        (_, None) => {
                            merged.insert(k.clone(), v.clone());
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    // type: ["string", "null"] → STRING + nullable.
    let mut kind = None;
    match merged.get("type") {
        Some(Value::String(t)) => kind = Some(t.clone()),
        Some(Value::Array(types)) => {
            let mut rest: Vec<&str> = types.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
            nullable |= rest.len() < types.len();
            if rest.len() == 1 {
                kind = rest.pop().map(str::to_owned);
            } else if !rest.is_empty() {
                let branches: Vec<Value> = rest.iter().map(|t| json!({"type": t.to_uppercase()})).collect();
                out.insert("anyOf".into(), Value::Array(branches));
            }
        }
        _ => {}
    }

    // anyOf / oneOf: drop null branches; a single remaining branch replaces the union.
    let union = merged.get("anyOf").or_else(|| merged.get("oneOf")).and_then(Value::as_array);
    if let Some(branches) = union {
        let mut kept = Vec::new();
        for branch in branches {
            if branch.get("type").and_then(Value::as_str) == Some("null") {
                nullable = true;
            } else {
                kept.push(convert(branch, defs, depth + 1));
            }
        }
        if kept.len() == 1 {
            let mut single = kept.pop().unwrap_or_default();
            if let Some(obj) = single.as_object_mut() {
                for key in ["description", "title"] {
                    if let Some(v) = merged.get(key) {
                        obj.insert(key.into(), v.clone());
                    }
                }
                if nullable {
                    obj.insert("nullable".into(), json!(true));
                }
            }
            return single;
        }
        if !kept.is_empty() {
            out.insert("anyOf".into(), Value::Array(kept));
        }
    }

    if let Some(c) = merged.get("const").cloned() {
        if kind.is_none() {
            kind = Some(json_type(&c).to_owned());
        }
        merged.insert("enum".into(), json!([c]));
    }
    if kind.is_none() && merged.contains_key("properties") {
        kind = Some("object".into());
    }
    if kind.is_none() && merged.contains_key("items") {
        kind = Some("array".into());
    }
    if kind.is_none() && merged.contains_key("enum") {
        kind = Some("string".into());
    }
    if kind.is_none() && !out.contains_key("anyOf") {
        kind = Some("string".into());
    }

    for (key, value) in &merged {
        if !KEPT_KEYS.contains(&key.as_str()) || key == "anyOf" || key == "type" {
            continue;
        }
        match key.as_str() {
            "properties" => {
                let props: Map<String, Value> = value
                    .as_object()
                    .map(|p| p.iter().map(|(k, v)| (k.clone(), convert(v, defs, depth + 1))).collect())
                    .unwrap_or_default();
                if !props.is_empty() {
                    out.insert(key.clone(), Value::Object(props));
                }
            }
            "items" => {
                out.insert(key.clone(), convert(value, defs, depth + 1));
            }
            "enum" => {
                // Gemini enums are strings only.
                let values: Vec<Value> = value
                    .as_array()
                    .map(|v| v.iter().filter(|x| !x.is_null()).map(|x| json!(plain_string(x))).collect())
                    .unwrap_or_default();
                if !values.is_empty() {
                    out.insert(key.clone(), Value::Array(values));
                    kind = Some("string".into());
                }
            }
            "format" => {
                let keep = matches!(
                    (kind.as_deref(), value.as_str()),
                    (Some("string"), Some("date-time" | "enum"))
                        | (Some("number"), Some("float" | "double"))
                        | (Some("integer"), Some("int32" | "int64"))
                );
                if keep {
                    out.insert(key.clone(), value.clone());
                }
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    // `required` may only name properties that exist.
    if let Some(required) = out.get("required").and_then(Value::as_array) {
        let props = out.get("properties").and_then(Value::as_object);
        let kept: Vec<Value> = required
            .iter()
            .filter(|r| r.as_str().is_some_and(|name| props.is_some_and(|p| p.contains_key(name))))
            .cloned()
            .collect();
        if kept.is_empty() {
            out.remove("required");
        } else {
            out.insert("required".into(), Value::Array(kept));
        }
    }
    if let Some(kind) = kind {
        out.insert("type".into(), json!(kind.to_uppercase()));
    }
    if nullable {
        out.insert("nullable".into(), json!(true));
    }
    Value::Object(out)
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        _ => "string",
    }
}

fn plain_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[async_trait::async_trait]
impl Provider for GeminiProvider {
    fn name(&self) -> &str {
        &self.settings.name
    }

    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<BoxStream<'static, Result<StreamEvent, LlmError>>, LlmError> {
        let body = request_body(&request);
        let url = self.url(&request.model);
        let response = self.settings.post_json(&self.client, &url, self.headers()?, &body, &cancel).await?;
        let decoder = GeminiDecoder { settings: self.settings.clone(), calls: 0, usage: None, finish: None };
        let source = sse_events(&self.settings, response);
        Ok(decode_stream(self.settings.name.clone(), source, decoder, self.settings.idle_timeout, cancel))
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk {
    #[serde(default)]
    candidates: Vec<Candidate>,
    #[serde(default)]
    usage_metadata: Option<UsageMetadata>,
    #[serde(default)]
    prompt_feedback: Option<PromptFeedback>,
    #[serde(default)]
    error: Option<ErrorBody>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: bool,
    #[serde(default)]
    function_call: Option<FunctionCall>,
    #[serde(default)]
    thought_signature: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FunctionCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    args: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    #[serde(default)]
    prompt_token_count: u32,
    #[serde(default)]
    candidates_token_count: u32,
    #[serde(default)]
    thoughts_token_count: u32,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ErrorBody {
    #[serde(default)]
    code: Option<u16>,
    #[serde(default)]
    message: String,
}

/// Turns Gemini's response chunks into neutral events. Function calls
/// arrive whole, so each becomes a start and one arguments delta.
#[derive(Debug)]
struct GeminiDecoder {
    settings: HttpSettings,
    calls: usize,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
}

impl Decode for GeminiDecoder {
    type Item = eventsource_stream::Event;

    fn feed(&mut self, event: eventsource_stream::Event, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        if event.data.trim().is_empty() {
            return Ok(());
        }
        let chunk: Chunk = parse_json(&self.settings.name, "response chunk", &event.data)?;
        if let Some(error) = chunk.error {
            return Err(self.settings.status_error(error.code.unwrap_or(500), None, error.message));
        }
        if let Some(u) = chunk.usage_metadata {
            self.usage = Some(Usage {
                input_tokens: u.prompt_token_count,
                output_tokens: u.candidates_token_count + u.thoughts_token_count,
            });
        }
        if chunk.prompt_feedback.and_then(|f| f.block_reason).is_some() {
            self.finish = Some(FinishReason::ContentFilter);
        }
        let Some(candidate) = chunk.candidates.into_iter().next() else { return Ok(()) };
        for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
            if let Some(call) = part.function_call {
                let index = self.calls;
                self.calls += 1;
                let id = call.id.filter(|i| !i.is_empty()).unwrap_or_else(|| format!("call_{index}"));
                out.push(StreamEvent::ToolCallStart { index, id, name: call.name });
                let args = call.args.unwrap_or_else(|| json!({}));
                out.push(StreamEvent::ToolCallDelta { index, arguments: args.to_string() });
                if let Some(signature) = part.thought_signature.filter(|s| !s.is_empty()) {
                    out.push(StreamEvent::ToolCallSignature { index, signature });
                }
            } else if let Some(text) = part.text.filter(|t| !t.is_empty()) {
                out.push(if part.thought {
                    StreamEvent::ReasoningDelta { text }
                } else {
                    StreamEvent::TextDelta { text }
                });
            }
        }
        if let Some(reason) = candidate.finish_reason {
            self.finish = Some(match reason.as_str() {
                "STOP" if self.calls > 0 => FinishReason::ToolCalls,
                "STOP" => FinishReason::Stop,
                "MAX_TOKENS" => FinishReason::Length,
                "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
                    FinishReason::ContentFilter
                }
                _ => FinishReason::Other(reason),
            });
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let Some(reason) = self.finish.take() else {
            return Err(self.settings.invalid("the stream ended before a finishReason".into()));
        };
        if let Some(usage) = self.usage.take() {
            out.push(StreamEvent::Usage { usage });
        }
        out.push(StreamEvent::Finish { reason });
        Ok(())
    }
}
