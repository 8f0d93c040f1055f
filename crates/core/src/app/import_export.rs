//! Importing servers from a configuration text and exporting them; the
//! shapes are [`crate::config::import`]'s and [`crate::config::export`]'s.

use std::collections::{BTreeMap, BTreeSet};

use super::diff::line_diff;
use super::views::{ImportEntry, ImportInput, ImportPreviewView, ImportReport};
use super::{App, AppError};
use crate::config::import::ImportPreview;
use crate::config::import::{
    EntryStatus, ImportChoice, ImportMode, ImportOptions, LinkKind, SecretState, SourceFormat, steers_program,
};
use crate::config::{ExportFormat, ExportOptions, McpServerConfig, TransportConfig};
use crate::secrets::{SecretStore, SecretValue};

impl App {
    /// What importing `text` would do.
    pub fn import_preview(&self, text: &str) -> Result<ImportPreviewView, AppError> {
        let preview = self.inner.config.preview_import(self.inner.secrets.as_ref(), text, &ImportOptions::default())?;
        let current = self.inner.config.servers()?;
        let warnings = preview.all_issues().iter().map(ToString::to_string).collect();
        let mut inputs: Vec<ImportInput> = Vec::new();
        for entry in &preview.entries {
            for note in &entry.secrets {
                if let SecretState::Prompt { input, description, set } = &note.state {
                    match inputs.iter_mut().find(|i| &i.id == input) {
                        Some(known) => known.servers.push(entry.name.clone()),
                        None => inputs.push(ImportInput {
                            id: input.clone(),
                            description: description.clone(),
                            servers: vec![entry.name.clone()],
                            set: *set,
                        }),
                    }
                }
            }
        }
        let entries = preview
            .entries
            .into_iter()
            .filter_map(|e| {
                let incoming = e.server?;
                let (status, detail, existing) = match &e.status {
                    EntryStatus::New => ("new", None, None),
                    EntryStatus::Unchanged => ("unchanged", None, Some(e.name.as_str())),
                    EntryStatus::Changed { .. } => ("changed", None, Some(e.name.as_str())),
                    EntryStatus::Conflict { existing } => (
                        "conflict",
                        Some(format!("a server named {existing:?} exists; importing replaces it")),
                        Some(existing.as_str()),
                    ),
                    _ => return None,
                };
                let before = existing.and_then(|n| current.iter().find(|c| c.name == n));
                let diff = match (status, before) {
                    ("changed" | "conflict", Some(before)) => line_diff(&pretty(before), &pretty(&incoming)),
                    _ => Vec::new(),
                };
                let (secrets, environment) = (e.secrets, e.environment);
                let policy = self.inner.registry.policy_outline(&incoming);
                let steering = match &incoming.transport {
                    TransportConfig::Stdio { env, .. } => {
                        env.keys().filter(|name| steers_program(name)).cloned().collect()
                    }
                    _ => Vec::new(),
                };
                Some(ImportEntry {
                    name: e.name,
                    status,
                    incoming,
                    diff,
                    detail,
                    secrets,
                    environment,
                    steering,
                    policy,
                })
            })
            .collect();
        let format = match preview.format {
            Some(SourceFormat::McpServers) => "claude_desktop",
            Some(SourceFormat::VsCode) => "vscode",
            Some(SourceFormat::Zed) => "zed",
            Some(SourceFormat::OpenCode) => "opencode",
            Some(SourceFormat::Codex) => "codex",
            Some(SourceFormat::Patchbay) => "patchbay",
            Some(SourceFormat::BareMap) => "server_map",
            Some(SourceFormat::SingleServer) => "single_server",
            Some(SourceFormat::Link(LinkKind::Patchbay)) => "patchbay_link",
            Some(SourceFormat::Link(LinkKind::Cursor)) => "cursor_link",
            Some(SourceFormat::Link(LinkKind::VsCode)) => "vscode_link",
            None => "unknown",
        };
        Ok(ImportPreviewView {
            format: format.into(),
            entries,
            warnings,
            inputs,
            removed_on_replace: preview.removed_on_replace,
            providers: preview.providers,
        })
    }

    /// Imports the accepted servers in one transaction and starts the enabled ones. With
    /// `replace`, the stored servers the text does not name are deleted (and stopped).
    /// `answers` holds the values typed for VS Code `${input:…}` prompts, by input id; the
    /// values go to the secret store, inputs left unanswered stay "not set". `secret_fields`
    /// marks more env/header fields as secrets, by server name (as previewed) and field name.
    pub async fn import_apply(
        &self,
        text: &str,
        accept: &[String],
        replace: bool,
        answers: BTreeMap<String, String>,
        secret_fields: BTreeMap<String, BTreeSet<String>>,
    ) -> Result<ImportReport, AppError> {
        let options = ImportOptions { secret_fields };
        let preview = self.inner.config.preview_import(self.inner.secrets.as_ref(), text, &options)?;
        let skipped: Vec<String> =
            preview.entries.iter().filter(|e| !accept.contains(&e.name)).map(|e| e.name.clone()).collect();
        let choice = ImportChoice {
            mode: if replace { ImportMode::ReplaceAll } else { ImportMode::Merge },
            skip: skipped.iter().cloned().collect(),
            answers: answers
                .into_iter()
                .filter(|(_, value)| !value.is_empty())
                .map(|(id, value)| (id, SecretValue::new(value)))
                .collect(),
        };
        // Before applying, so the report counts them as not set; only when nothing stops the apply.
        if matches!(preview.format, Some(SourceFormat::Link(_))) && preview.all_issues().is_empty() {
            forget_leftover_secrets(self.inner.secrets.as_ref(), &preview, &choice)?;
        }
        let outcome = self.inner.config.apply_import(self.inner.secrets.as_ref(), text, &options, &choice)?;
        for name in &outcome.removed {
            self.forget_server(name).await?;
        }
        for name in outcome.added.iter().chain(&outcome.updated) {
            self.apply_server(self.inner.config.server(name)?).await?;
        }
        Ok(ImportReport {
            added: outcome.added,
            updated: outcome.updated,
            skipped,
            removed: outcome.removed,
            secrets_not_set: outcome.secrets_not_set,
        })
    }

    /// The servers (and in Patchbay's form, providers) as JSON text, secrets as placeholders
    /// unless `include_secrets` (the user asked for the values, after a warning).
    pub fn export_config(&self, format: ExportFormat, include_secrets: bool) -> Result<String, AppError> {
        let options = ExportOptions { format, include_secrets };
        Ok(self.inner.config.export(options, self.inner.secrets.as_ref())?)
    }

    /// One server's entry in `format`, secrets as placeholders: to copy and share.
    pub fn export_server(&self, name: &str, format: ExportFormat) -> Result<String, AppError> {
        let options = ExportOptions { format, include_secrets: false };
        Ok(self.inner.config.export_servers(&[name.to_owned()], options, self.inner.secrets.as_ref())?)
    }
}

/// Deletes what a new server added from an install link would find already
/// stored under its name (left by a deleted server of that name, before
/// deleting took them): the values of the prompts the user left empty, and the
/// sign-in. A link must not pick up a stored secret and send it where it says.
/// Runs only for a link that applies (no issue in its preview).
fn forget_leftover_secrets(
    secrets: &dyn SecretStore,
    preview: &ImportPreview,
    choice: &ImportChoice,
) -> Result<(), AppError> {
    let new = preview.entries.iter().filter(|e| matches!(e.status, EntryStatus::New) && !choice.skip.contains(&e.name));
    for entry in new {
        let own = crate::config::import::secret_name(&entry.name, "");
        let unanswered = entry.secrets.iter().filter_map(|note| match &note.state {
            SecretState::Prompt { input, set: true, .. }
                if !choice.answers.contains_key(input) && note.secret.starts_with(&own) =>
            {
                Some(note.secret.clone())
            }
            _ => None,
        });
        for secret in unanswered.chain([crate::config::import::oauth_secret_name(&entry.name)]).collect::<Vec<_>>() {
            secrets.delete(&secret)?;
        }
    }
    Ok(())
}

/// A server as the preview's diff shows it.
fn pretty(config: &McpServerConfig) -> String {
    serde_json::to_string_pretty(config).unwrap_or_default()
}
