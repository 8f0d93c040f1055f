//! Tool search's embeddings: the knowledge base's embedding model behind the agent's
//! [`ToolEmbedder`] seam. Vectors are kept for the host's life by model and text, so a turn
//! embeds only the tools (and queries) it has not seen: a tool's text rarely changes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::agent::{RetrievalError, ToolEmbedder};
use crate::rag::embed::Embedder;

/// The most vectors kept; past it the cache starts again.
const MAX_KEPT: usize = 20_000;

/// Vectors by (model, text).
pub(crate) type VectorCache = Mutex<HashMap<(String, String), Vec<f32>>>;

/// The knowledge base's embedder, for tool search.
pub(crate) struct KbToolEmbedder {
    pub(crate) embedder: Arc<dyn Embedder>,
    pub(crate) english_only: bool,
    pub(crate) cache: Arc<VectorCache>,
}

fn lock(cache: &VectorCache) -> std::sync::MutexGuard<'_, HashMap<(String, String), Vec<f32>>> {
    cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[async_trait::async_trait]
impl ToolEmbedder for KbToolEmbedder {
    async fn embed(&self, texts: &[String], cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RetrievalError> {
        let model = self.embedder.model_id().to_owned();
        let mut missing: Vec<String> = {
            let cache = lock(&self.cache);
            texts.iter().filter(|t| !cache.contains_key(&(model.clone(), (*t).clone()))).cloned().collect()
        };
        missing.sort();
        missing.dedup();
        if !missing.is_empty() {
            let vectors = self
                .embedder
                .embed(&missing, cancel)
                .await
                .map_err(|e| RetrievalError { message: format!("embedding the tools: {e}") })?;
            let mut cache = lock(&self.cache);
            if cache.len() + missing.len() > MAX_KEPT {
                cache.clear();
            }
            cache.extend(missing.into_iter().map(|t| (model.clone(), t)).zip(vectors));
        }
        let cache = lock(&self.cache);
        texts
            .iter()
            .map(|t| cache.get(&(model.clone(), t.clone())).cloned())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| RetrievalError { message: format!("{model} returned fewer vectors than texts") })
    }

    fn english_only(&self) -> bool {
        self.english_only
    }
}
