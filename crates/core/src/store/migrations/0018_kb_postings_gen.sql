-- The knowledge base's BM25 postings are saved beside the database (kb-postings.bin, rag/saved.rs)
-- so that the first search after a start does not rebuild them from every chunk. The file records
-- this value; every change to the chunks, by this process or another, draws a new one (random, not
-- a count: a database restored from a backup and changed again must not meet an old file's value).
CREATE TABLE kb_postings_gen (n INTEGER NOT NULL);
INSERT INTO kb_postings_gen (n) VALUES (random());
CREATE TRIGGER kb_chunks_insert_moves AFTER INSERT ON kb_chunks BEGIN UPDATE kb_postings_gen SET n = random(); END;
CREATE TRIGGER kb_chunks_delete_moves AFTER DELETE ON kb_chunks BEGIN UPDATE kb_postings_gen SET n = random(); END;
CREATE TRIGGER kb_chunks_update_moves AFTER UPDATE OF id, doc_id, terms ON kb_chunks
BEGIN UPDATE kb_postings_gen SET n = random(); END;
