-- Provider profiles and MCP server entries, one JSON document each, so that
-- fields this build does not know (kept from imports) survive a round trip.
CREATE TABLE providers (
    name       TEXT PRIMARY KEY NOT NULL,
    position   INTEGER NOT NULL,
    doc        TEXT NOT NULL CHECK (json_valid(doc)),
    updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE mcp_servers (
    name       TEXT PRIMARY KEY NOT NULL,
    position   INTEGER NOT NULL,
    doc        TEXT NOT NULL CHECK (json_valid(doc)),
    updated_at INTEGER NOT NULL
) STRICT;
