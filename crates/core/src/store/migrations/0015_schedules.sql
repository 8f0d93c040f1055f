-- Scheduled runs (issue 38): an assistant's prompt run at set times, each run
-- in a conversation of its own. `last_due` is the due time (Unix seconds) of
-- the last run started for the schedule, so a run missed while the computer
-- was off is found and made once. `running_session` is the store session (a
-- lease the OS drops with its process) that runs it now: two runs never overlap,
-- and one whose process died does not block the next.
CREATE TABLE schedules (
    id              INTEGER PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE,
    assistant       TEXT NOT NULL,
    prompt          TEXT NOT NULL,
    timing          TEXT NOT NULL,
    allowed_tools   TEXT NOT NULL DEFAULT '[]',
    created_at      INTEGER NOT NULL,
    last_due        INTEGER,
    running_session TEXT
) STRICT;

CREATE TABLE schedule_runs (
    id              INTEGER PRIMARY KEY,
    schedule_id     INTEGER NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    due_at          INTEGER,
    started_at      INTEGER NOT NULL,
    finished_at     INTEGER,
    status          TEXT NOT NULL,
    late            INTEGER NOT NULL DEFAULT 0,
    conversation_id INTEGER REFERENCES conversations(id) ON DELETE SET NULL,
    notes           TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX schedule_runs_by_schedule ON schedule_runs(schedule_id, id);
