-- Messages gain the status `interrupted` (Patchbay stopped, or was killed,
-- while the answer streamed; the text written so far is kept) and `writer`,
-- the session of the process writing a streaming message, so start-up
-- recovery never touches a turn another running process is still writing.
-- A CHECK constraint cannot be altered in place: the table is rebuilt with
-- the same ids, so the FTS index (keyed by id) and every reference stay valid.
-- Migrations run with foreign keys off, so dropping the old table cascades nowhere.
CREATE TABLE messages_new (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    parent_id       INTEGER REFERENCES messages(id) ON DELETE CASCADE,
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    -- streaming: being written by the session in `writer`; complete; stopped (by the user);
    -- error; round_limit (the tool-round limit ended the turn); interrupted (the writer died).
    status          TEXT NOT NULL
                    CHECK (status IN ('streaming', 'complete', 'stopped', 'error', 'round_limit', 'interrupted')),
    text            TEXT NOT NULL DEFAULT '',
    attachments     TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(attachments)),
    citations       TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(citations)),
    provider        TEXT,
    model           TEXT,
    input_tokens    INTEGER,
    output_tokens   INTEGER,
    error           TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    -- The writing session's id while status is 'streaming' (see store::Session).
    writer          TEXT
) STRICT;

INSERT INTO messages_new(id, conversation_id, parent_id, role, status, text, attachments, citations, provider,
                         model, input_tokens, output_tokens, error, created_at, updated_at)
SELECT id, conversation_id, parent_id, role, status, text, attachments, citations, provider,
       model, input_tokens, output_tokens, error, created_at, updated_at
FROM messages;

DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;

CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
CREATE INDEX messages_by_parent ON messages(parent_id, id);
CREATE INDEX messages_streaming ON messages(status) WHERE status = 'streaming';

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
