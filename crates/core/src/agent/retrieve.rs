//! The knowledge-base hook: a [`Retriever`] finds passages for the user's
//! message before the first round, and the loop gives them to the model as
//! numbered context it can cite (`[1]`, `[2]`).

use tokio_util::sync::CancellationToken;

use crate::conversations::{Passage, Unavailable};

/// A retrieval failed; the turn goes on without context and says so.
#[derive(Debug, thiserror::Error)]
#[error("knowledge search failed: {message}")]
pub struct RetrievalError {
    pub message: String,
}

/// What a retrieval found: passages, best first, and the sources that gave none (failed or out
/// of time) while others answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Retrieved {
    pub passages: Vec<Passage>,
    pub unavailable: Vec<Unavailable>,
}

/// Finds passages relevant to a query.
#[async_trait::async_trait]
pub trait Retriever: Send + Sync {
    /// The best passages for `query`, best first.
    async fn retrieve(&self, query: &str, cancel: CancellationToken) -> Result<Retrieved, RetrievalError>;
}

/// The system-prompt section that presents passages to the model.
pub(crate) fn context_block(passages: &[Passage]) -> String {
    let mut out = String::from(
        "\n\n# Knowledge base\nThe passages below were retrieved for the user's message. Use them when they \
         help, and cite them by number like [1]. Say so when they do not answer the question.\n",
    );
    for (i, p) in passages.iter().enumerate() {
        let mut source = p.source.clone();
        if let Some(origin) = &p.origin {
            source = format!("{origin}: {source}");
        }
        if let Some(h) = &p.heading {
            source.push_str(&format!(" › {h}"));
        }
        if let Some((a, b)) = p.lines {
            source.push_str(&format!(" (lines {a}-{b})"));
        }
        out.push_str(&format!("\n[{}] {source}\n{}\n", i + 1, p.text.trim()));
    }
    out
}
