//! Assistant presets: a name, a system prompt, a default provider and model,
//! sampling settings, the tools offered and the knowledge-base mode.
//!
//! Presets live in the `assistants` table, one JSON document each. The
//! built-in [`DEFAULT_ASSISTANT`] always exists: until the user saves their
//! own version of it, [`AssistantStore`] serves [`Assistant::builtin_default`],
//! and deleting the saved version brings the built-in one back.

use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};

use crate::agent::{Sampling, ToolSelection};
use crate::clock::now_ms;
use crate::store::{Store, StoreError};

/// The name of the assistant used when none is chosen.
pub const DEFAULT_ASSISTANT: &str = "Default";

/// Errors from the assistant store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AssistantError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored preset could not be decoded.
    #[error("stored assistant {name:?} is invalid: {source}")]
    Decode {
        name: String,
        #[source]
        source: serde_json::Error,
    },
    /// No preset by that name.
    #[error("no assistant named {name:?}")]
    NotFound { name: String },
    /// The preset is not acceptable.
    #[error("assistant {field}: {reason}")]
    Invalid { field: &'static str, reason: String },
}

/// How an assistant uses the knowledge base (see `rag::chat`).
///
/// Names by front end: the issue and `patchbay ask/chat --kb` say `off`,
/// `auto` (= [`Context`](Self::Context)), `tool` and `both`. The UI's
/// assistant editor (`kb_mode` in `ui/IPC.md`) labels `"auto"` "As a tool the
/// model may call" (= [`Tool`](Self::Tool)) and `"always"` "Always search and
/// cite" (= [`Context`](Self::Context)); the desktop maps those two by label.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KnowledgeMode {
    /// Not at all.
    #[default]
    Off,
    /// Passages are retrieved for every message and given as numbered context ("auto").
    /// The built-in default: with an empty knowledge base it adds nothing.
    Context,
    /// The model may call the `knowledge_search` tool.
    Tool,
    /// Both.
    Both,
}

/// How much knowledge-base context an assistant adds to a message (see `rag::chat`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(default)]
pub struct KnowledgeLimits {
    /// Passages at most.
    pub top_k: u32,
    /// The least relevance (0 to 1) a passage needs to be added and cited: the share of what
    /// was asked its words cover, or its embedding's similarity (`rag::relevance`).
    pub min_relevance: f64,
    /// Estimated tokens of passage text at most.
    pub max_tokens: u32,
}

impl KnowledgeLimits {
    /// The most passages an assistant may add.
    pub const MAX_TOP_K: u32 = 50;
    /// The smallest and largest context budget, in tokens.
    pub const TOKENS: std::ops::RangeInclusive<u32> = 100..=100_000;
}

impl Default for KnowledgeLimits {
    fn default() -> Self {
        Self { top_k: 5, min_relevance: 0.4, max_tokens: 2_000 }
    }
}

/// An assistant preset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assistant {
    pub name: String,
    pub system_prompt: String,
    /// Provider profile name; the first configured provider when `None`.
    #[serde(default)]
    pub provider: Option<String>,
    /// Model id; the provider's default model when `None`.
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub sampling: Sampling,
    /// The MCP servers and tools offered to the model.
    #[serde(default)]
    pub tools: ToolSelection,
    #[serde(default)]
    pub knowledge: KnowledgeMode,
    #[serde(default)]
    pub knowledge_limits: KnowledgeLimits,
}

const DEFAULT_PROMPT: &str = "\
You are Patchbay, a helpful assistant running on the user's own computer.

You can call tools. Each tool belongs to an MCP server the user installed (its name starts with the \
server's name) or is built into Patchbay. Use a tool when it gives a better answer than you could \
from memory: current facts, the user's files, web pages, calculations, the time. Do not call tools \
for things you already know well.

- Call a tool with arguments that match its schema. If a call fails, read the error, fix the \
arguments and try again once; if it fails again, tell the user what went wrong.
- Some calls need the user's approval. If the user declines a call, do not retry it: answer \
without it or ask what they would prefer.
- Several independent calls can be made at once.
- Say which tools you used when it matters for trusting the answer, and never invent tool results.
- When passages from the knowledge base are given, cite them by number like [1].

Answer in the user's language. Be direct and concise; use Markdown when it helps.";

impl Assistant {
    /// The built-in default assistant.
    pub fn builtin_default() -> Self {
        Self {
            name: DEFAULT_ASSISTANT.into(),
            system_prompt: DEFAULT_PROMPT.into(),
            provider: None,
            model: None,
            sampling: Sampling::default(),
            tools: ToolSelection::All,
            knowledge: KnowledgeMode::Context,
            knowledge_limits: KnowledgeLimits::default(),
        }
    }

    fn validate(&self) -> Result<(), AssistantError> {
        if self.name.trim().is_empty() {
            return Err(AssistantError::Invalid { field: "name", reason: "cannot be empty".into() });
        }
        if let Some(t) = self.sampling.temperature.filter(|t| !(0.0..=2.0).contains(t)) {
            return Err(AssistantError::Invalid { field: "temperature", reason: format!("{t} is outside 0 to 2") });
        }
        if let Some(p) = self.sampling.top_p.filter(|p| !(0.0..=1.0).contains(p)) {
            return Err(AssistantError::Invalid { field: "top_p", reason: format!("{p} is outside 0 to 1") });
        }
        let limits = &self.knowledge_limits;
        if !(1..=KnowledgeLimits::MAX_TOP_K).contains(&limits.top_k) {
            return Err(AssistantError::Invalid {
                field: "knowledge passages",
                reason: format!("{} is outside 1 to {}", limits.top_k, KnowledgeLimits::MAX_TOP_K),
            });
        }
        if !(0.0..=1.0).contains(&limits.min_relevance) {
            return Err(AssistantError::Invalid {
                field: "knowledge minimum relevance",
                reason: format!("{} is outside 0 to 1", limits.min_relevance),
            });
        }
        if !KnowledgeLimits::TOKENS.contains(&limits.max_tokens) {
            return Err(AssistantError::Invalid {
                field: "knowledge context budget",
                reason: format!(
                    "{} tokens is outside {} to {}",
                    limits.max_tokens,
                    KnowledgeLimits::TOKENS.start(),
                    KnowledgeLimits::TOKENS.end()
                ),
            });
        }
        Ok(())
    }
}

/// Assistant presets kept in the shared [`Store`].
#[derive(Debug, Clone)]
pub struct AssistantStore {
    store: Store,
}

impl AssistantStore {
    /// Presets kept in `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Every preset in the user's order, the default one first when not saved.
    pub fn list(&self) -> Result<Vec<Assistant>, AssistantError> {
        let rows: Vec<(String, String)> = self.store.read(|c| {
            let mut stmt = c.prepare("SELECT name, doc FROM assistants ORDER BY position, name")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })?;
        let mut out: Vec<Assistant> = rows.iter().map(|(name, doc)| decode(name, doc)).collect::<Result<_, _>>()?;
        if !out.iter().any(|a| a.name == DEFAULT_ASSISTANT) {
            out.insert(0, Assistant::builtin_default());
        }
        Ok(out)
    }

    /// One preset by name.
    pub fn get(&self, name: &str) -> Result<Assistant, AssistantError> {
        let doc: Option<String> = self
            .store
            .read(|c| c.query_row("SELECT doc FROM assistants WHERE name = ?1", [name], |r| r.get(0)).optional())?;
        match doc {
            Some(doc) => decode(name, &doc),
            None if name == DEFAULT_ASSISTANT => Ok(Assistant::builtin_default()),
            None => Err(AssistantError::NotFound { name: name.to_owned() }),
        }
    }

    /// Creates or replaces a preset (matched by name).
    pub fn save(&self, assistant: &Assistant) -> Result<(), AssistantError> {
        assistant.validate()?;
        let doc = serde_json::to_string(assistant)
            .map_err(|source| AssistantError::Decode { name: assistant.name.clone(), source })?;
        self.store.write(|tx| {
            tx.execute(
                "INSERT INTO assistants(name, position, doc, updated_at)
                 VALUES (?1, (SELECT COALESCE(MAX(position), -1) + 1 FROM assistants), ?2, ?3)
                 ON CONFLICT(name) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at",
                (&assistant.name, &doc, now_ms()),
            )
            .map(drop)
            .map_err(|e| AssistantError::from(self.store.error(e)))
        })
    }

    /// Deletes a preset. Deleting the saved default restores the built-in one.
    pub fn delete(&self, name: &str) -> Result<(), AssistantError> {
        let n = self.store.write(|tx| {
            tx.execute("DELETE FROM assistants WHERE name = ?1", [name])
                .map_err(|e| AssistantError::from(self.store.error(e)))
        })?;
        if n == 0 {
            return Err(AssistantError::NotFound { name: name.to_owned() });
        }
        Ok(())
    }
}

fn decode(name: &str, doc: &str) -> Result<Assistant, AssistantError> {
    serde_json::from_str(doc).map_err(|source| AssistantError::Decode { name: name.to_owned(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> AssistantStore {
        AssistantStore::new(Store::open_in_memory().unwrap())
    }

    #[test]
    fn the_default_assistant_always_exists() {
        let s = store();
        let list = s.list().unwrap();
        assert_eq!(list, [Assistant::builtin_default()]);
        assert_eq!(s.get(DEFAULT_ASSISTANT).unwrap(), Assistant::builtin_default());
        assert!(matches!(s.delete(DEFAULT_ASSISTANT), Err(AssistantError::NotFound { .. })));

        let mut mine = Assistant::builtin_default();
        mine.system_prompt = "Be terse.".into();
        s.save(&mine).unwrap();
        assert_eq!(s.get(DEFAULT_ASSISTANT).unwrap().system_prompt, "Be terse.");
        assert_eq!(s.list().unwrap().len(), 1);
        s.delete(DEFAULT_ASSISTANT).unwrap();
        assert_eq!(s.get(DEFAULT_ASSISTANT).unwrap(), Assistant::builtin_default());
    }

    #[test]
    fn presets_round_trip_and_are_validated() {
        let s = store();
        let coder = Assistant {
            name: "Coder".into(),
            system_prompt: "You write Rust.".into(),
            provider: Some("deepseek".into()),
            model: Some("deepseek-chat".into()),
            sampling: Sampling { temperature: Some(0.1), top_p: None, max_tokens: Some(2048), reasoning: None },
            tools: ToolSelection::Only { servers: ["filesystem".to_owned()].into(), tools: Default::default() },
            knowledge: KnowledgeMode::Context,
            knowledge_limits: KnowledgeLimits { top_k: 8, min_relevance: 0.5, max_tokens: 4_000 },
        };
        s.save(&coder).unwrap();
        assert_eq!(s.get("Coder").unwrap(), coder);
        assert_eq!(s.list().unwrap().iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), [DEFAULT_ASSISTANT, "Coder"]);
        let mut hot = coder.clone();
        hot.sampling.temperature = Some(3.0);
        let err = s.save(&hot).unwrap_err();
        assert!(matches!(err, AssistantError::Invalid { field: "temperature", .. }), "{err}");
        assert!(matches!(s.get("nobody"), Err(AssistantError::NotFound { .. })));
        for (limits, field) in [
            (KnowledgeLimits { top_k: 0, ..KnowledgeLimits::default() }, "knowledge passages"),
            (KnowledgeLimits { min_relevance: 1.5, ..KnowledgeLimits::default() }, "knowledge minimum relevance"),
            (KnowledgeLimits { max_tokens: 10, ..KnowledgeLimits::default() }, "knowledge context budget"),
        ] {
            let err = s.save(&Assistant { knowledge_limits: limits, ..coder.clone() }).unwrap_err();
            assert!(matches!(err, AssistantError::Invalid { field: f, .. } if f == field), "{err}");
        }
        assert_eq!(s.get("Coder").unwrap(), coder, "a refused change keeps what was saved");
    }

    #[test]
    fn presets_saved_before_knowledge_limits_get_the_defaults() {
        let s = store();
        let doc = r#"{"name": "Old", "system_prompt": "", "knowledge": "context"}"#;
        s.store
            .write(|tx| {
                tx.execute("INSERT INTO assistants(name, position, doc, updated_at) VALUES ('Old', 0, ?1, 0)", [doc])
                    .map(drop)
                    .map_err(|e| AssistantError::from(s.store.error(e)))
            })
            .unwrap();
        assert_eq!(s.get("Old").unwrap().knowledge_limits, KnowledgeLimits::default());
    }

    #[test]
    fn default_system_prompt_snapshot() {
        insta::assert_snapshot!(Assistant::builtin_default().system_prompt);
    }
}
