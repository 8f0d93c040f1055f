//! Knowledge from other machines: a retrieval tool of an MCP server as a knowledge source.
//!
//! A team's documents often live in a shared engine: RAGFlow (its `ragflow_retrieval` tool),
//! another Patchbay (`knowledge_search`, from `kb serve` or Share), or any server with a search
//! tool. A [`KnowledgeSource`] names the server, the tool and how to read its answer
//! ([`SourceShape`]): RAGFlow's and Patchbay's are recognised by [`recognise`]; any other is read
//! through a mapping of its results' text, title and source fields the user confirms on a preview.
//! [`ask`] calls the tool through the registry (so its policy, rate limits and time limit hold)
//! and turns each result into an [`Excerpt`] naming its source, which the chat retriever fuses
//! with the local ones. A passage's relevance is the source's own score where it gives one, and
//! how much of the question its words cover in any case, so the relevance floor holds for every
//! source.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use rmcp::model::{CallToolResult, Tool};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::RagError;
use super::search::Excerpt;
use super::search::KNOWLEDGE_TOOL;
use super::{kb::KnowledgeBase, ragflow, relevance};
use crate::config::{ApprovalMode, ConfigStore};
use crate::mcp::protocol::approval::{Decision, ToolFingerprint};
use crate::mcp::{CallOptions, McpRegistry, ServerStatus};
use crate::text::analyze::{self, Purpose};

/// Where the sources are kept.
const SETTING: &str = "kb.sources";

/// How a source's tool is asked and its answer read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceShape {
    /// RAGFlow's `ragflow_retrieval`: `question` in, `{chunks: [{content, document_name, similarity}]}` out.
    Ragflow,
    /// Patchbay's `knowledge_search`: `query` in, `[{path, text, heading, lines, relevance}]` out.
    Patchbay,
    /// Any other tool: the argument the question goes in, and the fields of each result (a dotted
    /// path such as `metadata.title`) in the answer's JSON list (or its first list of objects).
    Mapped { query_arg: String, text: String, title: Option<String>, source: Option<String> },
}

/// A remote retrieval tool the chat searches beside the local knowledge base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct KnowledgeSource {
    /// What citations call it.
    pub name: String,
    pub server: String,
    pub tool: String,
    pub shape: SourceShape,
    /// The identity of the server it was added for (`ConfigStore::server_ids`), filled in when
    /// it is saved: a server added later under the same name is not sent the user's questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server_id: Option<String>,
    /// The tool's definition when it was added ([`pin`]): a tool that changed since is not
    /// called until the source is added again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_fingerprint: Option<String>,
}

/// `source` pinned to its tool's definition as the running server offers it now.
pub fn pin(registry: &McpRegistry, source: KnowledgeSource) -> Result<KnowledgeSource, RagError> {
    let tools = registry.tools(&source.server)?;
    let tool = tools
        .iter()
        .find(|t| t.name == source.tool)
        .ok_or_else(|| bad(format!("{} offers no tool {} (is it running?)", source.server, source.tool)))?;
    Ok(KnowledgeSource { tool_fingerprint: Some(ToolFingerprint::of(tool).as_str().to_owned()), ..source })
}

/// The shape of a tool Patchbay knows, by its name and its arguments.
pub fn recognise(tool: &Tool) -> Option<SourceShape> {
    let has = |arg: &str| tool.input_schema.get("properties").and_then(|p| p.get(arg)).is_some();
    known(&tool.name).filter(|shape| has(if *shape == SourceShape::Ragflow { "question" } else { "query" }))
}

/// The shape of a tool Patchbay knows, by its name alone (the CLI adds a source by name).
pub fn known(tool_name: &str) -> Option<SourceShape> {
    match tool_name {
        ragflow::RETRIEVAL_TOOL => Some(SourceShape::Ragflow),
        KNOWLEDGE_TOOL => Some(SourceShape::Patchbay),
        _ => None,
    }
}

fn bad(why: String) -> RagError {
    RagError::BadRequest { why }
}

impl KnowledgeBase {
    /// The knowledge sources, in the order they were added.
    pub fn sources(&self) -> Result<Vec<KnowledgeSource>, RagError> {
        Ok(self.store.setting(SETTING)?.unwrap_or_default())
    }

    /// Adds a source for a configured server, or replaces the one of the same name, pinned to
    /// its server (as configured now) and to its tool's definition (as `registry`'s running
    /// server offers it now): a source is never stored unpinned.
    pub fn put_source(
        &self,
        registry: &McpRegistry,
        source: KnowledgeSource,
    ) -> Result<Vec<KnowledgeSource>, RagError> {
        let name = source.name.trim();
        if name.is_empty() || source.server.trim().is_empty() || source.tool.trim().is_empty() {
            return Err(bad("a knowledge source needs a name, a server and a tool".into()));
        }
        let server_id = self.server_ids()?.get(&source.server).cloned();
        if server_id.is_none() {
            return Err(RagError::UnknownServer { name: source.server });
        }
        if let SourceShape::Mapped { query_arg, text, .. } = &source.shape
            && (query_arg.trim().is_empty() || text.trim().is_empty())
        {
            return Err(bad(format!(
                "{name}: say which argument takes the question and which field holds each result's text"
            )));
        }
        let source = pin(registry, KnowledgeSource { name: name.to_owned(), server_id, ..source })?;
        let mut sources = self.sources()?;
        match sources.iter_mut().find(|s| s.name == source.name) {
            Some(old) => *old = source,
            None => sources.push(source),
        }
        self.store.set_setting(SETTING, &sources)?;
        Ok(sources)
    }

    /// Removes the source named `name`.
    pub fn remove_source(&self, name: &str) -> Result<Vec<KnowledgeSource>, RagError> {
        let name = name.trim();
        let mut sources = self.sources()?;
        let before = sources.len();
        sources.retain(|s| s.name != name);
        if sources.len() == before {
            return Err(bad(format!("there is no knowledge source named {name:?}")));
        }
        self.store.set_setting(SETTING, &sources)?;
        Ok(sources)
    }

    /// Drops the sources of a server being deleted.
    pub fn forget_sources_of(&self, server: &str) -> Result<(), RagError> {
        let mut sources = self.sources()?;
        let before = sources.len();
        sources.retain(|s| s.server != server);
        if sources.len() != before {
            self.store.set_setting(SETTING, &sources)?;
        }
        Ok(())
    }

    /// The identities of the configured servers, by name, to tell a source's server from one
    /// added later under its name.
    pub(crate) fn server_ids(&self) -> Result<BTreeMap<String, String>, RagError> {
        Ok(ConfigStore::new(self.store.clone()).server_ids()?)
    }

    /// Whether `server` is configured.
    pub fn check_known_server(&self, server: &str) -> Result<(), RagError> {
        match self.server_ids()?.contains_key(server) {
            true => Ok(()),
            false => Err(RagError::UnknownServer { name: server.to_owned() }),
        }
    }

    /// Whether a saved source's server is still the one it was added for (`try` checks it too).
    pub fn check_source(&self, source: &KnowledgeSource) -> Result<(), RagError> {
        same_server(source, &self.server_ids()?)
    }
}

/// Whether `source`'s server is still the one it was added for.
pub(crate) fn same_server(source: &KnowledgeSource, ids: &BTreeMap<String, String>) -> Result<(), RagError> {
    match (&source.server_id, ids.get(&source.server)) {
        (Some(added), Some(now)) if added == now => Ok(()),
        (_, None) => Err(RagError::UnknownServer { name: source.server.clone() }),
        _ => Err(bad(format!(
            "the server named {} was replaced since this source was added; add the source again to use the new one",
            source.server
        ))),
    }
}

/// Whether a source's tool may be called without asking: its server switched on and running, the
/// tool offered and switched on, and its approval neither "deny" nor an explicit "ask". Adding a
/// source is the user's word to call it with each question, as a server's default "ask" allows;
/// a server at the strict level, where every call is asked, cannot answer unasked.
fn permitted(registry: &McpRegistry, server: &str, name: &str, pinned: Option<&str>) -> Result<(), RagError> {
    let config = registry.server_config(server)?;
    if !config.enabled {
        return Err(bad(format!("{server} is switched off on its page")));
    }
    let status = registry.status(server)?;
    if status != ServerStatus::Ready {
        return Err(bad(format!("{server} is not running ({status})")));
    }
    if config.disabled_tools.contains(name) {
        return Err(bad(format!("{server}'s tool {name} is switched off on the server's page")));
    }
    let policy = registry.approval_policy(&config);
    if policy.strict {
        return Err(bad(format!(
            "{server} runs at the strict level, where every call is asked, so it cannot answer unasked; choose the \
             normal level on its page to use it as a knowledge source"
        )));
    }
    let tools = registry.tools(server)?;
    let tool = tools.iter().find(|t| t.name == *name).ok_or_else(|| bad(format!("{server} offers no tool {name}")))?;
    if pinned.is_some_and(|pinned| ToolFingerprint::of(tool).as_str() != pinned) {
        return Err(bad(format!(
            "{server}'s tool {name} changed (its description or arguments) since this source was added; add the \
             source again to use it as it is now"
        )));
    }
    match policy.decide(tool) {
        Decision::Deny(_) => Err(bad(format!("{server}'s tool {name} is set to deny on the server's page"))),
        Decision::Ask(_) if policy.overrides.get(name) == Some(&ApprovalMode::Ask) => Err(bad(format!(
            "{server}'s tool {name} is set to ask before each call; set it to allow on the server's page to use it \
             as a knowledge source"
        ))),
        Decision::Ask(_) | Decision::Allow(_) => Ok(()),
    }
}

/// Asks `source` for `query`'s best `top_k` passages within `limit`, best first, each naming the
/// source; a failure (or a tool the user switched off or denied) says which source and why.
pub async fn ask(
    registry: &McpRegistry,
    source: &KnowledgeSource,
    query: &str,
    top_k: usize,
    limit: Duration,
    cancel: CancellationToken,
) -> Result<Vec<Excerpt>, RagError> {
    let arguments = match &source.shape {
        SourceShape::Ragflow => json!({"question": query, "page_size": top_k}),
        SourceShape::Patchbay => json!({"query": query, "top_k": top_k}),
        SourceShape::Mapped { query_arg, .. } => json!({ query_arg: query }),
    };
    // A stored source is asked only as pinned: one stored without a pin (by an older Patchbay)
    // could not tell a changed tool.
    let pinned = source.tool_fingerprint.as_deref().ok_or_else(|| {
        bad(format!(
            "this source was stored without {}'s tool {} as it was when added, so a changed tool cannot be \
             told; add the source again",
            source.server, source.tool
        ))
    })?;
    let (result, text) = call(registry, &source.server, &source.tool, Some(pinned), arguments, limit, cancel).await?;
    let found = read_answer(&source.shape, &result, &text)?;
    Ok(excerpts(source, query, found, top_k))
}

/// Calls a source's tool, if [`permitted`], within `limit` (the registry's own limit, and a
/// second past it in case the call hangs past the registry); its answer and its text, or the
/// tool's error as an error.
async fn call(
    registry: &McpRegistry,
    server: &str,
    tool: &str,
    pinned: Option<&str>,
    arguments: Value,
    limit: Duration,
    cancel: CancellationToken,
) -> Result<(CallToolResult, String), RagError> {
    permitted(registry, server, tool, pinned)?;
    let options = CallOptions { timeout: Some(limit), ..CallOptions::default() };
    let call = registry.call_tool(server, tool, arguments.as_object().cloned(), options, cancel);
    let result = tokio::time::timeout(limit + Duration::from_secs(1), call)
        .await
        .map_err(|_| RagError::Timeout { what: "the knowledge source", after: limit })??;
    let text: String = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.as_str())).collect();
    if result.is_error == Some(true) {
        return Err(bad(format!("the tool answered with an error: {}", excerpt_of(&text))));
    }
    Ok((result, text))
}

/// One result as a source gives it.
#[derive(Debug, Default, PartialEq)]
struct Found {
    text: String,
    /// The document: its path, URI or title.
    document: String,
    heading: String,
    lines: Option<(usize, usize)>,
    /// The source's own score, 0 to 1, when it gives one.
    score: Option<f64>,
}

/// The results in a tool's answer (its text `text`), read by `shape`.
fn read_answer(shape: &SourceShape, result: &CallToolResult, text: &str) -> Result<Vec<Found>, RagError> {
    let answer = answer_json(result, text, "")?;
    let str_at = |item: &Value, path: &str| at(item, path).map(plain).unwrap_or_default();
    let found = match shape {
        SourceShape::Ragflow => items(&answer, Some("chunks"))?
            .iter()
            .map(|c| Found {
                text: str_at(c, "content"),
                document: ["path", "document_name", "document_keyword"]
                    .iter()
                    .map(|f| str_at(c, f))
                    .find(|d| !d.is_empty())
                    .unwrap_or_default(),
                heading: str_at(c, "heading"),
                lines: lines(c),
                score: c.get("similarity").and_then(Value::as_f64),
            })
            .collect(),
        SourceShape::Patchbay => items(&answer, None)?
            .iter()
            .map(|h| Found {
                text: str_at(h, "text"),
                document: str_at(h, "path"),
                heading: str_at(h, "heading"),
                lines: lines(h),
                score: h.get("relevance").and_then(Value::as_f64),
            })
            .collect(),
        SourceShape::Mapped { text, title, source, .. } => {
            let list = items(&answer, None)?;
            if !list.is_empty() && list.iter().all(|item| at(item, text).is_none()) {
                let mut fields = Vec::new();
                field_paths(&list[0], "", &mut fields);
                return Err(bad(format!(
                    "no result has the field {text:?}; the first result's fields are: {}",
                    fields.join(", ")
                )));
            }
            list.iter()
                .map(|item| Found {
                    text: str_at(item, text),
                    document: [source, title]
                        .into_iter()
                        .flatten()
                        .map(|f| str_at(item, f))
                        .find(|d| !d.is_empty())
                        .unwrap_or_default(),
                    ..Found::default()
                })
                .collect()
        }
    };
    Ok(found)
}

/// A tool's answer as JSON: its text (what RAGFlow and Patchbay send), else its structured
/// content (which SDKs may also send, wrapping the text).
fn answer_json(result: &CallToolResult, text: &str, consequence: &str) -> Result<Value, RagError> {
    match (serde_json::from_str(text), &result.structured_content) {
        (Ok(answer), _) => Ok(answer),
        (Err(_), Some(structured)) => Ok(structured.clone()),
        (Err(e), None) => Err(bad(format!("the answer is not JSON ({e}){consequence}: {}", excerpt_of(text)))),
    }
}

/// The list of results: at `field`, else the answer itself when a list, else its first field (by
/// name) holding a list of objects.
fn items<'a>(answer: &'a Value, field: Option<&str>) -> Result<&'a Vec<Value>, RagError> {
    let list = match field {
        Some(f) => answer.get(f).and_then(Value::as_array),
        None => answer.as_array().or_else(|| {
            answer
                .as_object()
                .and_then(|o| o.values().filter_map(Value::as_array).find(|a| a.first().is_some_and(Value::is_object)))
        }),
    };
    list.ok_or_else(|| {
        let wanted = field.map_or_else(|| "list of results".to_owned(), |f| format!("list at \"{f}\""));
        bad(format!("the answer holds no {wanted}: {}", excerpt_of(&answer.to_string())))
    })
}

/// The value at a dotted path.
fn at<'a>(item: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(item, |v, key| v.get(key))
}

/// A value as text: a string as is, anything else as JSON.
fn plain(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

fn lines(item: &Value) -> Option<(usize, usize)> {
    let pair = item.get("lines")?.as_array()?;
    let n = |i: usize| pair.get(i)?.as_u64().and_then(|n| usize::try_from(n).ok());
    Some((n(0)?, n(1)?))
}

/// The start of a long text, for an error message.
fn excerpt_of(text: &str) -> String {
    crate::text::cut(text, 200)
}

/// Results as excerpts naming `source`, ranked as given, each with how much of the question its
/// words cover (filler words left out, every word weighing the same).
fn excerpts(source: &KnowledgeSource, query: &str, found: Vec<Found>, top_k: usize) -> Vec<Excerpt> {
    let terms = analyze::terms(query, Purpose::Query);
    let asked = relevance::content_terms(&terms);
    let weights = vec![1.0; asked.len()];
    found
        .into_iter()
        .filter(|f| !f.text.trim().is_empty())
        .take(top_k)
        .enumerate()
        .map(|(rank, f)| {
            let mut words = String::new();
            analyze::push_terms(&format!("{} {}", f.heading, f.text), Purpose::Document, &mut words);
            let words: HashSet<&str> = words.split(' ').collect();
            let (first, last) = f.lines.unwrap_or((0, 0));
            Excerpt {
                chunk_id: i64::try_from(rank).unwrap_or(i64::MAX),
                term_match: relevance::term_match(&asked, &weights, &words),
                similarity: f.score.map(|s| s.clamp(0.0, 1.0)),
                score: 0.0,
                path: PathBuf::from(if f.document.is_empty() { source.name.clone() } else { f.document }),
                heading: f.heading,
                line_start: first,
                line_end: last,
                text: f.text,
                origin: Some(source.name.clone()),
            }
        })
        .collect()
}

/// A source's answer with results as JSON, for the page's preview of a mapping: the fields the
/// first result has (dotted paths), and the answer itself.
pub async fn preview(
    registry: &McpRegistry,
    server: &str,
    tool: &str,
    query_arg: &str,
    query: &str,
    limit: Duration,
    cancel: CancellationToken,
) -> Result<(Vec<String>, Value), RagError> {
    if query.trim().is_empty() || query_arg.trim().is_empty() {
        return Err(bad("say which argument takes the question, and a question to ask".into()));
    }
    let mut arguments = Map::new();
    arguments.insert(query_arg.to_owned(), Value::String(query.to_owned()));
    let (result, text) = call(registry, server, tool, None, Value::Object(arguments), limit, cancel).await?;
    let answer = answer_json(&result, &text, ", so it cannot be mapped")?;
    let first = items(&answer, None)?.first().cloned().unwrap_or(Value::Null);
    let mut fields = Vec::new();
    field_paths(&first, "", &mut fields);
    Ok((fields, answer))
}

/// The dotted paths of an object's text and number fields.
fn field_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    if let Value::Object(o) = v {
        for (key, value) in o {
            let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
            match value {
                Value::Object(_) => field_paths(value, &path, out),
                Value::String(_) | Value::Number(_) => out.push(path),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    fn text_of(result: &CallToolResult) -> String {
        result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect()
    }

    fn answer(json: Value) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(json.to_string())])
    }

    fn source(shape: SourceShape) -> KnowledgeSource {
        KnowledgeSource {
            name: "Team".into(),
            server: "s".into(),
            tool: "t".into(),
            shape,
            server_id: None,
            tool_fingerprint: None,
        }
    }

    #[test]
    fn ragflow_chunks_are_read_with_their_document_and_score() {
        let result = answer(json!({"chunks": [
            {"content": "The kakapo is a flightless parrot.", "document_keyword": "birds.pdf", "similarity": 0.83},
            {"content": "", "document_name": "empty.pdf"},
            {"content": "Kea live in the Alps of New Zealand.", "document_name": "kea.md", "path": "/srv/kea.md",
             "heading": "Kea", "lines": [4, 9]}
        ], "pagination": {}}));
        let found = read_answer(&SourceShape::Ragflow, &result, &text_of(&result)).unwrap();
        assert_eq!(found[0].document, "birds.pdf");
        assert_eq!(found[0].score, Some(0.83));
        assert_eq!((found[2].document.as_str(), found[2].lines), ("/srv/kea.md", Some((4, 9))));
        let excerpts = excerpts(&source(SourceShape::Ragflow), "flightless parrot", found, 10);
        // The empty chunk is left out; ranks are kept.
        assert_eq!(excerpts.len(), 2);
        assert_eq!(excerpts[0].origin.as_deref(), Some("Team"));
        assert_eq!(excerpts[0].term_match, 1.0);
        assert_eq!(excerpts[0].relevance(), 1.0);
        assert_eq!(excerpts[1].term_match, 0.0, "kea matches nothing asked");
        assert_eq!(excerpts[1].relevance(), 0.0);
    }

    #[test]
    fn a_mapping_reads_dotted_fields_of_the_first_list() {
        let result = answer(
            json!({"total": 1, "hits": [{"body": "Tui sing.", "meta": {"title": "Tui", "url": "https://w/tui"}}]}),
        );
        let shape = SourceShape::Mapped {
            query_arg: "q".into(),
            text: "body".into(),
            title: Some("meta.title".into()),
            source: Some("meta.url".into()),
        };
        let found = read_answer(&shape, &result, &text_of(&result)).unwrap();
        assert_eq!(found, [Found { text: "Tui sing.".into(), document: "https://w/tui".into(), ..Found::default() }]);
        // A text field no result has is named, with the fields there are.
        let wrong = SourceShape::Mapped { query_arg: "q".into(), text: "content".into(), title: None, source: None };
        let e = read_answer(&wrong, &result, &text_of(&result)).unwrap_err().to_string();
        assert_eq!(e, "no result has the field \"content\"; the first result's fields are: body, meta.title, meta.url");
        let mut fields = Vec::new();
        field_paths(&json!({"body": "x", "meta": {"title": "t", "n": 1, "tags": []}}), "", &mut fields);
        assert_eq!(fields, ["body", "meta.n", "meta.title"]);
    }

    #[test]
    fn answers_that_cannot_be_read_say_why() {
        let not_json = CallToolResult::success(vec![ContentBlock::text("Found 3 things")]);
        let e = read_answer(&SourceShape::Patchbay, &not_json, "Found 3 things").unwrap_err().to_string();
        assert!(e.starts_with("the answer is not JSON") && e.contains("Found 3 things"), "{e}");
        let e =
            read_answer(&SourceShape::Ragflow, &answer(json!({"data": []})), "{\"data\": []}").unwrap_err().to_string();
        assert!(e.starts_with("the answer holds no list at \"chunks\": {\"data\":[]}"), "{e}");
    }

    #[test]
    fn known_tools_are_recognised_by_name_and_argument() {
        let tool = |name: &str, arg: &str| {
            let schema = json!({"type": "object", "properties": {arg: {"type": "string"}}});
            Tool::new(name.to_owned(), "d", std::sync::Arc::new(schema.as_object().unwrap().clone()))
        };
        assert_eq!(recognise(&tool("ragflow_retrieval", "question")), Some(SourceShape::Ragflow));
        assert_eq!(recognise(&tool("knowledge_search", "query")), Some(SourceShape::Patchbay));
        assert_eq!(recognise(&tool("knowledge_search", "q")), None);
        assert_eq!(recognise(&tool("search", "query")), None);
    }
}
