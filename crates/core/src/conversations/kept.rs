//! Kept results: the whole text of a tool result the model was sent only part of.
//!
//! A result too large for the model's window is cut before the model reads it; its whole text
//! stays with the conversation, numbered from 1 within it ("result 3"), so the model can page
//! through it (`read_result`) and the inspector can show it. The number, not a row id, is the
//! model's handle: a copy of the conversation keeps the numbers its notes name.

use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};

use super::{ConversationError, ConversationId, ConversationStore};

/// A result whose whole text is kept: its handle and sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct KeptResult {
    /// Its number within the conversation, the model's handle for `read_result`.
    pub result: u32,
    /// Characters of the whole text.
    pub chars: u64,
    /// Lines of the whole text.
    pub lines: u64,
    /// Characters of it the model was sent.
    pub sent_chars: u64,
}

/// A kept result's whole text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptText {
    pub kept: KeptResult,
    pub text: String,
}

fn kept_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<KeptResult> {
    Ok(KeptResult { result: r.get(0)?, chars: r.get(1)?, lines: r.get(2)?, sent_chars: r.get(3)? })
}

/// The lines of `text` as `read_result` counts them (a last line without a newline counts).
pub fn line_count(text: &str) -> u64 {
    let newlines = text.bytes().filter(|&b| b == b'\n').count() as u64;
    newlines + u64::from(!text.is_empty() && !text.ends_with('\n'))
}

impl ConversationStore {
    /// Keeps the whole `text` of tool call `row`'s result in conversation `id`, of which the
    /// model is sent `sent_chars` characters, under the conversation's next result number.
    pub fn keep_result(
        &self,
        id: ConversationId,
        row: i64,
        text: &str,
        sent_chars: u64,
    ) -> Result<KeptResult, ConversationError> {
        let db = self.store();
        let chars = text.chars().count() as u64;
        let lines = line_count(text);
        db.write(|tx| {
            let err = |e| ConversationError::from(db.error(e));
            let result: u32 = tx
                .query_row("SELECT COALESCE(MAX(seq), 0) + 1 FROM kept_results WHERE conversation_id = ?1", [id], |r| {
                    r.get(0)
                })
                .map_err(err)?;
            tx.execute(
                "INSERT INTO kept_results(tool_call_id, conversation_id, seq, text, chars, lines, sent_chars)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                (row, id, result, text, chars, lines, sent_chars),
            )
            .map_err(err)?;
            Ok(KeptResult { result, chars, lines, sent_chars })
        })
    }

    /// The whole text of result number `result` of conversation `id`.
    pub fn kept_result(&self, id: ConversationId, result: u32) -> Result<KeptText, ConversationError> {
        let found = self.store().read(|c| {
            c.query_row(
                "SELECT seq, chars, lines, sent_chars, text FROM kept_results WHERE conversation_id = ?1 AND seq = ?2",
                (id, result),
                |r| Ok(KeptText { kept: kept_row(r)?, text: r.get(4)? }),
            )
            .optional()
        })?;
        found.ok_or(ConversationError::NoKeptResult { conversation: id, result })
    }

    /// Whether any result of conversation `id` is kept (then `read_result` is offered).
    pub fn has_kept_results(&self, id: ConversationId) -> Result<bool, ConversationError> {
        Ok(self.store().read(|c| {
            c.query_row("SELECT 1 FROM kept_results WHERE conversation_id = ?1 LIMIT 1", [id], |_| Ok(()))
                .optional()
                .map(|r| r.is_some())
        })?)
    }
}

/// The kept result of tool call `row`, if any (for loading a message's calls).
pub(super) fn kept_of(c: &rusqlite::Connection, row: i64) -> rusqlite::Result<Option<KeptResult>> {
    c.prepare_cached("SELECT seq, chars, lines, sent_chars FROM kept_results WHERE tool_call_id = ?1")?
        .query_row([row], kept_row)
        .optional()
}

/// Copies tool call `from`'s kept result, if any, to call `to` of conversation `conversation`
/// under the same number (a fork).
pub(super) fn copy_kept(
    tx: &rusqlite::Transaction<'_>,
    from: i64,
    to: i64,
    conversation: ConversationId,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO kept_results(tool_call_id, conversation_id, seq, text, chars, lines, sent_chars)
         SELECT ?2, ?3, seq, text, chars, lines, sent_chars FROM kept_results WHERE tool_call_id = ?1",
        (from, to, conversation),
    )
    .map(drop)
}
