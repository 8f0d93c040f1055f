//! Applying an import: the preview compares what the text holds with the
//! stored servers; applying writes the user's choice in one transaction, the
//! secrets first, and puts the keyring back if the database write fails.

use std::collections::{BTreeMap, BTreeSet};

use super::entry::{ImportIssue, SecretSource, SecretUse, issue};
use super::names::fold;
use super::preview::{
    EntryStatus, EnvironmentRead, FieldChange, ImportChoice, ImportMode, ImportOptions, ImportOutcome, ImportPreview,
    PreviewEntry, SecretNote, SecretState,
};
use super::values::INPUT_PREFIX;
use super::{SourceFormat, read_document};
use crate::config::model::{McpServerConfig, ProviderProfile};
use crate::config::{ConfigError, ConfigStore};
use crate::secrets::{SecretStore, SecretValue};

/// Flattens a JSON value into `path -> leaf` (arrays are leaves).
fn flatten(prefix: &str, value: &serde_json::Value, out: &mut BTreeMap<String, serde_json::Value>) {
    match value {
        serde_json::Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&path, v, out);
            }
        }
        _ => {
            out.insert(prefix.to_owned(), value.clone());
        }
    }
}

fn diff(before: &McpServerConfig, after: &McpServerConfig) -> Vec<FieldChange> {
    let flat = |s: &McpServerConfig| {
        let mut out = BTreeMap::new();
        flatten("", &serde_json::to_value(s).unwrap_or_default(), &mut out);
        out
    };
    let (a, b) = (flat(before), flat(after));
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| FieldChange { field: k.clone(), before: a.get(k).cloned(), after: b.get(k).cloned() })
        .collect()
}

/// A preview plus what applying needs (secret values never leave the core).
struct Plan {
    preview: ImportPreview,
    secrets: BTreeMap<String, Vec<SecretUse>>,
    providers: Vec<ProviderProfile>,
}

impl ConfigStore {
    /// Reads `text` and compares it with the stored servers. Writes nothing.
    ///
    /// Problems in the text are reported in the preview, never as an error;
    /// the error is for a failing database or keyring.
    pub fn preview_import(
        &self,
        secrets: &dyn SecretStore,
        text: &str,
        options: &ImportOptions,
    ) -> Result<ImportPreview, ConfigError> {
        Ok(self.plan(secrets, text, options)?.preview)
    }

    fn plan(&self, secrets: &dyn SecretStore, text: &str, options: &ImportOptions) -> Result<Plan, ConfigError> {
        let doc = read_document(text, options);
        let existing = self.servers()?;
        let by_fold: BTreeMap<String, &McpServerConfig> = existing.iter().map(|s| (fold(&s.name), s)).collect();
        let mut entries = Vec::new();
        let mut secret_uses = BTreeMap::new();
        let mut matched = BTreeSet::new();
        for parsed in doc.servers {
            let mut notes = Vec::new();
            let mut secret_changed = Vec::new();
            for u in &parsed.secrets {
                let current = secrets.get(&u.secret)?;
                let state = match &u.source {
                    SecretSource::Value(v) => {
                        if current.as_deref() != Some(v.expose()) {
                            secret_changed.push(u.secret.clone());
                        }
                        SecretState::FromImport
                    }
                    SecretSource::Reference => SecretState::Reference { set: current.is_some() },
                    SecretSource::Prompt { input, .. } => SecretState::Prompt {
                        input: input.clone(),
                        description: doc.inputs.get(input).cloned().flatten(),
                        set: current.is_some(),
                    },
                };
                notes.push(SecretNote { field: u.field.clone(), secret: u.secret.clone(), state });
            }
            let stored = by_fold.get(&fold(&parsed.name)).copied();
            if let Some(s) = stored {
                matched.insert(s.name.clone());
            }
            let mut server = parsed.server;
            if let (Some(server), Some(stored), false) = (server.as_mut(), stored, doc.carries_settings) {
                // Patchbay's own settings, which the imported shape cannot hold.
                server.keep_user_settings(stored);
                server.policy = stored.policy.clone();
            }
            let status = match (&server, stored) {
                (None, _) => EntryStatus::Invalid,
                (Some(_), None) => EntryStatus::New,
                (Some(s), Some(old)) if old.name != s.name => EntryStatus::Conflict { existing: old.name.clone() },
                (Some(s), Some(old)) => {
                    let mut changes = diff(old, s);
                    changes.extend(secret_changed.into_iter().map(|name| FieldChange {
                        field: format!("secret {name}"),
                        before: None,
                        after: Some(serde_json::Value::String("(new value)".into())),
                    }));
                    if changes.is_empty() { EntryStatus::Unchanged } else { EntryStatus::Changed { changes } }
                }
            };
            secret_uses.insert(parsed.name.clone(), parsed.secrets);
            let environment = server
                .as_ref()
                .map(|s| {
                    s.environment_reads()
                        .into_iter()
                        .map(|(field, variable)| {
                            let set = std::env::var_os(&variable).is_some();
                            EnvironmentRead { field, variable, set }
                        })
                        .collect()
                })
                .unwrap_or_default();
            let mut issues = parsed.issues;
            if let (Some(SourceFormat::Link(_)), Some(stored)) = (doc.format, stored)
                && matches!(status, EntryStatus::Changed { .. } | EntryStatus::Conflict { .. })
            {
                issues.push(super::link::replaces(&stored.name));
            }
            entries.push(PreviewEntry {
                name: parsed.name,
                source: parsed.source,
                status,
                server,
                secrets: notes,
                environment,
                issues,
            });
        }
        let removed_on_replace =
            existing.iter().filter(|s| !matched.contains(&s.name)).map(|s| s.name.clone()).collect();
        let preview = ImportPreview {
            format: doc.format,
            entries,
            issues: doc.issues,
            removed_on_replace,
            providers: doc.providers.iter().map(|p| p.name.clone()).collect(),
        };
        Ok(Plan { preview, secrets: secret_uses, providers: doc.providers })
    }

    /// Applies `text` as `choice` says: all of it in one transaction, or nothing.
    ///
    /// Fails with [`ConfigError::Import`] (writing nothing) when the text has
    /// errors outside any server or in a server that is not skipped. Secret
    /// values go to `secrets` first; if the database write then fails, the
    /// keyring is put back as it was.
    pub fn apply_import(
        &self,
        secrets: &dyn SecretStore,
        text: &str,
        options: &ImportOptions,
        choice: &ImportChoice,
    ) -> Result<ImportOutcome, ConfigError> {
        let plan = self.plan(secrets, text, options)?;
        let selected: Vec<&PreviewEntry> =
            plan.preview.entries.iter().filter(|e| !choice.skip.contains(&e.name)).collect();
        let issues: Vec<ImportIssue> =
            plan.preview.issues.iter().chain(selected.iter().flat_map(|e| e.issues.iter())).cloned().collect();
        if !issues.is_empty() {
            return Err(ConfigError::Import { issues });
        }
        if selected.is_empty() && choice.mode == ImportMode::ReplaceAll {
            return Err(ConfigError::Import {
                issues: vec![issue("(root)", "every server is skipped; replacing all would delete every server")],
            });
        }
        let mut outcome = ImportOutcome::default();
        let mut writes: Vec<(String, SecretValue)> = Vec::new();
        for entry in &selected {
            for u in plan.secrets.get(&entry.name).into_iter().flatten() {
                let value = match &u.source {
                    SecretSource::Value(v) => Some(v.clone()),
                    SecretSource::Reference => None,
                    SecretSource::Prompt { input, template } => choice
                        .answers
                        .get(input)
                        .map(|a| SecretValue::new(template.replace(&format!("{INPUT_PREFIX}{input}}}"), a.expose()))),
                };
                match value {
                    Some(v) => writes.push((u.secret.clone(), v)),
                    None if secrets.get(&u.secret)?.is_none() => outcome.secrets_not_set.push(u.secret.clone()),
                    None => {}
                }
            }
        }
        let mut upserts = Vec::new();
        let mut deletes = Vec::new();
        for entry in &selected {
            let Some(server) = entry.server.clone() else { continue };
            match &entry.status {
                EntryStatus::New => outcome.added.push(entry.name.clone()),
                EntryStatus::Changed { .. } => outcome.updated.push(entry.name.clone()),
                EntryStatus::Conflict { existing } => {
                    deletes.push(existing.clone());
                    outcome.updated.push(entry.name.clone());
                }
                EntryStatus::Unchanged => {
                    outcome.unchanged.push(entry.name.clone());
                    if choice.mode == ImportMode::Merge {
                        continue;
                    }
                }
                EntryStatus::Invalid => continue,
            }
            upserts.push(server);
        }
        if choice.mode == ImportMode::ReplaceAll {
            let kept: BTreeSet<String> = selected.iter().map(|e| fold(&e.name)).collect();
            outcome.removed =
                self.servers()?.into_iter().filter(|s| !kept.contains(&fold(&s.name))).map(|s| s.name).collect();
        }
        let previous = write_secrets(secrets, &writes)?;
        outcome.secrets_stored = writes.iter().map(|(n, _)| n.clone()).collect();
        outcome.secrets_stored.dedup();
        outcome.providers = plan.providers.iter().map(|p| p.name.clone()).collect();
        let result = self.write_import(choice.mode == ImportMode::ReplaceAll, &deletes, &upserts, &plan.providers);
        if let Err(e) = result {
            restore_secrets(secrets, previous);
            return Err(e);
        }
        Ok(outcome)
    }
}

/// Writes secrets, returning the previous values; on failure, restores those already written.
fn write_secrets(
    secrets: &dyn SecretStore,
    writes: &[(String, SecretValue)],
) -> Result<Vec<(String, Option<String>)>, ConfigError> {
    let mut previous = Vec::new();
    for (name, value) in writes {
        let step = secrets.get(name).and_then(|old| {
            secrets.set(name, value.expose())?;
            Ok(old)
        });
        match step {
            Ok(old) => previous.push((name.clone(), old)),
            Err(e) => {
                restore_secrets(secrets, previous);
                return Err(e.into());
            }
        }
    }
    Ok(previous)
}

fn restore_secrets(secrets: &dyn SecretStore, previous: Vec<(String, Option<String>)>) {
    for (name, old) in previous.into_iter().rev() {
        let restored = match old {
            Some(v) => secrets.set(&name, &v),
            None => secrets.delete(&name).map(|_| ()),
        };
        if let Err(e) = restored {
            tracing::warn!(secret = %name, error = %e, "could not restore a secret after a failed import");
        }
    }
}
