//! Where chunks live: the [`ChunkIndex`] trait and its SQLite implementation.
//!
//! [`SqliteIndex`] keeps documents and chunks in the app's database, each chunk with its analysed
//! terms ([`super::analyze`]), and embeddings as little-endian `f32` blobs. Both are searched in
//! memory: BM25 over postings of chunks and of whole documents ([`crate::text::bm25`]) built from
//! the stored terms on the first query and then updated by every write, vectors exactly (cosine)
//! over a copy reloaded after writes (sqlite-vec 0.1 also scans every vector, and needs `unsafe`
//! extension loading). Each document is written in one transaction, so a crash never leaves half a
//! file in the index.
//!
//! A server-side engine (Qdrant, a RAGFlow knowledge base over MCP) would be another implementation,
//! given to `KnowledgeBase::with_index`: documents upserted and deleted by path, its own searches for
//! `bm25` and `nearest`, folders and settings still in SQLite. The trait is synchronous; a remote
//! engine would make it `async` (the indexer already runs on a blocking thread).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use rusqlite::{OptionalExtension, params};
use tokio_util::sync::CancellationToken;

use rustc_hash::FxHashMap;

use super::RagError;
use super::chunk::Chunk;
use super::relevance;
use super::saved;
use super::search::Excerpt;
use crate::store::Store;
use crate::text::bm25::{self, Bm25Index};

/// A document as the index records it.
#[derive(Debug, Clone)]
pub struct DocumentRecord {
    /// The registered folder it belongs to.
    pub folder: PathBuf,
    pub path: PathBuf,
    /// Content hash plus the settings that shaped its chunks; equal means "nothing to do".
    pub fingerprint: String,
    pub kind: &'static str,
    pub bytes: u64,
}

/// One chunk with its analysed terms and, when embeddings are on, its vector.
#[derive(Debug, Clone)]
pub struct ChunkRecord {
    pub chunk: Chunk,
    /// Analysed terms ([`crate::text::analyze::push_terms`]), space-separated.
    pub terms: String,
    pub vector: Option<Vec<f32>>,
}

/// Totals for the status page.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IndexTotals {
    pub documents: u64,
    pub chunks: u64,
    pub vectors: u64,
}

/// Storage and search of chunks. The SQLite implementation is the default;
/// a remote engine can implement the same contract.
pub trait ChunkIndex: Send + Sync {
    /// The stored fingerprint of every indexed document under a registered folder.
    fn fingerprints(&self, folder: &Path) -> Result<HashMap<PathBuf, String>, RagError>;
    /// Replaces everything stored for `doc` with `chunks`, atomically.
    fn put_document(&self, doc: &DocumentRecord, chunks: &[ChunkRecord], model: Option<&str>) -> Result<(), RagError>;
    /// Removes a document; `false` if it was not indexed.
    fn remove_document(&self, path: &Path) -> Result<bool, RagError>;
    /// Indexed documents under a registered folder.
    fn documents(&self, folder: &Path) -> Result<Vec<PathBuf>, RagError>;
    /// Best chunks for analysed query terms, by BM25 (a chunk's own plus its document's), each with
    /// its [`Excerpt::term_match`].
    fn bm25(&self, terms: &[String], top_k: usize) -> Result<Vec<Excerpt>, RagError>;
    /// Loads what BM25 searches need into memory now, so that the first query
    /// does not wait for it; stops early (loading nothing) when `cancel` fires.
    fn warm_up(&self, cancel: &CancellationToken) -> Result<(), RagError>;
    /// Whether the BM25 search structures are in memory.
    fn is_warm(&self) -> bool;
    /// Keeps the BM25 search structures beside the index, so that the next start reads them
    /// instead of building them; does nothing when they are not in memory, kept already, or no
    /// longer match the stored chunks.
    fn save(&self) -> Result<(), RagError>;
    /// Nearest chunks to `vector` among those embedded with `model` (cosine similarity), each with
    /// its [`Excerpt::term_match`] for the analysed query `terms`.
    fn nearest(&self, vector: &[f32], model: &str, terms: &[String], top_k: usize) -> Result<Vec<Excerpt>, RagError>;
    /// The chunks of one document, in order.
    fn document_passages(&self, path: &Path) -> Result<Vec<Excerpt>, RagError>;
    /// Counts for the status page.
    fn totals(&self) -> Result<IndexTotals, RagError>;
}

/// Chunks read per database access while the postings are built.
const POSTINGS_BATCH: i64 = 4096;

/// BM25 over chunks and over whole documents. A chunk scores its own BM25 plus its document's, so
/// that a document's evidence spread over several chunks counts (and its title, which its later
/// chunks lack), while a citation still points to its best chunk (docs/BENCHMARKS.md: Cranfield
/// cut into 64-token chunks ranks as well as whole-document BM25).
#[derive(Default)]
struct ChunkAndDocBm25 {
    /// Chunks, each in its document's group.
    chunks: Bm25Index,
    /// Each document as the concatenation of its chunks' terms.
    docs: Bm25Index,
    /// The generation of the stored chunks these postings match ([`saved::generation`]);
    /// `None` when unknown (another process wrote while they were built or changed).
    generation: Option<i64>,
}

impl ChunkAndDocBm25 {
    /// Adds a document (not live in the index) with its chunks' ids and stored terms.
    fn add_document<'a>(&mut self, doc: i64, chunks: impl IntoIterator<Item = (i64, &'a str)>) {
        let mut all = String::new();
        let mut any = false;
        for (id, terms) in chunks {
            self.chunks.add_in(id, doc, terms);
            all.push(' ');
            all.push_str(terms);
            any = true;
        }
        // As when the postings are built from the database, which has no row for an empty document.
        if any {
            self.docs.add(doc, &all);
        }
    }

    /// Removes a document whose chunks had these ids and stored terms.
    fn remove_document(&mut self, doc: i64, chunks: &[(i64, String)]) {
        let mut all = String::new();
        for (id, terms) in chunks {
            self.chunks.remove(*id, terms);
            all.push(' ');
            all.push_str(terms);
        }
        self.docs.remove(doc, &all);
    }

    /// After a write of this process moved the chunks' generation from `before` to `after`: the
    /// postings still match the stored chunks if they matched `before`.
    fn followed(&mut self, (before, after): (i64, i64)) {
        self.generation = self.generation.filter(|g| *g == before).map(|_| after);
    }

    fn search(&self, terms: &[String], top_k: usize) -> Vec<(i64, f64)> {
        let docs: FxHashMap<i64, f64> = self.docs.scores(terms).into_iter().collect();
        let hits = self.chunks.scores_plus(terms, |doc| docs.get(&doc).copied().unwrap_or(0.0));
        bm25::best(hits, top_k)
    }

    fn shrink_to_fit(&mut self) {
        self.chunks.shrink_to_fit();
        self.docs.shrink_to_fit();
    }
}

/// Embeddings of one model held in memory for exact search.
struct VectorCache {
    model: String,
    dim: usize,
    ids: Vec<i64>,
    /// Unit-length vectors, `dim` floats each.
    data: Vec<f32>,
}

/// The default index, in the app's SQLite database.
#[derive(Clone)]
pub struct SqliteIndex {
    store: Store,
    vectors: Arc<RwLock<Option<VectorCache>>>,
    /// BM25 postings, `None` until the first query. Writers hold the write
    /// lock across their transaction, so the postings never miss a commit.
    postings: Arc<RwLock<Option<ChunkAndDocBm25>>>,
    /// The generation of the postings file beside the database, as this process last read or wrote it.
    saved: Arc<Mutex<Option<i64>>>,
}

impl std::fmt::Debug for SqliteIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteIndex").field("store", &self.store).finish_non_exhaustive()
    }
}

pub(super) fn path_str(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

const PASSAGE_SELECT: &str = "SELECT c.id, d.path, c.heading, c.line_start, c.line_end, c.text, c.terms \
     FROM kb_chunks c JOIN kb_documents d ON d.id = c.doc_id";

/// A query's content terms and their weights, to judge passages by ([`relevance::term_match`]).
struct Matcher<'a> {
    terms: Vec<&'a str>,
    weights: Vec<f64>,
}

fn passage_from_row(row: &rusqlite::Row<'_>, score: f64, matcher: Option<&Matcher<'_>>) -> rusqlite::Result<Excerpt> {
    let term_match = match matcher {
        Some(m) => {
            let words: std::collections::HashSet<&str> = row.get_ref(6)?.as_str()?.split(' ').collect();
            relevance::term_match(&m.terms, &m.weights, &words)
        }
        None => 0.0,
    };
    Ok(Excerpt {
        chunk_id: row.get(0)?,
        path: PathBuf::from(row.get::<_, String>(1)?),
        heading: row.get(2)?,
        line_start: row.get(3)?,
        line_end: row.get(4)?,
        text: row.get(5)?,
        score,
        term_match,
        similarity: None,
        origin: None,
    })
}

fn unit(v: &[f32]) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 { v.iter().map(|x| x / norm).collect() } else { v.to_vec() }
}

impl SqliteIndex {
    /// The index in `store` (its tables come with the schema).
    pub fn new(store: Store) -> Self {
        Self {
            store,
            vectors: Arc::new(RwLock::new(None)),
            postings: Arc::new(RwLock::new(None)),
            saved: Arc::new(Mutex::new(None)),
        }
    }

    /// The postings saved beside the database, if they match the stored chunks. A file that cannot
    /// be read is logged and left to be replaced.
    fn read_saved(&self) -> Option<ChunkAndDocBm25> {
        let path = saved::path(self.store.path())?;
        let generation = self.store.read(saved::generation).ok()?;
        if !self.store.read(saved::tracked).unwrap_or(false) {
            tracing::warn!("the database no longer tracks changes to its chunks; the saved search index is not used");
            return None;
        }
        match saved::load::<2>(&path, generation) {
            Ok(Some([chunks, docs])) => {
                *self.saved.lock().unwrap_or_else(|p| p.into_inner()) = Some(generation);
                Some(ChunkAndDocBm25 { chunks, docs, generation: Some(generation) })
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!("the saved search index {} is not usable ({e}); building it again", path.display());
                None
            }
        }
    }

    /// Builds the BM25 postings from the stored terms unless they are built.
    /// Builds the postings from the stored terms unless they are built;
    /// leaves them unbuilt when `cancel` fires first. The rows are read in
    /// batches, so other users of the database wait for one batch at most;
    /// writes to the index wait for the whole build (they need the postings).
    fn load_postings(&self, cancel: &CancellationToken) -> Result<(), RagError> {
        if self.is_warm() {
            return Ok(());
        }
        let mut guard = self.postings.write().unwrap_or_else(|p| p.into_inner());
        if guard.is_some() {
            return Ok(());
        }
        if let Some(index) = self.read_saved() {
            *guard = Some(index);
            return Ok(());
        }
        let before = self.store.read(saved::generation)?;
        let mut index = ChunkAndDocBm25::default();
        // Read in document order, so that a document's chunks come together (across batches too).
        let mut after = (i64::MIN, i64::MIN);
        let mut doc: Option<(i64, Vec<(i64, String)>)> = None;
        loop {
            if cancel.is_cancelled() {
                return Ok(());
            }
            let rows: Vec<(i64, i64, String)> = self.store.read(|c| {
                let mut stmt = c.prepare_cached(
                    "SELECT doc_id, id, terms FROM kb_chunks WHERE (doc_id, id) > (?1, ?2) \
                     ORDER BY doc_id, id LIMIT ?3",
                )?;
                stmt.query_map(params![after.0, after.1, POSTINGS_BATCH], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })?;
            let Some(&(doc_id, id, _)) = rows.last() else { break };
            after = (doc_id, id);
            for (doc_id, id, terms) in rows {
                match &mut doc {
                    Some((current, chunks)) if *current == doc_id => chunks.push((id, terms)),
                    _ => {
                        if let Some((done, chunks)) = doc.replace((doc_id, vec![(id, terms)])) {
                            index.add_document(done, chunks.iter().map(|(id, t)| (*id, t.as_str())));
                        }
                    }
                }
            }
        }
        if let Some((done, chunks)) = doc {
            index.add_document(done, chunks.iter().map(|(id, t)| (*id, t.as_str())));
        }
        index.shrink_to_fit();
        // Writers here wait for the lock; one in another process moves the generation on.
        let after = self.store.read(saved::generation)?;
        index.generation = (before == after).then_some(after);
        *guard = Some(index);
        Ok(())
    }

    fn invalidate_vectors(&self) {
        *self.vectors.write().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn load_vectors(&self, model: &str) -> Result<(), RagError> {
        if self.vectors.read().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|c| c.model == model) {
            return Ok(());
        }
        let (ids, blobs) = self.store.read(|c| {
            let mut stmt = c.prepare("SELECT chunk_id, vector FROM kb_vectors WHERE model = ?1")?;
            let rows = stmt.query_map([model], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))?;
            let mut ids = Vec::new();
            let mut blobs = Vec::new();
            for row in rows {
                let (id, blob) = row?;
                ids.push(id);
                blobs.push(blob);
            }
            Ok((ids, blobs))
        })?;
        let dim = blobs.first().map_or(0, |b| b.len() / 4);
        let mut data = Vec::with_capacity(dim * ids.len());
        for blob in &blobs {
            if blob.len() != dim * 4 {
                return Err(RagError::Embedding { detail: format!("stored vectors of {model} differ in length") });
            }
            data.extend(blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
        }
        *self.vectors.write().unwrap_or_else(|p| p.into_inner()) =
            Some(VectorCache { model: model.to_owned(), dim, ids, data });
        Ok(())
    }

    /// The query's content terms, weighted by how rare they are here.
    fn matcher<'a>(&self, terms: &'a [String]) -> Result<Matcher<'a>, RagError> {
        self.load_postings(&CancellationToken::new())?;
        let content = relevance::content_terms(terms);
        let guard = self.postings.read().unwrap_or_else(|p| p.into_inner());
        let weights = guard.as_ref().map_or_else(
            || vec![1.0; content.len()],
            |index| content.iter().map(|t| index.chunks.term_weight(t)).collect(),
        );
        Ok(Matcher { terms: content, weights })
    }

    fn passages_by_id(&self, scored: &[(i64, f64)], matcher: Option<&Matcher<'_>>) -> Result<Vec<Excerpt>, RagError> {
        let passages = self.store.read(|c| {
            let mut stmt = c.prepare_cached(&format!("{PASSAGE_SELECT} WHERE c.id = ?1"))?;
            let mut out = Vec::with_capacity(scored.len());
            for &(id, score) in scored {
                if let Some(p) = stmt.query_row([id], |r| passage_from_row(r, score, matcher)).optional()? {
                    out.push(p);
                }
            }
            Ok(out)
        })?;
        Ok(passages)
    }
}

impl ChunkIndex for SqliteIndex {
    fn fingerprints(&self, folder: &Path) -> Result<HashMap<PathBuf, String>, RagError> {
        Ok(self.store.read(|c| {
            c.prepare_cached("SELECT path, fingerprint FROM kb_documents WHERE folder = ?1")?
                .query_map([path_str(folder)], |r| Ok((PathBuf::from(r.get::<_, String>(0)?), r.get(1)?)))?
                .collect()
        })?)
    }

    fn put_document(&self, doc: &DocumentRecord, chunks: &[ChunkRecord], model: Option<&str>) -> Result<(), RagError> {
        let path = path_str(&doc.path);
        let mut postings = self.postings.write().unwrap_or_else(|p| p.into_inner());
        let (removed, added, generations) = self.store.write(|tx| -> Result<_, RagError> {
            let map = |e| RagError::from(self.store.error(e));
            let before = saved::generation(tx).map_err(map)?;
            let removed = delete_document(tx, &path).map_err(map)?;
            tx.prepare_cached(
                "INSERT INTO kb_documents (folder, path, fingerprint, kind, bytes, indexed_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, unixepoch())",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![path_str(&doc.folder), path, doc.fingerprint, doc.kind, doc.bytes as i64])
            })
            .map_err(map)?;
            let doc_id = tx.last_insert_rowid();
            let mut chunk_stmt = tx
                .prepare_cached(
                    "INSERT INTO kb_chunks (doc_id, ord, text, heading, line_start, line_end, terms) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(map)?;
            let mut vec_stmt = tx
                .prepare_cached("INSERT INTO kb_vectors (chunk_id, model, vector) VALUES (?1, ?2, ?3)")
                .map_err(map)?;
            let mut added = Vec::with_capacity(chunks.len());
            for (ord, record) in chunks.iter().enumerate() {
                let c = &record.chunk;
                chunk_stmt
                    .execute(params![
                        doc_id,
                        ord as i64,
                        c.text,
                        c.heading,
                        c.line_start as i64,
                        c.line_end as i64,
                        record.terms
                    ])
                    .map_err(map)?;
                let chunk_id = tx.last_insert_rowid();
                added.push(chunk_id);
                if let (Some(vector), Some(model)) = (&record.vector, model) {
                    let blob: Vec<u8> = unit(vector).iter().flat_map(|x| x.to_le_bytes()).collect();
                    vec_stmt.execute(params![chunk_id, model, blob]).map_err(map)?;
                }
            }
            let after = saved::generation(tx).map_err(map)?;
            Ok((removed, (doc_id, added), (before, after)))
        })?;
        if let Some(index) = postings.as_mut() {
            if let Some((doc, chunks)) = &removed {
                index.remove_document(*doc, chunks);
            }
            let (doc, ids) = added;
            index.add_document(doc, ids.into_iter().zip(chunks.iter().map(|r| r.terms.as_str())));
            index.followed(generations);
        }
        drop(postings);
        if model.is_some() || removed.is_some() {
            self.invalidate_vectors();
        }
        Ok(())
    }

    fn remove_document(&self, path: &Path) -> Result<bool, RagError> {
        let mut postings = self.postings.write().unwrap_or_else(|p| p.into_inner());
        let (removed, generations) = self.store.write(|tx| -> Result<_, RagError> {
            let map = |e| RagError::from(self.store.error(e));
            let before = saved::generation(tx).map_err(map)?;
            let removed = delete_document(tx, &path_str(path)).map_err(map)?;
            Ok((removed, (before, saved::generation(tx).map_err(map)?)))
        })?;
        let Some((doc, chunks)) = removed else { return Ok(false) };
        if let Some(index) = postings.as_mut() {
            index.remove_document(doc, &chunks);
            index.followed(generations);
        }
        drop(postings);
        self.invalidate_vectors();
        Ok(true)
    }

    fn documents(&self, folder: &Path) -> Result<Vec<PathBuf>, RagError> {
        Ok(self.store.read(|c| {
            let mut stmt = c.prepare("SELECT path FROM kb_documents WHERE folder = ?1 ORDER BY path")?;
            stmt.query_map([path_str(folder)], |r| r.get::<_, String>(0).map(PathBuf::from))?.collect()
        })?)
    }

    fn bm25(&self, terms: &[String], top_k: usize) -> Result<Vec<Excerpt>, RagError> {
        if terms.is_empty() || top_k == 0 {
            return Ok(Vec::new());
        }
        self.load_postings(&CancellationToken::new())?;
        let scored =
            self.postings.read().unwrap_or_else(|p| p.into_inner()).as_ref().map(|index| index.search(terms, top_k));
        self.passages_by_id(&scored.unwrap_or_default(), Some(&self.matcher(terms)?))
    }

    fn warm_up(&self, cancel: &CancellationToken) -> Result<(), RagError> {
        self.load_postings(cancel)?;
        if let Err(e) = self.save() {
            tracing::warn!("keeping the search index beside the database failed: {e}");
        }
        Ok(())
    }

    fn save(&self) -> Result<(), RagError> {
        let Some(path) = saved::path(self.store.path()) else { return Ok(()) };
        // Writers wait while the postings are written (about a second at a million chunks).
        // Locks in the order `load_postings` takes them: postings, then saved.
        let guard = self.postings.read().unwrap_or_else(|p| p.into_inner());
        let mut on_disk = self.saved.lock().unwrap_or_else(|p| p.into_inner());
        let Some(index) = guard.as_ref() else { return Ok(()) };
        let Some(generation) = index.generation.filter(|g| *on_disk != Some(*g)) else { return Ok(()) };
        if self.store.read(saved::generation)? != generation {
            return Ok(()); // another process changed the chunks: these postings do not show it
        }
        saved::save(&path, generation, &[&index.chunks, &index.docs])
            .map_err(|source| RagError::Io { path: path.clone(), source })?;
        *on_disk = Some(generation);
        Ok(())
    }

    fn is_warm(&self) -> bool {
        self.postings.read().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    fn nearest(&self, vector: &[f32], model: &str, terms: &[String], top_k: usize) -> Result<Vec<Excerpt>, RagError> {
        self.load_vectors(model)?;
        let query = unit(vector);
        let scored: Vec<(i64, f64)> = {
            let guard = self.vectors.read().unwrap_or_else(|p| p.into_inner());
            let Some(cache) = guard.as_ref().filter(|c| c.model == model && !c.ids.is_empty()) else {
                return Ok(Vec::new());
            };
            if cache.dim != query.len() {
                return Err(RagError::Embedding {
                    detail: format!(
                        "the query vector has {} dimensions, the index {} ({model}); re-index after changing models",
                        query.len(),
                        cache.dim
                    ),
                });
            }
            let mut scored: Vec<(i64, f64)> = cache
                .data
                .chunks_exact(cache.dim)
                .zip(&cache.ids)
                .map(|(v, &id)| (id, f64::from(v.iter().zip(&query).map(|(a, b)| a * b).sum::<f32>())))
                .collect();
            let k = top_k.min(scored.len());
            if k == 0 {
                return Ok(Vec::new());
            }
            scored.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1));
            scored.truncate(k);
            scored.sort_by(|a, b| b.1.total_cmp(&a.1));
            scored
        };
        self.passages_by_id(&scored, Some(&self.matcher(terms)?))
    }

    fn document_passages(&self, path: &Path) -> Result<Vec<Excerpt>, RagError> {
        Ok(self.store.read(|c| {
            let mut stmt = c.prepare(&format!("{PASSAGE_SELECT} WHERE d.path = ?1 ORDER BY c.ord"))?;
            stmt.query_map([path_str(path)], |r| passage_from_row(r, 0.0, None))?.collect()
        })?)
    }

    fn totals(&self) -> Result<IndexTotals, RagError> {
        Ok(self.store.read(|c| {
            let count = |sql: &str| c.query_row(sql, [], |r| r.get::<_, i64>(0)).map(|n| n as u64);
            Ok(IndexTotals {
                documents: count("SELECT count(*) FROM kb_documents")?,
                chunks: count("SELECT count(*) FROM kb_chunks")?,
                vectors: count("SELECT count(*) FROM kb_vectors")?,
            })
        })?)
    }
}

/// A document's id, and its chunks' ids and terms.
type DeletedDocument = (i64, Vec<(i64, String)>);

/// Deletes a document with its chunks and vectors; the deleted document, or
/// `None` if there was no such document.
fn delete_document(tx: &rusqlite::Transaction<'_>, path: &str) -> rusqlite::Result<Option<DeletedDocument>> {
    let Some(doc_id) = tx
        .prepare_cached("SELECT id FROM kb_documents WHERE path = ?1")?
        .query_row([path], |r| r.get::<_, i64>(0))
        .optional()?
    else {
        return Ok(None);
    };
    let chunks = tx
        .prepare_cached("SELECT id, terms FROM kb_chunks WHERE doc_id = ?1")?
        .query_map([doc_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    tx.prepare_cached("DELETE FROM kb_documents WHERE id = ?1")?.execute([doc_id])?;
    Ok(Some((doc_id, chunks)))
}
