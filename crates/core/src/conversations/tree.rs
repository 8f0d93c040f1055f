//! The message tree: the active branch, paging through it, switching and
//! forking branches, deleting a message with its replies.

use std::collections::{HashMap, HashSet};

use rusqlite::OptionalExtension;

use super::{
    BranchMessage, BranchPage, Conversation, ConversationError, ConversationId, ConversationStore, Message, MessageId,
};
use crate::clock::now_ms;
use crate::store::Store;

impl ConversationStore {
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
                                          unavailable, provider, model, input_tokens, output_tokens, error,
                                          created_at, updated_at)
                     SELECT ?2, ?3, role, CASE status WHEN 'streaming' THEN 'interrupted' ELSE status END, text,
                            attachments, citations, unavailable, provider, model, input_tokens, output_tokens, error,
                            created_at, updated_at
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
                    let to = tx.last_insert_rowid();
                    super::kept::copy_kept(tx, call, to, copy).map_err(err)?;
                    mapped.insert(call, to);
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

/// Message ids from the root down to `leaf`.
pub(super) fn path_to(parents: &HashMap<MessageId, Option<MessageId>>, leaf: MessageId) -> Vec<MessageId> {
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
