//! Prompt-based tool calling for models without native tools.
//!
//! [`PromptTools`] wraps any [`Provider`]: it describes the tools in the system prompt
//! ([`tools_prompt`], in the provider's [`PromptToolFormat`]), sends no native tools, rewrites
//! earlier calls and results as text, and runs the model's text through [`CallParser`], a
//! streaming state machine that turns `<function_call>` blocks and fenced `use_mcp_tool` JSON
//! into tool-call events while the text around them keeps streaming, markers split anywhere.
//! Blocks end where their JSON ends, so a closing marker inside a string does not cut a call;
//! a `use_mcp_tool` block names its tool exactly, by server and tool, or it calls nothing.
//! Broken JSON is repaired when the fix is unambiguous; otherwise the call is still reported
//! with its raw text, so the model gets an "invalid arguments" error it can correct.

use std::collections::{BTreeMap, HashMap};

use futures::stream::{BoxStream, StreamExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{ChatMessage, ChatRequest, ContentPart, FinishReason, LlmError, Provider, StreamEvent, ToolSpec};
use crate::config::{BUILTIN_SERVER, PromptToolFormat};

const OPEN_TAG: &str = "<function_call>";
const CLOSE_TAG: &str = "</function_call>";
const OPEN_FENCE: &str = "```json";
const CLOSE_FENCE: &str = "```";
/// The type a fenced call block states.
const USE_MCP_TOOL: &str = "use_mcp_tool";
/// The first keys of a fenced object that may be a call; any other first key is ordinary code.
const CALL_KEYS: [&str; 4] = ["type", "server_name", "tool_name", "arguments"];

/// The name reported for a call whose tool name cannot be read.
pub const INVALID_CALL_NAME: &str = "invalid_function_call";

/// Wraps a provider so that tools are offered through the prompt.
pub struct PromptTools {
    inner: Box<dyn Provider>,
    format: PromptToolFormat,
}

impl PromptTools {
    /// Prompt-based tool calling over `inner`, teaching `format`.
    pub fn new(inner: Box<dyn Provider>, format: PromptToolFormat) -> Self {
        Self { inner, format }
    }
}

/// The server and the tool's own name a spec stands for: its origin, or a
/// tool answered by Patchbay itself under its bare name.
fn server_and_tool(spec: &ToolSpec) -> (&str, &str) {
    spec.origin.as_ref().map_or((BUILTIN_SERVER, spec.name.as_str()), |o| (o.server.as_str(), o.tool.as_str()))
}

/// The system-prompt section that describes `tools` and the call syntax of `format`.
pub fn tools_prompt(tools: &[ToolSpec], format: PromptToolFormat) -> String {
    const AFTER: &str = "You may call several tools in one reply, one block each. After your calls, stop and \
         wait: the results arrive in the next message inside <function_result> blocks. Never write a \
         <function_result> yourself and never guess a result. When no tool is needed, answer directly.";
    let describe = |prompt: &mut String, name: &str, tool: &ToolSpec| {
        prompt.push_str(&format!(
            "\n- `{name}`: {}\n  Parameters (JSON Schema): {}\n",
            tool.description.trim(),
            tool.input_schema
        ));
    };
    match format {
        PromptToolFormat::FunctionCall => {
            let mut prompt = format!(
                "## Tools\n\n\
                 You can call the tools listed below. To call one, write a block like this, with the \
                 arguments as a JSON object that matches the tool's parameters:\n\n\
                 {OPEN_TAG}{{\"name\": \"TOOL_NAME\", \"arguments\": {{\"ARGUMENT\": \"VALUE\"}}}}{CLOSE_TAG}\n\n\
                 {AFTER}\n\n### Available tools\n"
            );
            for tool in tools {
                describe(&mut prompt, &tool.name, tool);
            }
            prompt
        }
        PromptToolFormat::UseMcpTool => {
            let mut prompt = format!(
                "## Tools\n\n\
                 You can use the tools of the MCP servers listed below. To use one, write a block like \
                 this, naming the server and the tool exactly as listed, with the arguments as a JSON \
                 object that matches the tool's parameters:\n\n\
                 {OPEN_FENCE}\n{{\"type\": \"{USE_MCP_TOOL}\", \"server_name\": \"SERVER\", \"tool_name\": \"TOOL\", \
                 \"arguments\": {{\"ARGUMENT\": \"VALUE\"}}}}\n{CLOSE_FENCE}\n\n{AFTER}\n"
            );
            let mut servers: BTreeMap<&str, Vec<(&str, &ToolSpec)>> = BTreeMap::new();
            for tool in tools {
                let (server, name) = server_and_tool(tool);
                servers.entry(server).or_default().push((name, tool));
            }
            for (server, tools) in servers {
                prompt.push_str(&format!("\n### Server `{server}`\n"));
                for (name, tool) in tools {
                    describe(&mut prompt, name, tool);
                }
            }
            prompt
        }
    }
}

/// The request sent to the wrapped model: tools in the system prompt, earlier
/// calls (in the format taught) and results as text, no native tools.
pub fn rewrite_request(mut request: ChatRequest, format: PromptToolFormat) -> ChatRequest {
    let tools = std::mem::take(&mut request.tools);
    let origins: HashMap<&str, (&str, &str)> = tools.iter().map(|t| (t.name.as_str(), server_and_tool(t))).collect();
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    for message in request.messages {
        match message {
            ChatMessage::Assistant { mut text, reasoning, reasoning_signature, tool_calls } => {
                for call in tool_calls {
                    let arguments = serde_json::from_str::<Value>(&call.arguments)
                        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    match (format, origins.get(call.name.as_str())) {
                        (PromptToolFormat::UseMcpTool, Some((server, tool))) => {
                            let block = json!({"type": USE_MCP_TOOL, "server_name": server, "tool_name": tool, "arguments": arguments});
                            text.push_str(&format!("{OPEN_FENCE}\n{block}\n{CLOSE_FENCE}"));
                        }
                        // A tool no longer offered keeps the name it was called by.
                        _ => {
                            let block = json!({"name": call.name, "arguments": arguments});
                            text.push_str(&format!("{OPEN_TAG}{block}{CLOSE_TAG}"));
                        }
                    }
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
        let section = tools_prompt(&tools, format);
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
        let mut rewritten = rewrite_request(request, self.format);
        let tools = std::mem::take(&mut rewritten.tools);
        let inner = self.inner.stream(rewritten, cancel).await?;
        let mut parser = CallParser::new(&tools);
        let mut finished = false;
        let events = inner.flat_map(move |item| {
            let out: Vec<Result<StreamEvent, LlmError>> = match item {
                Ok(StreamEvent::TextDelta { text }) => parser.feed(&text).into_iter().map(Ok).collect(),
                Ok(StreamEvent::Finish { reason }) if !finished => {
                    finished = true;
                    let cut_off = reason == FinishReason::Length;
                    let mut out: Vec<_> = parser.finish(cut_off).into_iter().map(Ok).collect();
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
    /// Inside `<function_call>`.
    Tag,
    /// A ```` ```json ```` fence whose object may be a `use_mcp_tool` call: held until it closes.
    Fence,
    /// An ordinary code block: streamed as it comes, calls inside are text.
    Code,
}

/// Streaming parser of tool-call blocks in model text.
#[derive(Debug)]
pub struct CallParser {
    /// The offered tools' model-facing names, by the server and tool they stand for.
    by_origin: HashMap<(String, String), String>,
    state: State,
    buffer: String,
    calls: usize,
}

impl CallParser {
    /// A parser for a reply that may call `tools`.
    pub fn new(tools: &[ToolSpec]) -> Self {
        let by_origin = tools
            .iter()
            .map(|t| {
                let (server, tool) = server_and_tool(t);
                ((server.to_owned(), tool.to_owned()), t.name.clone())
            })
            .collect();
        Self { by_origin, state: State::Text, buffer: String::new(), calls: 0 }
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
                        (Some(t), Some(f)) if f < t => Some((f, State::Fence)),
                        (Some(t), _) => Some((t, State::Tag)),
                        (None, Some(f)) => Some((f, State::Fence)),
                        (None, None) => None,
                    };
                    let Some((at, state)) = next else {
                        let cut = self.buffer.len() - partial_marker_len(&self.buffer, &[OPEN_TAG, OPEN_FENCE]);
                        push_text(&mut out, &self.buffer[..cut]);
                        self.buffer.drain(..cut);
                        return out;
                    };
                    push_text(&mut out, &self.buffer[..at]);
                    // A tag is never text; a fence is kept whole until it is known to be one or the other.
                    let skip = if state == State::Tag { at + OPEN_TAG.len() } else { at };
                    self.buffer.drain(..skip);
                    self.state = state;
                }
                State::Tag => {
                    let Some(end) = close_at(&self.buffer, CLOSE_TAG) else { return out };
                    let body: String = self.buffer.drain(..end + CLOSE_TAG.len()).collect();
                    self.emit_call(&body[..end], &mut out);
                    self.state = State::Text;
                }
                State::Fence => match fence_kind(&self.buffer[OPEN_FENCE.len()..]) {
                    None => return out,
                    Some(false) => {
                        push_text(&mut out, OPEN_FENCE);
                        self.buffer.drain(..OPEN_FENCE.len());
                        self.state = State::Code;
                    }
                    Some(true) => {
                        let body = &self.buffer[OPEN_FENCE.len()..];
                        let Some(end) = close_at(body, CLOSE_FENCE) else { return out };
                        let block: String = self.buffer.drain(..OPEN_FENCE.len() + end + CLOSE_FENCE.len()).collect();
                        self.emit_fence(&block, &mut out);
                        self.state = State::Text;
                    }
                },
                State::Code => {
                    let Some(end) = self.buffer.find(CLOSE_FENCE) else {
                        let cut = self.buffer.len() - partial_marker_len(&self.buffer, &[CLOSE_FENCE]);
                        push_text(&mut out, &self.buffer[..cut]);
                        self.buffer.drain(..cut);
                        return out;
                    };
                    let block: String = self.buffer.drain(..end + CLOSE_FENCE.len()).collect();
                    push_text(&mut out, &block);
                    self.state = State::Text;
                }
            }
        }
    }

    /// The reply ended: flushes held text and an unclosed call. A reply `cut_off` at
    /// the output limit runs no unclosed call (its arguments may be cut short): it is text.
    pub fn finish(&mut self, cut_off: bool) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        let rest = std::mem::take(&mut self.buffer);
        let state = std::mem::replace(&mut self.state, State::Text);
        match state {
            State::Text | State::Code => push_text(&mut out, &rest),
            State::Fence if cut_off => push_text(&mut out, &rest),
            State::Tag if cut_off => push_text(&mut out, &format!("{OPEN_TAG}{rest}")),
            // The model stopped inside a call (often a stop sequence on the closing marker).
            State::Fence => self.emit_fence(&rest, &mut out),
            // A closing tag inside an unterminated string: the string was never meant to run on.
            State::Tag => match rest.find(CLOSE_TAG) {
                Some(end) => {
                    self.emit_call(&rest[..end], &mut out);
                    out.extend(self.feed(&rest[end + CLOSE_TAG.len()..]));
                    out.extend(self.finish(false));
                }
                None => self.emit_call(&rest, &mut out),
            },
        }
        out
    }

    fn emit_call(&mut self, body: &str, out: &mut Vec<StreamEvent>) {
        match repair_json(strip_fence(body)) {
            Some(value) if value.is_object() => self.emit_value(&value, out),
            _ => {
                let name = match (sniff(body, "server_name"), sniff(body, "tool_name")) {
                    (Some(server), Some(tool)) => self.resolve(&server, &tool),
                    _ => sniff(body, "name").unwrap_or_else(|| INVALID_CALL_NAME.to_owned()),
                };
                self.start(name, body.trim().to_owned(), out);
            }
        }
    }

    /// A whole ```` ```json ```` block (its closing fence may be missing): a call, or text.
    fn emit_fence(&mut self, block: &str, out: &mut Vec<StreamEvent>) {
        let body = block[OPEN_FENCE.len()..].strip_suffix(CLOSE_FENCE).unwrap_or(&block[OPEN_FENCE.len()..]);
        match repair_json(body) {
            Some(value) if is_use_mcp_tool(&value) => self.emit_value(&value, out),
            // Broken JSON that says it is a call: the model is told what is wrong.
            None if sniff(body, "type").as_deref() == Some(USE_MCP_TOOL) => self.emit_call(body, out),
            _ => push_text(out, block),
        }
    }

    fn emit_value(&mut self, value: &Value, out: &mut Vec<StreamEvent>) {
        let name = if is_use_mcp_tool(value) {
            let field = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or_default();
            self.resolve(field("server_name"), field("tool_name"))
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

    /// The offered tool `server` and `tool` name exactly; otherwise `server/tool`,
    /// a name no tool has, which the turn answers with the tools there are.
    fn resolve(&self, server: &str, tool: &str) -> String {
        self.by_origin.get(&(server.to_owned(), tool.to_owned())).cloned().unwrap_or_else(|| format!("{server}/{tool}"))
    }

    fn start(&mut self, name: String, arguments: String, out: &mut Vec<StreamEvent>) {
        let index = self.calls;
        self.calls += 1;
        let id = format!("call_{}", uuid::Uuid::new_v4().simple());
        out.push(StreamEvent::ToolCallStart { index, id, name });
        out.push(StreamEvent::ToolCallDelta { index, arguments });
    }
}

fn is_use_mcp_tool(value: &Value) -> bool {
    let has = |k: &str| value.get(k).is_some_and(Value::is_string);
    value.get("type").and_then(Value::as_str) == Some(USE_MCP_TOOL)
        || (value.get("type").is_none() && has("server_name") && has("tool_name"))
}

/// Whether the text after a ```` ```json ```` opener may be a call (`Some(true)`),
/// is ordinary code (`Some(false)`), or cannot tell yet: a call is an object
/// whose first key is one a call block has.
fn fence_kind(after: &str) -> Option<bool> {
    let rest = after.trim_start();
    let Some(rest) = rest.strip_prefix('{') else { return (!rest.is_empty()).then_some(false) };
    let rest = rest.trim_start();
    let Some(key) = rest.strip_prefix('"') else { return (!rest.is_empty()).then_some(false) };
    match key.find('"') {
        Some(end) => Some(CALL_KEYS.contains(&&key[..end])),
        // No key is longer than the longest call key: a longer one is code already.
        None if key.len() > CALL_KEYS.iter().map(|k| k.len()).max().unwrap_or(0) => Some(false),
        None => None,
    }
}

/// Whether a scan of JSON text is inside a string, one character at a time.
#[derive(Default)]
struct Strings {
    inside: bool,
    escaped: bool,
}

impl Strings {
    /// Takes `c` when it is part of the string the scan is in (its closing quote too).
    fn take(&mut self, c: char) -> bool {
        if !self.inside {
            return false;
        }
        if self.escaped {
            self.escaped = false;
        } else if c == '\\' {
            self.escaped = true;
        } else if c == '"' {
            self.inside = false;
        }
        true
    }
}

/// Where `marker` first appears outside the JSON strings of `text` (strings
/// count only inside brackets, so stray quotes in prose do not hide it).
fn close_at(text: &str, marker: &str) -> Option<usize> {
    let (mut depth, mut strings) = (0usize, Strings::default());
    for (i, c) in text.char_indices() {
        if strings.take(c) {
            continue;
        }
        match c {
            '"' if depth > 0 => strings.inside = true,
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            _ if text[i..].starts_with(marker) => return Some(i),
            _ => {}
        }
    }
    None
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

/// Length of the longest suffix of `text` that could begin one of `markers`.
fn partial_marker_len(text: &str, markers: &[&str]) -> usize {
    markers
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

/// The string value of `"key": "..."` in a broken call, when it can be read.
fn sniff(body: &str, key: &str) -> Option<String> {
    let quoted = format!("\"{key}\"");
    let after = &body[body.find(&quoted)? + quoted.len()..];
    let after = after.trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let value = &after[..after.find('"')?];
    (!value.is_empty()).then(|| value.to_owned())
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
    let mut strings = Strings::default();
    for c in text.chars() {
        if strings.take(c) {
            out.push(c);
            continue;
        }
        match c {
            '"' => strings.inside = true,
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
    if strings.inside {
        if strings.escaped {
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

    fn spec(name: &str, origin: Option<(&str, &str)>) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: format!("Does {name}."),
            input_schema: json!({"type": "object"}),
            origin: origin.map(|(server, tool)| super::super::ToolOrigin { server: server.into(), tool: tool.into() }),
        }
    }

    fn tools() -> Vec<ToolSpec> {
        vec![
            spec("files__write", Some(("files", "write"))),
            spec("files2__write", Some(("files2", "write"))),
            // A name hashed to fit the provider's rules stands for a tool all the same.
            spec("my_server_do_it_3fa2", Some(("my server", "do it"))),
            spec("fetch", None),
        ]
    }

    /// Runs the parser over `chunks` and returns (text, [(name, args)]).
    fn run(chunks: &[&str]) -> (String, Vec<(String, String)>) {
        let mut parser = CallParser::new(&tools());
        let mut events = Vec::new();
        for c in chunks {
            events.extend(parser.feed(c));
        }
        events.extend(parser.finish(false));
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
    fn a_call_cut_off_at_the_output_limit_runs_not_and_is_text() {
        for reply in [
            "ok <function_call>{\"name\": \"files__write\", \"arguments\": {\"content\": \"half a fi",
            "ok ```json\n{\"type\": \"use_mcp_tool\", \"server_name\": \"files\", \"tool_name\": \"write\", \"arguments\": {\"content\": \"half",
        ] {
            let mut parser = CallParser::new(&tools());
            let mut events = parser.feed(reply);
            events.extend(parser.finish(true));
            let text: String =
                events
                    .iter()
                    .map(|e| {
                        if let StreamEvent::TextDelta { text } = e {
                            text.as_str()
                        } else {
                            panic!("a call ran: {e:?}")
                        }
                    })
                    .collect();
            assert_eq!(text, reply);
        }
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

    #[test]
    fn a_closing_marker_inside_a_string_does_not_end_the_call() {
        let (text, calls) = run(&[
            "<function_call>{\"name\": \"fetch\", \"arguments\": {\"q\": \"say </function_call> and ``` \\\" }\"}}</function_call> after",
        ]);
        assert_eq!(text, " after");
        assert_eq!(calls, vec![("fetch".to_owned(), r#"{"q":"say </function_call> and ``` \" }"}"#.to_owned())]);
        let block = "```json\n{\"type\": \"use_mcp_tool\", \"server_name\": \"files\", \"tool_name\": \"write\", \
                     \"arguments\": {\"content\": \"a ``` b\"}}\n```";
        let (text, calls) = run(&[block, " then"]);
        assert_eq!(text, " then");
        assert_eq!(calls, vec![("files__write".to_owned(), r#"{"content":"a ``` b"}"#.to_owned())]);
    }

    #[test]
    fn a_fenced_call_names_its_tool_exactly() {
        let call = |server: &str, tool: &str| {
            let block = format!(
                "```json\n{{\"server_name\": \"{server}\", \"tool_name\": \"{tool}\", \"arguments\": {{}}}}\n```"
            );
            run(&[&block]).1.into_iter().map(|(name, _)| name).collect::<Vec<_>>()
        };
        assert_eq!(call("files", "write"), ["files__write"]);
        assert_eq!(call("files2", "write"), ["files2__write"]);
        assert_eq!(call("my server", "do it"), ["my_server_do_it_3fa2"]);
        assert_eq!(call("builtin", "fetch"), ["fetch"]);
        // Near misses call nothing: the name given back is one no tool has.
        assert_eq!(call("files", "overwrite"), ["files/overwrite"]);
        assert_eq!(call("file", "write"), ["file/write"]);
        assert_eq!(call("files", "writ"), ["files/writ"]);
    }

    #[test]
    fn broken_fenced_calls_are_reported_and_broken_code_is_text() {
        let broken = "```json\n{\"type\": \"use_mcp_tool\", \"server_name\": \"files\", \"tool_name\": \"write\", \"arguments\": {path: 1}}\n```";
        let (text, calls) = run(&[broken]);
        assert_eq!(text, "");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].0, "files__write");
        assert!(calls[0].1.contains("{path: 1}"), "the raw text goes back to the model: {}", calls[0].1);
        let code = "```json\n{\"type\": \"object\", \"properties\": {}}\n``` is a schema";
        assert_eq!(run(&[code]), (code.to_owned(), Vec::new()));
    }

    #[test]
    fn ordinary_code_blocks_stream_as_they_come() {
        let mut parser = CallParser::new(&tools());
        let text = |events: Vec<StreamEvent>| -> String {
            events
                .into_iter()
                .map(|e| if let StreamEvent::TextDelta { text } = e { text } else { panic!("{e:?}") })
                .collect()
        };
        assert_eq!(text(parser.feed("Here:\n```json\n{\"a\"")), "Here:\n```json\n{\"a\"");
        assert_eq!(text(parser.feed(": 1, \"b\": \"<function_call>\"}\n`")), ": 1, \"b\": \"<function_call>\"}\n");
        assert_eq!(text(parser.feed("``\n```json\n[1")), "```\n```json\n[1");
        // A fence that may still be a call is held.
        assert_eq!(text(parser.feed("]\n```\n```json\n{ \"tool_na")), "]\n```\n");
        assert_eq!(text(parser.finish(false)), "```json\n{ \"tool_na");
    }

    #[test]
    fn the_fence_format_lists_tools_by_server_and_writes_earlier_calls_as_blocks() {
        let prompt = tools_prompt(&tools(), PromptToolFormat::UseMcpTool);
        assert!(prompt.contains("\"type\": \"use_mcp_tool\""), "{prompt}");
        let files = prompt.find("### Server `files`").unwrap();
        let my = prompt.find("### Server `my server`").unwrap();
        assert!(prompt[files..my].contains("- `write`: Does files__write."), "{prompt}");
        assert!(prompt[my..].contains("- `do it`: Does my_server_do_it_3fa2."), "{prompt}");
        assert!(prompt.contains("### Server `builtin`\n\n- `fetch`"), "{prompt}");
        assert!(!prompt.contains("<function_call>{"), "one format is taught: {prompt}");

        let request = ChatRequest {
            model: "m".into(),
            messages: vec![ChatMessage::Assistant {
                text: "Writing.".into(),
                reasoning: None,
                reasoning_signature: None,
                tool_calls: vec![super::super::ToolCall {
                    id: "c1".into(),
                    name: "my_server_do_it_3fa2".into(),
                    arguments: "{\"x\":1}".into(),
                    signature: None,
                }],
            }],
            tools: tools(),
            sampling: Default::default(),
        };
        let rewritten = rewrite_request(request.clone(), PromptToolFormat::UseMcpTool);
        let ChatMessage::Assistant { text, .. } = &rewritten.messages[1] else { panic!("{:?}", rewritten.messages) };
        let (_, calls) = run(&[text]);
        assert_eq!(calls, vec![("my_server_do_it_3fa2".to_owned(), "{\"x\":1}".to_owned())], "{text}");
        assert!(text.contains("\"server_name\":\"my server\""), "{text}");
        let rewritten = rewrite_request(request, PromptToolFormat::FunctionCall);
        let ChatMessage::Assistant { text, .. } = &rewritten.messages[1] else { panic!() };
        assert!(text.starts_with("Writing.\n<function_call>{"), "{text}");
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
