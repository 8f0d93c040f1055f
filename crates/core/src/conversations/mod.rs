//! Conversations in SQLite: a tree of messages, written as a turn happens.
//!
//! A conversation holds messages linked by `parent_id`. Regenerating an answer
//! or editing a question adds a *sibling* (same parent) instead of replacing
//! anything; `active_leaf` marks the branch the user sees, and
//! [`ConversationStore::branch`] walks it from the root. An assistant message
//! is an ordered list of [`Part`]s (text and reasoning per tool round, tool
//! calls with their results and timings), plus the provider, model and token
//! usage that produced it.
//!
//! [`AssistantWriter`] is how the turn loop writes while it streams: the text
//! so far is flushed into the message row on a timer, so a crash loses at most
//! the last flush interval. Search runs on an FTS5 trigram index (any
//! substring of three or more characters, so CJK text is found without word
//! segmentation; shorter queries fall back to a substring scan).

mod export;
mod history;
mod kept;
mod model;
mod tree;
mod writer;

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, Row};
use serde::Serialize;

use crate::clock::now_ms;
use crate::llm::Usage;
use crate::store::{Store, StoreError};

pub use export::{ExportFile, ExportFormat};
pub use kept::{KeptResult, KeptText, line_count};
pub use model::{
    Attachment, BranchMessage, BranchPage, Conversation, ConversationId, FailureKind, INTERRUPTED_NOTE, Media, Message,
    MessageId, MessageStatus, Part, Passage, Role, SearchHit, ToolCallRecord, ToolCallStatus, ToolPin, Unavailable,
};
pub use writer::{AssistantWriter, PendingFlush};

/// Errors from the conversation store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConversationError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No conversation with that id.
    #[error("no conversation with id {id}")]
    NotFound { id: ConversationId },
    /// No message with that id (in that conversation).
    #[error("no message with id {id} in conversation {conversation}")]
    MessageNotFound { conversation: ConversationId, id: MessageId },
    /// The operation does not apply to a message of this role.
    #[error("message {id} is a {actual} message; this needs a {expected} message")]
    WrongRole { id: MessageId, expected: Role, actual: Role },
    /// A stored JSON value could not be decoded.
    #[error("stored {what} is invalid: {source}")]
    Decode {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// The conversation keeps no result with that number.
    #[error("conversation {conversation} keeps no result {result}")]
    NoKeptResult { conversation: ConversationId, result: u32 },
    /// The input is not acceptable (empty title, empty search).
    #[error("{0}")]
    Invalid(String),
}

/// Conversations kept in the shared [`Store`].
#[derive(Debug, Clone)]
pub struct ConversationStore {
    store: Store,
}

/// A conversation nothing was ever done in: no message, no instructions, never renamed (either
/// would have moved `updated_at`), not pinned.
const UNUSED: &str = "updated_at = created_at AND pinned = 0 AND system_prompt IS NULL
     AND NOT EXISTS (SELECT 1 FROM messages WHERE messages.conversation_id = conversations.id)";

const CONVERSATION_COLUMNS: &str = "id, title, assistant, system_prompt, active_leaf, created_at, updated_at, pinned";
const MESSAGE_COLUMNS: &str = "id, conversation_id, parent_id, role, status, text, attachments, citations, provider, \
                               model, input_tokens, output_tokens, error, created_at, updated_at, error_kind, \
                               unavailable";

impl ConversationStore {
    /// Conversations kept in `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// Starts an empty conversation.
    pub fn create(
        &self,
        title: &str,
        assistant: Option<&str>,
        system_prompt: Option<&str>,
    ) -> Result<Conversation, ConversationError> {
        let title = clean_title(title);
        let now = now_ms();
        let id = self.store.write(|tx| {
            tx.execute(
                "INSERT INTO conversations(title, assistant, system_prompt, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?4)",
                (&title, assistant, system_prompt, now),
            )
            .map_err(|e| ConversationError::from(self.store.error(e)))?;
            Ok::<_, ConversationError>(tx.last_insert_rowid())
        })?;
        self.get(id)
    }

    /// One conversation.
    pub fn get(&self, id: ConversationId) -> Result<Conversation, ConversationError> {
        self.store
            .read(|c| {
                c.query_row(
                    &format!("SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = ?1"),
                    [id],
                    conversation_row,
                )
                .optional()
            })?
            .ok_or(ConversationError::NotFound { id })
    }

    /// Every conversation, most recently updated first.
    pub fn list(&self) -> Result<Vec<Conversation>, ConversationError> {
        Ok(self.store.read(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {CONVERSATION_COLUMNS} FROM conversations ORDER BY pinned DESC, updated_at DESC, id DESC"
            ))?;
            let rows = stmt.query_map([], conversation_row)?;
            rows.collect()
        })?)
    }

    /// Renames a conversation.
    pub fn rename(&self, id: ConversationId, title: &str) -> Result<(), ConversationError> {
        if title.trim().is_empty() {
            return Err(ConversationError::Invalid("a conversation title cannot be empty".into()));
        }
        self.update_one(id, "UPDATE conversations SET title = ?2, updated_at = ?3 WHERE id = ?1", clean_title(title))
    }

    /// Pins a conversation to the top of the list, or unpins it; not an activity, so
    /// `updated_at` stays.
    pub fn set_pinned(&self, id: ConversationId, pinned: bool) -> Result<(), ConversationError> {
        let n = self.store.write(|tx| {
            tx.execute("UPDATE conversations SET pinned = ?2 WHERE id = ?1", (id, pinned))
                .map_err(|e| ConversationError::from(self.store.error(e)))
        })?;
        if n == 0 {
            return Err(ConversationError::NotFound { id });
        }
        Ok(())
    }

    /// Sets or clears the conversation's own system prompt.
    pub fn set_system_prompt(&self, id: ConversationId, prompt: Option<&str>) -> Result<(), ConversationError> {
        self.update_one(id, "UPDATE conversations SET system_prompt = ?2, updated_at = ?3 WHERE id = ?1", prompt)
    }

    fn update_one(&self, id: ConversationId, sql: &str, value: impl rusqlite::ToSql) -> Result<(), ConversationError> {
        let n = self.store.write(|tx| {
            tx.execute(sql, (id, value, now_ms())).map_err(|e| ConversationError::from(self.store.error(e)))
        })?;
        if n == 0 {
            return Err(ConversationError::NotFound { id });
        }
        Ok(())
    }

    /// Deletes a conversation with all its messages.
    pub fn delete(&self, id: ConversationId) -> Result<(), ConversationError> {
        let n = self.store.write(|tx| {
            tx.execute("DELETE FROM conversations WHERE id = ?1", [id])
                .map_err(|e| ConversationError::from(self.store.error(e)))
        })?;
        if n == 0 {
            return Err(ConversationError::NotFound { id });
        }
        Ok(())
    }

    /// Deletes the conversation if nothing was ever done in it (see [`UNUSED`]); says whether it
    /// did. A new chat the user left without sending does not stay behind.
    pub fn discard_if_unused(&self, id: ConversationId) -> Result<bool, ConversationError> {
        let n = self.store.write(|tx| {
            tx.execute(&format!("DELETE FROM conversations WHERE id = ?1 AND {UNUSED}"), [id])
                .map_err(|e| ConversationError::from(self.store.error(e)))
        })?;
        Ok(n == 1)
    }

    /// The conversations made before `made_before` (ms) that nothing was ever done in: those a
    /// window closed on before its first message. Younger ones may be another process's, about
    /// to get their first message.
    pub fn unused_before(&self, made_before: i64) -> Result<Vec<ConversationId>, ConversationError> {
        Ok(self.store.read(|c| {
            let mut stmt = c.prepare(&format!("SELECT id FROM conversations WHERE created_at < ?1 AND {UNUSED}"))?;
            let rows = stmt.query_map([made_before], |r| r.get(0))?;
            rows.collect()
        })?)
    }

    /// One message with its parts.
    pub fn message(&self, id: MessageId) -> Result<Message, ConversationError> {
        let conversation = self.store.read(|c| {
            c.query_row("SELECT conversation_id FROM messages WHERE id = ?1", [id], |r| r.get::<_, i64>(0)).optional()
        })?;
        let conversation = conversation.ok_or(ConversationError::MessageNotFound { conversation: 0, id })?;
        let mut all = self.load_messages(conversation, Some((id, id)))?;
        all.pop().ok_or(ConversationError::MessageNotFound { conversation, id })
    }

    /// Every message of a conversation (all branches), oldest first.
    pub fn messages(&self, id: ConversationId) -> Result<Vec<Message>, ConversationError> {
        self.get(id)?;
        self.load_messages(id, None)
    }

    /// Full-text search across every message, best matches first.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, ConversationError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(ConversationError::Invalid("the search text is empty".into()));
        }
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // The trigram index needs three characters; shorter queries (two Chinese
        // characters are a common word) scan with instr(), which is exact too.
        let rows = if query.chars().count() >= 3 {
            let phrase = format!("\"{}\"", query.replace('"', "\"\""));
            self.store.read(|c| {
                let mut stmt = c.prepare(
                    "SELECT m.conversation_id, c.title, m.id, m.role, m.text
                     FROM messages_fts f JOIN messages m ON m.id = f.rowid JOIN conversations c ON c.id = m.conversation_id
                     WHERE messages_fts MATCH ?1 ORDER BY f.rank LIMIT ?2",
                )?;
                let rows = stmt.query_map((&phrase, limit), hit_row)?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })?
        } else {
            self.store.read(|c| {
                let mut stmt = c.prepare(
                    "SELECT m.conversation_id, c.title, m.id, m.role, m.text
                     FROM messages m JOIN conversations c ON c.id = m.conversation_id
                     WHERE instr(lower(m.text), lower(?1)) > 0 ORDER BY m.updated_at DESC LIMIT ?2",
                )?;
                let rows = stmt.query_map((query, limit), hit_row)?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })?
        };
        Ok(rows
            .into_iter()
            .map(|(conversation_id, title, message_id, role, text)| SearchHit {
                conversation_id,
                title,
                message_id,
                role,
                snippet: snippet(&text, query),
            })
            .collect())
    }

    /// Whether the user allowed this tool, as it is defined now, for the whole conversation.
    pub fn has_grant(&self, id: ConversationId, pin: &ToolPin) -> Result<bool, ConversationError> {
        Ok(self.store.read(|c| {
            c.query_row(
                "SELECT 1 FROM conversation_tool_grants
                 WHERE conversation_id = ?1 AND server_id = ?2 AND tool = ?3 AND fingerprint = ?4",
                (id, &pin.server_id, &pin.tool, &pin.fingerprint),
                |_| Ok(()),
            )
            .optional()
            .map(|r| r.is_some())
        })?)
    }

    /// Allows this tool, as it is defined now, for the rest of the conversation.
    pub fn grant(&self, id: ConversationId, pin: &ToolPin) -> Result<(), ConversationError> {
        self.store.write(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO conversation_tool_grants(conversation_id, server_id, tool, fingerprint)
                 VALUES (?1, ?2, ?3, ?4)",
                (id, &pin.server_id, &pin.tool, &pin.fingerprint),
            )
            .map_err(|e| ConversationError::from(self.store.error(e)))
            .map(drop)
        })
    }

    /// Marks every message a dead process left `streaming` as
    /// [`MessageStatus::Interrupted`], keeping its text, with a note in its
    /// `error`; its unfinished tool calls become cancelled. Messages that a
    /// live process (this one, the desktop app, another `patchbay`) is still
    /// writing are left alone. The app and the CLI call this when they open
    /// the data directory. Returns the messages marked, oldest first.
    pub fn recover_interrupted(&self) -> Result<Vec<MessageId>, ConversationError> {
        let streaming: Vec<(MessageId, Option<String>)> = self.store.read(|c| {
            let mut stmt = c.prepare("SELECT id, writer FROM messages WHERE status = 'streaming' ORDER BY id")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })?;
        let mut alive: HashMap<String, bool> = HashMap::new();
        let dead: Vec<MessageId> = streaming
            .into_iter()
            .filter(|(_, writer)| match writer {
                Some(w) => !*alive.entry(w.clone()).or_insert_with(|| self.store.session_alive(w)),
                None => true,
            })
            .map(|(id, _)| id)
            .collect();
        if dead.is_empty() {
            return Ok(dead);
        }
        let now = now_ms();
        self.store.write(|tx| {
            for id in &dead {
                tx.execute(
                    "UPDATE messages SET status = 'interrupted', error = ?2, writer = NULL, updated_at = ?3
                     WHERE id = ?1 AND status = 'streaming'",
                    (id, INTERRUPTED_NOTE, now),
                )
                .map_err(|e| self.store.error(e))?;
                tx.execute(
                    "UPDATE tool_calls SET status = 'cancelled' WHERE message_id = ?1 AND status IN ('pending', 'running')",
                    [id],
                )
                .map_err(|e| self.store.error(e))?;
            }
            Ok::<_, ConversationError>(())
        })?;
        Ok(dead)
    }

    /// Adds a user message under `parent` and makes it the active leaf.
    pub fn add_user_message(
        &self,
        id: ConversationId,
        parent: Option<MessageId>,
        text: &str,
        attachments: &[Attachment],
    ) -> Result<MessageId, ConversationError> {
        let attachments = encode("attachments", attachments)?;
        self.insert_message(id, parent, Role::User, MessageStatus::Complete, text, &attachments, None)
    }

    /// Inserts a message row and makes it the active leaf.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn insert_message(
        &self,
        id: ConversationId,
        parent: Option<MessageId>,
        role: Role,
        status: MessageStatus,
        text: &str,
        attachments: &str,
        model: Option<(&str, &str)>,
    ) -> Result<MessageId, ConversationError> {
        let now = now_ms();
        self.store.write(|tx| {
            let exists: Option<i64> = tx
                .query_row("SELECT id FROM conversations WHERE id = ?1", [id], |r| r.get(0))
                .optional()
                .map_err(|e| self.store.error(e))?;
            exists.ok_or(ConversationError::NotFound { id })?;
            if let Some(p) = parent {
                let found: Option<i64> = tx
                    .query_row("SELECT id FROM messages WHERE id = ?1 AND conversation_id = ?2", (p, id), |r| r.get(0))
                    .optional()
                    .map_err(|e| self.store.error(e))?;
                found.ok_or(ConversationError::MessageNotFound { conversation: id, id: p })?;
            }
            tx.execute(
                "INSERT INTO messages(conversation_id, parent_id, role, status, text, attachments, provider, model,
                                      created_at, updated_at, writer)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?10)",
                (
                    id,
                    parent,
                    role.as_str(),
                    status.as_str(),
                    text,
                    attachments,
                    model.map(|m| m.0),
                    model.map(|m| m.1),
                    now,
                    (status == MessageStatus::Streaming).then(|| self.store.session_id()),
                ),
            )
            .map_err(|e| self.store.error(e))?;
            let mid = tx.last_insert_rowid();
            tx.execute("UPDATE conversations SET active_leaf = ?2, updated_at = ?3 WHERE id = ?1", (id, mid, now))
                .map_err(|e| self.store.error(e))?;
            Ok(mid)
        })
    }

    fn load_messages(
        &self,
        id: ConversationId,
        range: Option<(MessageId, MessageId)>,
    ) -> Result<Vec<Message>, ConversationError> {
        self.store.read(|c| load_messages(c, id, range)).map_err(ConversationError::from)?.into_iter().collect()
    }
}

type RawHit = (ConversationId, String, MessageId, Role, String);

fn hit_row(r: &Row<'_>) -> rusqlite::Result<RawHit> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, Role::parse(&r.get::<_, String>(3)?), r.get(4)?))
}

fn conversation_row(r: &Row<'_>) -> rusqlite::Result<Conversation> {
    Ok(Conversation {
        id: r.get(0)?,
        title: r.get(1)?,
        assistant: r.get(2)?,
        system_prompt: r.get(3)?,
        active_leaf: r.get(4)?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
        pinned: r.get(7)?,
    })
}

fn clean_title(title: &str) -> String {
    let line = title.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("New conversation");
    let mut out: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        out.push('…');
    }
    out
}

pub(crate) fn encode<T: Serialize + ?Sized>(what: &str, value: &T) -> Result<String, ConversationError> {
    serde_json::to_string(value).map_err(|source| ConversationError::Decode { what: what.into(), source })
}

fn decode<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, ConversationError> {
    serde_json::from_str(text).map_err(|source| ConversationError::Decode { what: what.into(), source })
}

/// Reads messages (one or all of a conversation) with parts and tool calls.
/// The outer result is SQLite's; each message may still fail to decode.
fn load_messages(
    c: &Connection,
    id: ConversationId,
    range: Option<(MessageId, MessageId)>,
) -> rusqlite::Result<Vec<Result<Message, ConversationError>>> {
    // A plain range (no "IS NULL OR"), so that SQLite reads only that stretch of the index.
    let (lo, hi) = range.unwrap_or((MessageId::MIN, MessageId::MAX));
    let mut stmt = c.prepare(&format!(
        "SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ?1 AND id BETWEEN ?2 AND ?3 ORDER BY id"
    ))?;
    type RawMessage = (Message, String, String, String);
    let raw: Vec<RawMessage> = stmt
        .query_map((id, lo, hi), |r| {
            let input: Option<u32> = r.get(10)?;
            let output: Option<u32> = r.get(11)?;
            let message = Message {
                id: r.get(0)?,
                conversation_id: r.get(1)?,
                parent_id: r.get(2)?,
                role: Role::parse(&r.get::<_, String>(3)?),
                status: MessageStatus::parse(&r.get::<_, String>(4)?),
                text: r.get(5)?,
                attachments: Vec::new(),
                citations: Vec::new(),
                unavailable: Vec::new(),
                parts: Vec::new(),
                provider: r.get(8)?,
                model: r.get(9)?,
                usage: input.zip(output).map(|(input_tokens, output_tokens)| Usage { input_tokens, output_tokens }),
                error: r.get(12)?,
                created_at: r.get(13)?,
                updated_at: r.get(14)?,
                error_kind: FailureKind::parse(r.get::<_, Option<String>>(15)?.as_deref()),
            };
            Ok((message, r.get(6)?, r.get(7)?, r.get(16)?))
        })?
        .collect::<rusqlite::Result<_>>()?;

    let mut calls: HashMap<i64, Result<ToolCallRecord, ConversationError>> = HashMap::new();
    let mut stmt = c.prepare(
        "SELECT t.id, t.round, t.call_id, t.name, t.server, t.tool, t.arguments, t.status, t.result, t.is_error,
                t.started_at, t.duration_ms, t.signature
         FROM tool_calls t JOIN messages m ON m.id = t.message_id
         WHERE m.conversation_id = ?1 AND m.id BETWEEN ?2 AND ?3",
    )?;
    let rows = stmt.query_map((id, lo, hi), |r| {
        let result: Option<String> = r.get(8)?;
        let tid: i64 = r.get(0)?;
        let record = ToolCallRecord {
            id: tid,
            round: r.get(1)?,
            call_id: r.get(2)?,
            name: r.get(3)?,
            server: r.get(4)?,
            tool: r.get(5)?,
            arguments: r.get(6)?,
            status: ToolCallStatus::parse(&r.get::<_, String>(7)?),
            result: None,
            is_error: r.get(9)?,
            started_at: r.get(10)?,
            duration_ms: r.get(11)?,
            signature: r.get(12)?,
            kept: kept::kept_of(c, tid)?,
        };
        Ok((tid, record, result))
    })?;
    for row in rows {
        let (tid, mut record, result) = row?;
        let decoded = match result.as_deref().map(|t| decode(&format!("result of tool call {tid}"), t)).transpose() {
            Ok(parts) => {
                record.result = parts;
                Ok(record)
            }
            Err(e) => Err(e),
        };
        calls.insert(tid, decoded);
    }

    let mut parts: HashMap<MessageId, Vec<Result<Part, ConversationError>>> = HashMap::new();
    let mut stmt = c.prepare(
        "SELECT p.message_id, p.round, p.kind, p.text, p.tool_call_id
         FROM message_parts p JOIN messages m ON m.id = p.message_id
         WHERE m.conversation_id = ?1 AND m.id BETWEEN ?2 AND ?3
         ORDER BY p.message_id, p.position",
    )?;
    let rows = stmt.query_map((id, lo, hi), |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, u32>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, Option<i64>>(4)?,
        ))
    })?;
    for row in rows {
        let (mid, round, kind, text, tool_call) = row?;
        let part = match (kind.as_str(), tool_call) {
            ("tool_call", Some(tid)) => match calls.remove(&tid) {
                Some(call) => call.map(|call| Part::ToolCall { round, call: Box::new(call) }),
                None => continue,
            },
            ("reasoning", _) => Ok(Part::Reasoning { round, text }),
            _ => Ok(Part::Text { round, text }),
        };
        parts.entry(mid).or_default().push(part);
    }

    Ok(raw
        .into_iter()
        .map(|(mut m, attachments, citations, unavailable)| {
            m.attachments = decode(&format!("attachments of message {}", m.id), &attachments)?;
            m.citations = decode(&format!("citations of message {}", m.id), &citations)?;
            m.unavailable = decode(&format!("unavailable sources of message {}", m.id), &unavailable)?;
            m.parts = parts.remove(&m.id).unwrap_or_default().into_iter().collect::<Result<_, _>>()?;
            Ok(m)
        })
        .collect())
}

/// Up to ~40 characters either side of the first match, the match in brackets.
fn snippet(text: &str, query: &str) -> String {
    let lower = text.to_lowercase();
    let q = query.to_lowercase();
    // Lowercasing can change byte lengths; fall back to the start when it does.
    let Some(start) = lower.find(&q).filter(|_| lower.len() == text.len()) else {
        return text.chars().take(80).collect();
    };
    let end = start + q.len();
    let before: String = text[..start].chars().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
    let after: String = text[end..].chars().take(40).collect();
    format!("{before}[{}]{after}", &text[start..end]).replace('\n', " ")
}

#[cfg(test)]
mod tests;
