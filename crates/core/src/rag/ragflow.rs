//! RAGFlow's retrieval tools, answered from the local knowledge base, so a client set up for a
//! RAGFlow dataset (RAGFlow's own agents, Dify, a script) can use a Patchbay instead.
//!
//! The arguments and the answer are those of RAGFlow's MCP server (`mcp/server/server.py`):
//! `ragflow_retrieval` takes `question`, `dataset_ids`, `document_ids`, `page`, `page_size`,
//! `similarity_threshold`, `vector_similarity_weight`, `top_k` (and accepts `keyword`,
//! `rerank_id`, `force_refresh`, which change nothing here), and answers
//! `{chunks, pagination, query_info}` with RAGFlow's chunk fields plus Patchbay's `path`,
//! `heading` and `lines` for citations. A dataset is a registered folder and a document a file;
//! their ids are the first 32 hex digits of the SHA-256 of their path, stable across restarts.
//! As in RAGFlow, the dataset and document filters narrow the search itself, `top_k` then bounds
//! the candidates ranked, and the similarity threshold applies to those.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::kb::KnowledgeBase;
use super::search::{Excerpt, SearchMode};
use super::{RagError, loader};

/// The retrieval tool's name, as RAGFlow names it.
pub const RETRIEVAL_TOOL: &str = "ragflow_retrieval";
/// The dataset listing tool's name, as RAGFlow names it.
pub const DATASETS_TOOL: &str = "ragflow_list_datasets";
/// The most candidates one search ranks (RAGFlow's `top_k` maximum).
const MAX_CANDIDATES: usize = 1024;

/// What the model and clients read about `ragflow_retrieval`; the datasets follow it.
pub const RETRIEVAL_DESCRIPTION: &str = "Retrieve relevant chunks from the Patchbay knowledge base (RAGFlow-compatible) \
     based on the question. Optionally give dataset_ids (folders) or document_ids (files) to search only those; \
     without them every folder is searched. keyword, rerank_id and force_refresh are accepted and change nothing. \
     Below is the list of all available datasets, including their descriptions and IDs:";

/// Arguments of `ragflow_retrieval`; `null` reads as absent, as in RAGFlow's server.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RetrievalArgs {
    /// The question or query to search for.
    pub question: String,
    /// Datasets (folders) to search; all of them when omitted or empty.
    #[serde(default)]
    pub dataset_ids: Option<Vec<String>>,
    /// Documents (files) to search within.
    #[serde(default)]
    pub document_ids: Option<Vec<String>>,
    /// Page number for pagination (default 1).
    #[serde(default)]
    pub page: Option<usize>,
    /// Results per page (default 10, at most 100).
    #[serde(default)]
    pub page_size: Option<usize>,
    /// Minimum similarity (0 to 1, default 0.2).
    #[serde(default)]
    pub similarity_threshold: Option<f64>,
    /// Weight of vector similarity against term similarity (default 0.3): 0 searches by keywords
    /// only, 1 by embeddings only, anything between fuses both when embeddings are configured.
    #[serde(default)]
    pub vector_similarity_weight: Option<f64>,
    /// Accepted for compatibility: Patchbay always matches keywords.
    #[serde(default)]
    pub keyword: Option<bool>,
    /// Maximum results to consider before ranking (default 1024).
    #[serde(default)]
    pub top_k: Option<usize>,
    /// Accepted for compatibility: Patchbay has no reranking model.
    #[serde(default)]
    pub rerank_id: Option<String>,
    /// Accepted for compatibility: nothing is cached.
    #[serde(default)]
    pub force_refresh: Option<bool>,
}

/// Arguments of `ragflow_list_datasets`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DatasetsArgs {
    /// Page number (default 1).
    #[serde(default)]
    pub page: Option<usize>,
    /// Results per page (default 100).
    #[serde(default)]
    pub page_size: Option<usize>,
}

/// A path's id: the first 32 hex digits of its SHA-256 (RAGFlow's ids are 32 hex digits).
pub(super) fn path_id(path: &Path) -> String {
    let digest = Sha256::digest(path.as_os_str().as_encoded_bytes());
    hex::encode(&digest[..16])
}

fn dataset_line(folder: &Path) -> String {
    let name = folder.file_name().map_or_else(|| folder.display().to_string(), |n| n.to_string_lossy().into());
    json!({"description": folder.display().to_string(), "id": path_id(folder), "name": name}).to_string()
}

/// The datasets (registered folders) as RAGFlow lists them: one JSON object per line.
pub fn datasets(kb: &KnowledgeBase, args: &DatasetsArgs) -> Result<String, RagError> {
    let page_size = args.page_size.unwrap_or(100).max(1);
    let skip = args.page.unwrap_or(1).max(1).saturating_sub(1).saturating_mul(page_size);
    let lines: Vec<String> = kb.folders()?.iter().skip(skip).take(page_size).map(|f| dataset_line(f)).collect();
    Ok(lines.join("\n"))
}

/// `ragflow_retrieval`'s description with the current datasets, as RAGFlow lists them.
pub fn retrieval_description(kb: &KnowledgeBase) -> Result<String, RagError> {
    let lines: Vec<String> = kb.folders()?.iter().map(|f| dataset_line(f)).collect();
    Ok(format!("{RETRIEVAL_DESCRIPTION}\n{}", lines.join("\n")))
}

fn refused(why: String) -> RagError {
    RagError::BadRequest { why }
}

/// Answers `ragflow_retrieval` with the JSON text RAGFlow's server returns; an argument the
/// knowledge base cannot honour is a [`RagError::BadRequest`] that says which and why.
pub async fn retrieve(kb: &KnowledgeBase, args: RetrievalArgs) -> Result<String, RagError> {
    let question = args.question.trim();
    if question.is_empty() {
        return Err(refused("question is empty: say what to search for".into()));
    }
    let threshold = args.similarity_threshold.unwrap_or(0.2);
    if !(0.0..=1.0).contains(&threshold) {
        return Err(refused(format!("similarity_threshold must be between 0 and 1, not {threshold}")));
    }
    let weight = args.vector_similarity_weight.unwrap_or(0.3);
    if !(0.0..=1.0).contains(&weight) {
        return Err(refused(format!("vector_similarity_weight must be between 0 and 1, not {weight}")));
    }
    let folders = kb.folders()?;
    let wanted = args.dataset_ids.unwrap_or_default();
    if let Some(unknown) = wanted.iter().find(|id| !folders.iter().any(|f| path_id(f) == **id)) {
        return Err(refused(format!(
            "no dataset has the id {unknown:?}; ragflow_list_datasets lists the datasets (the knowledge base's folders)"
        )));
    }
    let searched: Vec<&PathBuf> =
        folders.iter().filter(|f| wanted.is_empty() || wanted.contains(&path_id(f))).collect();
    let documents = args.document_ids.unwrap_or_default();
    if !documents.is_empty() {
        let known: Vec<String> = kb.documents()?.iter().map(|d| path_id(d)).collect();
        if let Some(unknown) = documents.iter().find(|id| !known.contains(id)) {
            return Err(refused(format!(
                "no document has the id {unknown:?}; a chunk's document_id names its document"
            )));
        }
    }
    let mode = if weight <= 0.0 {
        SearchMode::Bm25
    } else if weight >= 1.0 {
        SearchMode::Vector
    } else {
        kb.default_mode()
    };
    let top_k = args.top_k.unwrap_or(MAX_CANDIDATES).clamp(1, MAX_CANDIDATES);
    // A filter that narrows the search needs more candidates than it keeps: a dataset's best
    // chunks may rank below another's.
    let narrowed = !documents.is_empty() || searched.len() < folders.len();
    let found = kb.search(question, mode, if narrowed { MAX_CANDIDATES } else { top_k }).await?;
    let kept: Vec<&Excerpt> = found
        .iter()
        .filter(|e| searched.iter().any(|f| e.path.starts_with(f)))
        .filter(|e| documents.is_empty() || documents.contains(&path_id(&e.path)))
        .take(top_k)
        .filter(|e| e.relevance() >= threshold)
        .collect();
    let page = args.page.unwrap_or(1).max(1);
    let page_size = args.page_size.unwrap_or(10).clamp(1, 100);
    let chunks: Vec<Value> = kept
        .iter()
        .skip((page - 1).saturating_mul(page_size))
        .take(page_size)
        .map(|e| chunk(e, searched.iter().filter(|f| e.path.starts_with(f)).max_by_key(|f| f.as_os_str().len())))
        .collect();
    let answer = json!({
        "chunks": chunks,
        "pagination": {
            "page": page,
            "page_size": page_size,
            "total_chunks": kept.len(),
            "total_pages": kept.len().div_ceil(page_size),
        },
        "query_info": {
            "question": question,
            "similarity_threshold": threshold,
            "vector_weight": weight,
            "keyword_search": args.keyword.unwrap_or(false),
            "dataset_count": searched.len(),
        },
    });
    Ok(answer.to_string())
}

/// One passage in RAGFlow's chunk shape, with Patchbay's citation fields.
fn chunk(e: &Excerpt, folder: Option<&&PathBuf>) -> Value {
    let file = e.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dataset = folder.map(|f| path_id(f)).unwrap_or_default();
    let dataset_name = folder.and_then(|f| f.file_name()).map(|n| n.to_string_lossy().into_owned());
    json!({
        "id": e.chunk_id.to_string(),
        "content": e.text,
        "document_id": path_id(&e.path),
        "document_keyword": file,
        "document_name": file,
        "dataset_id": dataset,
        "kb_id": dataset,
        "dataset_name": dataset_name.unwrap_or_else(|| "Unknown".into()),
        "similarity": e.relevance(),
        "term_similarity": e.term_match,
        "vector_similarity": e.similarity.unwrap_or(0.0),
        "highlight": "",
        "important_keywords": [],
        "image_id": "",
        "positions": [],
        "path": e.path.to_string_lossy(),
        "uri": loader::file_uri(&e.path),
        "heading": e.heading,
        "lines": [e.line_start, e.line_end],
    })
}
