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
//! [`KnowledgeBase::for_chat`]. In "auto", the knowledge sources ([`super::sources`]) are asked
//! in parallel with the local index, each within a time limit; their passages are fused with the
//! local ones by reciprocal rank, and a source that fails is named in the answer's citations.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::kb::KnowledgeBase;
use super::search::{Excerpt, reciprocal_rank_fusion};
use super::sources::{self, KnowledgeSource};
use crate::agent::budget::estimate_text;
use crate::agent::{BUILTIN_SERVER, RetrievalError, Retrieved, Retriever, ToolSelection};
use crate::assistants::{KnowledgeLimits, KnowledgeMode};
use crate::conversations::{self, Unavailable};
use crate::mcp::McpRegistry;

/// What the answer's citations call the local knowledge base when it fails beside sources.
pub const LOCAL: &str = "this computer's knowledge base";
/// What they call the list of knowledge sources when it cannot be read.
pub const SOURCES: &str = "the knowledge sources";

/// The name of the built-in tool (also the MCP server's tool).
pub use super::search::KNOWLEDGE_TOOL as TOOL_NAME;

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
    /// How long each remote knowledge source may take before the turn goes on without it.
    pub source_timeout: Duration,
}

impl From<KnowledgeLimits> for ContextOptions {
    fn from(limits: KnowledgeLimits) -> Self {
        Self {
            top_k: limits.top_k as usize,
            max_tokens: limits.max_tokens,
            min_relevance: limits.min_relevance,
            timeout: Duration::from_secs(20),
            source_timeout: Duration::from_secs(8),
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
        if !relevant(&p, min_relevance) {
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

/// Whether a passage passes the floor; nothing that matches nothing that was asked, whatever the floor.
fn relevant(p: &Excerpt, floor: f64) -> bool {
    p.relevance() >= floor && p.relevance() > 0.0
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

/// The remote knowledge sources a retriever asks beside the local index, through `registry`;
/// `ids` are the configured servers' identities, each source's server checked against its own.
#[derive(Clone)]
pub(crate) struct Remote {
    registry: McpRegistry,
    sources: Vec<KnowledgeSource>,
    ids: BTreeMap<String, String>,
}

impl Remote {
    pub(crate) fn new(registry: McpRegistry, sources: Vec<KnowledgeSource>, ids: BTreeMap<String, String>) -> Self {
        Self { registry, sources, ids }
    }
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.sources.iter().map(|s| s.name.as_str()).collect();
        f.debug_struct("Remote").field("sources", &names).finish_non_exhaustive()
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
    /// The retriever and tool for `mode`, the retriever within `limits`, asking the knowledge
    /// sources through `registry` beside the local index.
    pub fn for_chat(&self, mode: KnowledgeMode, limits: KnowledgeLimits, registry: &McpRegistry) -> ChatKnowledge {
        let retriever = mode.retrieves().then(|| {
            let retriever = self.chat_retriever(limits.into());
            match self.sources().and_then(|sources| Ok((self.server_ids()?, sources))) {
                Ok((ids, sources)) if !sources.is_empty() => {
                    retriever.with_remote(Remote::new(registry.clone(), sources, ids))
                }
                Ok(_) => retriever,
                Err(e) => {
                    tracing::warn!("the knowledge sources are not asked: {e}");
                    // Said with the answer too: sources the user chose are missing from it.
                    ContextRetriever { unreadable_sources: Some(e.to_string()), ..retriever }
                }
            }
        });
        ChatKnowledge { retriever: retriever.map(|r| Arc::new(r) as _), tool: mode.offers_tool().then(|| self.clone()) }
    }

    /// The "auto" retriever over this knowledge base, in its default search mode.
    pub fn chat_retriever(&self, options: ContextOptions) -> ContextRetriever {
        ContextRetriever { kb: self.clone(), options, remote: None, unreadable_sources: None }
    }
}

/// Retrieves cited context for the user's message ("auto").
#[derive(Debug, Clone)]
pub struct ContextRetriever {
    kb: KnowledgeBase,
    options: ContextOptions,
    remote: Option<Remote>,
    /// Why the list of knowledge sources could not be read, when it could not.
    unreadable_sources: Option<String>,
}

impl ContextRetriever {
    /// This retriever, also asking `remote`'s sources, in parallel, each within the options'
    /// `source_timeout`; their passages are fused with the local ones by reciprocal rank.
    pub(crate) fn with_remote(self, remote: Remote) -> Self {
        Self { remote: Some(remote), ..self }
    }

    /// The passages within the options, as the turn cites them. Each is scored by its
    /// relevance (0 to 1, what the assistant's floor holds it to), not by the BM25 or fusion
    /// score it was ranked by, which says nothing to the reader.
    fn select(&self, query: &str, found: Vec<Excerpt>) -> Vec<conversations::Passage> {
        let o = &self.options;
        within_limits(found, o.top_k, o.min_relevance, o.max_tokens)
            .into_iter()
            .map(|p| conversations::Passage {
                relevance: Some(p.relevance() as f32),
                marks: crate::text::analyze::marks(&p.text, query),
                source: p.path.display().to_string(),
                heading: Some(p.heading).filter(|h| !h.is_empty()),
                lines: Some((to_u32(p.line_start), to_u32(p.line_end))),
                origin: p.origin,
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
    async fn retrieve(&self, query: &str, cancel: CancellationToken) -> Result<Retrieved, RetrievalError> {
        let o = &self.options;
        let mode = self.kb.default_mode();
        // Over-fetch so that dropping weak passages can still fill `top_k`.
        let depth = o.top_k * 2;
        let local = tokio::time::timeout(o.timeout, self.kb.search(query, mode, depth));
        let sources = self.remote.as_ref().map_or(&[][..], |r| r.sources.as_slice());
        let asked = futures::future::join_all(self.remote.iter().flat_map(|r| {
            r.sources.iter().map(|source| async {
                sources::same_server(source, &r.ids)?;
                sources::ask(&r.registry, source, query, depth, o.source_timeout, cancel.child_token()).await
            })
        }));
        let (found, answers) = tokio::select! {
            () = cancel.cancelled() => return Ok(Retrieved::default()),
            both = futures::future::join(local, asked) => both,
        };
        let found = found
            .map_err(|_| RetrievalError { message: format!("no answer within {:?}", o.timeout) })
            .and_then(|found| found.map_err(|e| RetrievalError { message: e.to_string() }));
        let mut unavailable: Vec<Unavailable> =
            self.unreadable_sources.iter().map(|why| Unavailable { name: SOURCES.into(), why: why.clone() }).collect();
        if sources.is_empty() {
            return Ok(Retrieved { passages: self.select(query, found?), unavailable });
        }
        // Each list keeps only what passes the floor, so weak passages take no rank from others.
        let relevant = |list: Vec<Excerpt>| -> Vec<Excerpt> {
            list.into_iter().filter(|p| relevant(p, o.min_relevance)).collect()
        };
        let mut lists = Vec::new();
        // With sources, the local index failing is one source failing: the others still answer.
        match found {
            Ok(found) => lists.push(relevant(found)),
            Err(e) => unavailable.push(Unavailable { name: LOCAL.into(), why: e.message }),
        }
        for (source, answer) in sources.iter().zip(answers) {
            match answer {
                Ok(list) => lists.push(relevant(list)),
                Err(e) => unavailable.push(Unavailable { name: source.name.clone(), why: e.to_string() }),
            }
        }
        if lists.is_empty() {
            let why: Vec<String> = unavailable.iter().map(|u| format!("{}: {}", u.name, u.why)).collect();
            return Err(RetrievalError { message: format!("no knowledge source answered ({})", why.join("; ")) });
        }
        let all = lists.iter().map(Vec::len).sum();
        let fused = reciprocal_rank_fusion(&lists, all);
        Ok(Retrieved { passages: self.select(query, fused), unavailable })
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
