//! The knowledge-base page: folders, indexing in the background, documents, search.
//! Its folders are also shared with MCP servers as roots (see `roots.rs`).
//!
//! Indexing runs on a spawned task per request; its progress goes to
//! [`AppEvent::KbProgress`](super::AppEvent::KbProgress) and into the
//! folder's state, so `kb_status` shows a bar even for a page opened later.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::views::{
    KbDocument, KbEmbeddings, KbEmbeddingsChoice, KbFolder, KbHit, KbProgress, KbProgressCount, document_title,
};
use super::{App, AppError, AppEvent, lock};
use crate::config::ProviderKind;
use crate::rag::{EmbeddingConfig, IndexProgress, KnowledgeBase};

/// How long files must be quiet before a changed folder is re-indexed.
const WATCH_QUIET: std::time::Duration = std::time::Duration::from_secs(2);

/// A folder's indexing state between status requests.
#[derive(Debug, Clone, Default)]
pub(crate) struct Indexing {
    pub(crate) progress: Option<KbProgressCount>,
    pub(crate) error: Option<String>,
}

impl App {
    /// The knowledge base as it is configured now.
    pub(crate) fn kb(&self) -> KnowledgeBase {
        self.inner.host.kb()
    }

    /// Where embeddings come from now.
    pub fn kb_embeddings(&self) -> Result<KbEmbeddings, AppError> {
        let config = self.kb().settings()?.embeddings;
        self.embeddings_view(config.as_ref())
    }

    fn embeddings_view(&self, config: Option<&EmbeddingConfig>) -> Result<KbEmbeddings, AppError> {
        let off = KbEmbeddings {
            kind: "off",
            provider: None,
            base_url: None,
            model: None,
            model_dir: None,
            english_only: false,
        };
        let english_only = config.is_some_and(EmbeddingConfig::english_only);
        Ok(match config {
            None => off,
            Some(EmbeddingConfig::Endpoint { base_url, model, .. }) => {
                let same = |url: &str| url.trim_end_matches('/') == base_url.trim_end_matches('/');
                let provider = self
                    .inner
                    .config
                    .providers()?
                    .into_iter()
                    .find(|p| p.kind == ProviderKind::OpenAi && same(&p.base_url))
                    .map(|p| p.name);
                KbEmbeddings {
                    kind: "endpoint",
                    provider,
                    base_url: Some(base_url.clone()),
                    model: Some(model.clone()),
                    english_only,
                    ..off
                }
            }
            Some(EmbeddingConfig::Local { model_dir }) => {
                KbEmbeddings { kind: "local", model_dir: Some(model_dir.display().to_string()), english_only, ..off }
            }
        })
    }

    /// Chooses where embeddings come from, saves it, puts it to use at once
    /// and re-indexes every folder (documents are embedded with the new
    /// model; until then search falls back to what the index has). A provider
    /// must speak the OpenAI API; a model folder must load. When the choice is
    /// refused, nothing changes.
    pub fn kb_set_embeddings(&self, choice: KbEmbeddingsChoice) -> Result<KbEmbeddings, AppError> {
        let config = match choice {
            KbEmbeddingsChoice::Off => None,
            KbEmbeddingsChoice::Provider { provider, model } => {
                let model = model.trim();
                if model.is_empty() {
                    return Err(AppError::Invalid("name the embeddings model (for example bge-m3)".into()));
                }
                let profile = self.inner.config.provider(provider.trim())?;
                if profile.kind != ProviderKind::OpenAi {
                    return Err(AppError::Invalid(format!(
                        "provider {} does not speak the OpenAI API, which has the /embeddings endpoint; \
                         pick an OpenAI-compatible provider (OpenAI, Ollama, vLLM…)",
                        profile.name
                    )));
                }
                Some(EmbeddingConfig::Endpoint {
                    base_url: profile.base_url,
                    model: model.to_owned(),
                    api_key_secret: profile.api_key,
                })
            }
            KbEmbeddingsChoice::Local { model_dir } => {
                if model_dir.trim().is_empty() {
                    return Err(AppError::Invalid("choose the model folder".into()));
                }
                Some(EmbeddingConfig::Local { model_dir: PathBuf::from(model_dir.trim()) })
            }
        };
        let kb = self.kb();
        let (saved, embedder) = kb.switch_embeddings(config, self.inner.secrets.as_ref())?;
        *self.inner.kb.write().unwrap_or_else(std::sync::PoisonError::into_inner) = kb.with_embedder(embedder);
        self.catch_up_and_watch()?;
        self.embeddings_view(saved.as_ref())
    }

    /// Folders with their counts and indexing state.
    pub fn kb_status(&self) -> Result<Vec<KbFolder>, AppError> {
        let status = self.kb().status()?;
        let indexing = lock(&self.inner.indexing);
        Ok(status
            .folders
            .into_iter()
            .map(|f| {
                let state = indexing.get(&f.path).cloned().unwrap_or_default();
                let (label, error) = match (&state.progress, &state.error) {
                    (Some(_), _) => ("indexing", None),
                    (None, Some(e)) => ("error", Some(e.clone())),
                    (None, None) if !f.exists => {
                        ("error", Some(format!("{} is missing; its index is kept", f.path.display())))
                    }
                    (None, None) => ("idle", None),
                };
                KbFolder {
                    path: f.path.display().to_string(),
                    documents: f.documents,
                    chunks: f.chunks,
                    state: label,
                    progress: state.progress,
                    error,
                }
            })
            .collect())
    }

    /// Adds a folder and starts indexing it.
    pub fn kb_add_folder(&self, path: &str) -> Result<(), AppError> {
        let folder = self.kb().add_folder(Path::new(path.trim()))?;
        self.watch_folders();
        self.spawn_sync_roots()?;
        self.spawn_index(vec![folder])
    }

    /// Brings every folder's index up to date, then keeps it current while
    /// files change (called at start and whenever the folder list changes).
    /// Once caught up, the search structures are loaded in the background.
    pub(crate) fn catch_up_and_watch(&self) -> Result<(), AppError> {
        self.watch_folders();
        let folders = self.kb().folders()?;
        let app = self.clone();
        self.spawn(async move {
            for folder in folders {
                app.index_folder(folder).await;
            }
            if let Err(e) = app.kb().warm_up(&app.inner.shutdown).await {
                tracing::warn!("loading the knowledge-base search index failed: {e}");
            }
        })
    }

    /// (Re)starts the watcher over the current folders. A folder that cannot
    /// be watched is still searchable; the failure is logged.
    fn watch_folders(&self) {
        let Some(runtime) = self.inner.runtime.get() else { return };
        let _entered = runtime.enter();
        let on_run = Arc::new(|run: Result<crate::rag::IndexReport, crate::rag::RagError>| {
            if let Err(e) = run {
                tracing::warn!("re-indexing after a change failed: {e}");
            }
        });
        match self.kb().watch(WATCH_QUIET, on_run) {
            Ok(watcher) => *lock(&self.inner.watcher) = Some(watcher),
            Err(e) => tracing::warn!("the knowledge-base folders are not watched: {e}"),
        }
    }

    /// Removes a folder and its documents from the index.
    pub fn kb_remove_folder(&self, path: &str) -> Result<(), AppError> {
        let path = Path::new(path.trim());
        self.kb().remove_folder(path)?;
        lock(&self.inner.indexing).remove(path);
        self.watch_folders();
        self.spawn_sync_roots()
    }

    /// Re-indexes one folder, or all of them.
    pub fn kb_reindex(&self, path: Option<&str>) -> Result<(), AppError> {
        let folders = self.kb().folders()?;
        let chosen = match path {
            None => folders,
            Some(p) => {
                let p = PathBuf::from(p.trim());
                if !folders.contains(&p) {
                    return Err(AppError::NotFound(format!("{} is not a knowledge-base folder", p.display())));
                }
                vec![p]
            }
        };
        self.spawn_index(chosen)
    }

    /// Indexes `folders` one after another in the background.
    fn spawn_index(&self, folders: Vec<PathBuf>) -> Result<(), AppError> {
        let app = self.clone();
        self.spawn(async move {
            for folder in folders {
                app.index_folder(folder).await;
            }
        })
    }

    async fn index_folder(&self, folder: PathBuf) {
        let start = KbProgressCount { done: 0, total: 0 };
        lock(&self.inner.indexing).insert(folder.clone(), Indexing { progress: Some(start), error: None });
        let weak = Arc::downgrade(&self.inner);
        let key = folder.clone();
        let progress = Arc::new(move |p: &IndexProgress| {
            let Some(inner) = weak.upgrade() else { return };
            let count = KbProgressCount { done: p.files_done, total: p.files_total };
            if let Some(state) = lock(&inner.indexing).get_mut(&key) {
                state.progress = Some(count);
            }
            let folder = key.display().to_string();
            inner.events.report(AppEvent::KbProgress(KbProgress { folder, done: count.done, total: count.total }));
        });
        let result = self.kb().index_folders(std::slice::from_ref(&folder), progress, &self.inner.shutdown).await;
        let error = result.err().map(|e| e.to_string());
        if let Some(e) = &error {
            tracing::warn!(folder = %folder.display(), "indexing failed: {e}");
        }
        lock(&self.inner.indexing).insert(folder.clone(), Indexing { progress: None, error });
        let folder = folder.display().to_string();
        let total =
            self.kb_status().ok().and_then(|s| s.into_iter().find(|f| f.path == folder)).map_or(0, |f| f.documents);
        let total = usize::try_from(total).unwrap_or(usize::MAX);
        self.inner.events.report(AppEvent::KbProgress(KbProgress { folder, done: total, total }));
    }

    /// The indexed documents of a folder with their chunk counts.
    pub fn kb_documents(&self, folder: &str) -> Result<Vec<KbDocument>, AppError> {
        let folder = Path::new(folder.trim());
        let kb = self.kb();
        kb.chunk_index()
            .documents(folder)?
            .into_iter()
            .map(|path| {
                let chunks = kb.document(&path)?.len() as u64;
                let path = path.display().to_string();
                Ok(KbDocument { title: document_title(&path), path, chunks })
            })
            .collect()
    }

    /// Whether knowledge-base searches are served from memory: true once the
    /// start-up catch-up has loaded the search index (or a search did).
    pub fn kb_search_ready(&self) -> bool {
        self.kb().chunk_index().is_warm()
    }

    /// Searches the knowledge base in its default mode, best first.
    pub async fn kb_search(&self, query: &str, limit: usize) -> Result<Vec<KbHit>, AppError> {
        if query.trim().is_empty() {
            return Err(AppError::Invalid("the search text is empty".into()));
        }
        let kb = self.kb();
        let passages = kb.search(query, kb.default_mode(), limit.clamp(1, 100)).await?;
        Ok(passages.into_iter().map(|p| hit(p, query)).collect())
    }
}

/// A passage found for `query` as the page shows it.
pub(super) fn hit(p: crate::rag::Excerpt, query: &str) -> KbHit {
    let path = p.path.display().to_string();
    let marks = crate::text::analyze::marks(&p.text, query);
    KbHit { document: document_title(&path), path, score: p.score, relevance: p.relevance(), text: p.text, marks }
}
