//! The knowledge base: folders of documents, indexed for BM25 and vector search, served to the chat
//! engine through the agent's `Retriever` seam ([`ContextRetriever`]) and to other MCP clients by
//! [`serve`].
//!
//! A file goes through [`loader`] (text, or a [`Skip`] that says why not), [`chunk`] (along headings
//! and code blocks) and [`crate::text::analyze`] (BM25 terms: English stemming, Chinese segmentation) into
//! [`store`] (the [`ChunkIndex`] trait; SQLite, BM25 over in-memory postings) with vectors from
//! [`embed`] (an endpoint) or [`local`] (a BERT forward pass of our own, [`bert`]). [`index`] walks folders incrementally and [`watch`]
//! re-indexes on change; [`search`] fuses the rankings and [`relevance`] says how well each passage
//! matches; [`kb`] ties it all together as [`KnowledgeBase`]; [`chat`] brings it into chat.

mod bert;
pub mod chat;
pub mod chunk;
pub mod embed;
pub mod index;
pub mod kb;
pub mod loader;
pub mod local;
pub mod models;
pub mod ragflow;
pub mod relevance;
mod saved;
pub mod search;
pub mod serve;
pub mod sources;
pub mod store;
pub mod watch;

use std::path::PathBuf;
use std::time::Duration;

pub use chat::{ChatKnowledge, ContextOptions, ContextRetriever};
pub use chunk::{Chunk, ChunkParams};
pub use embed::{Embedder, EmbeddingConfig, EndpointEmbedder};
pub use index::{IndexProgress, IndexReport, KbSettings, SkippedFile};
pub use kb::{FolderStatus, KbStatus, KnowledgeBase, ModelListing};
pub use loader::{DocKind, Skip};
pub use local::LocalEmbedder;
pub use search::{Excerpt, SearchMode};
pub use store::{ChunkIndex, SqliteIndex};
pub use watch::KbWatcher;

use crate::folder::FolderError;
use crate::secrets::SecretError;
use crate::store::StoreError;

/// Errors from the knowledge base.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RagError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A secret (an embeddings API key) could not be read.
    #[error(transparent)]
    Secret(#[from] SecretError),
    /// The folder to add does not exist or is not a folder.
    #[error(transparent)]
    Folder(#[from] FolderError),
    /// The folder is already in the knowledge base.
    #[error("folder {path} is already in the knowledge base")]
    AlreadyRegistered { path: PathBuf },
    /// The folder is not in the knowledge base.
    #[error("folder {path} is not in the knowledge base")]
    NotRegistered { path: PathBuf },
    /// A file or folder of Patchbay's own could not be written or read.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The stored knowledge-base settings are unreadable.
    #[error("knowledge-base settings are invalid: {source}")]
    Settings {
        #[source]
        source: serde_json::Error,
    },
    /// The run was cancelled; files finished before are indexed.
    #[error("cancelled")]
    Cancelled,
    /// A bounded operation took too long.
    #[error("{what} timed out after {after:?}")]
    Timeout { what: &'static str, after: Duration },
    /// Vector or hybrid search was asked for, but no embeddings are configured.
    #[error("no embeddings are configured for the knowledge base; use --mode bm25 or configure embeddings")]
    NoEmbeddings,
    /// The embeddings endpoint or model failed.
    #[error("embeddings failed: {detail}")]
    Embedding { detail: String },
    /// Not a search mode.
    #[error("unknown search mode {mode:?}: use bm25, vector or hybrid")]
    InvalidMode { mode: String },
    /// The file watcher could not be started.
    #[error("watching {path} failed: {detail}")]
    Watch { path: PathBuf, detail: String },
    /// The server could not listen at the address.
    #[error("could not listen on {addr}: {source}")]
    Bind {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// An MCP server (a knowledge source's) failed or refused. Boxed: MCP's errors are large,
    /// and every result carries this enum.
    #[error(transparent)]
    Mcp(Box<crate::mcp::McpError>),
    /// The configuration (the servers a source names) could not be read. Boxed, as `Mcp`.
    #[error(transparent)]
    Config(Box<crate::config::ConfigError>),
    /// No MCP server has this name.
    #[error("there is no MCP server named {name:?}")]
    UnknownServer { name: String },
    /// A client's request cannot be honoured (an argument out of range, an unknown id).
    #[error("{why}")]
    BadRequest { why: String },
    /// The MCP server failed.
    #[error("knowledge-base server: {detail}")]
    Serve { detail: String },
    /// No model of that name is offered.
    #[error("no model named {name:?} is offered; the models are: {known}")]
    UnknownModel { name: String, known: String },
    /// The hub address is not usable.
    #[error("the model hub address {url:?} is not usable: {why}")]
    BadHub { url: String, why: String },
    /// A model download failed.
    #[error("downloading {url}: {detail}")]
    Download { url: String, detail: String },
}

impl From<crate::config::ConfigError> for RagError {
    fn from(e: crate::config::ConfigError) -> Self {
        Self::Config(Box::new(e))
    }
}

impl From<crate::mcp::McpError> for RagError {
    fn from(e: crate::mcp::McpError) -> Self {
        Self::Mcp(Box::new(e))
    }
}

#[cfg(test)]
pub(crate) mod tests;
