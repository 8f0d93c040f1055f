-- Knowledge base: registered folders, indexed documents, their chunks, the
-- BM25 index over pre-analysed terms (FTS5, contentless) and embeddings.
CREATE TABLE kb_folders (
    path     TEXT PRIMARY KEY NOT NULL,
    added_at INTEGER NOT NULL
) STRICT;

-- Small facts about the knowledge base ("samples_seeded", "settings").
CREATE TABLE kb_meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE kb_documents (
    id         INTEGER PRIMARY KEY,
    folder     TEXT NOT NULL REFERENCES kb_folders(path) ON DELETE CASCADE,
    path       TEXT NOT NULL UNIQUE,
    fingerprint TEXT NOT NULL,
    kind       TEXT NOT NULL,
    bytes      INTEGER NOT NULL,
    indexed_at INTEGER NOT NULL
) STRICT;
CREATE INDEX kb_documents_folder ON kb_documents(folder);

CREATE TABLE kb_chunks (
    id         INTEGER PRIMARY KEY,
    doc_id     INTEGER NOT NULL REFERENCES kb_documents(id) ON DELETE CASCADE,
    ord        INTEGER NOT NULL,
    text       TEXT NOT NULL,
    heading    TEXT NOT NULL,
    line_start INTEGER NOT NULL,
    line_end   INTEGER NOT NULL
) STRICT;
CREATE INDEX kb_chunks_doc ON kb_chunks(doc_id);

-- rowid = kb_chunks.id; `terms` holds Patchbay's own analysis (stemmed English,
-- segmented Chinese) separated by spaces, so FTS5 only splits on whitespace.
CREATE VIRTUAL TABLE kb_fts USING fts5(terms, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0');

CREATE TABLE kb_vectors (
    chunk_id INTEGER PRIMARY KEY REFERENCES kb_chunks(id) ON DELETE CASCADE,
    model    TEXT NOT NULL,
    vector   BLOB NOT NULL
) STRICT;

-- Files the last run could not index, with the reason shown to the user.
CREATE TABLE kb_skipped (
    path   TEXT PRIMARY KEY NOT NULL,
    folder TEXT NOT NULL REFERENCES kb_folders(path) ON DELETE CASCADE,
    reason TEXT NOT NULL
) STRICT;
