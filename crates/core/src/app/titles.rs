//! Conversation titles written by the model. A new conversation is named
//! after its first question at once; when its first answer is complete, the
//! same model is asked for a short title in the question's language, as in
//! Jan or Cherry Studio (Settings → General can turn this off). The title
//! replaces the question only while the conversation still carries it: a title
//! the user typed meanwhile is kept, and a failed or empty answer leaves the
//! question.

use std::time::Duration;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::llm::{ChatMessage, ChatRequest, ContentPart, LlmError, Provider, Sampling, StreamEvent};

/// What the model is asked.
const PROMPT: &str = "Write a title for the conversation below: at most six words, in the language of \
the question. Reply with the title only, without quotes, Markdown or a final full stop.";

/// How much of the question and of the answer the model reads, in characters.
const EXCERPT: usize = 1_000;

/// The longest title kept, in characters.
const MAX_TITLE: usize = 80;

/// How long the model may take.
pub(super) const TIMEOUT: Duration = Duration::from_secs(30);

/// Asks `model` for a title of the exchange; `None` when its answer holds no usable title.
pub(super) async fn ask(
    provider: &dyn Provider,
    model: &str,
    question: &str,
    answer: &str,
    ct: &CancellationToken,
) -> Result<Option<String>, LlmError> {
    let exchange = format!("Question:\n{}\n\nAnswer:\n{}", excerpt(question), excerpt(answer));
    let request = ChatRequest {
        model: model.to_owned(),
        messages: vec![
            ChatMessage::System { text: PROMPT.to_owned() },
            ChatMessage::User { parts: vec![ContentPart::text(exchange)] },
        ],
        tools: Vec::new(),
        sampling: Sampling {
            temperature: Some(0.3),
            // Room for a reasoning model's preamble as well as the title.
            max_tokens: Some(400),
            ..Sampling::default()
        },
    };
    let mut stream = provider.stream(request, ct.clone()).await?;
    let mut text = String::new();
    loop {
        let event = tokio::select! {
            () = ct.cancelled() => return Err(LlmError::Cancelled),
            event = stream.next() => event,
        };
        match event {
            None | Some(Ok(StreamEvent::Finish { .. })) => break,
            Some(Ok(StreamEvent::TextDelta { text: delta })) => text.push_str(&delta),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e),
        }
    }
    Ok(clean(&text))
}

fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The title in a model's reply: reasoning in `<think>` tags, a `Title:` label,
/// Markdown marks, quotes and a final full stop taken off; the first line only.
fn clean(reply: &str) -> Option<String> {
    let mut text = reply.to_owned();
    while let Some(start) = text.find("<think>") {
        let end = text[start..].find("</think>").map_or(text.len(), |e| start + e + "</think>".len());
        text.replace_range(start..end, "");
    }
    let marks: &[char] = &['#', '*', '_', '`', '"', '\'', '“', '”', '「', '」', '《', '》', ' '];
    let line = text.lines().map(|l| l.trim_matches(marks)).find(|l| !l.is_empty())?;
    let line = ["Title:", "title:", "标题：", "标题:"].iter().fold(line, |l, label| l.strip_prefix(label).unwrap_or(l));
    let line = line.trim_matches(marks).trim_end_matches(['.', '。']).trim_matches(marks);
    if line.is_empty() {
        return None;
    }
    Some(match line.char_indices().nth(MAX_TITLE) {
        Some((cut, _)) => format!("{}…", line[..cut].trim_end()),
        None => line.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn a_reply_is_cut_down_to_its_title() {
        assert_eq!(clean("Tidal bulges explained").as_deref(), Some("Tidal bulges explained"));
        assert_eq!(clean("\"Why the Moon Makes Two Tides.\"\n").as_deref(), Some("Why the Moon Makes Two Tides"));
        assert_eq!(clean("**Title:** Rust error handling").as_deref(), Some("Rust error handling"));
        assert_eq!(clean("<think>The user asks about tides…</think>\n\n# Tides").as_deref(), Some("Tides"));
        assert_eq!(clean("《潮汐的成因》。").as_deref(), Some("潮汐的成因"));
        assert_eq!(clean("标题：月球与潮汐").as_deref(), Some("月球与潮汐"));
        assert_eq!(clean("First line\nsecond line").as_deref(), Some("First line"));
        assert_eq!(clean("  \n \"\" \n"), None);
        assert_eq!(clean("<think>never closed"), None);
        let long = "word ".repeat(40);
        let cut = clean(&long).unwrap();
        assert!(cut.ends_with('…') && cut.chars().count() <= 81, "{cut}");
    }
}
