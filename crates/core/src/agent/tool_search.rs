//! Tool search: many tools, one context window.
//!
//! When the enabled tools' definitions would take more than a share of the
//! model's context window, or the provider accepts fewer tools than there are,
//! a turn does not send them all ([`Offer::plan`]). It sends the pinned tools,
//! those the conversation already found or used, and [`SEARCH_TOOL`]: the model
//! searches (BM25 over each tool's server, name, description and parameters,
//! with the knowledge base's analyser, [`crate::text`]; fused by reciprocal rank
//! with the tools' embeddings where the knowledge base has an embedding model,
//! [`ToolEmbedder`]), and what it finds is sent with its full definition from
//! the next round on. A later turn reads the earlier finds back from the
//! conversation's history, so nothing else is stored.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::budget::{self, TokenCounter};
use super::retrieve::RetrievalError;
use super::tools::{BUILTIN_SERVER, HostedTool};
use crate::llm::{ChatMessage, ContentPart, ToolSpec};
use crate::text::analyze::{self, Purpose};
use crate::text::bm25::Bm25Index;

/// The model-facing name of the search tool.
pub const SEARCH_TOOL: &str = "search_tools";
/// Matches a search returns when the model asks for no number, and the most it may ask for.
const MATCHES: usize = 5;
const MAX_MATCHES: usize = 10;
/// The longest description a match carries (its full one comes with the tool).
const MATCH_DESCRIPTION_CHARS: usize = 300;
/// The most of a tool's text (names, description, parameters) that is indexed.
const MAX_DOCUMENT_CHARS: usize = 2_000;
/// How deep each ranking goes before they are fused, and the fusion's constant: a small one
/// trusts each list's top ranks (measured on the labelled set, `tests/data/tool_search`).
const FUSED_DEPTH: usize = 50;
const RRF_K: f32 = 10.0;

/// Turns texts into vectors for tool search: the knowledge base's embedding model, where one
/// is configured (the host adapts it and keeps the tools' vectors).
#[async_trait::async_trait]
pub trait ToolEmbedder: Send + Sync {
    /// One vector per text, in order.
    async fn embed(&self, texts: &[String], cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RetrievalError>;
    /// Whether the model reads only English (then a query in other scripts is found by BM25 alone).
    fn english_only(&self) -> bool {
        false
    }
}

/// When a turn searches for tools instead of sending every one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolBudget {
    /// The share of the context window, in percent, the tools' definitions may take.
    pub share_percent: u8,
    /// The most tools one request may carry (the provider's limit), when it has one.
    pub max_tools: Option<usize>,
}

impl Default for ToolBudget {
    fn default() -> Self {
        Self { share_percent: 10, max_tools: None }
    }
}

/// What a turn offers the model: the tools sent with their definitions, and
/// the search over the rest when not all are sent.
pub(crate) struct Offer {
    /// Model-facing names of the tools sent with every request: the pinned
    /// ones, or every tool when they all fit.
    always: BTreeSet<String>,
    /// Tools the conversation found or used, oldest first, sent too; the
    /// oldest give way when the provider's limit would be passed.
    found: Vec<String>,
    /// The most tools one request may carry, the search tool included.
    most: Option<usize>,
    /// The search over every tool; `None` when all are sent.
    index: Option<ToolIndex>,
}

impl Offer {
    /// Plans a turn's offer of `tools`, given the conversation so far and the model's window.
    pub(crate) fn plan(
        tools: &[HostedTool],
        history: &[ChatMessage],
        window: Option<u32>,
        limits: ToolBudget,
        counter: &dyn TokenCounter,
    ) -> Self {
        let all = || Self {
            always: tools.iter().map(|t| t.spec.name.clone()).collect(),
            found: Vec::new(),
            most: None,
            index: None,
        };
        let specs: Vec<ToolSpec> = tools.iter().map(|t| t.spec.clone()).collect();
        let too_many = limits.max_tools.is_some_and(|most| tools.len() > most);
        let too_large = window.is_some_and(|w| {
            u64::from(budget::count_tools(&specs, counter)) * 100 > u64::from(limits.share_percent) * u64::from(w)
        });
        // A real tool named like the search tool keeps its name: no search then.
        if !(too_many || too_large) || tools.iter().any(|t| t.spec.name == SEARCH_TOOL) {
            return all();
        }
        // Room for the search tool and a search's matches: pins beyond it are not sent,
        // Patchbay's own tools first.
        let room = limits.max_tools.map_or(usize::MAX, |most| most.saturating_sub(1 + MAX_MATCHES));
        let mut pins: Vec<&HostedTool> = tools.iter().filter(|t| t.pinned).collect();
        pins.sort_by_key(|t| t.server != BUILTIN_SERVER);
        let always: BTreeSet<String> = pins.into_iter().take(room).map(|t| t.spec.name.clone()).collect();
        let known: BTreeSet<&str> = tools.iter().map(|t| t.spec.name.as_str()).collect();
        let mut offer = Self { always, found: Vec::new(), most: limits.max_tools, index: None };
        offer.add(remembered(history).into_iter().filter(|n| known.contains(n.as_str())));
        if offer.sent() == tools.len() && !too_many {
            return all();
        }
        offer.index = Some(ToolIndex::new(tools));
        offer
    }

    /// Sends `names` too (newest last), the oldest finds giving way past the limit.
    fn add(&mut self, names: impl IntoIterator<Item = String>) {
        for name in names {
            if self.always.contains(&name) {
                continue;
            }
            self.found.retain(|f| *f != name);
            self.found.push(name);
        }
        if let Some(most) = self.most {
            let room = most.saturating_sub(1 + self.always.len());
            let over = self.found.len().saturating_sub(room);
            self.found.drain(..over);
        }
    }

    fn is_sent(&self, name: &str) -> bool {
        self.always.contains(name) || self.found.iter().any(|f| f == name)
    }

    /// Tools that are not sent but can be found: `None` when every tool is sent.
    pub(crate) fn searchable(&self) -> Option<usize> {
        self.index.as_ref().map(|i| i.len().saturating_sub(self.sent()))
    }

    pub(crate) fn sent(&self) -> usize {
        self.always.len() + self.found.len()
    }

    /// The definitions for the next request, in `tools`' order, the search tool last.
    pub(crate) fn specs(&self, tools: &[HostedTool]) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> =
            tools.iter().filter(|t| self.is_sent(&t.spec.name)).map(|t| t.spec.clone()).collect();
        if let Some(searchable) = self.searchable() {
            specs.push(search_spec(searchable));
        }
        specs
    }

    /// Whether the model's call `name` is a tool search this offer answers.
    pub(crate) fn is_search(&self, name: &str) -> bool {
        self.index.is_some() && name == SEARCH_TOOL
    }

    /// The query of a search call, when it is a valid one.
    pub(crate) fn search_query(&self, arguments: &str) -> Option<String> {
        self.index.as_ref()?;
        search_args(arguments).ok().map(|(query, _)| query)
    }

    /// Whether searches still lack the tools' vectors.
    pub(crate) fn lacks_vectors(&self) -> bool {
        self.index.as_ref().is_some_and(|i| i.vectors.is_none())
    }

    /// Gives searches the tools' vectors (in the tools' order); a wrong count is ignored.
    pub(crate) fn set_vectors(&mut self, vectors: Vec<Vec<f32>>) {
        if let Some(index) = self.index.as_mut()
            && vectors.len() == index.len
        {
            index.set_vectors(vectors);
        }
    }

    /// Runs a search call (with its query's vector, when the tools have theirs): its result for
    /// the model, the tools found now sent too.
    pub(crate) fn search(
        &mut self,
        tools: &[HostedTool],
        arguments: &str,
        query_vector: Option<&[f32]>,
    ) -> Result<String, String> {
        let Some(index) = &self.index else { return Err(format!("There is no tool named {SEARCH_TOOL:?}.")) };
        let (query, limit) = search_args(arguments)?;
        let query = query.as_str();
        let found: Vec<&HostedTool> =
            index.search_by(query, query_vector, limit).into_iter().map(|i| &tools[i]).collect();
        // The best match last: it is the newest find, the last to give way.
        self.add(found.iter().rev().map(|t| t.spec.name.clone()));
        let sent: Vec<&HostedTool> = found.into_iter().filter(|t| self.is_sent(&t.spec.name)).collect();
        Ok(found_text(query, &sent))
    }
}

/// How long a turn waits for embeddings before it searches by words alone.
const EMBED_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// `embedder`'s vectors of `texts`, given up after [`EMBED_WAIT`] (a slow endpoint never holds a
/// turn up for longer) or when `cancel` fires.
pub(crate) async fn embed_within(
    embedder: &dyn ToolEmbedder,
    texts: &[String],
    cancel: &CancellationToken,
) -> Result<Vec<Vec<f32>>, String> {
    let token = cancel.child_token();
    let _stop = token.clone().drop_guard();
    match tokio::time::timeout(EMBED_WAIT, embedder.embed(texts, &token)).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err(format!("no vectors within {} s", EMBED_WAIT.as_secs())),
    }
}

/// A search call's query and how many matches it asks for. The error is for the model.
fn search_args(arguments: &str) -> Result<(String, usize), String> {
    let args: Value =
        serde_json::from_str(if arguments.trim().is_empty() { "{}" } else { arguments }).map_err(|e| {
            format!("The arguments are not valid JSON ({e}). Call {SEARCH_TOOL} with {{\"query\": \"…\"}}.")
        })?;
    let Some(query) = args.get("query").and_then(Value::as_str).filter(|q| !q.trim().is_empty()) else {
        return Err(format!("{SEARCH_TOOL} needs a \"query\": what the tool should do, in a few words."));
    };
    let limit = args.get("limit").and_then(Value::as_u64).map_or(MATCHES, |n| (n as usize).clamp(1, MAX_MATCHES));
    Ok((query.to_owned(), limit))
}

/// The search tool's definition, saying how many tools it reaches.
pub fn search_spec(searchable: usize) -> ToolSpec {
    ToolSpec {
        name: SEARCH_TOOL.to_owned(),
        description: format!(
            "Finds tools for a task among {searchable} more tools that are available but not listed here. Describe \
             what you want to do; the best matches (name, server, description) come back, and from then on you can \
             call them like any listed tool. Search before saying no tool can do something."
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, in a few words (\"create a GitHub issue\")."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_MATCHES, "description": "How many matches (default 5)."}
            },
            "required": ["query"]
        }),
        origin: None,
    }
}

/// A search's result: JSON the model reads, and a later turn reads back ([`remembered`]).
fn found_text(query: &str, found: &[&HostedTool]) -> String {
    let tools: Vec<Value> = found
        .iter()
        .map(|t| {
            let description: String = t.spec.description.chars().take(MATCH_DESCRIPTION_CHARS).collect();
            json!({"name": t.spec.name, "server": t.server, "description": description})
        })
        .collect();
    let note = if found.is_empty() {
        format!("No tool matches {query:?}. Try other words, or answer without a tool.")
    } else {
        "These tools can be called from now on, with the arguments their definitions ask for.".to_owned()
    };
    json!({"tools": tools, "note": note}).to_string()
}

/// The tools a conversation has found (its searches' results) or called
/// successfully (a call refused or declined is not remembered), oldest first.
fn remembered(history: &[ChatMessage]) -> Vec<String> {
    let mut names = Vec::new();
    for (i, message) in history.iter().enumerate() {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                // Its own results follow it (ids repeat across rounds with some providers).
                let results = history[i + 1..].iter().take_while(|m| matches!(m, ChatMessage::Tool { .. }));
                let ok: Vec<&str> = results
                    .filter_map(|m| match m {
                        ChatMessage::Tool { call_id, is_error: false, .. } => Some(call_id.as_str()),
                        _ => None,
                    })
                    .collect();
                let ran = |id: &str| ok.contains(&id);
                let called = tool_calls.iter().filter(|c| c.name != SEARCH_TOOL && ran(&c.id));
                names.extend(called.map(|c| c.name.clone()));
            }
            ChatMessage::Tool { name, parts, is_error: false, .. } if name == SEARCH_TOOL => {
                for part in parts {
                    let ContentPart::Text { text } = part else { continue };
                    let Ok(found) = serde_json::from_str::<Value>(text) else { continue };
                    let listed: Vec<&Value> = found["tools"].as_array().into_iter().flatten().collect();
                    // The best match last, as a search adds them.
                    names.extend(listed.iter().rev().filter_map(|t| t["name"].as_str().map(str::to_owned)));
                }
            }
            _ => {}
        }
    }
    names
}

/// BM25 over the tools' text, by their position in the list, and their vectors when given.
pub struct ToolIndex {
    index: Bm25Index,
    len: usize,
    /// Unit vectors of the tools' [`embedding_text`], in order.
    vectors: Option<Vec<Vec<f32>>>,
}

impl ToolIndex {
    pub fn new(tools: &[HostedTool]) -> Self {
        let mut index = Bm25Index::default();
        for (i, tool) in tools.iter().enumerate() {
            index.add(i as i64 + 1, &document(tool));
        }
        Self { index, len: tools.len(), vectors: None }
    }

    /// Gives the tools' vectors (in the tools' order), for searches by meaning as well; vectors
    /// of differing sizes (two models mixed) are not used.
    pub fn set_vectors(&mut self, vectors: Vec<Vec<f32>>) {
        let size = vectors.first().map_or(0, Vec::len);
        if vectors.iter().all(|v| v.len() == size) {
            self.vectors = Some(vectors.into_iter().map(unit).collect());
        }
    }

    /// Positions of the best `k` tools for `query`, best first: BM25's ranking fused with the
    /// vectors' (reciprocal rank fusion) when the tools and the query have vectors.
    pub fn search_by(&self, query: &str, query_vector: Option<&[f32]>, k: usize) -> Vec<usize> {
        let (Some(vectors), Some(query_vector)) = (&self.vectors, query_vector) else { return self.search(query, k) };
        if vectors.first().is_some_and(|v| v.len() != query_vector.len()) {
            // Vectors of another model (the embeddings changed mid-turn): words alone.
            return self.search(query, k);
        }
        let query_vector = unit(query_vector.to_vec());
        let mut by_meaning: Vec<(usize, f32)> = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| (i, v.iter().zip(&query_vector).map(|(a, b)| a * b).sum()))
            .collect();
        by_meaning.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut fused: HashMap<usize, f32> = HashMap::new();
        let rankings =
            [self.search(query, FUSED_DEPTH), by_meaning.into_iter().take(FUSED_DEPTH).map(|(i, _)| i).collect()];
        for ranking in rankings {
            for (rank, i) in ranking.into_iter().enumerate() {
                *fused.entry(i).or_default() += 1.0 / (RRF_K + rank as f32 + 1.0);
            }
        }
        let mut fused: Vec<(usize, f32)> = fused.into_iter().collect();
        fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        fused.into_iter().take(k).map(|(i, _)| i).collect()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Positions of the best `k` tools for `query`, best first.
    pub fn search(&self, query: &str, k: usize) -> Vec<usize> {
        let terms = analyze::terms(&words(query), Purpose::Query);
        self.index.search(&terms, k).into_iter().map(|(id, _)| (id - 1) as usize).collect()
    }
}

/// `v` scaled to length 1 (a zero vector stays as it is, one with NaN or infinity becomes zero).
fn unit(mut v: Vec<f32>) -> Vec<f32> {
    if v.iter().any(|x| !x.is_finite()) {
        v.iter_mut().for_each(|x| *x = 0.0);
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// The text a tool is embedded as: its server, its name in words, and its description
/// (capped like the indexed text).
pub fn embedding_text(tool: &HostedTool) -> String {
    let name = words(&tool.tool).replace(['_', '-'], " ");
    format!("{} {name}: {}", tool.server, tool.spec.description).chars().take(MAX_DOCUMENT_CHARS).collect()
}

/// A tool's analysed terms: its server, names, description, and its
/// parameters' names and descriptions (which often say what the tool acts on).
fn document(tool: &HostedTool) -> String {
    let mut text = format!("{} {} {} {}", tool.server, tool.tool, tool.spec.name, tool.spec.description);
    if let Some(properties) = tool.spec.input_schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            text.push(' ');
            text.push_str(name);
            if let Some(description) = property.get("description").and_then(Value::as_str) {
                text.push(' ');
                text.push_str(description);
            }
        }
    }
    // A server cannot push the others out of the results by stuffing its tools with words.
    let text: String = text.chars().take(MAX_DOCUMENT_CHARS).collect();
    let mut terms = String::new();
    analyze::push_terms(&words(&text), Purpose::Document, &mut terms);
    terms
}

/// Splits identifiers into words: `getFileContents` → `get File Contents`
/// (`snake_case` and `kebab-case` are split by the analyser already).
fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut previous: Option<char> = None;
    for c in text.chars() {
        if c.is_uppercase() && previous.is_some_and(char::is_lowercase) {
            out.push(' ');
        }
        out.push(c);
        previous = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ApprovalMode;
    use crate::conversations::ToolPin;
    use crate::llm::ToolCall;

    fn tool(server: &str, name: &str, description: &str, params: &[&str]) -> HostedTool {
        let properties: serde_json::Map<String, Value> =
            params.iter().map(|p| ((*p).to_owned(), json!({"type": "string"}))).collect();
        HostedTool {
            spec: ToolSpec {
                name: format!("{server}__{name}"),
                description: description.into(),
                input_schema: json!({"type": "object", "properties": properties}),
                origin: None,
            },
            server: server.into(),
            tool: name.into(),
            approval: ApprovalMode::Allow,
            strict: false,
            pinned: false,
            pin: ToolPin { server_id: server.into(), tool: name.into(), fingerprint: String::new() },
            timeout: None,
        }
    }

    fn tools() -> Vec<HostedTool> {
        vec![
            tool("github", "create_issue", "Create a new issue in a GitHub repository.", &["owner", "repo", "title"]),
            tool("github", "getFileContents", "Get the contents of a file from a repository.", &["path"]),
            tool("time", "get_current_time", "Current time in a given IANA timezone.", &["timezone"]),
            tool("filesystem", "read_text_file", "Read a file from the file system as text.", &["path"]),
        ]
    }

    #[test]
    fn the_best_matching_tools_come_first() {
        let tools = tools();
        let index = ToolIndex::new(&tools);
        assert_eq!(index.search("open an issue on the repository", 1), [0]);
        assert_eq!(index.search("what time is it in Tokyo timezone", 1), [2]);
        // camelCase names are split into words.
        assert_eq!(index.search("file contents", 1), [1]);
        assert!(index.search("zebra", 5).is_empty());
    }

    #[test]
    fn every_tool_is_sent_while_they_fit_and_search_takes_over_when_they_do_not() {
        let mut tools = tools();
        tools[2].pinned = true;
        let counter = &budget::Estimate;
        let fits = Offer::plan(&tools, &[], Some(100_000), ToolBudget::default(), counter);
        assert_eq!((fits.searchable(), fits.specs(&tools).len()), (None, 4));
        let unknown_window = Offer::plan(&tools, &[], None, ToolBudget::default(), counter);
        assert_eq!(unknown_window.searchable(), None);

        let small = Offer::plan(&tools, &[], Some(500), ToolBudget::default(), counter);
        assert_eq!(small.searchable(), Some(3));
        let names: Vec<String> = small.specs(&tools).into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["time__get_current_time", SEARCH_TOOL], "the pinned tool and the search");

        let capped =
            Offer::plan(&tools, &[], None, ToolBudget { max_tools: Some(3), ..ToolBudget::default() }, counter);
        // More tools than the provider takes, and no room beside a search's matches for the pin.
        assert_eq!(capped.searchable(), Some(4));
    }

    #[test]
    fn a_search_sends_what_it_found_and_a_later_turn_remembers_it() {
        let tools = tools();
        let counter = &budget::Estimate;
        let mut offer = Offer::plan(&tools, &[], Some(500), ToolBudget::default(), counter);
        assert!(offer.is_search(SEARCH_TOOL));
        let result = offer.search(&tools, r#"{"query": "create a github issue", "limit": 1}"#, None).unwrap();
        let found: Value = serde_json::from_str(&result).unwrap();
        assert_eq!(found["tools"][0]["name"], "github__create_issue");
        assert!(offer.specs(&tools).iter().any(|s| s.name == "github__create_issue"));
        assert!(offer.search(&tools, "{}", None).unwrap_err().contains("needs a \"query\""));
        assert!(offer.search(&tools, "{not json", None).unwrap_err().contains("not valid JSON"));

        let call = |id: &str, name: &str| ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
            signature: None,
        };
        let result_of = |id: &str, name: &str, text: &str, is_error: bool| ChatMessage::Tool {
            call_id: id.into(),
            name: name.into(),
            parts: vec![ContentPart::text(text)],
            is_error,
        };
        let history = vec![
            ChatMessage::Assistant {
                text: String::new(),
                reasoning: None,
                reasoning_signature: None,
                tool_calls: vec![call("1", "filesystem__read_text_file"), call("2", "time__get_current_time")],
            },
            result_of("1", "filesystem__read_text_file", "the file", false),
            // A call that did not run (declined, refused) is not remembered.
            result_of("2", "time__get_current_time", "The user declined this call.", true),
            result_of("3", SEARCH_TOOL, &result, false),
        ];
        let later = Offer::plan(&tools, &history, Some(500), ToolBudget::default(), counter);
        let names: Vec<String> = later.specs(&tools).into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["github__create_issue", "filesystem__read_text_file", SEARCH_TOOL]);
        assert_eq!(later.searchable(), Some(2));
    }

    #[test]
    fn the_tools_sent_stay_within_the_providers_limit_the_oldest_finds_giving_way() {
        let mut tools = tools();
        tools[2].pinned = true;
        let limits = ToolBudget { max_tools: Some(3), ..ToolBudget::default() };
        let mut offer = Offer::plan(&tools, &[], None, limits, &budget::Estimate);
        // A search's matches keep their room: the pin gives way to them.
        assert_eq!(offer.sent(), 0);
        let found =
            offer.search(&tools, r#"{"query": "github issue repository file contents", "limit": 3}"#, None).unwrap();
        assert_eq!(offer.specs(&tools).len(), 3, "two finds and the search");
        let listed: Value = serde_json::from_str(&found).unwrap();
        assert_eq!(listed["tools"].as_array().unwrap().len(), 2, "only the finds that are sent are named");
        offer.search(&tools, r#"{"query": "read a text file from the file system", "limit": 1}"#, None).unwrap();
        let names: Vec<String> = offer.specs(&tools).into_iter().map(|s| s.name).collect();
        assert_eq!(names.len(), 3);
        assert!(names.contains(&"filesystem__read_text_file".to_owned()), "the newest find stays: {names:?}");
    }

    #[test]
    fn vectors_find_by_meaning_what_words_miss_and_keep_what_both_find_first() {
        let tools = tools();
        assert_eq!(
            embedding_text(&tools[1]),
            "github get File Contents: Get the contents of a file from a repository."
        );
        let mut index = ToolIndex::new(&tools);
        // One axis per tool: a query vector near the clock finds it with no word in common.
        let axis = |i: usize| (0..4).map(|j| if i == j { 2.0 } else { 0.0 }).collect::<Vec<f32>>();
        index.set_vectors((0..4).map(axis).collect());
        assert!(index.search("wall clock please", 1).is_empty(), "no word in common");
        assert_eq!(index.search_by("wall clock please", Some(&[0.1, 0.0, 0.9, 0.1]), 1), [2]);
        // Found by both: first.
        assert_eq!(index.search_by("create an issue", Some(&axis(0)), 4)[0], 0);
        // Without the query's vector, BM25 alone.
        assert_eq!(index.search_by("create an issue", None, 4), index.search("create an issue", 4));
    }

    #[test]
    fn a_real_tool_named_like_the_search_tool_turns_search_off() {
        let mut tools = tools();
        tools[0].spec.name = SEARCH_TOOL.into();
        let offer = Offer::plan(&tools, &[], Some(500), ToolBudget::default(), &budget::Estimate);
        assert_eq!(offer.searchable(), None);
        assert!(!offer.is_search(SEARCH_TOOL));
    }
}
