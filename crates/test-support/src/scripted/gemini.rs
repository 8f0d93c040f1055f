//! Replies in the Gemini `streamGenerateContent?alt=sse` format.

use serde_json::{Value, json};

use super::Reply;

/// One SSE `data:` frame.
pub fn data(value: Value) -> String {
    format!("data: {value}\r\n\r\n")
}

/// A chunk with `parts` from the model and, when given, a finish reason and usage.
pub fn chunk(parts: Value, finish: Option<&str>) -> String {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut body = json!({"modelVersion": "scripted"});
    if let Some(reason) = finish {
        candidate["finishReason"] = json!(reason);
        body["usageMetadata"] = json!({"promptTokenCount": 11, "candidatesTokenCount": 5, "totalTokenCount": 16});
    }
    body["candidates"] = json!([candidate]);
    data(body)
}

/// A complete text answer streamed in `parts` (the last chunk carries `STOP`).
pub fn text_reply(parts: &[&str]) -> Reply {
    let mut frames: Vec<String> = parts.iter().map(|p| chunk(json!([{"text": p}]), None)).collect();
    frames.push(chunk(json!([{"text": ""}]), Some("STOP")));
    Reply::stream(frames)
}

/// A thought, then function calls `(name, args)` in one chunk.
pub fn function_calls_reply(thought: &str, calls: &[(&str, Value)]) -> Reply {
    let parts: Vec<Value> =
        calls.iter().map(|(name, args)| json!({"functionCall": {"name": name, "args": args}})).collect();
    Reply::stream(vec![
        chunk(json!([{"text": thought, "thought": true}]), None),
        chunk(Value::Array(parts), Some("STOP")),
    ])
}

/// One function call whose part carries a `thoughtSignature`, as Gemini's
/// thinking models send it (the signature must come back on that part).
pub fn signed_function_call_reply(name: &str, args: Value, signature: &str) -> Reply {
    Reply::stream(vec![chunk(
        json!([{"functionCall": {"name": name, "args": args}, "thoughtSignature": signature}]),
        Some("STOP"),
    )])
}
