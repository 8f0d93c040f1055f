-- Conversation ids are never given twice (AUTOINCREMENT): the window, quick ask's hand-over
-- and a schedule's run may still name a conversation that was deleted, and must not find a
-- newer one under its id. SQLite's procedure for changing a table: a new one, the rows
-- copied, the old one dropped (foreign keys are off while migrations run) and the new one
-- renamed, which the other tables' references then name again.
CREATE TABLE conversations_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    title         TEXT NOT NULL,
    assistant     TEXT,
    -- Overrides the assistant's system prompt when set.
    system_prompt TEXT,
    active_leaf   INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    pinned        INTEGER NOT NULL DEFAULT 0
) STRICT;

INSERT INTO conversations_new (id, title, assistant, system_prompt, active_leaf, created_at, updated_at, pinned)
SELECT id, title, assistant, system_prompt, active_leaf, created_at, updated_at, pinned FROM conversations;

DROP TABLE conversations;
ALTER TABLE conversations_new RENAME TO conversations;

-- A conversation's settings (model, assistant, tools: a JSON setting of the window's) go
-- with it, however it is deleted, in the same transaction; those left by conversations
-- deleted before are removed now.
CREATE TRIGGER conversations_settings_delete AFTER DELETE ON conversations BEGIN
    DELETE FROM settings WHERE key = 'conversation.' || old.id || '.settings';
END;

-- Conversations deleted before that had settings (a model or tools chosen in the window) left
-- those rows behind, the only record of their ids: the counter starts above those too, so none
-- of them is given again. (One deleted before with no settings row left no trace.)
INSERT INTO sqlite_sequence (name, seq)
SELECT 'conversations', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'conversations');
-- Only keys whose id is all digits (at most 18: an i64) count, so no key can push the counter
-- to its end.
UPDATE sqlite_sequence
SET seq = max(seq, (SELECT coalesce(max(CAST(substr(key, 14, length(key) - 22) AS INTEGER)), 0)
                    FROM settings
                    WHERE key GLOB 'conversation.[0-9]*.settings'
                      AND substr(key, 14, length(key) - 22) NOT GLOB '*[^0-9]*'
                      AND length(key) - 22 <= 18))
WHERE name = 'conversations';

DELETE FROM settings
WHERE key GLOB 'conversation.*.settings'
  AND CAST(substr(key, 14, length(key) - 22) AS INTEGER) NOT IN (SELECT id FROM conversations);
