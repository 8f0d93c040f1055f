//! Patchbay's own export: servers in their stored form, with Patchbay's
//! settings, and provider profiles whose API keys are references, never values.

use super::entry::{Parsed, check_name, check_transport, check_url, issue, join};
use super::names::{normalize_name, secret_from_placeholder};
use super::values::{FieldCtx, in_scope, keyring_reference, stored_form};
use super::{Document, ImportOptions};
use crate::config::jsonc::Node;
use crate::config::model::{McpServerConfig, ProviderProfile, ValueSource};

pub(super) fn read(root: &Node, options: &ImportOptions, doc: &mut Document) {
    match root.get("patchbay") {
        Some(Node::Number(n)) if n.as_u64() == Some(1) => {}
        Some(other) => {
            doc.issues.push(issue("patchbay", format!("unsupported export version {}", other.to_value())));
            return;
        }
        None => {}
    }
    read_providers(root, doc);
    let servers = match root.get("servers") {
        Some(Node::Array(items)) => items,
        Some(other) => {
            doc.issues.push(issue("servers", format!("expected an array, found {}", other.describe())));
            return;
        }
        None => {
            doc.issues.push(issue("servers", "missing"));
            return;
        }
    };
    for (i, node) in servers.iter().enumerate() {
        let path = format!("servers[{i}]");
        let raw_name = match node.get("name") {
            Some(Node::String(n)) => n.clone(),
            _ => String::new(),
        };
        let mut parsed = Parsed {
            name: normalize_name(&raw_name),
            source: path.clone(),
            server: None,
            secrets: Vec::new(),
            issues: Vec::new(),
        };
        match serde_json::from_value::<McpServerConfig>(node.to_value()) {
            Ok(mut server) => {
                check_name(&raw_name, &path, &mut parsed.issues);
                server.name = parsed.name.clone();
                check_transport(&server.transport, &path, &mut parsed.issues);
                let marked = options.secret_fields.get(&parsed.name);
                let server_name = parsed.name.clone();
                let fields = server.transport.values_mut().into_iter();
                for (group, values) in fields {
                    for (key, value) in values.iter_mut() {
                        let field_path = format!("{path}.transport.{}", join(group, key));
                        let ctx = FieldCtx { server: &server_name, key, field: format!("{group}.{key}"), marked };
                        *value = stored_form(&ctx, value, &field_path, &mut parsed);
                    }
                }
                for (field, reason) in server.client_credential_problems() {
                    parsed.issues.push(issue(&format!("{path}.{field}"), reason));
                }
                if let Some(credentials) = &mut server.client_credentials {
                    // Key material is a secret whatever the checkboxes say.
                    let key = credentials.key.secret_key();
                    let (field, value) = credentials.key.material_mut();
                    let field_path = format!("{path}.client_credentials.key.{field}");
                    let ctx = FieldCtx {
                        server: &server_name,
                        key,
                        field: format!("client_credentials.{field}"),
                        marked: None,
                    };
                    *value = stored_form(&ctx, value, &field_path, &mut parsed);
                }
                if parsed.issues.is_empty() {
                    parsed.server = Some(server);
                }
            }
            Err(e) => parsed.issues.push(issue(&path, e.to_string())),
        }
        doc.servers.push(parsed);
    }
}

/// The `providers` of Patchbay's form. An API key is a reference to the
/// secret store (`provider/<name>/api_key` or a `${keyring:…}` placeholder),
/// never a value: a value there is refused, so it cannot land in SQLite.
fn read_providers(root: &Node, doc: &mut Document) {
    let items = match root.get("providers") {
        None => return,
        Some(Node::Array(items)) => items,
        Some(other) => {
            doc.issues.push(issue("providers", format!("expected an array, found {}", other.describe())));
            return;
        }
    };
    for (i, node) in items.iter().enumerate() {
        let path = format!("providers[{i}]");
        let mut profile = match serde_json::from_value::<ProviderProfile>(node.to_value()) {
            Ok(p) => p,
            Err(e) => {
                doc.issues.push(issue(&path, e.to_string()));
                continue;
            }
        };
        let before = doc.issues.len();
        if profile.name.trim().is_empty() {
            doc.issues.push(issue(&format!("{path}.name"), "a provider needs a name"));
        }
        check_url(&profile.base_url, &format!("{path}.base_url"), &mut doc.issues);
        // A provider's key and header secrets are its own entries (`provider/<name>/…`).
        let provider_scope = format!("provider/{}/", profile.name);
        for (header, value) in &profile.headers {
            if let ValueSource::Secret(name) = value
                && !in_scope(&provider_scope, name)
            {
                let at = format!("{path}.{}", join("headers", header));
                doc.issues.push(issue(&at, foreign_to_provider(&profile.name, name)));
            }
        }
        if let Some(key) = profile.api_key.take() {
            let reference = keyring_reference(&key)
                .map(secret_from_placeholder)
                .or_else(|| (key.starts_with("provider/") && !key.contains(char::is_whitespace)).then(|| key.clone()));
            match reference {
                Some(name) if !in_scope(&provider_scope, &name) => {
                    doc.issues.push(issue(&format!("{path}.api_key"), foreign_to_provider(&profile.name, &name)))
                }
                Some(name) => profile.api_key = Some(name),
                None => doc.issues.push(issue(
                    &format!("{path}.api_key"),
                    "expected a secret reference (provider/<name>/api_key or ${keyring:…}), not a key; \
                     set the key with `patchbay secret set`",
                )),
            }
        }
        if doc.issues.len() == before {
            doc.providers.push(profile);
        }
    }
}

fn foreign_to_provider(provider: &str, secret: &str) -> String {
    format!(
        "names the secret {secret:?}, which is not this provider's own; an imported provider may use only its own \
         secrets (provider/{provider}/…)"
    )
}
