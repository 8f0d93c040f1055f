//! A local embedding model run in-process with candle (CPU).
//!
//! [`LocalEmbedder`] loads a BERT-family sentence-embedding model from a folder in the Hugging Face
//! layout: `config.json`, `tokenizer.json`, `model.safetensors` (or `pytorch_model.bin`), and
//! optionally `1_Pooling/config.json` (mean pooling unless it asks for the CLS token) and
//! `sentence_bert_config.json` (`max_seq_length`). all-MiniLM-L6-v2 (English only) is the test
//! model; multilingual BERT models load the same way. No weights ship: the user names a folder or
//! downloads one ([`super::models`]). candle and tokenizers (pure-Rust regex) build clean in under
//! three minutes on 2 cores (debug), so no feature gates them.
//!
//! Inference runs on a blocking thread, in batches of [`EMBED_BATCH`] texts of about the same length
//! (a batch is padded to its longest); cancellation is checked between batches.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use serde::Deserialize;
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};
use tokio_util::sync::CancellationToken;

use super::RagError;
use super::embed::{EMBED_BATCH, Embedder};

/// Tokens per text when the model folder does not say.
const DEFAULT_MAX_TOKENS: usize = 256;

#[derive(Debug, Default, Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
}

#[derive(Debug, Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

struct Model {
    bert: BertModel,
    tokenizer: Tokenizer,
    cls_pooling: bool,
}

/// Embeddings from a local BERT-family model folder.
#[derive(Clone)]
pub struct LocalEmbedder {
    model: Arc<Model>,
    id: String,
    dir: PathBuf,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder").field("id", &self.id).finish_non_exhaustive()
    }
}

fn bad_model(dir: &Path, what: impl std::fmt::Display) -> RagError {
    RagError::Embedding { detail: format!("model folder {}: {what}", dir.display()) }
}

fn read_json<T: for<'de> Deserialize<'de>>(dir: &Path, name: &str) -> Result<Option<T>, RagError> {
    let path = dir.join(name);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| bad_model(dir, format!("{name}: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(RagError::Io { path, source }),
    }
}

impl LocalEmbedder {
    /// Loads the model in `dir` (blocking: reads the weights, ~90 MB for MiniLM).
    pub fn load(dir: &Path) -> Result<Self, RagError> {
        if !dir.is_dir() {
            return Err(bad_model(dir, "is not a folder"));
        }
        let dir = std::fs::canonicalize(dir).map_err(|source| RagError::Io { path: dir.to_path_buf(), source })?;
        let config: Config =
            read_json(&dir, "config.json")?.ok_or_else(|| bad_model(&dir, "config.json is missing"))?;
        let pooling: PoolingConfig = read_json(&dir, "1_Pooling/config.json")?.unwrap_or_default();
        let max_tokens = read_json::<SentenceBertConfig>(&dir, "sentence_bert_config.json")?
            .and_then(|c| c.max_seq_length)
            .unwrap_or(DEFAULT_MAX_TOKENS);

        let tokenizer_path = dir.join("tokenizer.json");
        if !tokenizer_path.is_file() {
            return Err(bad_model(&dir, "tokenizer.json is missing"));
        }
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path).map_err(|e| bad_model(&dir, e))?;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: max_tokens, ..TruncationParams::default() }))
            .map_err(|e| bad_model(&dir, e))?;
        tokenizer.with_padding(Some(PaddingParams::default()));

        let weights_path = dir.join("model.safetensors");
        let pytorch_path = dir.join("pytorch_model.bin");
        let vb = match std::fs::read(&weights_path) {
            Ok(weights) => VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu),
            // Repositories without safetensors (some on the hub) publish PyTorch's pickled weights.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && pytorch_path.is_file() => {
                VarBuilder::from_pth(&pytorch_path, DType::F32, &Device::Cpu)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(bad_model(&dir, "model.safetensors is missing (and there is no pytorch_model.bin)"));
            }
            Err(source) => return Err(RagError::Io { path: weights_path, source }),
        }
        .map_err(|e| bad_model(&dir, e))?;
        let bert = BertModel::load(vb, &config).map_err(|e| bad_model(&dir, e))?;
        let id = format!("local:{}", dir.display());
        Ok(Self { model: Arc::new(Model { bert, tokenizer, cls_pooling: pooling.pooling_mode_cls_token }), id, dir })
    }

    /// The model folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Model {
    /// One batch: tokenise, run BERT, pool, normalise.
    fn embed_batch(&self, texts: &[String]) -> candle_core::Result<Vec<Vec<f32>>> {
        let encodings = self.tokenizer.encode_batch(texts.to_vec(), true).map_err(candle_core::Error::wrap)?;
        let rows = |f: &dyn Fn(&tokenizers::Encoding) -> Vec<u32>| -> candle_core::Result<Tensor> {
            let rows =
                encodings.iter().map(|e| Tensor::new(f(e).as_slice(), &Device::Cpu)).collect::<Result<Vec<_>, _>>()?;
            Tensor::stack(&rows, 0)
        };
        let ids = rows(&|e| e.get_ids().to_vec())?;
        let types = rows(&|e| e.get_type_ids().to_vec())?;
        let mask = rows(&|e| e.get_attention_mask().to_vec())?;
        let hidden = self.bert.forward(&ids, &types, Some(&mask))?; // (batch, tokens, dim)
        let pooled = if self.cls_pooling {
            hidden.narrow(1, 0, 1)?.squeeze(1)?
        } else {
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (batch, tokens, 1)
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
            summed.broadcast_div(&counts)?
        };
        let norms = pooled.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        pooled.broadcast_div(&norms)?.to_vec2()
    }
}

#[async_trait::async_trait]
impl Embedder for LocalEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    async fn embed(&self, texts: &[String], cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RagError> {
        // Batches of texts of about the same length: a batch is padded to its longest text.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for batch in order.chunks(EMBED_BATCH) {
            if cancel.is_cancelled() {
                return Err(RagError::Cancelled);
            }
            let model = Arc::clone(&self.model);
            let inputs: Vec<String> = batch.iter().map(|&i| texts[i].clone()).collect();
            let vectors = super::embed::bounded(cancel, async move {
                tokio::task::spawn_blocking(move || model.embed_batch(&inputs))
                    .await
                    .map_err(|e| RagError::Embedding { detail: e.to_string() })?
                    .map_err(|e| RagError::Embedding { detail: format!("local model: {e}") })
            })
            .await?;
            if vectors.len() != batch.len() {
                return Err(RagError::Embedding {
                    detail: format!("local model: {} vectors for {} texts", vectors.len(), batch.len()),
                });
            }
            for (&i, vector) in batch.iter().zip(vectors) {
                out[i] = vector;
            }
        }
        Ok(out)
    }
}
