//! Embeddings: the [`Embedder`] trait and its implementations.
//!
//! - [`EndpointEmbedder`]: any OpenAI-compatible `/v1/embeddings` endpoint
//!   (OpenAI, Ollama, vLLM, llama.cpp server).
//! - [`LocalEmbedder`](super::local::LocalEmbedder): a BERT-family model
//!   folder run in-process.
//!
//! all-MiniLM-L6-v2 is English-only: for Chinese pick a multilingual model
//! (a local folder, or an endpoint model such as Ollama's bge-m3).
//!
//! Every call has a timeout and honours a cancellation token. Vectors are
//! returned as produced; the index normalises them for cosine similarity.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::embeddings::{CreateEmbeddingRequest, EmbeddingInput};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::RagError;

/// How long one embeddings request may take.
pub const EMBED_TIMEOUT: Duration = Duration::from_secs(60);

/// Texts per request to an endpoint or per batch of the local model.
pub const EMBED_BATCH: usize = 32;

/// Turns texts into vectors.
#[async_trait::async_trait]
pub trait Embedder: Send + Sync {
    /// Identifies the model; vectors of different models are never compared.
    fn model_id(&self) -> &str;
    /// One vector per text, in order.
    async fn embed(&self, texts: &[String], cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RagError>;
}

/// Where a knowledge base gets its embeddings from (stored in its settings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EmbeddingConfig {
    /// An OpenAI-compatible endpoint. `api_key_secret` names a secret in the keyring.
    Endpoint { base_url: String, model: String, api_key_secret: Option<String> },
    /// A local model folder (config.json, tokenizer.json, model.safetensors).
    Local { model_dir: std::path::PathBuf },
}

impl EmbeddingConfig {
    /// Whether the model is known to understand English only (the all-MiniLM
    /// family, judged by its name; multilingual MiniLM variants are not).
    pub fn english_only(&self) -> bool {
        match self {
            Self::Endpoint { model, .. } => english_only(model),
            Self::Local { model_dir } => english_only(&model_dir.to_string_lossy()),
        }
    }

    /// A note for the UI about the languages the model handles, when known.
    pub fn language_note(&self) -> Option<&'static str> {
        self.english_only()
            .then_some("all-MiniLM-L6-v2 understands English only; for Chinese pick a multilingual model (bge-small-zh-v1.5: `patchbay kb model get bge-small-zh-v1.5`, or an endpoint's bge-m3)")
    }
}

/// Whether the model `name` (a model id, folder or [`Embedder::model_id`]) is known to
/// understand English only: the all-MiniLM family, but not its multilingual variants.
pub fn english_only(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.contains("minilm") && !name.contains("multilingual")
}

/// Runs `work` with the embeddings timeout and the caller's cancellation.
pub(super) async fn bounded<T>(
    cancel: &CancellationToken,
    work: impl std::future::Future<Output = Result<T, RagError>>,
) -> Result<T, RagError> {
    tokio::select! {
        () = cancel.cancelled() => Err(RagError::Cancelled),
        result = tokio::time::timeout(EMBED_TIMEOUT, work) => {
            result.unwrap_or(Err(RagError::Timeout { what: "embeddings request", after: EMBED_TIMEOUT }))
        }
    }
}

/// Embeddings from an OpenAI-compatible endpoint.
pub struct EndpointEmbedder {
    client: Client<OpenAIConfig>,
    model: String,
    id: String,
    /// Dimensions of the first answer (0 until then); every later vector must match.
    dim: AtomicUsize,
}

impl std::fmt::Debug for EndpointEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointEmbedder").field("id", &self.id).finish_non_exhaustive()
    }
}

impl EndpointEmbedder {
    /// An embedder for `model` at `base_url` (e.g. `http://127.0.0.1:11434/v1`).
    pub fn new(base_url: &str, model: &str, api_key: Option<String>) -> Self {
        let config =
            OpenAIConfig::new().with_api_base(base_url.trim_end_matches('/')).with_api_key(api_key.unwrap_or_default());
        Self {
            client: Client::with_config(config).with_http_client(crate::net::client()),
            model: model.to_owned(),
            id: format!("endpoint:{base_url}#{model}"),
            dim: AtomicUsize::new(0),
        }
    }
}

impl EndpointEmbedder {
    /// Refuses empty vectors and vectors whose length differs from the first answer's.
    fn check_dimensions(&self, len: usize) -> Result<(), RagError> {
        if len == 0 {
            return Err(RagError::Embedding { detail: format!("{} returned an empty vector", self.id) });
        }
        match self.dim.compare_exchange(0, len, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => Ok(()),
            Err(expected) if expected == len => Ok(()),
            Err(expected) => Err(RagError::Embedding {
                detail: format!(
                    "{} returned a {len}-dimensional vector, but its earlier vectors have {expected} dimensions; \
                     the endpoint changed models? Re-index after changing models",
                    self.id
                ),
            }),
        }
    }
}

#[async_trait::async_trait]
impl Embedder for EndpointEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    async fn embed(&self, texts: &[String], cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RagError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(EMBED_BATCH) {
            let request = CreateEmbeddingRequest {
                model: self.model.clone(),
                input: EmbeddingInput::StringArray(batch.to_vec()),
                encoding_format: None,
                user: None,
                dimensions: None,
            };
            let response = bounded(cancel, async {
                self.client
                    .embeddings()
                    .create(request)
                    .await
                    .map_err(|e| RagError::Embedding { detail: format!("{}: {e}", self.id) })
            })
            .await?;
            let mut data = response.data;
            if data.len() != batch.len() {
                return Err(RagError::Embedding {
                    detail: format!("{} returned {} vectors for {} texts", self.id, data.len(), batch.len()),
                });
            }
            data.sort_by_key(|e| e.index);
            for e in &data {
                self.check_dimensions(e.embedding.len())?;
            }
            out.extend(data.into_iter().map(|e| e.embedding));
        }
        Ok(out)
    }
}

/// A deterministic embedder for unit tests: hashed bag of analysed terms.
#[cfg(test)]
pub(crate) struct HashEmbedder;

#[cfg(test)]
#[async_trait::async_trait]
impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        "test:hash"
    }

    async fn embed(&self, texts: &[String], _cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RagError> {
        use std::hash::{Hash, Hasher};
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0f32; 64];
                for term in crate::text::analyze::terms(t, crate::text::analyze::Purpose::Query) {
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    term.hash(&mut h);
                    v[(h.finish() % 64) as usize] += 1.0;
                }
                v
            })
            .collect())
    }
}
