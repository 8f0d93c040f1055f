-- Application settings as JSON values, keyed by a dotted name ("ui.theme").
CREATE TABLE settings (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL CHECK (json_valid(value))
) STRICT;
