//! [`AssistantWriter`]: writes an assistant message while it streams.
//!
//! Deltas collect in memory; [`AssistantWriter::flush`] writes the parts that
//! changed and the message's visible text in one transaction. The turn loop
//! flushes on a timer (every 250 ms by default) and before every tool call, so
//! the row always holds the text up to the last flush, even after `kill -9`.
//! The timer's flush is taken with [`AssistantWriter::take_flush`] and
//! written on a blocking thread, so that rewriting a long answer's text (and
//! its full-text index) never holds up the tokens streaming in.
//! Tool calls, their arguments and results are written as they happen.

use super::{
    ConversationError, ConversationId, ConversationStore, FailureKind, MessageId, MessageStatus, Passage, Role,
    ToolCallStatus, Unavailable, encode,
};
use crate::clock::now_ms;
use crate::llm::{ContentPart, Usage};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Reasoning,
    ToolCall,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Reasoning => "reasoning",
            Self::ToolCall => "tool_call",
        }
    }
}

#[derive(Debug)]
struct PartBuf {
    kind: Kind,
    round: u32,
    text: String,
    tool_call: Option<i64>,
    dirty: bool,
}

/// Changed parts and text of a message, taken by [`AssistantWriter::take_flush`].
#[derive(Debug)]
pub struct PendingFlush {
    store: ConversationStore,
    message: MessageId,
    /// (position, round, kind, text, tool call row)
    parts: Vec<(usize, u32, Kind, String, Option<i64>)>,
    text: String,
}

impl PendingFlush {
    /// Writes the parts and the message text in one transaction.
    pub fn write(self) -> Result<(), ConversationError> {
        let db = self.store.store();
        db.write(|tx| {
            for (position, round, kind, text, tool_call) in &self.parts {
                tx.execute(
                    "INSERT INTO message_parts(message_id, position, round, kind, text, tool_call_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(message_id, position) DO UPDATE SET text = excluded.text",
                    (self.message, position, round, kind.as_str(), text, tool_call),
                )
                .map_err(|e| db.error(e))?;
            }
            tx.execute(
                "UPDATE messages SET text = ?2, updated_at = ?3 WHERE id = ?1",
                (self.message, &self.text, now_ms()),
            )
            .map_err(|e| db.error(e))?;
            Ok::<_, ConversationError>(())
        })
    }
}

/// Writes one assistant message as its events arrive.
#[derive(Debug)]
pub struct AssistantWriter {
    store: ConversationStore,
    conversation: ConversationId,
    message: MessageId,
    parts: Vec<PartBuf>,
    usage: Option<Usage>,
}

impl AssistantWriter {
    /// Adds an empty assistant message (status `streaming`) under `parent` and
    /// makes it the active leaf.
    pub fn start(
        store: &ConversationStore,
        conversation: ConversationId,
        parent: MessageId,
        provider: &str,
        model: &str,
    ) -> Result<Self, ConversationError> {
        let message = store.insert_message(
            conversation,
            Some(parent),
            Role::Assistant,
            MessageStatus::Streaming,
            "",
            "[]",
            Some((provider, model)),
        )?;
        Ok(Self { store: store.clone(), conversation, message, parts: Vec::new(), usage: None })
    }

    /// The message being written.
    pub fn message_id(&self) -> MessageId {
        self.message
    }

    /// The conversation it belongs to.
    pub fn conversation_id(&self) -> ConversationId {
        self.conversation
    }

    /// Appends answer text (kept in memory until the next flush).
    pub fn push_text(&mut self, round: u32, delta: &str) {
        self.push(Kind::Text, round, delta);
    }

    /// Appends reasoning text (kept in memory until the next flush).
    pub fn push_reasoning(&mut self, round: u32, delta: &str) {
        self.push(Kind::Reasoning, round, delta);
    }

    fn push(&mut self, kind: Kind, round: u32, delta: &str) {
        match self.parts.last_mut() {
            Some(last) if last.kind == kind && last.round == round => {
                last.text.push_str(delta);
                last.dirty = true;
            }
            _ => self.parts.push(PartBuf { kind, round, text: delta.to_owned(), tool_call: None, dirty: true }),
        }
    }

    /// Whether some text has not been written yet.
    pub fn is_dirty(&self) -> bool {
        self.parts.iter().any(|p| p.dirty)
    }

    /// The visible text so far: every round's answer text.
    pub fn text(&self) -> String {
        let texts: Vec<&str> =
            self.parts.iter().filter(|p| p.kind == Kind::Text && !p.text.is_empty()).map(|p| p.text.as_str()).collect();
        texts.join("\n\n")
    }

    /// Writes the parts that changed and the message text.
    pub fn flush(&mut self) -> Result<(), ConversationError> {
        match self.take_flush() {
            Some(flush) => flush.write(),
            None => Ok(()),
        }
    }

    /// Takes what [`flush`](Self::flush) would write, to be written elsewhere
    /// (the turn loop writes it on a blocking thread so that a long answer's
    /// growing text never holds up the stream). The parts count as written
    /// from now on; write the result before any other change to this message.
    pub fn take_flush(&mut self) -> Option<PendingFlush> {
        if !self.is_dirty() {
            return None;
        }
        let text = self.text();
        let parts = self
            .parts
            .iter_mut()
            .enumerate()
            .filter(|(_, p)| p.dirty)
            .map(|(position, p)| {
                p.dirty = false;
                (position, p.round, p.kind, p.text.clone(), p.tool_call)
            })
            .collect();
        Some(PendingFlush { store: self.store.clone(), message: self.message, parts, text })
    }

    /// Records the knowledge-base passages the answer was given, and the sources that gave none.
    pub fn set_citations(&self, passages: &[Passage], unavailable: &[Unavailable]) -> Result<(), ConversationError> {
        let json = encode("citations", passages)?;
        let failed = encode("unavailable sources", unavailable)?;
        self.exec("UPDATE messages SET citations = ?2, unavailable = ?3 WHERE id = ?1", (self.message, json, failed))
    }

    /// Records a tool call the model started; returns its row id.
    pub fn start_tool_call(
        &mut self,
        round: u32,
        call_id: &str,
        name: &str,
        real: Option<(&str, &str)>,
    ) -> Result<i64, ConversationError> {
        self.flush()?;
        let db = self.store.store();
        let position = self.parts.len();
        let row = db.write(|tx| {
            tx.execute(
                "INSERT INTO tool_calls(message_id, round, call_id, name, server, tool, status, started_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7)",
                (self.message, round, call_id, name, real.map(|r| r.0), real.map(|r| r.1), now_ms()),
            )
            .map_err(|e| db.error(e))?;
            let row = tx.last_insert_rowid();
            tx.execute(
                "INSERT INTO message_parts(message_id, position, round, kind, tool_call_id)
                 VALUES (?1, ?2, ?3, 'tool_call', ?4)",
                (self.message, position, round, row),
            )
            .map_err(|e| db.error(e))?;
            Ok::<_, ConversationError>(row)
        })?;
        self.parts.push(PartBuf {
            kind: Kind::ToolCall,
            round,
            text: String::new(),
            tool_call: Some(row),
            dirty: false,
        });
        Ok(row)
    }

    /// Records the complete arguments of a tool call.
    pub fn set_arguments(&self, row: i64, arguments: &str) -> Result<(), ConversationError> {
        self.exec("UPDATE tool_calls SET arguments = ?2 WHERE id = ?1", (row, arguments))
    }

    /// Records the opaque state the provider attached to a tool call
    /// ([`crate::llm::ToolCall::signature`]).
    pub fn set_signature(&self, row: i64, signature: &str) -> Result<(), ConversationError> {
        self.exec("UPDATE tool_calls SET signature = ?2 WHERE id = ?1", (row, signature))
    }

    /// Marks a tool call as running from now.
    pub fn tool_running(&self, row: i64) -> Result<(), ConversationError> {
        self.exec("UPDATE tool_calls SET status = 'running', started_at = ?2 WHERE id = ?1", (row, now_ms()))
    }

    /// Records a tool call's result.
    pub fn finish_tool_call(
        &self,
        row: i64,
        status: ToolCallStatus,
        content: &[ContentPart],
        is_error: bool,
        duration_ms: i64,
    ) -> Result<(), ConversationError> {
        let json = encode("tool result", content)?;
        self.exec(
            "UPDATE tool_calls SET status = ?2, result = ?3, is_error = ?4, duration_ms = ?5 WHERE id = ?1",
            (row, status.as_str(), json, is_error, duration_ms),
        )
    }

    /// Adds one round's token usage to the message's total and records it.
    pub fn add_usage(&mut self, usage: Usage) -> Result<Usage, ConversationError> {
        let total = self.usage.get_or_insert_default();
        total.input_tokens = total.input_tokens.saturating_add(usage.input_tokens);
        total.output_tokens = total.output_tokens.saturating_add(usage.output_tokens);
        let total = *total;
        self.exec(
            "UPDATE messages SET input_tokens = ?2, output_tokens = ?3 WHERE id = ?1",
            (self.message, total.input_tokens, total.output_tokens),
        )?;
        Ok(total)
    }

    /// Writes what is left and the final status, with the failure that ended it.
    pub fn finish(
        &mut self,
        status: MessageStatus,
        error: Option<(FailureKind, &str)>,
    ) -> Result<(), ConversationError> {
        self.flush()?;
        let db = self.store.store();
        let (kind, error) = error.map(|(kind, text)| (kind.as_str(), text)).unzip();
        db.write(|tx| {
            tx.execute(
                "UPDATE messages SET status = ?2, error = ?3, error_kind = ?4, updated_at = ?5, writer = NULL \
                 WHERE id = ?1",
                (self.message, status.as_str(), error, kind, now_ms()),
            )
            .map_err(|e| db.error(e))?;
            tx.execute(
                "UPDATE tool_calls SET status = 'cancelled' WHERE message_id = ?1 AND status IN ('pending', 'running')",
                [self.message],
            )
            .map_err(|e| db.error(e))?;
            tx.execute("UPDATE conversations SET updated_at = ?2 WHERE id = ?1", (self.conversation, now_ms()))
                .map_err(|e| db.error(e))?;
            Ok::<_, ConversationError>(())
        })
    }

    fn exec(&self, sql: &str, params: impl rusqlite::Params) -> Result<(), ConversationError> {
        let db = self.store.store();
        db.write(|tx| tx.execute(sql, params).map(drop).map_err(|e| ConversationError::from(db.error(e))))
    }
}
