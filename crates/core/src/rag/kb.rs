//! [`KnowledgeBase`]: registered folders, settings, indexing, status and search.
//!
//! A fresh data directory gets the sample documents shipped in the repository's
//! `knowledge_base/` copied to `<data dir>/knowledge_base` and registered; the
//! user can remove that folder like any other, and it is never seeded again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::OptionalExtension;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::RagError;
use super::embed::{self, Embedder, EmbeddingConfig, EndpointEmbedder};
use super::index::{self, IndexProgress, IndexReport, KbSettings, SkippedFile};
use super::local::LocalEmbedder;
use super::models;
use super::relevance;
use super::search::{Excerpt, SearchMode, reciprocal_rank_fusion};
use super::store::{ChunkIndex, IndexTotals, SqliteIndex, path_str};
use crate::paths::DataDir;
use crate::secrets::SecretStore;
use crate::store::Store;
use crate::text::analyze;

/// The sample documents shipped with Patchbay (`knowledge_base/` in the repository).
pub const SAMPLES: &[(&str, &str)] = &[
    ("patchbay-faq.md", include_str!("../../../../knowledge_base/patchbay-faq.md")),
    ("patchbay-faq.zh.md", include_str!("../../../../knowledge_base/patchbay-faq.zh.md")),
    ("notes/retrieval.md", include_str!("../../../../knowledge_base/notes/retrieval.md")),
    ("notes/检索说明.md", include_str!("../../../../knowledge_base/notes/检索说明.md")),
];

/// Name of the samples folder inside the data directory.
pub const SAMPLES_DIR: &str = "knowledge_base";

/// One registered folder in the status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FolderStatus {
    pub path: PathBuf,
    /// False when the folder is gone (unmounted, deleted); its index is kept.
    pub exists: bool,
    pub documents: u64,
    pub chunks: u64,
    pub skipped: u64,
}

/// What the knowledge-base page shows.
#[derive(Debug, Clone, Serialize)]
pub struct KbStatus {
    pub folders: Vec<FolderStatus>,
    pub totals: IndexTotals,
    pub embeddings: Option<EmbeddingConfig>,
    /// For example "MiniLM understands English only".
    pub embeddings_note: Option<String>,
    pub default_mode: SearchMode,
    /// Files the last runs skipped, with the reason.
    pub skipped: Vec<SkippedFile>,
}

/// The knowledge base of one data directory.
#[derive(Clone)]
pub struct KnowledgeBase {
    pub(super) store: Store,
    index: Arc<dyn ChunkIndex>,
    embedder: Option<Arc<dyn Embedder>>,
    run_lock: Arc<tokio::sync::Mutex<()>>,
    /// Where the shipped samples were put, when opened on a data directory.
    samples: Option<PathBuf>,
}

impl std::fmt::Debug for KnowledgeBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnowledgeBase")
            .field("store", &self.store)
            .field("embedder", &self.embedder.as_ref().map(|e| e.model_id().to_owned()))
            .finish_non_exhaustive()
    }
}

impl KnowledgeBase {
    /// Opens the knowledge base of `dir`, seeding the samples on first use. No embedder.
    pub fn open(dir: &DataDir, store: Store) -> Result<Self, RagError> {
        let samples = dir.path().join(SAMPLES_DIR);
        let mut kb = Self::with_index(store.clone(), Arc::new(SqliteIndex::new(store)));
        kb.seed_samples(&samples)?;
        kb.samples = Some(samples);
        Ok(kb)
    }

    /// Opens the knowledge base and the embedder its settings name (API keys from `secrets`).
    pub fn open_configured(dir: &DataDir, store: Store, secrets: &dyn SecretStore) -> Result<Self, RagError> {
        let kb = Self::open(dir, store)?;
        let embedder = kb.configured_embedder(secrets)?;
        Ok(kb.with_embedder(embedder))
    }

    /// A knowledge base over any [`ChunkIndex`] (folders and settings stay in `store`).
    pub fn with_index(store: Store, index: Arc<dyn ChunkIndex>) -> Self {
        Self { store, index, embedder: None, run_lock: Arc::new(tokio::sync::Mutex::new(())), samples: None }
    }

    /// Uses `embedder` for indexing and vector search.
    #[must_use]
    pub fn with_embedder(mut self, embedder: Option<Arc<dyn Embedder>>) -> Self {
        self.embedder = embedder;
        self
    }

    /// The embedder in use, if any.
    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// The chunk index behind this knowledge base.
    pub fn chunk_index(&self) -> &Arc<dyn ChunkIndex> {
        &self.index
    }

    fn seed_samples(&self, target: &Path) -> Result<(), RagError> {
        let seeded = self.meta("samples_seeded")?.is_some();
        if seeded {
            return Ok(());
        }
        for (rel, text) in SAMPLES {
            let path = target.join(rel);
            if path.exists() {
                continue;
            }
            let io = |source| RagError::Io { path: path.clone(), source };
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            std::fs::write(&path, text).map_err(io)?;
        }
        let folder = path_str(target);
        self.store.write(|tx| -> Result<(), RagError> {
            let map = |e| RagError::from(self.store.error(e));
            tx.execute("INSERT OR IGNORE INTO kb_folders (path, added_at) VALUES (?1, unixepoch())", [&folder])
                .map_err(map)?;
            tx.execute("INSERT INTO kb_meta (key, value) VALUES ('samples_seeded', '1')", []).map_err(map)?;
            Ok(())
        })
    }

    fn meta(&self, key: &str) -> Result<Option<String>, RagError> {
        Ok(self
            .store
            .read(|c| c.query_row("SELECT value FROM kb_meta WHERE key = ?1", [key], |r| r.get(0)).optional())?)
    }

    /// The settings (defaults when never saved).
    pub fn settings(&self) -> Result<KbSettings, RagError> {
        match self.meta("settings")? {
            Some(json) => serde_json::from_str(&json).map_err(|source| RagError::Settings { source }),
            None => Ok(KbSettings::default()),
        }
    }

    /// Saves the settings; the next index run re-chunks or re-embeds what they affect.
    pub fn save_settings(&self, settings: &KbSettings) -> Result<(), RagError> {
        let json = serde_json::to_string(settings).map_err(|source| RagError::Settings { source })?;
        self.store.write(|tx| -> Result<(), RagError> {
            tx.execute("INSERT OR REPLACE INTO kb_meta (key, value) VALUES ('settings', ?1)", [json])
                .map_err(|e| RagError::from(self.store.error(e)))?;
            Ok(())
        })
    }

    /// Chooses where embeddings come from (`None`: off) and saves it. A local
    /// model folder is loaded once to check it, and stored as its canonical
    /// path; a folder that is not a usable model is refused and nothing changes.
    /// The next index run embeds every document again.
    pub fn set_embeddings(&self, config: Option<EmbeddingConfig>) -> Result<Option<EmbeddingConfig>, RagError> {
        let (config, _) = checked_embeddings(config)?;
        self.save_embeddings(&config)?;
        Ok(config)
    }

    /// Like [`KnowledgeBase::set_embeddings`], and also returns the embedder
    /// for the new settings (a local model is loaded only once), to be put to
    /// use with [`KnowledgeBase::with_embedder`].
    pub fn switch_embeddings(
        &self,
        config: Option<EmbeddingConfig>,
        secrets: &dyn SecretStore,
    ) -> Result<EmbeddingsSwitch, RagError> {
        let (config, local) = checked_embeddings(config)?;
        let embedder = match (local, &config) {
            (Some(model), _) => Some(Arc::new(model) as Arc<dyn Embedder>),
            (None, Some(config)) => Some(embedder_for(config, secrets)?),
            (None, None) => None,
        };
        self.save_embeddings(&config)?;
        Ok((config, embedder))
    }

    fn save_embeddings(&self, config: &Option<EmbeddingConfig>) -> Result<(), RagError> {
        let mut settings = self.settings()?;
        settings.embeddings.clone_from(config);
        self.save_settings(&settings)
    }

    /// Builds the embedder the settings name, if any.
    pub fn configured_embedder(&self, secrets: &dyn SecretStore) -> Result<Option<Arc<dyn Embedder>>, RagError> {
        self.settings()?.embeddings.map(|config| embedder_for(&config, secrets)).transpose()
    }

    /// The hub models are downloaded from (the setting, else `HF_ENDPOINT`, else huggingface.co).
    pub fn model_hub(&self) -> Result<String, RagError> {
        models::hub_url(self.settings()?.model_hub.as_deref())
    }

    /// Sets the hub models are downloaded from (`None`: back to the default); returns the hub now used.
    pub fn set_model_hub(&self, url: Option<&str>) -> Result<String, RagError> {
        let url = url.map(models::check_hub).transpose()?;
        let mut settings = self.settings()?;
        settings.model_hub = url;
        self.save_settings(&settings)?;
        self.model_hub()
    }

    /// The catalogue's models as found in `root` ([`models::models_dir`]): what each front end
    /// lists. The suggestion is multilingual when the window speaks Chinese (`chinese_ui`) or the
    /// user's documents hold Han text.
    pub fn models(&self, root: &Path, chinese_ui: bool) -> Result<Vec<ModelListing>, RagError> {
        let in_use = match self.settings()?.embeddings {
            Some(EmbeddingConfig::Local { model_dir }) => Some(model_dir),
            _ => None,
        };
        let suggested = models::suggested(chinese_ui, self.has_han_documents()?);
        Ok(models::CATALOGUE
            .iter()
            .map(|model| {
                let folder = root.join(model.name);
                // The setting holds the folder's canonical path.
                let here = std::fs::canonicalize(&folder).unwrap_or_else(|_| folder.clone());
                ModelListing {
                    model,
                    state: models::state(root, model),
                    in_use: in_use.as_ref().is_some_and(|dir| *dir == here || *dir == folder),
                    suggested: model.name == suggested.name,
                    folder,
                }
            })
            .collect())
    }

    /// Whether the user's documents (the shipped samples aside) hold Han text: then a
    /// multilingual model is the one to suggest.
    fn has_han_documents(&self) -> Result<bool, RagError> {
        let samples = self.samples.as_deref().map(path_str).unwrap_or_default();
        let texts: Vec<String> = self.store.read(|c| {
            let mut stmt = c.prepare(
                "SELECT c.text FROM kb_chunks c JOIN kb_documents d ON d.id = c.doc_id \
                 WHERE d.folder != ?1 LIMIT 500",
            )?;
            stmt.query_map([samples], |r| r.get(0))?.collect()
        })?;
        Ok(texts.iter().any(|t| analyze::has_han(t)))
    }

    /// Registered folders, in the order they were added.
    pub fn folders(&self) -> Result<Vec<PathBuf>, RagError> {
        Ok(self.store.read(|c| {
            let mut stmt = c.prepare("SELECT path FROM kb_folders ORDER BY added_at, rowid")?;
            stmt.query_map([], |r| r.get::<_, String>(0).map(PathBuf::from))?.collect()
        })?)
    }

    /// Registers a folder (stored as its canonical path, which is returned).
    pub fn add_folder(&self, path: &Path) -> Result<PathBuf, RagError> {
        let canonical = crate::folder::canonical(path)?;
        let key = path_str(&canonical);
        self.store.write(|tx| -> Result<(), RagError> {
            let inserted = tx
                .execute("INSERT OR IGNORE INTO kb_folders (path, added_at) VALUES (?1, unixepoch())", [&key])
                .map_err(|e| RagError::from(self.store.error(e)))?;
            if inserted == 0 {
                return Err(RagError::AlreadyRegistered { path: canonical.clone() });
            }
            Ok(())
        })?;
        Ok(canonical)
    }

    /// Unregisters a folder and drops its documents from the index (the files stay).
    pub fn remove_folder(&self, path: &Path) -> Result<(), RagError> {
        let registered = self.folders()?;
        let found = registered
            .iter()
            .find(|f| f.as_path() == path)
            .or_else(|| {
                let canonical = std::fs::canonicalize(path).ok()?;
                registered.iter().find(|f| **f == canonical)
            })
            .cloned()
            .ok_or_else(|| RagError::NotRegistered { path: path.to_path_buf() })?;
        // Through the index, one document at a time, so that its in-memory
        // search structures follow; a run cut short leaves documents of a
        // still-registered folder, which the next run removes or keeps.
        for doc in self.index.documents(&found)? {
            self.index.remove_document(&doc)?;
        }
        let key = path_str(&found);
        self.store.write(|tx| -> Result<(), RagError> {
            tx.execute("DELETE FROM kb_folders WHERE path = ?1", [&key])
                .map_err(|e| RagError::from(self.store.error(e)))?;
            Ok(())
        })?;
        Ok(())
    }

    /// Indexes every registered folder. See [`KnowledgeBase::index_folders`].
    pub async fn index(
        &self,
        progress: Arc<dyn Fn(&IndexProgress) + Send + Sync>,
        cancel: &CancellationToken,
    ) -> Result<IndexReport, RagError> {
        let folders = self.folders()?;
        self.index_folders(&folders, progress, cancel).await
    }

    /// Brings the index of `folders` up to date: new and changed files are
    /// (re)indexed, each in one transaction; unchanged files cost one hash;
    /// deleted files leave the index. Runs one at a time per knowledge base.
    pub async fn index_folders(
        &self,
        folders: &[PathBuf],
        progress: Arc<dyn Fn(&IndexProgress) + Send + Sync>,
        cancel: &CancellationToken,
    ) -> Result<IndexReport, RagError> {
        let _running = tokio::select! {
            guard = self.run_lock.lock() => guard,
            () = cancel.cancelled() => return Err(RagError::Cancelled),
        };
        let job = index::Job {
            store: self.store.clone(),
            index: Arc::clone(&self.index),
            settings: self.settings()?,
            embedder: self.embedder.clone(),
            runtime: tokio::runtime::Handle::current(),
            cancel: cancel.clone(),
        };
        let folders = folders.to_vec();
        let index = Arc::clone(&self.index);
        tokio::task::spawn_blocking(move || {
            let report = job.run(&folders, progress.as_ref())?;
            // The next start then reads the postings instead of building them.
            if let Err(e) = index.save() {
                tracing::warn!("keeping the search index beside the database failed: {e}");
            }
            Ok(report)
        })
        .await
        .map_err(|e| RagError::Io { path: PathBuf::new(), source: std::io::Error::other(e.to_string()) })?
    }

    /// Loads the BM25 search structures in the background thread pool, so the
    /// first search after start-up does not build them; returns when they are
    /// loaded or `cancel` fired.
    pub async fn warm_up(&self, cancel: &CancellationToken) -> Result<(), RagError> {
        let index = Arc::clone(&self.index);
        let cancel = cancel.clone();
        tokio::task::spawn_blocking(move || index.warm_up(&cancel))
            .await
            .map_err(|e| RagError::Io { path: PathBuf::new(), source: std::io::Error::other(e.to_string()) })?
    }

    /// Mode used when the caller does not choose: hybrid with embeddings, else BM25.
    pub fn default_mode(&self) -> SearchMode {
        if self.embedder.is_some() { SearchMode::Hybrid } else { SearchMode::Bm25 }
    }

    /// Status for the knowledge-base page and `patchbay kb status`.
    pub fn status(&self) -> Result<KbStatus, RagError> {
        let settings = self.settings()?;
        let (counts, skipped) = self.store.read(|c| {
            let mut stmt = c.prepare(
                "SELECT f.path, (SELECT count(*) FROM kb_documents d WHERE d.folder = f.path), \
                 (SELECT count(*) FROM kb_skipped s WHERE s.folder = f.path), \
                 (SELECT count(*) FROM kb_chunks c JOIN kb_documents d ON d.id = c.doc_id WHERE d.folder = f.path) \
                 FROM kb_folders f ORDER BY f.added_at, f.rowid",
            )?;
            let counts = stmt
                .query_map([], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut stmt = c.prepare("SELECT path, reason FROM kb_skipped ORDER BY path")?;
            let skipped = stmt
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok((counts, skipped))
        })?;
        let folders = counts
            .into_iter()
            .map(|(path, documents, skipped, chunks)| {
                let path = PathBuf::from(path);
                FolderStatus {
                    exists: path.is_dir(),
                    path,
                    documents: documents as u64,
                    chunks: chunks as u64,
                    skipped: skipped as u64,
                }
            })
            .collect();
        let skipped = skipped
            .into_iter()
            .filter_map(|(path, reason)| {
                Some(SkippedFile { path: PathBuf::from(path), reason: serde_json::from_str(&reason).ok()? })
            })
            .collect();
        Ok(KbStatus {
            folders,
            totals: self.index.totals()?,
            embeddings_note: settings.embeddings.as_ref().and_then(|e| e.language_note()).map(str::to_owned),
            // From the settings: the status is also read without loading the embedder.
            default_mode: if settings.embeddings.is_some() { SearchMode::Hybrid } else { SearchMode::Bm25 },
            embeddings: settings.embeddings,
            skipped,
        })
    }

    /// Chunks of an indexed document, in order (for citations and MCP resources).
    pub fn document(&self, path: &Path) -> Result<Vec<Excerpt>, RagError> {
        self.index.document_passages(path)
    }

    /// Every indexed document, grouped by folder order.
    pub fn documents(&self) -> Result<Vec<PathBuf>, RagError> {
        let mut out = Vec::new();
        for folder in self.folders()? {
            out.extend(self.index.documents(&folder)?);
        }
        Ok(out)
    }

    /// Nearest passages to `query` by meaning; `terms` are its analysed terms.
    async fn vector_search(&self, query: &str, terms: &[String], top_k: usize) -> Result<Vec<Excerpt>, RagError> {
        let embedder = self.embedder.as_ref().ok_or(RagError::NoEmbeddings)?;
        let vectors = embedder.embed(&[query.to_owned()], &CancellationToken::new()).await?;
        let vector = vectors.first().ok_or_else(|| RagError::Embedding { detail: "no vector for the query".into() })?;
        let mut found = self.index.nearest(vector, embedder.model_id(), terms, top_k)?;
        for p in &mut found {
            p.similarity = Some(p.score);
        }
        Ok(found)
    }
}

/// A model of the catalogue as [`KnowledgeBase::models`] finds it.
#[derive(Debug, Clone)]
pub struct ModelListing {
    pub model: &'static models::CatalogueModel,
    pub state: models::ModelState,
    /// The knowledge base embeds with it now.
    pub in_use: bool,
    /// The one to pick.
    pub suggested: bool,
    /// Where it is, or will be, kept.
    pub folder: PathBuf,
}

/// What [`KnowledgeBase::switch_embeddings`] saved, and the embedder for it.
pub type EmbeddingsSwitch = (Option<EmbeddingConfig>, Option<Arc<dyn Embedder>>);

/// The settings as they are stored (a local folder canonical), with the local
/// model loaded when there is one, which checks that it is usable.
fn checked_embeddings(
    config: Option<EmbeddingConfig>,
) -> Result<(Option<EmbeddingConfig>, Option<LocalEmbedder>), RagError> {
    Ok(match config {
        Some(EmbeddingConfig::Local { model_dir }) => {
            let model = LocalEmbedder::load(&model_dir)?;
            (Some(EmbeddingConfig::Local { model_dir: model.dir().to_path_buf() }), Some(model))
        }
        other => (other, None),
    })
}

/// The embedder `config` names; an endpoint's API key comes from `secrets`.
fn embedder_for(config: &EmbeddingConfig, secrets: &dyn SecretStore) -> Result<Arc<dyn Embedder>, RagError> {
    Ok(match config {
        EmbeddingConfig::Endpoint { base_url, model, api_key_secret } => {
            let key = match api_key_secret {
                Some(name) => secrets.get(name)?,
                None => None,
            };
            Arc::new(EndpointEmbedder::new(base_url, model, key))
        }
        EmbeddingConfig::Local { model_dir } => Arc::new(LocalEmbedder::load(model_dir)?),
    })
}

/// How many candidates each ranking contributes to hybrid fusion.
fn fusion_depth(top_k: usize) -> usize {
    (top_k * 4).max(50)
}

impl KnowledgeBase {
    /// The best `top_k` excerpts for `query`, best first, each with its relevance. Hybrid search
    /// with a model that reads English only is keyword search for a query not in the Latin script
    /// (as tool search does): the model's vectors of text it cannot read are alike, and would find
    /// anything.
    pub async fn search(&self, query: &str, mode: SearchMode, top_k: usize) -> Result<Vec<Excerpt>, RagError> {
        // Ranked by what is asked: polite filler ("please", "请问") neither finds nor ranks.
        let terms = analyze::terms(query, analyze::Purpose::Query);
        let content: Vec<String> = relevance::content_terms(&terms).into_iter().map(str::to_owned).collect();
        let bm25 = |k| self.index.bm25(&content, k);
        let unreadable =
            self.embedder.as_ref().is_some_and(|e| embed::english_only(e.model_id())) && !analyze::is_latin(query);
        let mode = if mode == SearchMode::Hybrid && unreadable { SearchMode::Bm25 } else { mode };
        Ok(match mode {
            SearchMode::Bm25 => bm25(top_k)?,
            SearchMode::Vector => self.vector_search(query, &terms, top_k).await?,
            SearchMode::Hybrid => {
                let depth = fusion_depth(top_k);
                let vector = self.vector_search(query, &terms, depth).await?;
                reciprocal_rank_fusion(&[bm25(depth)?, vector], top_k)
            }
        })
    }
}
