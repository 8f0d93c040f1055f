-- Every MCP server gets an identity of its own, which a server added later
-- under the same name does not share, and "allow for this conversation" is
-- pinned to it, to the server's own tool name and to a fingerprint of the
-- tool's definition (issue 30). Grants by model-facing name are dropped:
-- they were not pinned, so those tools ask once more.
CREATE TABLE mcp_servers_new (
    name       TEXT PRIMARY KEY NOT NULL,
    position   INTEGER NOT NULL,
    doc        TEXT NOT NULL CHECK (json_valid(doc)),
    updated_at INTEGER NOT NULL,
    id         TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(16))))
) STRICT;
INSERT INTO mcp_servers_new(name, position, doc, updated_at) SELECT name, position, doc, updated_at FROM mcp_servers;
DROP TABLE mcp_servers;
ALTER TABLE mcp_servers_new RENAME TO mcp_servers;

DROP TABLE conversation_tool_grants;
CREATE TABLE conversation_tool_grants (
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    -- `mcp_servers.id`, or the name of a server that is not stored (the built-in one).
    server_id       TEXT NOT NULL,
    tool            TEXT NOT NULL,
    fingerprint     TEXT NOT NULL,
    PRIMARY KEY (conversation_id, server_id, tool)
) STRICT;

-- A deleted server takes its grants along, however it is deleted.
CREATE TRIGGER mcp_servers_drop_grants AFTER DELETE ON mcp_servers BEGIN
    DELETE FROM conversation_tool_grants WHERE server_id = old.id;
END;
