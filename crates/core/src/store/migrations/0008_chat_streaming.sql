-- Opaque state a provider attaches to a tool call and wants back unchanged
-- with it in later requests (Gemini's thoughtSignature). NULL: none.
ALTER TABLE tool_calls ADD COLUMN signature TEXT;

-- A message is in the full-text index only once it has stopped streaming:
-- re-indexing a long answer's whole text on every 250 ms flush cost tens of
-- milliseconds each. The text reaches the index when the status changes
-- (complete, stopped, error, interrupted, ...).
INSERT INTO messages_fts(messages_fts, rowid, text)
    SELECT 'delete', id, text FROM messages WHERE status = 'streaming';

DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.status != 'streaming' BEGIN
    INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.status != 'streaming' BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF text, status ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text)
        SELECT 'delete', old.id, old.text WHERE old.status != 'streaming';
    INSERT INTO messages_fts(rowid, text)
        SELECT new.id, new.text WHERE new.status != 'streaming';
END;
