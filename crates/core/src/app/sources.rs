//! Settings → Knowledge base → Sources: remote retrieval tools the chat searches beside the local
//! knowledge base (see `rag::sources`). The page offers the tools of running servers, recognises
//! RAGFlow's and Patchbay's, previews any other's real answer so the user can map its fields, and
//! tries a source before it is saved.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::knowledge::hit;
use super::views::{KbHit, KbSourceCandidate, KbSourcePreview};
use super::{App, AppError};
use crate::agent::BUILTIN_SERVER;
use crate::rag::sources::{self, KnowledgeSource};

/// How long a preview or a try may take.
const TRY_LIMIT: Duration = Duration::from_secs(20);
/// How much of an answer a preview shows.
const PREVIEW_CHARS: usize = 4000;

impl App {
    /// The knowledge sources, in the order they were added.
    pub fn kb_sources(&self) -> Result<Vec<KnowledgeSource>, AppError> {
        Ok(self.kb().sources()?)
    }

    /// The tools of the running servers that could be sources (Patchbay's own excepted).
    pub fn kb_source_candidates(&self) -> Vec<KbSourceCandidate> {
        let mut out = Vec::new();
        for (server, tools) in self.inner.registry.all_tools() {
            if server == BUILTIN_SERVER {
                continue;
            }
            for tool in tools {
                let properties = tool.input_schema.get("properties").and_then(|p| p.as_object());
                let required: Vec<&str> = tool
                    .input_schema
                    .get("required")
                    .and_then(|r| r.as_array())
                    .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
                    .unwrap_or_default();
                let mut text_args: Vec<String> = properties
                    .map(|p| p.iter().filter(|(_, schema)| takes_text(schema)).map(|(k, _)| k.clone()).collect())
                    .unwrap_or_default();
                text_args.sort_by_key(|a| !required.contains(&a.as_str()));
                out.push(KbSourceCandidate {
                    server: server.clone(),
                    tool: tool.name.to_string(),
                    description: tool.description.as_ref().map(|d| d.to_string()),
                    shape: sources::recognise(&tool),
                    text_args,
                });
            }
        }
        out.sort_by(|a, b| (a.shape.is_none(), &a.server, &a.tool).cmp(&(b.shape.is_none(), &b.server, &b.tool)));
        out
    }

    /// Adds a source (or replaces the one of its name), pinned to its tool's definition; its
    /// server must be configured and running.
    pub fn kb_put_source(&self, source: KnowledgeSource) -> Result<Vec<KnowledgeSource>, AppError> {
        let kb = self.kb();
        kb.check_known_server(&source.server)?;
        Ok(kb.put_source(&self.inner.registry, source)?)
    }

    /// Removes the source named `name`.
    pub fn kb_remove_source(&self, name: &str) -> Result<Vec<KnowledgeSource>, AppError> {
        Ok(self.kb().remove_source(name)?)
    }

    /// Calls `tool` of `server` with `query` in `query_arg` and shows its answer and the fields of
    /// its first result, to map them.
    pub async fn kb_preview_source(
        &self,
        server: &str,
        tool: &str,
        query_arg: &str,
        query: &str,
        cancel: CancellationToken,
    ) -> Result<KbSourcePreview, AppError> {
        let (fields, answer) =
            sources::preview(&self.inner.registry, server, tool, query_arg, query, TRY_LIMIT, cancel).await?;
        let pretty = serde_json::to_string_pretty(&answer).unwrap_or_else(|_| answer.to_string());
        let answer = crate::text::cut(&pretty, PREVIEW_CHARS);
        Ok(KbSourcePreview { fields, answer })
    }

    /// What `source` finds for `query`, read as it would be in a chat, best first. A source
    /// not yet saved (no pin) is tried with its tool as the server offers it now; a saved one
    /// as it was pinned.
    pub async fn kb_try_source(
        &self,
        source: KnowledgeSource,
        query: &str,
        cancel: CancellationToken,
    ) -> Result<Vec<KbHit>, AppError> {
        if query.trim().is_empty() {
            return Err(AppError::Invalid("the search text is empty".into()));
        }
        let source = match source.tool_fingerprint {
            // A saved source: asked only while its server is the one it was added for.
            Some(_) => {
                self.kb().check_source(&source)?;
                source
            }
            None => sources::pin(&self.inner.registry, source)?,
        };
        let found = sources::ask(&self.inner.registry, &source, query, 5, TRY_LIMIT, cancel).await?;
        Ok(found.into_iter().map(|p| hit(p, query)).collect())
    }
}

/// Whether an argument's schema takes text: `"type": "string"`, a list of types with it, or one
/// of its `anyOf` choices (`str | None` in Python's SDK).
fn takes_text(schema: &serde_json::Value) -> bool {
    let string =
        |t: &serde_json::Value| t == "string" || t.as_array().is_some_and(|ts| ts.iter().any(|t| t == "string"));
    schema.get("type").is_some_and(string)
        || schema.get("anyOf").and_then(|a| a.as_array()).is_some_and(|choices| choices.iter().any(takes_text))
}
