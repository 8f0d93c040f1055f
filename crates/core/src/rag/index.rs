//! Incremental indexing of registered folders, by the knowledge base's settings.
//!
//! A run walks each folder (following symlinks, with loops detected), reads
//! the folder's stored fingerprints once, reports progress per file, and for
//! each file (on a helper thread, a few files ahead of the writer): reads it
//! (refusing FIFOs and files above the size limit), hashes it, and only when
//! the fingerprint (content hash + chunking settings + embeddings model)
//! changed extracts, chunks, analyses, embeds (the chunks of several files in
//! one call, [`EMBED_GROUP`]) and writes it in one transaction. Files that vanished are
//! dropped from the index. Every problem with one file becomes a
//! [`SkippedFile`] and the run goes on; only database and embeddings failures
//! stop it. Cancellation is checked between files.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::params;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::RagError;
use super::chunk::ChunkParams;
use super::chunk::chunk;
use super::embed::Embedder;
use super::embed::EmbeddingConfig;
use super::loader::{self, DocKind, Skip};
use super::store::{ChunkIndex, ChunkRecord, DocumentRecord, path_str};
use crate::store::Store;
use crate::text::analyze;

/// Progress of a run, sent before each file and once at the end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexProgress {
    pub files_done: usize,
    pub files_total: usize,
    /// The file being indexed now; `None` in the final event.
    pub current: Option<PathBuf>,
}

/// A file that was not indexed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    pub path: PathBuf,
    pub reason: Skip,
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IndexReport {
    /// Files (re)chunked and written.
    pub indexed: usize,
    /// Files whose fingerprint had not changed.
    pub unchanged: usize,
    /// Documents dropped because their file is gone.
    pub removed: usize,
    /// Chunks written.
    pub chunks: usize,
    pub skipped: Vec<SkippedFile>,
    /// Registered folders that do not exist now; their index is kept.
    pub missing_folders: Vec<PathBuf>,
}

/// Directories never descended into.
fn ignored_dir(name: &str) -> bool {
    name.starts_with('.') || matches!(name, "node_modules" | "target" | "__pycache__" | "venv")
}

/// Knowledge-base settings, stored as JSON in `kb_meta`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KbSettings {
    #[serde(default)]
    pub chunking: ChunkParams,
    /// Files above this size are skipped and reported.
    #[serde(default = "default_max_file_bytes")]
    pub max_file_bytes: u64,
    /// Embeddings, when the user turned them on.
    #[serde(default)]
    pub embeddings: Option<EmbeddingConfig>,
    /// Where models are downloaded from (a Hugging Face mirror); see `models::hub_url`.
    #[serde(default)]
    pub model_hub: Option<String>,
}

fn default_max_file_bytes() -> u64 {
    64 << 20
}

impl Default for KbSettings {
    fn default() -> Self {
        Self {
            chunking: ChunkParams::default(),
            max_file_bytes: default_max_file_bytes(),
            embeddings: None,
            model_hub: None,
        }
    }
}

/// One index run, executed on a blocking thread.
pub(super) struct Job {
    pub store: Store,
    pub index: Arc<dyn ChunkIndex>,
    pub settings: KbSettings,
    pub embedder: Option<Arc<dyn Embedder>>,
    pub runtime: tokio::runtime::Handle,
    pub cancel: CancellationToken,
}

enum Outcome {
    Indexed(usize),
    Unchanged,
}

/// A file ready to be written.
enum Prepared {
    Unchanged,
    Write(DocumentRecord, Vec<ChunkRecord>),
}

/// Files prepared ahead of the writer: enough to keep both threads busy,
/// few enough that memory stays small.
const PIPELINE_DEPTH: usize = 8;

/// Chunks embedded together, across files: a model computes a batch of many texts of similar
/// length far faster than the same texts a file (often one or two chunks) at a time.
const EMBED_GROUP: usize = 128;

/// Files held for one embedding call at most, however few chunks they have: their progress shows.
const EMBED_FILES: usize = 256;

/// Prepared files waiting for their chunks' vectors.
type Waiting = Vec<(PathBuf, Result<Prepared, FileError>)>;

impl Job {
    fn settings_fingerprint(&self) -> String {
        let c = self.settings.chunking;
        let model = self.embedder.as_ref().map_or("-", |e| e.model_id());
        format!("v1/{}/{}/{model}", c.chunk_tokens, c.overlap_tokens)
    }

    pub(super) fn run(&self, folders: &[PathBuf], progress: &dyn Fn(&IndexProgress)) -> Result<IndexReport, RagError> {
        let mut report = IndexReport::default();
        let mut plan = Vec::new();
        for folder in folders {
            if !folder.is_dir() {
                report.missing_folders.push(folder.clone());
                continue;
            }
            let (files, skipped) = walk(folder);
            plan.push((folder.clone(), files, skipped));
        }
        let total: usize = plan.iter().map(|(_, files, _)| files.len()).sum();
        let mut done = 0;
        let settings_fp = self.settings_fingerprint();
        // Checkpoints once at the end: with one small transaction per file,
        // the periodic checkpoints' fsyncs would cost more than the writes.
        let _bulk = self.store.bulk_writes()?;
        for (folder, files, mut skipped) in plan {
            let mut seen = HashSet::new();
            let known = self.index.fingerprints(&folder)?;
            // Two stages on two threads: this one writes each file in its own
            // transaction while a helper reads, hashes, chunks, analyses and
            // embeds the next ones. Dropping the receiver (an error, a
            // cancellation) stops the helper at its next send.
            std::thread::scope(|scope| -> Result<(), RagError> {
                let (tx, rx) = std::sync::mpsc::sync_channel(PIPELINE_DEPTH);
                let (folder, settings_fp, known) = (&folder, &settings_fp, &known);
                scope.spawn(move || {
                    let mut waiting: Waiting = Vec::new();
                    let mut chunks = 0;
                    for path in files {
                        if self.cancel.is_cancelled() {
                            return;
                        }
                        let prepared = self.prepare(folder, &path, settings_fp, known.get(&path));
                        let new = match &prepared {
                            Ok(Prepared::Write(_, records)) => records.len(),
                            _ => 0,
                        };
                        // Nothing to embed and nothing waiting: on to the writer at once (an
                        // unchanged folder is checked at the writer's pace, its progress shown).
                        if new == 0 && waiting.is_empty() {
                            if tx.send((path, prepared)).is_err() {
                                return;
                            }
                            continue;
                        }
                        chunks += new;
                        waiting.push((path, prepared));
                        if chunks >= EMBED_GROUP || waiting.len() >= EMBED_FILES || self.embedder.is_none() {
                            chunks = 0;
                            if !self.embed_and_send(&mut waiting, &tx) {
                                return;
                            }
                        }
                    }
                    self.embed_and_send(&mut waiting, &tx);
                });
                for (path, prepared) in rx {
                    if self.cancel.is_cancelled() {
                        return Err(RagError::Cancelled);
                    }
                    progress(&IndexProgress { files_done: done, files_total: total, current: Some(path.clone()) });
                    match prepared.and_then(|p| self.write(&path, p)) {
                        Ok(Outcome::Indexed(chunks)) => {
                            report.indexed += 1;
                            report.chunks += chunks;
                            seen.insert(path);
                        }
                        Ok(Outcome::Unchanged) => {
                            report.unchanged += 1;
                            seen.insert(path);
                        }
                        Err(FileError::Skip(reason)) => {
                            tracing::info!(path = %path.display(), %reason, "knowledge base: skipped");
                            skipped.push(SkippedFile { path, reason });
                        }
                        Err(FileError::Fatal(e)) => return Err(e),
                    }
                    done += 1;
                }
                // The helper stops early only when cancelled.
                if self.cancel.is_cancelled() { Err(RagError::Cancelled) } else { Ok(()) }
            })?;
            for doc in self.index.documents(&folder)? {
                if !seen.contains(&doc) && self.index.remove_document(&doc)? {
                    report.removed += 1;
                }
            }
            record_skips(&self.store, &folder, &skipped)?;
            report.skipped.extend(skipped);
        }
        progress(&IndexProgress { files_done: done, files_total: total, current: None });
        Ok(report)
    }

    /// Embeds the chunks of every file in `waiting` in one call, then hands the files to the
    /// writer in order; `false` when the writer is gone. A failed embedding fails the first file
    /// (it stops the run).
    fn embed_and_send(
        &self,
        waiting: &mut Waiting,
        tx: &std::sync::mpsc::SyncSender<(PathBuf, Result<Prepared, FileError>)>,
    ) -> bool {
        let mut files = std::mem::take(waiting);
        if let Some(embedder) = &self.embedder {
            let texts: Vec<String> = files
                .iter()
                .filter_map(|(_, p)| match p {
                    Ok(Prepared::Write(_, records)) => Some(records),
                    _ => None,
                })
                .flatten()
                .map(|r| embedding_text(&r.chunk))
                .collect();
            if !texts.is_empty() {
                let vectors = self.runtime.block_on(embedder.embed(&texts, &self.cancel)).and_then(|v| {
                    if v.len() == texts.len() {
                        Ok(v)
                    } else {
                        Err(RagError::Embedding { detail: format!("{} vectors for {} chunks", v.len(), texts.len()) })
                    }
                });
                match vectors {
                    Ok(vectors) => {
                        let mut vectors = vectors.into_iter();
                        for (_, prepared) in &mut files {
                            if let Ok(Prepared::Write(_, records)) = prepared {
                                for record in records {
                                    record.vector = vectors.next();
                                }
                            }
                        }
                    }
                    Err(e) => {
                        let (path, _) = files.swap_remove(0);
                        let _ = tx.send((path, Err(FileError::Fatal(e))));
                        return false;
                    }
                }
            }
        }
        files.into_iter().all(|file| tx.send(file).is_ok())
    }

    /// Everything for one file but the embedding and the write: read, hash and, when the
    /// fingerprint differs from the `stored` one, extract, chunk and analyse.
    fn prepare(
        &self,
        folder: &Path,
        path: &Path,
        settings_fp: &str,
        stored: Option<&String>,
    ) -> Result<Prepared, FileError> {
        let kind = DocKind::for_path(path).ok_or(FileError::Skip(Skip::Unsupported))?;
        let bytes = loader::read_bytes(path, self.settings.max_file_bytes)?;
        let fingerprint = format!("{}:{settings_fp}", hex::encode(Sha256::digest(&bytes)));
        if stored == Some(&fingerprint) {
            return Ok(Prepared::Unchanged);
        }
        let loaded = loader::extract(kind, &bytes)?;
        let chunks = chunk(&loaded.text, kind.is_markdown_like(), self.settings.chunking);
        let records: Vec<ChunkRecord> = chunks
            .into_iter()
            .map(|chunk| {
                let mut terms = String::with_capacity(chunk.text.len());
                analyze::push_terms(&chunk.heading, analyze::Purpose::Document, &mut terms);
                analyze::push_terms(&chunk.text, analyze::Purpose::Document, &mut terms);
                ChunkRecord { chunk, terms, vector: None }
            })
            .collect();
        let doc = DocumentRecord {
            folder: folder.to_path_buf(),
            path: path.to_path_buf(),
            fingerprint,
            kind: kind.as_str(),
            bytes: bytes.len() as u64,
        };
        Ok(Prepared::Write(doc, records))
    }

    /// Writes a prepared file in one transaction, unless it was deleted since
    /// it was read (the helper reads a few files ahead).
    fn write(&self, path: &Path, prepared: Prepared) -> Result<Outcome, FileError> {
        match prepared {
            Prepared::Unchanged => Ok(Outcome::Unchanged),
            Prepared::Write(doc, records) => {
                if let Err(e) = std::fs::symlink_metadata(path) {
                    return Err(FileError::Skip(Skip::Unreadable { detail: e.to_string() }));
                }
                self.index.put_document(&doc, &records, self.embedder.as_ref().map(|e| e.model_id()))?;
                Ok(Outcome::Indexed(records.len()))
            }
        }
    }
}

/// The text embedded for a chunk: its heading path gives the model context.
fn embedding_text(chunk: &super::Chunk) -> String {
    if chunk.heading.is_empty() { chunk.text.clone() } else { format!("{}\n\n{}", chunk.heading, chunk.text) }
}

enum FileError {
    Skip(Skip),
    Fatal(RagError),
}

impl From<Skip> for FileError {
    fn from(s: Skip) -> Self {
        Self::Skip(s)
    }
}

impl From<RagError> for FileError {
    fn from(e: RagError) -> Self {
        Self::Fatal(e)
    }
}

/// Candidate files of `folder`, and the entries that could not be walked.
fn walk(folder: &Path) -> (Vec<PathBuf>, Vec<SkippedFile>) {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let entries =
        walkdir::WalkDir::new(folder).follow_links(true).sort_by_file_name().into_iter().filter_entry(|e| {
            e.depth() == 0 || !e.file_type().is_dir() || !ignored_dir(&e.file_name().to_string_lossy())
        });
    for entry in entries {
        match entry {
            Ok(e) if e.file_type().is_dir() => {}
            Ok(e) if loader::is_supported(e.path()) => files.push(e.into_path()),
            Ok(e) => skipped.push(SkippedFile { path: e.into_path(), reason: Skip::Unsupported }),
            Err(e) => {
                let path = e.path().map_or_else(|| folder.to_path_buf(), Path::to_path_buf);
                let detail = match e.loop_ancestor() {
                    Some(ancestor) => format!("symlink loop back to {}", ancestor.display()),
                    None => e.io_error().map_or_else(|| e.to_string(), ToString::to_string),
                };
                skipped.push(SkippedFile { path, reason: Skip::Unreadable { detail } });
            }
        }
    }
    (files, skipped)
}

pub(super) fn record_skips(store: &Store, folder: &Path, skipped: &[SkippedFile]) -> Result<(), RagError> {
    let folder = path_str(folder);
    store.write(|tx| -> Result<(), RagError> {
        let map = |e| RagError::from(store.error(e));
        tx.execute("DELETE FROM kb_skipped WHERE folder = ?1", [&folder]).map_err(map)?;
        let mut stmt = tx
            .prepare_cached("INSERT OR REPLACE INTO kb_skipped (path, folder, reason) VALUES (?1, ?2, ?3)")
            .map_err(map)?;
        for s in skipped {
            let reason = serde_json::to_string(&s.reason).map_err(|source| RagError::Settings { source })?;
            stmt.execute(params![path_str(&s.path), folder, reason]).map_err(map)?;
        }
        Ok(())
    })
}
