//! What the caller sees of an import: the options and the choice it gives,
//! the preview and the outcome it gets back. None of them holds a secret value
//! but the answers to VS Code's prompts.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::SourceFormat;
use super::entry::ImportIssue;
use crate::config::model::McpServerConfig;
use crate::secrets::SecretValue;

/// Choices made before reading the text.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ImportOptions {
    /// Extra fields to treat as secrets, by server name (as stored, after normalisation) and
    /// env/header name.
    pub secret_fields: BTreeMap<String, BTreeSet<String>>,
}

/// How one secret-holding field of an imported server is handled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SecretState {
    /// The text holds the value; it goes to the keyring.
    FromImport,
    /// A `${keyring:…}` reference to a secret that is set (or not) already.
    Reference { set: bool },
    /// A VS Code `${input:…}` placeholder: the user is asked for the value.
    Prompt { input: String, description: Option<String>, set: bool },
}

/// A secret an imported server uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SecretNote {
    /// The field, e.g. `env.GITHUB_TOKEN` or `headers.Authorization`.
    pub field: String,
    /// The secret's name in the secret store.
    pub secret: String,
    #[serde(flatten)]
    pub state: SecretState,
}

/// One changed field between the stored and the imported server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// Dotted path inside the server, e.g. `transport.args`.
    pub field: String,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
}

/// What importing one server would do.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EntryStatus {
    /// No server by that name yet.
    New,
    /// A server by that name exists and differs.
    Changed { changes: Vec<FieldChange> },
    /// Identical to the stored server.
    Unchanged,
    /// A stored server's name differs only in case or punctuation; importing replaces it.
    Conflict { existing: String },
    /// The entry has errors (see its issues) and cannot be imported.
    Invalid,
}

/// One server of the preview.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreviewEntry {
    /// The name it will be stored under (normalised).
    pub name: String,
    /// Where it is in the text, e.g. `mcpServers.github`.
    pub source: String,
    pub status: EntryStatus,
    /// The server as it would be stored; `None` when invalid.
    pub server: Option<McpServerConfig>,
    pub secrets: Vec<SecretNote>,
    /// The environment variables its values read when it starts.
    pub environment: Vec<EnvironmentRead>,
    pub issues: Vec<ImportIssue>,
}

/// An environment variable an imported server reads when it starts (`${env:NAME}`):
/// its value goes where `field` says, a remote server's header too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct EnvironmentRead {
    /// The field, e.g. `headers.Authorization`.
    pub field: String,
    pub variable: String,
    /// Whether the environment Patchbay runs in has it now.
    pub set: bool,
}

/// What an import would do, for the user to confirm. Holds no secret values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportPreview {
    /// The recognised shape; `None` when the text could not be read at all.
    pub format: Option<SourceFormat>,
    pub entries: Vec<PreviewEntry>,
    /// Problems not tied to one server (syntax, shape, inputs).
    pub issues: Vec<ImportIssue>,
    /// Stored servers that "replace all" would delete.
    pub removed_on_replace: Vec<String>,
    /// Provider profiles the import creates or replaces (Patchbay's form), by name.
    pub providers: Vec<String>,
}

impl ImportPreview {
    /// Every issue, global and per server.
    pub fn all_issues(&self) -> Vec<ImportIssue> {
        self.issues.iter().chain(self.entries.iter().flat_map(|e| e.issues.iter())).cloned().collect()
    }
}

/// How to apply an import.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportMode {
    /// Add new servers and update changed ones; keep the others.
    #[default]
    Merge,
    /// The imported servers become the whole list.
    ReplaceAll,
}

/// The user's decision on a preview.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ImportChoice {
    pub mode: ImportMode,
    /// Servers (by stored name) not to import.
    pub skip: BTreeSet<String>,
    /// Answers to VS Code input prompts, by input id.
    pub answers: BTreeMap<String, SecretValue>,
}

/// What an applied import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportOutcome {
    pub added: Vec<String>,
    pub updated: Vec<String>,
    pub unchanged: Vec<String>,
    pub removed: Vec<String>,
    /// Secrets written to the keyring, by name.
    pub secrets_stored: Vec<String>,
    /// Secrets the imported servers need that are still not set.
    pub secrets_not_set: Vec<String>,
    /// Provider profiles created or replaced, by name.
    pub providers: Vec<String>,
}
