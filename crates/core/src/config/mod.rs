//! Configuration: provider profiles and MCP server entries.
//!
//! [`model`] holds the types every other module consumes (the MCP registry
//! reads [`McpServerConfig`], the chat engine reads [`ProviderProfile`]).
//! [`storage`] keeps them in SQLite, one JSON document per entry, every
//! change in one transaction. Secret values never appear here: a field that
//! holds a secret is a [`ValueSource::Secret`] naming an entry of the
//! [`crate::secrets::SecretStore`].

pub mod env_refs;
pub mod export;
pub mod import;
pub mod jsonc;
pub mod model;
pub mod policy;
pub mod presets;
pub mod providers;
pub mod server_presets;
pub mod storage;

/// Kept here too, where the import and the editor have always named it.
pub use crate::secrets::SecretValue;
pub use export::{ExportFormat, ExportOptions};
pub use import::{
    EntryStatus, FieldChange, ImportChoice, ImportIssue, ImportMode, ImportOptions, ImportOutcome, ImportPreview,
    PreviewEntry, SecretNote, SecretState, SourceFormat,
};
pub use model::{
    ApprovalMode, BUILTIN_SERVER, ClientCredentials, ClientKey, JwtAlgorithm, McpServerConfig, PromptToolFormat,
    ProviderKind, ProviderProfile, ThinkingParam, Timeouts, TransportConfig, ValueSource,
};
pub use policy::{Network, Policy, PolicyDefaults, PolicyOutline, RateLimits, Resolved, SecurityLevel};
pub use presets::ProviderPreset;
pub use providers::SecretRef;
pub use server_presets::ServerPreset;
pub use storage::ConfigStore;

use crate::secrets::SecretError;
use crate::store::StoreError;

/// Errors from reading, writing or validating configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored entry could not be decoded.
    #[error("stored {what} is invalid: {source}")]
    Decode {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// No entry by that name.
    #[error("no {kind} named {name:?}")]
    NotFound { kind: &'static str, name: String },
    /// An entry is invalid; `path` locates the field (`mcpServers.github.args[2]`).
    #[error("{path}: {reason}")]
    Invalid { path: String, reason: String },
    /// An import has problems; nothing was written. Each issue names a JSON path and a reason.
    #[error("the import was not applied, nothing was written:{}", issues.iter().map(|i| format!("\n  {i}")).collect::<String>())]
    Import { issues: Vec<ImportIssue> },
    /// A secret could not be read or written.
    #[error(transparent)]
    Secret(#[from] SecretError),
}
