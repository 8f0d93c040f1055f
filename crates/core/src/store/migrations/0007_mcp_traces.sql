-- The raw JSON-RPC of every tool call (bounded), for the trace inspector and
-- the per-tool statistics of the MCP servers page.
CREATE TABLE mcp_traces (
    call_id         TEXT PRIMARY KEY NOT NULL,
    conversation_id INTEGER REFERENCES conversations(id) ON DELETE SET NULL,
    server          TEXT NOT NULL,
    tool            TEXT NOT NULL,
    request         TEXT NOT NULL,
    response        TEXT,
    is_error        INTEGER NOT NULL CHECK (is_error IN (0, 1)),
    started_at      INTEGER NOT NULL,
    duration_ms     INTEGER NOT NULL
) STRICT;

CREATE INDEX mcp_traces_tool ON mcp_traces(server, tool);
