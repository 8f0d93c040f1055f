//! Prompt-based tool calling for models without native tools.
//!
//! [`PromptTools`] wraps any [`Provider`]: it describes the tools in the system prompt
//! ([`tools_prompt`]), sends no native tools, rewrites earlier calls and results as text, and runs the
//! model's text through [`CallParser`], a streaming state machine that turns `<function_call>` blocks
//! (and fenced `use_mcp_tool` JSON) into tool-call events while the text around them keeps streaming,
//! tags split anywhere. Broken JSON is repaired when the fix is unambiguous; otherwise the call is
//! still reported with its raw text, so the model gets an "invalid arguments" error it can correct.

use futures::stream::{BoxStream, StreamExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{ChatMessage, ChatRequest, ContentPart, FinishReason, LlmError, Provider, StreamEvent, ToolSpec};

const OPEN_TAG: &str = "<function_call>";
const CLOSE_TAG: &str = "</function_call>";
const OPEN_FENCE: &str = "```json";
const CLOSE_FENCE: &str = "```";

/// The name reported for a call whose tool name cannot be read.
pub const INVALID_CALL_NAME: &str = "invalid_function_call";

/// Wraps a provider so that tools are offered through the prompt.
pub struct PromptTools {
    inner: Box<dyn Provider>,
}

impl PromptTools {
    /// Prompt-based tool calling over `inner`.
    pub fn new(inner: Box<dyn Provider>) -> Self {
        Self { inner }
    }
}

/// The system-prompt section that describes `tools` and the call syntax.
pub fn tools_prompt(tools: &[ToolSpec]) -> String {
    let mut prompt = String::from(
        "## Tools\n\n\
         You can call the tools listed below. To call one, write a block like this, with the \
         arguments as a JSON object that matches the tool's parameters:\n\n\
         <function_call>{\"name\": \"TOOL_NAME\", \"arguments\": {\"ARGUMENT\": \"VALUE\"}}</function_call>\n\n\
         You may call several tools in one reply, one block each. After your calls, stop and wait: \
         the results arrive in the next message inside <function_result> blocks. Never write a \
         <function_result> yourself and never guess a result. When no tool is needed, answer \
         directly.\n\n### Available tools\n",
    );
    for tool in tools {
        prompt.push_str(&format!(
            "\n- `{}`: {}\n  Parameters (JSON Schema): {}\n",
            tool.name,
            tool.description.trim(),
            tool.input_schema
        ));
    }
    prompt
}

/// The request sent to the wrapped model: tools in the system prompt, earlier
/// calls and results as text, no native tools.
pub fn rewrite_request(mut request: ChatRequest) -> ChatRequest {
    let tools = std::mem::take(&mut request.tools);
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    for message in request.messages {
        match message {
            ChatMessage::Assistant { mut text, reasoning, reasoning_signature, tool_calls } => {
                for call in tool_calls {
                    let arguments = serde_json::from_str::<Value>(&call.arguments)
                        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                    let block = json!({"name": call.name, "arguments": arguments});
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&format!("{OPEN_TAG}{block}{CLOSE_TAG}"));
                }
                messages.push(ChatMessage::Assistant { text, reasoning, reasoning_signature, tool_calls: Vec::new() });
            }
            ChatMessage::Tool { call_id, name, parts, is_error } => {
                let status = if is_error { " is_error=\"true\"" } else { "" };
                let mut text = format!("<function_result name=\"{name}\" call_id=\"{call_id}\"{status}>\n");
                let mut media = Vec::new();
                for part in parts {
                    match part {
                        ContentPart::Text { text: t } => text.push_str(&t),
                        other @ (ContentPart::Image { .. } | ContentPart::Audio { .. }) => media.push(other),
                        link => text.push_str(&super::describe_part(&link)),
                    }
                }
                text.push_str("\n</function_result>");
                let mut parts = vec![ContentPart::Text { text }];
                parts.extend(media);
                messages.push(ChatMessage::User { parts });
            }
            other => messages.push(other),
        }
    }
    if !tools.is_empty() {
        let section = tools_prompt(&tools);
        match messages.iter_mut().find(|m| matches!(m, ChatMessage::System { .. })) {
            Some(ChatMessage::System { text }) => {
                text.push_str("\n\n");
                text.push_str(&section);
            }
            _ => messages.insert(0, ChatMessage::System { text: section }),
        }
    }
    request.messages = messages;
    request.tools = tools;
    request
}

#[async_trait::async_trait]
impl Provider for PromptTools {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<BoxStream<'static, Result<StreamEvent, LlmError>>, LlmError> {
        let mut rewritten = rewrite_request(request);
        let names: Vec<String> = std::mem::take(&mut rewritten.tools).into_iter().map(|t| t.name).collect();
        let inner = self.inner.stream(rewritten, cancel).await?;
        let mut parser = CallParser::new(names);
        let mut finished = false;
        let events = inner.flat_map(move |item| {
            let out: Vec<Result<StreamEvent, LlmError>> = match item {
                Ok(StreamEvent::TextDelta { text }) => parser.feed(&text).into_iter().map(Ok).collect(),
                Ok(StreamEvent::Finish { reason }) if !finished => {
                    finished = true;
                    let mut out: Vec<_> = parser.finish().into_iter().map(Ok).collect();
                    let reason =
                        if parser.calls > 0 && reason == FinishReason::Stop { FinishReason::ToolCalls } else { reason };
                    out.push(Ok(StreamEvent::Finish { reason }));
                    out
                }
                other => vec![other],
            };
            futures::stream::iter(out)
        });
        Ok(events.boxed())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    Tag,
    Fence,
}

/// Streaming parser of tool-call blocks in model text.
#[derive(Debug)]
pub struct CallParser {
    tools: Vec<String>,
    state: State,
    buffer: String,
    calls: usize,
}

impl CallParser {
    /// A parser for a reply that may call `tools` (model-facing names).
    pub fn new(tools: Vec<String>) -> Self {
        Self { tools, state: State::Text, buffer: String::new(), calls: 0 }
    }

    /// Feeds more text; returns the events it completes.
    pub fn feed(&mut self, chunk: &str) -> Vec<StreamEvent> {
        self.buffer.push_str(chunk);
        let mut out = Vec::new();
        loop {
            match self.state {
                State::Text => {
                    let tag = self.buffer.find(OPEN_TAG);
                    let fence = self.buffer.find(OPEN_FENCE);
                    let next = match (tag, fence) {
                        (Some(t), Some(f)) if f < t => Some((f, State::Fence, OPEN_FENCE.len())),
                        (Some(t), _) => Some((t, State::Tag, OPEN_TAG.len())),
                        (None, Some(f)) => Some((f, State::Fence, OPEN_FENCE.len())),
                        (None, None) => None,
                    };
                    match next {
                        Some((at, state, len)) => {
                            push_text(&mut out, &self.buffer[..at]);
                            if state == State::Tag {
                                self.buffer.drain(..at + len);
                            } else {
                                // A fence is text unless it turns out to be a tool call: keep it whole.
                                self.buffer.drain(..at);
                            }
                            self.state = state;
                        }
                        None => {
                            let keep = partial_marker_len(&self.buffer);
                            let cut = self.buffer.len() - keep;
                            push_text(&mut out, &self.buffer[..cut]);
                            self.buffer.drain(..cut);
                            return out;
                        }
                    }
                }
                State::Tag => {
                    let Some(end) = self.buffer.find(CLOSE_TAG) else { return out };
                    let body: String = self.buffer.drain(..end + CLOSE_TAG.len()).collect();
                    self.emit_call(&body[..end], &mut out);
                    self.state = State::Text;
                }
                State::Fence => {
                    let Some(end) = self.buffer[OPEN_FENCE.len()..].find(CLOSE_FENCE).map(|e| e + OPEN_FENCE.len())
                    else {
                        return out;
                    };
                    let block: String = self.buffer.drain(..end + CLOSE_FENCE.len()).collect();
                    let body = &block[OPEN_FENCE.len()..end];
                    match repair_json(body) {
                        Some(value) if value.get("type").and_then(Value::as_str) == Some("use_mcp_tool") => {
                            self.emit_value(&value, &mut out);
                        }
                        _ => push_text(&mut out, &block),
                    }
                    self.state = State::Text;
                }
            }
        }
    }

    /// The reply ended: flushes held text and an unclosed call.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        let rest = std::mem::take(&mut self.buffer);
        match self.state {
            State::Text | State::Fence => push_text(&mut out, &rest),
            // The model stopped inside a call (often a stop sequence on the close tag).
            State::Tag => self.emit_call(&rest, &mut out),
        }
        self.state = State::Text;
        out
    }

    fn emit_call(&mut self, body: &str, out: &mut Vec<StreamEvent>) {
        match repair_json(strip_fence(body)) {
            Some(value) if value.is_object() => self.emit_value(&value, out),
            _ => {
                let name = sniff_name(body).unwrap_or_else(|| INVALID_CALL_NAME.to_owned());
                self.start(name, body.trim().to_owned(), out);
            }
        }
    }

    fn emit_value(&mut self, value: &Value, out: &mut Vec<StreamEvent>) {
        let name = if value.get("type").and_then(Value::as_str) == Some("use_mcp_tool") {
            let tool = value.get("tool_name").and_then(Value::as_str).unwrap_or_default();
            let server = value.get("server_name").and_then(Value::as_str).unwrap_or_default();
            self.resolve(server, tool)
        } else {
            value.get("name").and_then(Value::as_str).unwrap_or(INVALID_CALL_NAME).to_owned()
        };
        let arguments = ["arguments", "parameters", "args", "input"]
            .iter()
            .find_map(|k| value.get(*k))
            .cloned()
            .unwrap_or_else(|| json!({}));
        let arguments = match arguments {
            // Some models put the arguments in a JSON string.
            Value::String(s) => repair_json(&s).map_or(s, |v| v.to_string()),
            other => other.to_string(),
        };
        self.start(name, arguments, out);
    }

    /// The offered tool a `use_mcp_tool` block means.
    fn resolve(&self, server: &str, tool: &str) -> String {
        if self.tools.iter().any(|t| t == tool) {
            return tool.to_owned();
        }
        self.tools
            .iter()
            .find(|t| t.ends_with(tool) && t.starts_with(server) && t.len() > tool.len())
            .cloned()
            .unwrap_or_else(|| tool.to_owned())
    }

    fn start(&mut self, name: String, arguments: String, out: &mut Vec<StreamEvent>) {
        let index = self.calls;
        self.calls += 1;
        let id = format!("call_{}", uuid::Uuid::new_v4().simple());
        out.push(StreamEvent::ToolCallStart { index, id, name });
        out.push(StreamEvent::ToolCallDelta { index, arguments });
    }
}

fn push_text(out: &mut Vec<StreamEvent>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(StreamEvent::TextDelta { text: last }) = out.last_mut() {
        last.push_str(text);
    } else {
        out.push(StreamEvent::TextDelta { text: text.to_owned() });
    }
}

/// Length of the longest suffix of `text` that could begin a marker.
fn partial_marker_len(text: &str) -> usize {
    [OPEN_TAG, OPEN_FENCE]
        .iter()
        .flat_map(|marker| (1..marker.len()).rev().filter(move |n| text.ends_with(&marker[..*n])))
        .max()
        .unwrap_or(0)
}

fn strip_fence(body: &str) -> &str {
    let trimmed = body.trim();
    let inner = trimmed.strip_prefix("```json").or_else(|| trimmed.strip_prefix("```"));
    match inner.and_then(|i| i.strip_suffix("```")) {
        Some(i) => i,
        None => trimmed,
    }
}

/// The `"name": "..."` of a broken call, when it can be read.
fn sniff_name(body: &str) -> Option<String> {
    let after = &body[body.find("\"name\"")? + 6..];
    let after = after.trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let name = &after[..after.find('"')?];
    (!name.is_empty()).then(|| name.to_owned())
}

/// Parses `text` as JSON, repairing what is unambiguous: trailing commas,
/// and an unterminated string or unclosed brackets at the very end.
pub fn repair_json(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(v) = serde_json::from_str(text) {
        return Some(v);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut stack = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                if stack.pop() != Some(c) {
                    return None;
                }
                drop_trailing_comma(&mut out);
            }
            _ => {}
        }
        out.push(c);
    }
    if in_string {
        if escaped {
            out.pop();
        }
        out.push('"');
    }
    drop_trailing_comma(&mut out);
    while let Some(close) = stack.pop() {
        out.push(close);
    }
    serde_json::from_str(&out).ok()
}

fn drop_trailing_comma(out: &mut String) {
    let trimmed = out.trim_end().len();
    if out[..trimmed].ends_with(',') {
        out.truncate(trimmed - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Runs the parser over `chunks` and returns (text, [(name, args)]).
    fn run(chunks: &[&str]) -> (String, Vec<(String, String)>) {
        let mut parser = CallParser::new(vec!["files__write".into(), "fetch".into()]);
        let mut events = Vec::new();
        for c in chunks {
            events.extend(parser.feed(c));
        }
        events.extend(parser.finish());
        let mut text = String::new();
        let mut calls: Vec<(String, String)> = Vec::new();
        for e in events {
            match e {
                StreamEvent::TextDelta { text: t } => text.push_str(&t),
                StreamEvent::ToolCallStart { index, name, .. } => {
                    assert_eq!(index, calls.len());
                    calls.push((name, String::new()));
                }
                StreamEvent::ToolCallDelta { index, arguments } => calls[index].1.push_str(&arguments),
                other => panic!("unexpected {other:?}"),
            }
        }
        (text, calls)
    }

    const REPLY: &str = "Let me look. <function_call>{\"name\": \"fetch\", \"arguments\": {\"url\": \"http://a/<b>\"}}</function_call> and \
        <function_call>{\"name\":\"files__write\",\"arguments\":{\"path\":\"s.md\",\"content\":\"x```y\"}}</function_call>\n\
        ```json\n{\"type\":\"use_mcp_tool\",\"server_name\":\"files\",\"tool_name\":\"write\",\"arguments\":{\"path\":\"t\"}}\n```\n\
        A code block: ```json\n{\"a\": 1}\n``` done <function_ca";

    #[test]
    fn calls_text_and_fences_are_separated() {
        let (text, calls) = run(&[REPLY]);
        assert_eq!(text, "Let me look.  and \n\nA code block: ```json\n{\"a\": 1}\n``` done <function_ca");
        assert_eq!(
            calls,
            vec![
                ("fetch".to_owned(), r#"{"url":"http://a/<b>"}"#.to_owned()),
                ("files__write".to_owned(), r#"{"content":"x```y","path":"s.md"}"#.to_owned()),
                ("files__write".to_owned(), r#"{"path":"t"}"#.to_owned()),
            ]
        );
    }

    #[test]
    fn broken_json_is_repaired_or_reported() {
        let (_, calls) =
            run(&["<function_call>{\"name\": \"fetch\", \"arguments\": {\"url\": \"u\",}</function_call>"]);
        assert_eq!(calls, vec![("fetch".to_owned(), r#"{"url":"u"}"#.to_owned())]);
        let (_, calls) = run(&["<function_call>{\"name\": \"fetch\", \"arguments\": {url: u}}</function_call>"]);
        assert_eq!(calls, vec![("fetch".to_owned(), r#"{"name": "fetch", "arguments": {url: u}}"#.to_owned())]);
        let (_, calls) = run(&["<function_call>not json at all</function_call>"]);
        assert_eq!(calls[0].0, INVALID_CALL_NAME);
    }

    #[test]
    fn an_unclosed_call_at_the_end_is_still_a_call() {
        let (text, calls) = run(&["ok <function_call>{\"name\": \"fetch\", \"arguments\": {\"url\": \"u"]);
        assert_eq!(text, "ok ");
        assert_eq!(calls, vec![("fetch".to_owned(), r#"{"url":"u"}"#.to_owned())]);
    }

    #[test]
    fn repair_keeps_what_is_valid_and_refuses_what_is_ambiguous() {
        assert_eq!(repair_json(r#"{"a": [1, 2,], }"#), Some(json!({"a": [1, 2]})));
        assert_eq!(repair_json(r#"{"a": "b"#), Some(json!({"a": "b"})));
        assert_eq!(repair_json(r#"{"a": [1}"#), None);
        assert_eq!(repair_json("{'a': 1}"), None);
    }

    proptest! {
        #[test]
        fn any_chunking_gives_the_same_result(cuts in proptest::collection::vec(0usize..REPLY.len(), 0..40)) {
            let mut cuts: Vec<usize> = cuts.into_iter().filter(|c| REPLY.is_char_boundary(*c)).collect();
            cuts.sort_unstable();
            cuts.dedup();
            let mut chunks = Vec::new();
            let mut last = 0;
            for c in cuts {
                chunks.push(&REPLY[last..c]);
                last = c;
            }
            chunks.push(&REPLY[last..]);
            prop_assert_eq!(run(&chunks), run(&[REPLY]));
        }
    }
}
