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
mod writer;

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::clock::now_ms;
use crate::llm::{ChatMessage, ContentPart, ToolCall, Usage};
use crate::store::{Store, StoreError};

pub use export::{ExportFile, ExportFormat};
pub use writer::{AssistantWriter, PendingFlush};

/// A conversation's id.
pub type ConversationId = i64;
/// A message's id.
pub type MessageId = i64;

/// What "allow for this conversation" is pinned to: a grant counts only for
/// the same server (its stored identity, which a server added later under the
/// same name does not share), the same tool, and the same definition.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolPin {
    /// The server's identity (see `ConfigStore::server_ids`).
    pub server_id: String,
    /// The server's own name for the tool.
    pub tool: String,
    /// The hex fingerprint of the tool's definition as it was listed.
    pub fingerprint: String,
}

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
    /// The input is not acceptable (empty title, empty search).
    #[error("{0}")]
    Invalid(String),
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }

    fn parse(s: &str) -> Self {
        if s == "user" { Self::User } else { Self::Assistant }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of failure ended an answer or interrupted a turn, kept with the
/// answer so that every front end shows it as what it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The model provider refused or failed (HTTP errors, a cut stream, its content filter).
    Provider,
    /// The conversation could not be read or written.
    Storage,
    /// The provider's settings are missing or wrong.
    Config,
    /// A limit of the turn was reached: tool rounds, or output tokens.
    Limit,
    /// The knowledge base could not be searched for the question.
    Knowledge,
    /// Anything else.
    Internal,
}

impl FailureKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Provider => "provider",
            Self::Storage => "storage",
            Self::Config => "config",
            Self::Limit => "limit",
            Self::Knowledge => "knowledge",
            Self::Internal => "internal",
        }
    }

    /// A stored kind; answers stored before kinds were kept have none.
    fn parse(s: Option<&str>) -> Option<Self> {
        Some(match s? {
            "provider" => Self::Provider,
            "storage" => Self::Storage,
            "config" => Self::Config,
            "limit" => Self::Limit,
            "knowledge" => Self::Knowledge,
            _ => Self::Internal,
        })
    }
}

/// Where a message stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// Being written by a running Patchbay process.
    Streaming,
    /// Finished normally.
    Complete,
    /// Stopped by the user; the text so far is kept.
    Stopped,
    /// Ended by an error (see the message's `error`).
    Error,
    /// Ended because the tool-round limit was reached.
    RoundLimit,
    /// Patchbay stopped (crashed, was killed, lost power) while this answer
    /// streamed; the text written so far is kept, the message's `error` says
    /// what happened. Set by [`ConversationStore::recover_interrupted`].
    Interrupted,
}

impl MessageStatus {
    fn as_str(self) -> &'static str {
        match self {
            Self::Streaming => "streaming",
            Self::Complete => "complete",
            Self::Stopped => "stopped",
            Self::Error => "error",
            Self::RoundLimit => "round_limit",
            Self::Interrupted => "interrupted",
        }
    }

    fn parse(s: &str) -> Self {
        match s {
            "complete" => Self::Complete,
            "stopped" => Self::Stopped,
            "error" => Self::Error,
            "round_limit" => Self::RoundLimit,
            "interrupted" => Self::Interrupted,
            _ => Self::Streaming,
        }
    }
}

/// Something attached to a user message: an MCP resource, a prompt's text, a
/// document read to text, an image or an audio clip (see [`crate::attach`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// What the user sees ("README.md", "prompt: review", "photo.png").
    pub title: String,
    /// The resource's URI, when it is one.
    #[serde(default)]
    pub uri: Option<String>,
    /// The text given to the model (empty for media).
    pub text: String,
    /// An image or audio clip, given to the model as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<Media>,
}

/// An image or audio clip attached by the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Media {
    /// `image/…` or `audio/…`.
    pub mime_type: String,
    /// The bytes, base64-encoded.
    pub data: String,
}

impl Attachment {
    /// The content the model is given for it.
    pub(crate) fn to_part(&self) -> ContentPart {
        match &self.media {
            Some(Media { mime_type, data }) if mime_type.starts_with("audio/") => {
                ContentPart::Audio { mime_type: mime_type.clone(), data: data.clone() }
            }
            Some(Media { mime_type, data }) => ContentPart::Image { mime_type: mime_type.clone(), data: data.clone() },
            None => ContentPart::text(attachment_text(self)),
        }
    }
}

/// A knowledge-base passage given to the model as context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Passage {
    /// The passage text.
    pub text: String,
    /// The document it comes from (path or URI).
    pub source: String,
    /// The heading it sits under, when the document has headings.
    #[serde(default)]
    pub heading: Option<String>,
    /// First and last line in the source, 1-based.
    #[serde(default)]
    pub lines: Option<(u32, u32)>,
    /// Relevance score (higher is better).
    pub score: f32,
    /// Where the question's words are in `text`, to mark them: `[start, end)`
    /// in UTF-16 code units (see [`crate::rag::analyze::marks`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<[usize; 2]>,
}

/// One conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    pub id: ConversationId,
    pub title: String,
    /// The assistant preset it started from.
    pub assistant: Option<String>,
    /// Overrides the assistant's system prompt when set.
    pub system_prompt: Option<String>,
    /// The last message of the branch the user sees.
    pub active_leaf: Option<MessageId>,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    pub updated_at: i64,
    /// Kept at the top of the list.
    pub pinned: bool,
}

/// Status of a recorded tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// The model is still writing its arguments, or it waits for approval.
    Pending,
    /// Running.
    Running,
    /// Finished (successfully or with `is_error`).
    Done,
    /// Cancelled before it finished.
    Cancelled,
}

impl ToolCallStatus {
    fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "done",
            Self::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> Self {
        match s {
            "running" => Self::Running,
            "done" => Self::Done,
            "cancelled" => Self::Cancelled,
            _ => Self::Pending,
        }
    }
}

/// A tool call as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    pub id: i64,
    /// The tool round it belongs to (0-based).
    pub round: u32,
    /// The provider's call id.
    pub call_id: String,
    /// Model-facing tool name.
    pub name: String,
    /// The real MCP server and tool, when the name matched a tool.
    pub server: Option<String>,
    pub tool: Option<String>,
    /// Arguments as the model wrote them.
    pub arguments: String,
    pub status: ToolCallStatus,
    /// The result content, once finished.
    pub result: Option<Vec<ContentPart>>,
    pub is_error: bool,
    /// Milliseconds since the Unix epoch.
    pub started_at: i64,
    pub duration_ms: Option<i64>,
    /// Opaque provider state sent back with the call (Gemini's `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// A piece of an assistant message, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Part {
    Text { round: u32, text: String },
    Reasoning { round: u32, text: String },
    ToolCall { round: u32, call: ToolCallRecord },
}

/// One message with its parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub id: MessageId,
    pub conversation_id: ConversationId,
    pub parent_id: Option<MessageId>,
    pub role: Role,
    pub status: MessageStatus,
    /// The visible text (for an assistant message, every round's text).
    pub text: String,
    pub attachments: Vec<Attachment>,
    pub citations: Vec<Passage>,
    /// Assistant messages: text, reasoning and tool calls in order.
    pub parts: Vec<Part>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub usage: Option<Usage>,
    pub error: Option<String>,
    /// What kind of failure `error` is, when the turn said.
    pub error_kind: Option<FailureKind>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A message on the active branch, with its siblings for "2 / 3" navigation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BranchMessage {
    pub message: Message,
    /// Every message with the same parent, oldest first (including this one).
    pub siblings: Vec<MessageId>,
}

/// A stretch of the active branch, and how many branch messages come before it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BranchPage {
    pub messages: Vec<BranchMessage>,
    pub earlier: usize,
}

/// A search match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    pub conversation_id: ConversationId,
    pub title: String,
    pub message_id: MessageId,
    pub role: Role,
    /// A piece of the text around the match, the match between `[` and `]`.
    pub snippet: String,
}

/// The note an interrupted message carries in its `error`.
pub const INTERRUPTED_NOTE: &str =
    "Interrupted: Patchbay stopped before this answer was finished. The text written until then is kept.";

/// Conversations kept in the shared [`Store`].
#[derive(Debug, Clone)]
pub struct ConversationStore {
    store: Store,
}

const CONVERSATION_COLUMNS: &str = "id, title, assistant, system_prompt, active_leaf, created_at, updated_at, pinned";
const MESSAGE_COLUMNS: &str = "id, conversation_id, parent_id, role, status, text, attachments, citations, provider, \
                               model, input_tokens, output_tokens, error, created_at, updated_at, error_kind";

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

    /// The active branch, root first, each message with its siblings.
    pub fn branch(&self, id: ConversationId) -> Result<Vec<BranchMessage>, ConversationError> {
        Ok(self.branch_page(id, None, None)?.messages)
    }

    /// Up to `limit` messages of the active branch that come before `before` (or end it, when
    /// `None`), root first, and how many branch messages precede them. Only those messages are
    /// read in full, so the end of a long conversation opens as fast as a short one.
    pub fn branch_page(
        &self,
        id: ConversationId,
        limit: Option<usize>,
        before: Option<MessageId>,
    ) -> Result<BranchPage, ConversationError> {
        let conversation = self.get(id)?;
        let Some(leaf) = conversation.active_leaf else { return Ok(BranchPage::default()) };
        let skeleton = self.skeleton(id)?;
        let parents: HashMap<MessageId, Option<MessageId>> = skeleton.iter().copied().collect();
        let path = path_to(&parents, leaf);
        let end = match before {
            Some(b) => path
                .iter()
                .position(|&m| m == b)
                .ok_or(ConversationError::MessageNotFound { conversation: id, id: b })?,
            None => path.len(),
        };
        let start = limit.map_or(0, |l| end.saturating_sub(l));
        let window = &path[start..end];
        let (Some(&first), Some(&last)) = (window.iter().min(), window.iter().max()) else {
            return Ok(BranchPage { messages: Vec::new(), earlier: start });
        };
        let mut siblings: HashMap<Option<MessageId>, Vec<MessageId>> = HashMap::new();
        for &(m, parent) in &skeleton {
            siblings.entry(parent).or_default().push(m);
        }
        let mut loaded: HashMap<MessageId, Message> =
            self.load_messages(id, Some((first, last)))?.into_iter().map(|m| (m.id, m)).collect();
        let messages = window
            .iter()
            .filter_map(|mid| loaded.remove(mid))
            .map(|message| BranchMessage {
                siblings: siblings.get(&message.parent_id).cloned().unwrap_or_default(),
                message,
            })
            .collect();
        Ok(BranchPage { messages, earlier: start })
    }

    /// Makes the branch through `message` active, following its newest
    /// descendants down to a leaf. Returns the new leaf.
    pub fn switch_branch(&self, id: ConversationId, message: MessageId) -> Result<MessageId, ConversationError> {
        self.store.write(|tx| {
            let leaf = newest_leaf_under(&self.store, tx, id, message)?;
            tx.execute("UPDATE conversations SET active_leaf = ?2 WHERE id = ?1", (id, leaf))
                .map_err(|e| ConversationError::from(self.store.error(e)))?;
            Ok(leaf)
        })
    }

    /// Deletes `message` with every reply after it, on every branch. When the
    /// branch shown went through it, the newest branch of a sibling is shown
    /// instead, else the branch ending at its parent. Returns the new active
    /// leaf (none when the conversation is now empty).
    pub fn delete_message(
        &self,
        id: ConversationId,
        message: MessageId,
    ) -> Result<Option<MessageId>, ConversationError> {
        let conversation = self.get(id)?;
        let skeleton = self.skeleton(id)?;
        let parents: HashMap<MessageId, Option<MessageId>> = skeleton.iter().copied().collect();
        let parent =
            *parents.get(&message).ok_or(ConversationError::MessageNotFound { conversation: id, id: message })?;
        let shown = conversation.active_leaf.is_some_and(|leaf| path_to(&parents, leaf).contains(&message));
        let sibling = skeleton.iter().filter(|(m, p)| *p == parent && *m != message).map(|(m, _)| *m).max();
        self.store.write(|tx| {
            let err = |e| ConversationError::from(self.store.error(e));
            tx.execute("DELETE FROM messages WHERE id = ?1 AND conversation_id = ?2", (message, id)).map_err(err)?;
            let leaf = match (shown, sibling) {
                (false, _) => conversation.active_leaf,
                (true, Some(sibling)) => Some(newest_leaf_under(&self.store, tx, id, sibling)?),
                (true, None) => parent,
            };
            tx.execute(
                "UPDATE conversations SET active_leaf = ?2, updated_at = ?3 WHERE id = ?1",
                (id, leaf, now_ms()),
            )
            .map_err(err)?;
            Ok(leaf)
        })
    }

    /// A new conversation holding the messages from the root to `message`
    /// (one branch, copied with their parts, tool calls and attachments),
    /// named, assisted and instructed like `id`, to carry on from there. A
    /// message still being written is copied as interrupted. Approvals given
    /// "for this conversation" are not carried over.
    pub fn fork(&self, id: ConversationId, message: MessageId) -> Result<Conversation, ConversationError> {
        let skeleton = self.skeleton(id)?;
        let parents: HashMap<MessageId, Option<MessageId>> = skeleton.iter().copied().collect();
        if !parents.contains_key(&message) {
            return Err(ConversationError::MessageNotFound { conversation: id, id: message });
        }
        let path = path_to(&parents, message);
        let now = now_ms();
        let copy = self.store.write(|tx| {
            let err = |e| ConversationError::from(self.store.error(e));
            tx.execute(
                "INSERT INTO conversations(title, assistant, system_prompt, created_at, updated_at)
                 SELECT title, assistant, system_prompt, ?2, ?2 FROM conversations WHERE id = ?1",
                (id, now),
            )
            .map_err(err)?;
            let copy = tx.last_insert_rowid();
            let mut parent: Option<MessageId> = None;
            for old in path {
                tx.execute(
                    "INSERT INTO messages(conversation_id, parent_id, role, status, text, attachments, citations,
                                          provider, model, input_tokens, output_tokens, error, created_at, updated_at)
                     SELECT ?2, ?3, role, CASE status WHEN 'streaming' THEN 'interrupted' ELSE status END, text,
                            attachments, citations, provider, model, input_tokens, output_tokens, error, created_at,
                            updated_at
                     FROM messages WHERE id = ?1",
                    (old, copy, parent),
                )
                .map_err(err)?;
                let new = tx.last_insert_rowid();
                let calls: Vec<i64> = {
                    let mut stmt = tx.prepare_cached("SELECT id FROM tool_calls WHERE message_id = ?1").map_err(err)?;
                    stmt.query_map([old], |r| r.get(0)).and_then(Iterator::collect).map_err(err)?
                };
                let mut mapped = HashMap::new();
                for call in calls {
                    tx.execute(
                        "INSERT INTO tool_calls(message_id, round, call_id, name, server, tool, arguments, status, result,
                                                is_error, started_at, duration_ms, signature)
                         SELECT ?2, round, call_id, name, server, tool, arguments, status, result, is_error, started_at,
                                duration_ms, signature
                         FROM tool_calls WHERE id = ?1",
                        (call, new),
                    )
                    .map_err(err)?;
                    mapped.insert(call, tx.last_insert_rowid());
                }
                let parts: Vec<(i64, Option<i64>)> = {
                    let mut stmt = tx
                        .prepare_cached("SELECT position, tool_call_id FROM message_parts WHERE message_id = ?1")
                        .map_err(err)?;
                    stmt.query_map([old], |r| Ok((r.get(0)?, r.get(1)?))).and_then(Iterator::collect).map_err(err)?
                };
                for (position, call) in parts {
                    tx.execute(
                        "INSERT INTO message_parts(message_id, position, round, kind, text, tool_call_id)
                         SELECT ?3, position, round, kind, text, ?4 FROM message_parts
                         WHERE message_id = ?1 AND position = ?2",
                        (old, position, new, call.and_then(|c| mapped.get(&c).copied())),
                    )
                    .map_err(err)?;
                }
                parent = Some(new);
            }
            tx.execute("UPDATE conversations SET active_leaf = ?2 WHERE id = ?1", (copy, parent)).map_err(err)?;
            Ok::<_, ConversationError>(copy)
        })?;
        self.get(copy)
    }

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

    /// Every message's id and parent, oldest first: the tree without its contents.
    fn skeleton(&self, id: ConversationId) -> Result<Vec<(MessageId, Option<MessageId>)>, ConversationError> {
        let rows = self.store.read(|c| {
            let mut stmt =
                c.prepare_cached("SELECT id, parent_id FROM messages WHERE conversation_id = ?1 ORDER BY id")?;
            stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<Vec<_>>>()
        });
        Ok(rows?)
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
    type RawMessage = (Message, String, String);
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
                parts: Vec::new(),
                provider: r.get(8)?,
                model: r.get(9)?,
                usage: input.zip(output).map(|(input_tokens, output_tokens)| Usage { input_tokens, output_tokens }),
                error: r.get(12)?,
                created_at: r.get(13)?,
                updated_at: r.get(14)?,
                error_kind: FailureKind::parse(r.get::<_, Option<String>>(15)?.as_deref()),
            };
            Ok((message, r.get(6)?, r.get(7)?))
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
                Some(call) => call.map(|call| Part::ToolCall { round, call }),
                None => continue,
            },
            ("reasoning", _) => Ok(Part::Reasoning { round, text }),
            _ => Ok(Part::Text { round, text }),
        };
        parts.entry(mid).or_default().push(part);
    }

    Ok(raw
        .into_iter()
        .map(|(mut m, attachments, citations)| {
            m.attachments = decode(&format!("attachments of message {}", m.id), &attachments)?;
            m.citations = decode(&format!("citations of message {}", m.id), &citations)?;
            m.parts = parts.remove(&m.id).unwrap_or_default().into_iter().collect::<Result<_, _>>()?;
            Ok(m)
        })
        .collect())
}

/// Message ids from the root down to `leaf`.
fn path_to(parents: &HashMap<MessageId, Option<MessageId>>, leaf: MessageId) -> Vec<MessageId> {
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor = Some(leaf);
    while let Some(id) = cursor {
        if !seen.insert(id) || !parents.contains_key(&id) {
            break;
        }
        path.push(id);
        cursor = parents.get(&id).copied().flatten();
    }
    path.reverse();
    path
}

fn newest_leaf_under(
    store: &Store,
    tx: &rusqlite::Transaction<'_>,
    id: ConversationId,
    message: MessageId,
) -> Result<MessageId, ConversationError> {
    let found: Option<i64> = tx
        .query_row("SELECT id FROM messages WHERE id = ?1 AND conversation_id = ?2", (message, id), |r| r.get(0))
        .optional()
        .map_err(|e| store.error(e))?;
    let mut leaf = found.ok_or(ConversationError::MessageNotFound { conversation: id, id: message })?;
    loop {
        let child: Option<i64> = tx
            .query_row("SELECT MAX(id) FROM messages WHERE parent_id = ?1", [leaf], |r| r.get(0))
            .map_err(|e| store.error(e))?;
        match child {
            Some(c) => leaf = c,
            None => return Ok(leaf),
        }
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

/// How an attachment reads to the model. Its name and URI are escaped: a file
/// may be called `a" uri="x` or `</attachment>`.
fn attachment_text(a: &Attachment) -> String {
    let attr = |v: &str| v.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    match &a.uri {
        Some(uri) => {
            format!("<attachment title=\"{}\" uri=\"{}\">\n{}\n</attachment>", attr(&a.title), attr(uri), a.text)
        }
        None => format!("<attachment title=\"{}\">\n{}\n</attachment>", attr(&a.title), a.text),
    }
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
