//! Replies in the OpenAI chat-completions streaming format.

use serde_json::{Value, json};

use super::Reply;

/// One SSE `data:` frame.
pub fn data(value: Value) -> String {
    format!("data: {value}\n\n")
}

/// The terminating `data: [DONE]` frame.
pub fn done() -> String {
    "data: [DONE]\n\n".to_owned()
}

/// A chunk whose first choice carries `delta`.
pub fn delta(delta: Value) -> String {
    data(json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": null}]
    }))
}

/// A chunk with an empty delta and `reason` as finish reason.
pub fn finish(reason: &str) -> String {
    data(json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
        "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]
    }))
}

/// The usage chunk sent when `stream_options.include_usage` is set.
pub fn usage(prompt: u32, completion: u32) -> String {
    data(json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
        "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    }))
}

/// A complete text answer streamed in `parts`, with usage and `[DONE]`.
pub fn text_reply(parts: &[&str]) -> Reply {
    let mut frames = vec![delta(json!({"role": "assistant", "content": ""}))];
    frames.extend(parts.iter().map(|p| delta(json!({"content": p}))));
    frames.extend([finish("stop"), usage(10, parts.len() as u32), done()]);
    Reply::stream(frames)
}

/// Parallel tool calls `(id, name, argument pieces)`: all calls start, then
/// their argument pieces arrive interleaved (first piece of each, then the
/// second of each, ...), then `finish_reason: tool_calls`, usage and `[DONE]`.
pub fn tool_calls_reply(calls: &[(&str, &str, &[&str])]) -> Reply {
    let mut frames = vec![delta(json!({"role": "assistant", "content": null}))];
    for (index, (id, name, _)) in calls.iter().enumerate() {
        frames.push(delta(json!({"tool_calls": [{
            "index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}
        }]})));
    }
    let longest = calls.iter().map(|c| c.2.len()).max().unwrap_or(0);
    for round in 0..longest {
        for (index, (_, _, pieces)) in calls.iter().enumerate() {
            if let Some(piece) = pieces.get(round) {
                frames.push(delta(json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})));
            }
        }
    }
    frames.extend([finish("tool_calls"), usage(20, 7), done()]);
    Reply::stream(frames)
}
