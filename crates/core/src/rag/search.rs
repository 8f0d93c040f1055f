//! Retrieval's shapes: the [`Excerpt`] a search finds (a chunk with what a
//! citation needs), search modes and reciprocal rank fusion. The chat
//! engine's seam is the agent's `Retriever`, which `chat.rs` implements.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::RagError;

/// A retrieved piece of a document, with what a citation needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Excerpt {
    /// Stable id of the chunk inside this index.
    pub chunk_id: i64,
    pub text: String,
    /// BM25 score, cosine similarity, or fused RRF score, depending on the mode.
    pub score: f64,
    pub path: PathBuf,
    /// Heading path, outermost first, joined with " > "; empty when the document has none.
    pub heading: String,
    /// First line (1-based, inclusive).
    pub line_start: usize,
    /// Last line (1-based, inclusive).
    pub line_end: usize,
    /// How much of the query the passage's words cover, 0 to 1 (see [`super::relevance`]).
    #[serde(default)]
    pub term_match: f64,
    /// Cosine similarity to the query, when it was found by its embedding (for a remote source's
    /// passage, the source's own score).
    #[serde(default)]
    pub similarity: Option<f64>,
    /// The knowledge source that found it, when not the local index (see [`super::sources`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl Excerpt {
    /// How well the passage answers the query, 0 to 1, whatever the mode and collection:
    /// the better of its words' cover of the query and its embedding's similarity.
    pub fn relevance(&self) -> f64 {
        self.similarity.map_or(self.term_match, |s| s.max(self.term_match))
    }
}

/// The knowledge base's search tool: the built-in one, `kb serve`'s, and another Patchbay's.
pub const KNOWLEDGE_TOOL: &str = "knowledge_search";

/// How to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// Keyword search (BM25) only.
    Bm25,
    /// Embedding similarity only.
    Vector,
    /// Both, fused by reciprocal rank.
    Hybrid,
}

impl std::str::FromStr for SearchMode {
    type Err = RagError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "bm25" => Ok(Self::Bm25),
            "vector" => Ok(Self::Vector),
            "hybrid" => Ok(Self::Hybrid),
            other => Err(RagError::InvalidMode { mode: other.to_owned() }),
        }
    }
}

/// The constant of reciprocal rank fusion (Cormack et al. use 60).
pub const RRF_K: f64 = 60.0;

/// Fuses ranked lists: each passage scores the sum of `1 / (RRF_K + rank)`.
/// A passage is the same in two lists when it has the same chunk of the same source.
pub fn reciprocal_rank_fusion(lists: &[Vec<Excerpt>], top_k: usize) -> Vec<Excerpt> {
    let mut fused: HashMap<(Option<String>, i64), Excerpt> = HashMap::new();
    for list in lists {
        for (rank, passage) in list.iter().enumerate() {
            let add = 1.0 / (RRF_K + rank as f64 + 1.0);
            fused
                .entry((passage.origin.clone(), passage.chunk_id))
                .and_modify(|p| {
                    p.score += add;
                    p.similarity = p.similarity.or(passage.similarity);
                    p.term_match = p.term_match.max(passage.term_match);
                })
                .or_insert_with(|| Excerpt { score: add, ..passage.clone() });
        }
    }
    let mut out: Vec<Excerpt> = fused.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.origin.cmp(&b.origin)).then(a.chunk_id.cmp(&b.chunk_id)));
    out.truncate(top_k);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: i64) -> Excerpt {
        Excerpt {
            chunk_id: id,
            text: String::new(),
            score: 0.0,
            path: PathBuf::from("x"),
            heading: String::new(),
            line_start: 1,
            line_end: 1,
            term_match: 0.0,
            similarity: None,
            origin: None,
        }
    }

    #[test]
    fn rrf_rewards_agreement() {
        let fused = reciprocal_rank_fusion(&[vec![p(1), p(2), p(3)], vec![p(3), p(2), p(4)]], 10);
        let ids: Vec<_> = fused.iter().map(|p| p.chunk_id).collect();
        // 3 is first and third (1/61 + 1/63), 2 second twice (2/62): both beat 1 and 4.
        assert_eq!(ids[..2], [3, 2]);
        assert_eq!(ids.len(), 4);
        assert!((fused[1].score - (2.0 / 62.0)).abs() < 1e-12);
        assert!((fused[0].score - (1.0 / 61.0 + 1.0 / 63.0)).abs() < 1e-12);
    }

    #[test]
    fn fusion_keeps_the_similarity_the_vector_ranking_found() {
        let keyword = Excerpt { term_match: 0.2, ..p(3) };
        let vector = Excerpt { similarity: Some(0.7), ..p(3) };
        let fused = reciprocal_rank_fusion(&[vec![keyword], vec![vector]], 10);
        assert_eq!((fused[0].term_match, fused[0].similarity), (0.2, Some(0.7)));
        assert_eq!(fused[0].relevance(), 0.7);
    }

    #[test]
    fn modes_parse() {
        assert_eq!("hybrid".parse::<SearchMode>().unwrap(), SearchMode::Hybrid);
        assert!(matches!("fuzzy".parse::<SearchMode>(), Err(RagError::InvalidMode { .. })));
    }
}
