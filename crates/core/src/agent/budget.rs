//! Context budget: a conservative token estimate, and trimming history to fit.
//!
//! The estimate over-counts on purpose (an ASCII token per three bytes, one
//! and a half per other character, a flat cost per image), so a request that
//! fits by the estimate fits the real tokenizer. When a request would not fit,
//! [`fit`] first replaces older tool results with a short note (they are the
//! bulk of most histories and the least needed later), then leaves out whole
//! older turns, oldest first. The system prompt, the current user message and
//! the latest tool round are never touched.

use crate::llm::{ChatMessage, ContentPart, ToolSpec};

/// What replaces an elided tool result.
pub(crate) const ELIDED: &str = "[older tool result left out to fit the context window]";

const PER_MESSAGE: u32 = 4;
const PER_IMAGE: u32 = 1_000;

/// Estimated tokens of a text.
pub fn estimate_text(text: &str) -> u32 {
    let (ascii, other) =
        text.chars().fold((0u32, 0u32), |(a, o), c| if c.is_ascii() { (a + 1, o) } else { (a, o + 1) });
    ascii.div_ceil(3) + (other * 3).div_ceil(2)
}

fn estimate_parts(parts: &[ContentPart]) -> u32 {
    parts
        .iter()
        .map(|p| match p {
            ContentPart::Text { text } => estimate_text(text),
            ContentPart::Image { .. } | ContentPart::Audio { .. } => PER_IMAGE,
            ContentPart::ResourceLink { uri, name, .. } => {
                estimate_text(uri) + name.as_deref().map_or(0, estimate_text)
            }
        })
        .sum()
}

/// Estimated tokens of one message.
pub fn estimate_message(m: &ChatMessage) -> u32 {
    PER_MESSAGE
        + match m {
            ChatMessage::System { text } => estimate_text(text),
            ChatMessage::User { parts } => estimate_parts(parts),
            ChatMessage::Assistant { text, reasoning, tool_calls } => {
                estimate_text(text)
                    + reasoning.as_deref().map_or(0, estimate_text)
                    + tool_calls.iter().map(|c| estimate_text(&c.name) + estimate_text(&c.arguments)).sum::<u32>()
            }
            ChatMessage::Tool { name, parts, .. } => estimate_text(name) + estimate_parts(parts),
        }
}

/// Estimated tokens of the tool definitions.
pub fn estimate_tools(tools: &[ToolSpec]) -> u32 {
    tools
        .iter()
        .map(|t| estimate_text(&t.name) + estimate_text(&t.description) + estimate_text(&t.input_schema.to_string()))
        .sum()
}

/// What [`fit`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trim {
    pub elided_tool_results: usize,
    pub dropped_messages: usize,
    pub estimated_tokens: u32,
}

/// Shortens `messages` until the estimate is at most `budget`. `None` when
/// nothing had to change.
pub(crate) fn fit(messages: &mut Vec<ChatMessage>, tools: &[ToolSpec], budget: u32) -> Option<Trim> {
    let total = |m: &[ChatMessage]| estimate_tools(tools) + m.iter().map(estimate_message).sum::<u32>();
    let mut estimate = total(messages);
    if estimate <= budget {
        return None;
    }
    let mut trim = Trim { elided_tool_results: 0, dropped_messages: 0, estimated_tokens: estimate };

    // 1. Older tool results, oldest first; the latest round's results stay.
    let latest_round = messages.iter().rposition(|m| !matches!(m, ChatMessage::Tool { .. })).map_or(0, |i| i + 1);
    for message in &mut messages[..latest_round] {
        if estimate <= budget {
            break;
        }
        if let ChatMessage::Tool { parts, .. } = message {
            if matches!(parts.as_slice(), [ContentPart::Text { text }] if text == ELIDED) {
                continue;
            }
            let before = estimate_parts(parts);
            *parts = vec![ContentPart::text(ELIDED)];
            estimate = estimate - before + estimate_text(ELIDED);
            trim.elided_tool_results += 1;
        }
    }

    // 2. Whole older turns (a user message up to the next one), oldest first.
    let first = usize::from(matches!(messages.first(), Some(ChatMessage::System { .. })));
    while estimate > budget {
        let current = messages.iter().rposition(|m| matches!(m, ChatMessage::User { .. })).unwrap_or(0);
        if current <= first {
            break;
        }
        let end = messages[first + 1..current]
            .iter()
            .position(|m| matches!(m, ChatMessage::User { .. }))
            .map_or(current, |p| p + first + 1);
        let dropped: Vec<ChatMessage> = messages.drain(first..end).collect();
        estimate -= dropped.iter().map(estimate_message).sum::<u32>();
        trim.dropped_messages += dropped.len();
    }
    trim.estimated_tokens = estimate;
    Some(trim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;

    fn user(text: &str) -> ChatMessage {
        ChatMessage::User { parts: vec![ContentPart::text(text)] }
    }

    fn assistant_calling(id: &str) -> ChatMessage {
        ChatMessage::Assistant {
            text: String::new(),
            reasoning: None,
            tool_calls: vec![ToolCall { id: id.into(), name: "t".into(), arguments: "{}".into() }],
        }
    }

    fn tool(id: &str, size: usize) -> ChatMessage {
        ChatMessage::Tool {
            call_id: id.into(),
            name: "t".into(),
            parts: vec![ContentPart::text("x".repeat(size))],
            is_error: false,
        }
    }

    fn answer(text: &str) -> ChatMessage {
        ChatMessage::Assistant { text: text.into(), reasoning: None, tool_calls: Vec::new() }
    }

    #[test]
    fn estimates_are_conservative_for_cjk_and_ascii() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(estimate_text("hello world!"), 4);
        assert_eq!(estimate_text("北京天气"), 6);
    }

    #[test]
    fn a_fitting_history_is_left_alone() {
        let mut m = vec![ChatMessage::System { text: "s".into() }, user("hi")];
        assert_eq!(fit(&mut m, &[], 1_000), None);
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn older_tool_results_go_first_then_older_turns() {
        let history = vec![
            ChatMessage::System { text: "system".into() },
            user("first question"),
            assistant_calling("a"),
            tool("a", 3_000),
            answer("first answer"),
            user("second question"),
            assistant_calling("b"),
            tool("b", 3_000),
        ];
        // Room for one big tool result: only the older one is elided.
        let mut m = history.clone();
        let trim = fit(&mut m, &[], 1_100).unwrap();
        assert_eq!((trim.elided_tool_results, trim.dropped_messages), (1, 0));
        assert!(matches!(&m[3], ChatMessage::Tool { parts, .. } if parts == &[ContentPart::text(ELIDED)]));
        assert!(matches!(&m[7], ChatMessage::Tool { parts, .. } if parts != &[ContentPart::text(ELIDED)]));
        assert!(trim.estimated_tokens <= 1_100);

        // Tighter: the whole first turn goes too, the system prompt and the current turn stay.
        let mut m = history;
        let trim = fit(&mut m, &[], 1_030).unwrap();
        assert_eq!((trim.elided_tool_results, trim.dropped_messages), (1, 4));
        assert!(matches!(&m[0], ChatMessage::System { .. }));
        assert_eq!(m[1], user("second question"));
        assert_eq!(m.len(), 4);
    }
}
