-- Conversations as a tree of messages. Regenerating or editing creates a
-- sibling (same parent); `active_leaf` marks the branch the user sees.
CREATE TABLE conversations (
    id            INTEGER PRIMARY KEY,
    title         TEXT NOT NULL,
    assistant     TEXT,
    -- Overrides the assistant's system prompt when set.
    system_prompt TEXT,
    active_leaf   INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
) STRICT;

CREATE TABLE messages (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    parent_id       INTEGER REFERENCES messages(id) ON DELETE CASCADE,
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    -- streaming: being written (a crash leaves it so); complete; stopped (by the user);
    -- error; round_limit (the tool-round limit ended the turn).
    status          TEXT NOT NULL CHECK (status IN ('streaming', 'complete', 'stopped', 'error', 'round_limit')),
    -- The visible answer text (all rounds); flushed while streaming.
    text            TEXT NOT NULL DEFAULT '',
    -- Attachments of a user message (resources, prompt text), JSON array.
    attachments     TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(attachments)),
    -- Knowledge-base passages the answer was given, JSON array.
    citations       TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(citations)),
    provider        TEXT,
    model           TEXT,
    input_tokens    INTEGER,
    output_tokens   INTEGER,
    error           TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;

CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
CREATE INDEX messages_by_parent ON messages(parent_id, id);

-- The ordered pieces of an assistant message: text and reasoning per round,
-- and the tool calls of each round.
CREATE TABLE message_parts (
    message_id   INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    round        INTEGER NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('text', 'reasoning', 'tool_call')),
    text         TEXT NOT NULL DEFAULT '',
    tool_call_id INTEGER REFERENCES tool_calls(id) ON DELETE CASCADE,
    PRIMARY KEY (message_id, position)
) STRICT;

CREATE TABLE tool_calls (
    id          INTEGER PRIMARY KEY,
    message_id  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    round       INTEGER NOT NULL,
    -- The provider's call id.
    call_id     TEXT NOT NULL,
    -- Model-facing name, and the real server and tool when known.
    name        TEXT NOT NULL,
    server      TEXT,
    tool        TEXT,
    arguments   TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'cancelled')),
    -- Result content parts, JSON array.
    result      TEXT CHECK (result IS NULL OR json_valid(result)),
    is_error    INTEGER NOT NULL DEFAULT 0,
    started_at  INTEGER NOT NULL,
    duration_ms INTEGER
) STRICT;

CREATE INDEX tool_calls_by_message ON tool_calls(message_id, id);

-- "Allow for this conversation" approvals, by model-facing tool name.
CREATE TABLE conversation_tool_grants (
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    tool            TEXT NOT NULL,
    PRIMARY KEY (conversation_id, tool)
) STRICT;

-- Full-text search over message text. The trigram tokenizer matches any
-- substring of three or more characters, so Chinese, Japanese and Korean
-- text (no spaces between words) is found as well as English.
CREATE VIRTUAL TABLE messages_fts USING fts5(
    text,
    content = 'messages',
    content_rowid = 'id',
    tokenize = 'trigram'
);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
END;

-- Assistant presets, one JSON document each (like providers).
CREATE TABLE assistants (
    name       TEXT PRIMARY KEY NOT NULL,
    position   INTEGER NOT NULL,
    doc        TEXT NOT NULL CHECK (json_valid(doc)),
    updated_at INTEGER NOT NULL
) STRICT;
