//! Replies in the Anthropic Messages streaming format.

use serde_json::{Value, json};

use super::Reply;

/// One SSE frame with an event name.
pub fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// `message_start` with `input_tokens`.
pub fn message_start(input_tokens: u32) -> String {
    event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "scripted", "content": [],
            "stop_reason": null, "usage": {"input_tokens": input_tokens, "output_tokens": 1}
        }}),
    )
}

/// `content_block_start` for `block`.
pub fn block_start(index: u32, block: Value) -> String {
    event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": block}))
}

/// `content_block_delta` with `delta`.
pub fn block_delta(index: u32, delta: Value) -> String {
    event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": delta}))
}

/// `content_block_stop`.
pub fn block_stop(index: u32) -> String {
    event("content_block_stop", json!({"type": "content_block_stop", "index": index}))
}

/// `message_delta` with the stop reason and output tokens, then `message_stop`.
pub fn message_end(stop_reason: &str, output_tokens: u32) -> Vec<String> {
    vec![
        event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                   "usage": {"output_tokens": output_tokens}}),
        ),
        event("message_stop", json!({"type": "message_stop"})),
    ]
}

/// A complete text answer streamed in `parts`.
pub fn text_reply(parts: &[&str]) -> Reply {
    let mut frames = vec![message_start(12), block_start(0, json!({"type": "text", "text": ""}))];
    frames.extend(parts.iter().map(|p| block_delta(0, json!({"type": "text_delta", "text": p}))));
    frames.push(block_stop(0));
    frames.extend(message_end("end_turn", parts.len() as u32));
    Reply::stream(frames)
}

/// Thinking, then tool calls `(id, name, input_json pieces)`, one block each.
pub fn tool_reply(thinking: &str, calls: &[(&str, &str, &[&str])]) -> Reply {
    let mut frames = vec![message_start(30), block_start(0, json!({"type": "thinking", "thinking": ""}))];
    frames.push(block_delta(0, json!({"type": "thinking_delta", "thinking": thinking})));
    frames.push(block_delta(0, json!({"type": "signature_delta", "signature": "sig"})));
    frames.push(block_stop(0));
    for (i, (id, name, pieces)) in calls.iter().enumerate() {
        let index = i as u32 + 1;
        frames.push(block_start(index, json!({"type": "tool_use", "id": id, "name": name, "input": {}})));
        for piece in *pieces {
            frames.push(block_delta(index, json!({"type": "input_json_delta", "partial_json": piece})));
        }
        frames.push(block_stop(index));
    }
    frames.extend(message_end("tool_use", 9));
    Reply::stream(frames)
}
