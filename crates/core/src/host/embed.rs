//! Tool search's embeddings: the knowledge base's embedding model behind the agent's
//! [`ToolEmbedder`] seam. Vectors are kept for the host's life by model and text, batch by
//! batch as they come, so a turn embeds only the tools (and queries) not seen yet, and a slow
//! model still gets through a long tool list over a few searches. A model that fails or stalls
//! is left alone for a while: search goes on by words meanwhile.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::agent::{RetrievalError, ToolEmbedder};
use crate::rag::embed::{EMBED_BATCH, Embedder};

/// The most vectors kept; past it the cache starts again.
const MAX_KEPT: usize = 5_000;
/// How long one batch may take.
const BATCH_WAIT: Duration = Duration::from_secs(10);
/// How long a model that failed or stalled is left alone.
const BACK_OFF: Duration = Duration::from_secs(120);

/// Vectors by (model, text), and until when the model is left alone.
#[derive(Default)]
pub(crate) struct VectorCache {
    vectors: Mutex<HashMap<(String, String), Vec<f32>>>,
    resting_until: Mutex<Option<Instant>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The knowledge base's embedder, for tool search.
pub(crate) struct KbToolEmbedder {
    pub(crate) embedder: Arc<dyn Embedder>,
    pub(crate) english_only: bool,
    pub(crate) cache: Arc<VectorCache>,
}

impl KbToolEmbedder {
    /// Embeds `batch`, keeping its vectors; a failure or a stall rests the model.
    async fn batch(
        &self,
        model: &str,
        batch: &[String],
        cancel: &CancellationToken,
    ) -> Result<Vec<Vec<f32>>, RetrievalError> {
        let failed = |message: String| {
            *lock(&self.cache.resting_until) = Some(Instant::now() + BACK_OFF);
            RetrievalError { message }
        };
        let vectors = match tokio::time::timeout(BATCH_WAIT, self.embedder.embed(batch, cancel)).await {
            Ok(Ok(vectors)) if vectors.len() == batch.len() => vectors,
            Ok(Ok(vectors)) => {
                return Err(failed(format!("{model}: {} vectors for {} texts", vectors.len(), batch.len())));
            }
            Ok(Err(e)) if cancel.is_cancelled() => return Err(RetrievalError { message: e.to_string() }),
            Ok(Err(e)) => return Err(failed(format!("{model}: {e}"))),
            Err(_) => return Err(failed(format!("{model} gave no vectors within {} s", BATCH_WAIT.as_secs()))),
        };
        let mut cache = lock(&self.cache.vectors);
        if cache.len() + batch.len() > MAX_KEPT {
            cache.clear();
        }
        cache.extend(batch.iter().map(|t| (model.to_owned(), t.clone())).zip(vectors.iter().cloned()));
        Ok(vectors)
    }
}

#[async_trait::async_trait]
impl ToolEmbedder for KbToolEmbedder {
    async fn embed(&self, texts: &[String], cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RetrievalError> {
        if let Some(until) = *lock(&self.cache.resting_until)
            && Instant::now() < until
        {
            return Err(RetrievalError { message: "the embedding model failed a moment ago; by words for now".into() });
        }
        let model = self.embedder.model_id().to_owned();
        let key = |t: &String| (model.clone(), t.clone());
        let mut found: HashMap<&String, Vec<f32>> = HashMap::new();
        let mut missing: Vec<String> = Vec::new();
        {
            let cache = lock(&self.cache.vectors);
            for t in texts {
                match cache.get(&key(t)) {
                    Some(v) => drop(found.insert(t, v.clone())),
                    None => missing.push(t.clone()),
                }
            }
        }
        missing.sort();
        missing.dedup();
        for batch in missing.chunks(EMBED_BATCH) {
            let vectors = self.batch(&model, batch, cancel).await?;
            for (text, vector) in batch.iter().zip(vectors) {
                if let Some(t) = texts.iter().find(|t| *t == text) {
                    found.insert(t, vector);
                }
            }
        }
        texts
            .iter()
            .map(|t| found.get(t).cloned())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| RetrievalError { message: format!("{model} returned fewer vectors than texts") })
    }

    fn english_only(&self) -> bool {
        self.english_only
    }
}
