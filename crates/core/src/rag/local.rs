//! A local embedding model run in-process on the CPU ([`super::bert`]).
//!
//! [`LocalEmbedder`] loads a BERT-family sentence-embedding model from a folder in the Hugging Face
//! layout: `config.json`, `tokenizer.json`, `model.safetensors` (or `pytorch_model.bin`), and
//! optionally `1_Pooling/config.json` (mean pooling unless it asks for the CLS token) and
//! `sentence_bert_config.json` (`max_seq_length`). all-MiniLM-L6-v2 (English only) is the test
//! model; multilingual BERT models load the same way. No weights ship: the user names a folder or
//! downloads one ([`super::models`]). candle reads the weights (safetensors or PyTorch's pickle);
//! [`super::bert`] runs them.
//!
//! Inference runs on a blocking thread, a pass at a time over texts of about the same length (at
//! most [`PASS_TEXTS`] texts or [`PASS_BYTES`] bytes); cancellation is checked between passes. A
//! pass runs the model on at most [`FORWARD_TOKENS`] tokens at once, which bounds its memory
//! (about 15 KB a token for MiniLM: some 60 MB).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use serde::Deserialize;
use tokenizers::{Tokenizer, TruncationParams};
use tokio_util::sync::CancellationToken;

use super::RagError;
use super::bert::{Bert, BertConfig, Scratch, Tokens, Weight};
use super::embed::Embedder;

/// Texts in one pass at most: short texts (titles, queries) fill the products' rows.
const PASS_TEXTS: usize = 256;
/// Bytes of text in one pass at most (about 16k tokens of English).
const PASS_BYTES: usize = 64 * 1024;
/// Tokens the model runs on at once.
const FORWARD_TOKENS: usize = 4096;

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
    bert: Bert,
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
        let config: BertConfig =
            read_json(&dir, "config.json")?.ok_or_else(|| bad_model(&dir, "config.json is missing"))?;
        let pooling: PoolingConfig = read_json(&dir, "1_Pooling/config.json")?.unwrap_or_default();
        let max_tokens = read_json::<SentenceBertConfig>(&dir, "sentence_bert_config.json")?
            .and_then(|c| c.max_seq_length)
            .unwrap_or(DEFAULT_MAX_TOKENS);

        let tokenizer_path = dir.join("tokenizer.json");
        if !tokenizer_path.is_file() {
            return Err(bad_model(&dir, "tokenizer.json is missing"));
        }
        let weights_path = dir.join("model.safetensors");
        let pytorch_path = dir.join("pytorch_model.bin");
        let tensors: Vec<(String, Tensor)> = match std::fs::read(&weights_path) {
            Ok(weights) => {
                candle_core::safetensors::load_buffer(&weights, &Device::Cpu).map(|t| t.into_iter().collect())
            }
            // Repositories without safetensors (some on the hub) publish PyTorch's pickled weights.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && pytorch_path.is_file() => {
                candle_core::pickle::read_all(&pytorch_path)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(bad_model(&dir, "model.safetensors is missing (and there is no pytorch_model.bin)"));
            }
            Err(source) => return Err(RagError::Io { path: weights_path, source }),
        }
        .map_err(|e| bad_model(&dir, e))?;
        let weights = tensors
            .into_iter()
            .map(|(name, t)| {
                let shape = t.dims().to_vec();
                let values = t.to_dtype(DType::F32).and_then(|t| t.flatten_all()).and_then(|t| t.to_vec1::<f32>());
                values.map(|values| (name, Weight { shape, values }))
            })
            .collect::<Result<_, _>>()
            .map_err(|e| bad_model(&dir, e))?;
        let bert = Bert::load(&config, weights).map_err(|e| bad_model(&dir, e))?;
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path).map_err(|e| bad_model(&dir, e))?;
        let max_length = max_tokens.min(bert.max_positions());
        tokenizer
            .with_truncation(Some(TruncationParams { max_length, ..TruncationParams::default() }))
            .map_err(|e| bad_model(&dir, e))?;
        tokenizer.with_padding(None);
        let id = format!("local:{}", dir.display());
        Ok(Self { model: Arc::new(Model { bert, tokenizer, cls_pooling: pooling.pooling_mode_cls_token }), id, dir })
    }

    /// The model folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Model {
    /// One pass: tokenise, run BERT, pool, normalise.
    fn embed_pass(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, String> {
        let encodings = self.tokenizer.encode_batch(texts, true).map_err(|e| e.to_string())?;
        let tokens: Vec<Tokens<'_>> =
            encodings.iter().map(|e| Tokens { ids: e.get_ids(), types: e.get_type_ids() }).collect();
        let mut out = Vec::with_capacity(tokens.len());
        let mut rest = tokens.as_slice();
        let mut scratch = Scratch::default();
        while !rest.is_empty() {
            let (now, later) = rest.split_at(fitting(rest, usize::MAX, FORWARD_TOKENS, |t| t.ids.len()));
            out.extend(self.bert.embed(now, self.cls_pooling, &mut scratch)?);
            rest = later;
        }
        Ok(out)
    }
}

/// How many of `items` fit in `budget` of `cost`, at most `max` and at least one (when there is one).
fn fitting<T>(items: &[T], max: usize, budget: usize, cost: impl Fn(&T) -> usize) -> usize {
    let mut sum = 0;
    let n = items
        .iter()
        .take(max)
        .take_while(|item| {
            sum += cost(item);
            sum <= budget
        })
        .count();
    n.max(1).min(items.len())
}

/// `order` (indices of texts sorted by length) cut into passes.
fn passes<'a>(texts: &'a [String], order: &'a [usize]) -> impl Iterator<Item = &'a [usize]> + 'a {
    let mut rest = order;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (pass, tail) = rest.split_at(fitting(rest, PASS_TEXTS, PASS_BYTES, |&i| texts[i].len()));
        rest = tail;
        Some(pass)
    })
}

#[async_trait::async_trait]
impl Embedder for LocalEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    async fn embed(&self, texts: &[String], cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RagError> {
        // Short texts together: many fit in a pass.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for batch in passes(texts, &order) {
            if cancel.is_cancelled() {
                return Err(RagError::Cancelled);
            }
            let model = Arc::clone(&self.model);
            let inputs: Vec<String> = batch.iter().map(|&i| texts[i].clone()).collect();
            let vectors = super::embed::bounded(cancel, async move {
                tokio::task::spawn_blocking(move || model.embed_pass(inputs))
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
