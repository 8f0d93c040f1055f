//! The knowledge base in chat, in the two ways an assistant can use it.
//!
//! - [`ContextRetriever`] ("auto": `KnowledgeMode::Context`): before the first
//!   round, the user's message is searched and the best passages (within the
//!   assistant's [`KnowledgeLimits`]: top k, a relevance floor, a token budget)
//!   go to the model as numbered context it cites as `[1]`, `[2]` (the agent's
//!   [`Retriever`] seam). A passage that matches nothing asked is never added.
//! - the built-in `knowledge_search` tool ("tool": `KnowledgeMode::Tool`) the
//!   model may call; Patchbay's in-process MCP server ([`crate::builtin`])
//!   serves it with the same JSON passages as `patchbay kb serve`, and
//!   [`offer_tool`] widens a turn's tool selection to include it.
//!
//! [`KnowledgeMode::Both`] uses both. Front ends get them from
//! [`KnowledgeBase::for_chat`].

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::kb::KnowledgeBase;
use super::search::Excerpt;
use crate::agent::budget::estimate_text;
use crate::agent::{BUILTIN_SERVER, RetrievalError, Retriever, ToolSelection};
use crate::assistants::{KnowledgeLimits, KnowledgeMode};
use crate::conversations;

/// The name of the built-in tool (also the MCP server's tool).
pub const TOOL_NAME: &str = "knowledge_search";

/// How much context "auto" adds: an assistant's [`KnowledgeLimits`] and a time limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextOptions {
    /// Passages at most.
    pub top_k: usize,
    /// Estimated tokens of passage text at most (the first passage is always kept, cut to fit).
    pub max_tokens: u32,
    /// The least [`Excerpt::relevance`] a passage needs.
    pub min_relevance: f64,
    /// How long the search may take before the turn goes on without context.
    pub timeout: Duration,
}

impl From<KnowledgeLimits> for ContextOptions {
    fn from(limits: KnowledgeLimits) -> Self {
        Self {
            top_k: limits.top_k as usize,
            max_tokens: limits.max_tokens,
            min_relevance: limits.min_relevance,
            timeout: Duration::from_secs(20),
        }
    }
}

impl Default for ContextOptions {
    fn default() -> Self {
        KnowledgeLimits::default().into()
    }
}

/// The passages of `found` (best first) that pass the relevance floor (and are relevant at all),
/// at most `top_k` of them within `max_tokens`; the first is cut to fit rather than dropped.
pub fn within_limits(found: Vec<Excerpt>, top_k: usize, min_relevance: f64, max_tokens: u32) -> Vec<Excerpt> {
    let mut out = Vec::new();
    let mut used = 0u32;
    for mut p in found {
        // Nothing that matches nothing that was asked, whatever the floor.
        if p.relevance() < min_relevance || p.relevance() <= 0.0 {
            continue;
        }
        if out.len() == top_k {
            break;
        }
        let cost = estimate_text(&p.text);
        if used.saturating_add(cost) > max_tokens {
            if !out.is_empty() {
                break;
            }
            // One long passage: keep its beginning rather than nothing.
            p.text = cut_to_tokens(&p.text, max_tokens);
        }
        used = used.saturating_add(estimate_text(&p.text));
        out.push(p);
    }
    out
}

impl KnowledgeMode {
    /// Whether passages are retrieved before the first round.
    pub fn retrieves(self) -> bool {
        matches!(self, Self::Context | Self::Both)
    }

    /// Whether the model is offered the `knowledge_search` tool.
    pub fn offers_tool(self) -> bool {
        matches!(self, Self::Tool | Self::Both)
    }
}

/// What a turn gets from the knowledge base in one [`KnowledgeMode`].
#[derive(Clone, Default)]
pub struct ChatKnowledge {
    /// For `TurnRequest::retriever` ("auto").
    pub retriever: Option<Arc<dyn Retriever>>,
    /// The knowledge base `knowledge_search` searches ("tool"); widen the
    /// turn's selection with [`offer_tool`].
    pub tool: Option<KnowledgeBase>,
}

impl std::fmt::Debug for ChatKnowledge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatKnowledge")
            .field("retriever", &self.retriever.is_some())
            .field("tool", &self.tool.is_some())
            .finish()
    }
}

impl KnowledgeBase {
    /// The retriever and tool for `mode`, the retriever within `limits`.
    pub fn for_chat(&self, mode: KnowledgeMode, limits: KnowledgeLimits) -> ChatKnowledge {
        ChatKnowledge {
            retriever: mode.retrieves().then(|| Arc::new(self.chat_retriever(limits.into())) as _),
            tool: mode.offers_tool().then(|| self.clone()),
        }
    }

    /// The "auto" retriever over this knowledge base, in its default search mode.
    pub fn chat_retriever(&self, options: ContextOptions) -> ContextRetriever {
        ContextRetriever { kb: self.clone(), options }
    }
}

/// Retrieves cited context for the user's message ("auto").
#[derive(Debug, Clone)]
pub struct ContextRetriever {
    kb: KnowledgeBase,
    options: ContextOptions,
}

impl ContextRetriever {
    /// The passages within the options, as the turn cites them.
    fn select(&self, query: &str, found: Vec<Excerpt>) -> Vec<conversations::Passage> {
        let o = &self.options;
        within_limits(found, o.top_k, o.min_relevance, o.max_tokens)
            .into_iter()
            .map(|p| conversations::Passage {
                marks: crate::text::analyze::marks(&p.text, query),
                source: p.path.display().to_string(),
                heading: Some(p.heading).filter(|h| !h.is_empty()),
                lines: Some((to_u32(p.line_start), to_u32(p.line_end))),
                score: p.score as f32,
                text: p.text,
            })
            .collect()
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The longest prefix of `text` (on a character boundary) within `max_tokens`.
fn cut_to_tokens(text: &str, max_tokens: u32) -> String {
    let mut end = text.len();
    while end > 0 && estimate_text(&text[..end]) > max_tokens {
        end = end * 9 / 10;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
    }
    text[..end].to_owned()
}

#[async_trait::async_trait]
impl Retriever for ContextRetriever {
    async fn retrieve(
        &self,
        query: &str,
        cancel: CancellationToken,
    ) -> Result<Vec<conversations::Passage>, RetrievalError> {
        let mode = self.kb.default_mode();
        // Over-fetch so that dropping weak passages can still fill `top_k`.
        let search = self.kb.search(query, mode, self.options.top_k * 2);
        let found = tokio::select! {
            () = cancel.cancelled() => return Ok(Vec::new()),
            found = tokio::time::timeout(self.options.timeout, search) => found,
        };
        let found = found
            .map_err(|_| RetrievalError { message: format!("no answer within {:?}", self.options.timeout) })?
            .map_err(|e| RetrievalError { message: e.to_string() })?;
        Ok(self.select(query, found))
    }
}

/// `selection` widened so that it offers the built-in `knowledge_search` tool
/// (an assistant in tool mode gets it even when it limits or turns off other tools).
pub fn offer_tool(selection: ToolSelection) -> ToolSelection {
    let name = format!("{BUILTIN_SERVER}/{TOOL_NAME}");
    match selection {
        ToolSelection::All => ToolSelection::All,
        ToolSelection::None => ToolSelection::Only { servers: BTreeSet::new(), tools: BTreeSet::from([name]) },
        ToolSelection::Only { servers, mut tools } => {
            tools.insert(name);
            ToolSelection::Only { servers, tools }
        }
    }
}
