-- BM25 moves from FTS5 to an in-memory index (rag::bm25) built from each
-- chunk's analysed terms (stemmed English, segmented Chinese, separated by
-- spaces), which are now stored with the chunk.
ALTER TABLE kb_chunks ADD COLUMN terms TEXT NOT NULL DEFAULT '';
DROP TABLE kb_fts;
-- The FTS5 table was contentless: it cannot give the terms back. An empty
-- fingerprint makes the next indexing run re-chunk every document.
UPDATE kb_documents SET fingerprint = '';
