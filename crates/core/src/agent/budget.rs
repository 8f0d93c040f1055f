//! Context budget: counting tokens per model, and trimming history to fit.
//!
//! OpenAI's models get their real tokenizer ([`Tiktoken`], BPE ranks compiled in and built once);
//! every other model, whose tokenizer Patchbay does not ship, gets the conservative [`Estimate`],
//! which over-counts on purpose so that what fits by it fits the real one. [`counter_for`] picks by
//! model name. When a request would not fit, [`fit`] first replaces older tool results with a note,
//! then leaves out whole older turns, oldest first; the system prompt, the current message and the
//! latest tool round are never touched.

use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};

use crate::llm::{ChatMessage, ContentPart, ToolSpec};

/// What replaces an elided tool result.
pub(crate) const ELIDED: &str = "[older tool result left out to fit the context window]";

/// Framing tokens per message (role, separators); OpenAI's chat format uses 3 to 4.
const PER_MESSAGE: u32 = 4;
/// A flat cost per image or audio part.
pub(crate) const PER_IMAGE: u32 = 1_000;

/// Counts the tokens of a text for one family of models.
pub trait TokenCounter: Send + Sync + std::fmt::Debug {
    /// Tokens of `text`.
    fn count(&self, text: &str) -> u32;
}

/// The conservative estimate, for models whose tokenizer is not known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Estimate;

impl TokenCounter for Estimate {
    fn count(&self, text: &str) -> u32 {
        estimate_text(text)
    }
}

/// An OpenAI tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tiktoken {
    /// gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1/o3/o4, gpt-oss.
    O200kBase,
    /// gpt-4, gpt-3.5-turbo.
    Cl100kBase,
}

impl TokenCounter for Tiktoken {
    fn count(&self, text: &str) -> u32 {
        // The singletons build the BPE on first use (tens of milliseconds) and keep it.
        let bpe = match self {
            Self::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Self::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        u32::try_from(bpe.count_ordinary(text)).unwrap_or(u32::MAX)
    }
}

/// The counter for `model`: OpenAI's tokenizer when the name is one of its
/// models (also behind a router prefix such as `openai/gpt-4o`), otherwise
/// the conservative estimate.
pub fn counter_for(model: &str) -> &'static dyn TokenCounter {
    let name = model.trim().to_ascii_lowercase();
    let name = name.rsplit('/').next().unwrap_or(&name);
    match get_tokenizer(name) {
        Some(Tokenizer::O200kBase | Tokenizer::O200kHarmony) => &Tiktoken::O200kBase,
        Some(Tokenizer::Cl100kBase) => &Tiktoken::Cl100kBase,
        _ => &Estimate,
    }
}

/// The conservative estimate of a text's tokens.
pub fn estimate_text(text: &str) -> u32 {
    let (ascii, other) =
        text.chars().fold((0u32, 0u32), |(a, o), c| if c.is_ascii() { (a + 1, o) } else { (a, o + 1) });
    ascii.div_ceil(3) + (other * 3).div_ceil(2)
}

fn count_parts(parts: &[ContentPart], counter: &dyn TokenCounter) -> u32 {
    parts
        .iter()
        .map(|p| match p {
            ContentPart::Text { text } => counter.count(text),
            ContentPart::Image { .. } | ContentPart::Audio { .. } => PER_IMAGE,
            ContentPart::ResourceLink { uri, name, .. } => {
                counter.count(uri) + name.as_deref().map_or(0, |n| counter.count(n))
            }
        })
        .sum()
}

/// Tokens of one message.
pub fn count_message(m: &ChatMessage, counter: &dyn TokenCounter) -> u32 {
    PER_MESSAGE
        + match m {
            ChatMessage::System { text } => counter.count(text),
            ChatMessage::User { parts } => count_parts(parts, counter),
            ChatMessage::Assistant { text, reasoning, tool_calls, .. } => {
                counter.count(text)
                    + reasoning.as_deref().map_or(0, |r| counter.count(r))
                    + tool_calls.iter().map(|c| counter.count(&c.name) + counter.count(&c.arguments)).sum::<u32>()
            }
            ChatMessage::Tool { name, parts, .. } => counter.count(name) + count_parts(parts, counter),
        }
}

/// Tokens of the tool definitions.
pub fn count_tools(tools: &[ToolSpec], counter: &dyn TokenCounter) -> u32 {
    tools
        .iter()
        .map(|t| counter.count(&t.name) + counter.count(&t.description) + counter.count(&t.input_schema.to_string()))
        .sum()
}

/// What [`fit`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trim {
    pub elided_tool_results: usize,
    pub dropped_messages: usize,
    pub estimated_tokens: u32,
}

/// What a request takes after [`fit`]: its tokens, and what was left out (`None` when nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fitted {
    pub tokens: u32,
    pub trim: Option<Trim>,
}

/// Shortens `messages` until their count by `counter` is at most `budget`.
pub(crate) fn fit(
    messages: &mut Vec<ChatMessage>,
    tools: &[ToolSpec],
    budget: u32,
    counter: &dyn TokenCounter,
) -> Fitted {
    let total =
        |m: &[ChatMessage]| count_tools(tools, counter) + m.iter().map(|m| count_message(m, counter)).sum::<u32>();
    let mut estimate = total(messages);
    if estimate <= budget {
        return Fitted { tokens: estimate, trim: None };
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
            let before = count_parts(parts, counter);
            *parts = vec![ContentPart::text(ELIDED)];
            estimate = estimate - before + counter.count(ELIDED);
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
        estimate -= dropped.iter().map(|m| count_message(m, counter)).sum::<u32>();
        trim.dropped_messages += dropped.len();
    }
    trim.estimated_tokens = estimate;
    Fitted { tokens: estimate, trim: Some(trim) }
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
            reasoning_signature: None,
            tool_calls: vec![ToolCall { id: id.into(), name: "t".into(), arguments: "{}".into(), signature: None }],
        }
    }

    fn tool(id: &str, size: usize) -> ChatMessage {
        tool_text(id, &"x".repeat(size))
    }

    fn tool_text(id: &str, text: &str) -> ChatMessage {
        ChatMessage::Tool {
            call_id: id.into(),
            name: "t".into(),
            parts: vec![ContentPart::text(text)],
            is_error: false,
        }
    }

    fn answer(text: &str) -> ChatMessage {
        ChatMessage::Assistant { text: text.into(), reasoning: None, reasoning_signature: None, tool_calls: Vec::new() }
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
        assert_eq!(fit(&mut m, &[], 1_000, &Estimate).trim, None);
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
        let trim = fit(&mut m, &[], 1_100, &Estimate).trim.unwrap();
        assert_eq!((trim.elided_tool_results, trim.dropped_messages), (1, 0));
        assert!(matches!(&m[3], ChatMessage::Tool { parts, .. } if parts == &[ContentPart::text(ELIDED)]));
        assert!(matches!(&m[7], ChatMessage::Tool { parts, .. } if parts != &[ContentPart::text(ELIDED)]));
        assert!(trim.estimated_tokens <= 1_100);

        // Tighter: the whole first turn goes too, the system prompt and the current turn stay.
        let mut m = history;
        let trim = fit(&mut m, &[], 1_030, &Estimate).trim.unwrap();
        assert_eq!((trim.elided_tool_results, trim.dropped_messages), (1, 4));
        assert!(matches!(&m[0], ChatMessage::System { .. }));
        assert_eq!(m[1], user("second question"));
        assert_eq!(m.len(), 4);
    }

    /// Expected counts from OpenAI's Python `tiktoken` 0.14 (`len(enc.encode_ordinary(text))`),
    /// which checks the rank files' SHA-256 before using them.
    const KNOWN: &[(&str, u32, u32)] = &[
        // (text, o200k_base, cl100k_base)
        ("hello world", 2, 2),
        ("Hello, world! How are you today?", 9, 9),
        ("北京天气怎么样？", 4, 9),
        ("The quick brown fox jumps over the lazy dog.", 10, 10),
        (r#"{"url": "http://127.0.0.1/page", "max_length": 5000}"#, 23, 23),
    ];

    #[test]
    fn openai_models_count_with_their_real_tokenizer() {
        for (text, o200k, cl100k) in KNOWN {
            assert_eq!(Tiktoken::O200kBase.count(text), *o200k, "o200k_base: {text}");
            assert_eq!(Tiktoken::Cl100kBase.count(text), *cl100k, "cl100k_base: {text}");
        }
        assert_eq!(Tiktoken::O200kBase.count(&"hello world ".repeat(1_000)), 2_001);
    }

    #[test]
    fn the_counter_follows_the_model_name() {
        for model in ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "o3-mini", "gpt-5", "openai/gpt-4o", "GPT-4o", "gpt-oss-20b"]
        {
            assert_eq!(counter_for(model).count("北京天气怎么样？"), 4, "{model}");
        }
        for model in ["gpt-4", "gpt-3.5-turbo", "gpt-4-turbo"] {
            assert_eq!(counter_for(model).count("北京天气怎么样？"), 9, "{model}");
        }
        for model in ["claude-sonnet-4", "gemini-2.5-pro", "deepseek-chat", "llama3.2", ""] {
            assert_eq!(counter_for(model).count("北京天气怎么样？"), estimate_text("北京天气怎么样？"), "{model}");
        }
    }

    #[test]
    fn trimming_uses_the_real_count() {
        // 12,000 ASCII bytes: 4,000 by the estimate, 2,001 by o200k_base.
        let history = vec![
            user("first question"),
            assistant_calling("a"),
            tool_text("a", &"hello world ".repeat(1_000)),
            answer("first answer"),
            user("second question"),
        ];
        let mut m = history.clone();
        assert_eq!(fit(&mut m, &[], 3_000, &Tiktoken::O200kBase).trim, None, "fits by the real count");
        let mut m = history;
        let trim = fit(&mut m, &[], 3_000, &Estimate).trim.expect("over by the estimate");
        assert_eq!(trim.elided_tool_results, 1);
    }
}
