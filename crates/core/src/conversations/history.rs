//! The model-facing history: the stored messages of a branch as chat messages.

use std::collections::HashMap;

use super::tree::path_to;
use super::{Attachment, ConversationError, ConversationId, ConversationStore, Message, MessageId, Part, Role};
use crate::llm::{ChatMessage, ContentPart, ToolCall};

impl ConversationStore {
    /// The messages from the root to `leaf` (inclusive) as the model sees them.
    pub fn history(&self, id: ConversationId, leaf: Option<MessageId>) -> Result<Vec<ChatMessage>, ConversationError> {
        let Some(leaf) = leaf else { return Ok(Vec::new()) };
        let all = self.load_messages(id, None)?;
        if !all.iter().any(|m| m.id == leaf) {
            return Err(ConversationError::MessageNotFound { conversation: id, id: leaf });
        }
        let by_id: HashMap<MessageId, &Message> = all.iter().map(|m| (m.id, m)).collect();
        let parents: HashMap<MessageId, Option<MessageId>> = all.iter().map(|m| (m.id, m.parent_id)).collect();
        let mut out = Vec::new();
        for mid in path_to(&parents, leaf) {
            if let Some(m) = by_id.get(&mid) {
                to_chat_messages(m, &mut out);
            }
        }
        Ok(out)
    }
}

/// Appends the model-facing form of one stored message.
fn to_chat_messages(m: &Message, out: &mut Vec<ChatMessage>) {
    match m.role {
        Role::User => {
            let mut parts = vec![ContentPart::text(m.text.clone())];
            parts.extend(m.attachments.iter().map(Attachment::to_part));
            out.push(ChatMessage::User { parts });
        }
        Role::Assistant => {
            let rounds = m.parts.iter().map(part_round).max().map_or(0, |r| r + 1);
            for round in 0..rounds {
                let mut text = String::new();
                let mut reasoning = String::new();
                let mut calls = Vec::new();
                for part in m.parts.iter().filter(|p| part_round(p) == round) {
                    match part {
                        Part::Text { text: t, .. } => text.push_str(t),
                        Part::Reasoning { text: t, .. } => reasoning.push_str(t),
                        Part::ToolCall { call, .. } => calls.push(call),
                    }
                }
                let tool_calls = calls
                    .iter()
                    .map(|c| ToolCall {
                        id: c.call_id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                        signature: c.signature.clone(),
                    })
                    .collect();
                out.push(ChatMessage::Assistant {
                    text,
                    reasoning: (!reasoning.is_empty()).then_some(reasoning),
                    // Only sent back within the turn that produced it (kept in memory there).
                    reasoning_signature: None,
                    tool_calls,
                });
                for c in calls {
                    let (parts, is_error) = match (&c.result, c.status) {
                        (Some(parts), _) => (parts.clone(), c.is_error),
                        (None, _) => (vec![ContentPart::text("The call did not finish (the turn was stopped).")], true),
                    };
                    out.push(ChatMessage::Tool { call_id: c.call_id.clone(), name: c.name.clone(), parts, is_error });
                }
            }
            if rounds == 0 && !m.text.is_empty() {
                out.push(ChatMessage::Assistant {
                    text: m.text.clone(),
                    reasoning: None,
                    reasoning_signature: None,
                    tool_calls: Vec::new(),
                });
            }
        }
    }
}

fn part_round(p: &Part) -> u32 {
    match p {
        Part::Text { round, .. } | Part::Reasoning { round, .. } | Part::ToolCall { round, .. } => *round,
    }
}
