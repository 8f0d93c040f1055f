-- The whole text of a tool result that was cut to fit the model's context
-- window (issue 33), kept with its conversation for `read_result` and the
-- inspector. `seq` is the model's handle ("result 3"), unique within the
-- conversation, so a copy of the conversation keeps the handles its notes name.
CREATE TABLE kept_results (
    tool_call_id    INTEGER PRIMARY KEY REFERENCES tool_calls(id) ON DELETE CASCADE,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    text            TEXT NOT NULL,
    chars           INTEGER NOT NULL,
    lines           INTEGER NOT NULL,
    sent_chars      INTEGER NOT NULL,
    UNIQUE (conversation_id, seq)
) STRICT;
