//! Exporting MCP servers as Claude Desktop `mcpServers`, VS Code `servers`,
//! Zed `context_servers`, opencode `mcp`, RAGFlow's `mcpServers`, or
//! Patchbay's full form.
//!
//! Secrets are written as placeholders that Patchbay's importer turns back
//! into references: `${keyring:patchbay/github/GITHUB_TOKEN}` in the Claude
//! Desktop form, `${input:mcp/github/GITHUB_TOKEN}` plus a password input in
//! the VS Code form, `{"secret": "…"}` in Patchbay's form. Values are written
//! only when the caller asks for them explicitly.
//!
//! The other apps' forms have no place for Patchbay's own settings
//! (timeouts, approvals, hidden tools); importing them back into the same
//! Patchbay keeps the stored settings. A disabled server is written with
//! `"disabled": true` (the Cline and Cursor convention), `"enabled": false` in
//! opencode's form, and left out of Zed's, which has no such switch. Zed and
//! opencode get only the fields they read (no `cwd`, no unknown fields).
//! RAGFlow reaches remote servers only: its form leaves local ones out, and
//! writes the bearer token as `authorization_token` and the tools switched off
//! as `"enabled": false` in `tool_configuration`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::jsonc::Node;
use super::model::{McpServerConfig, ProviderProfile, TransportConfig, ValueSource};
use super::{ConfigError, ConfigStore};
use crate::secrets::SecretStore;

/// The shape of an export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// `{"mcpServers": {...}}` for Claude Desktop, Cursor, Windsurf.
    #[default]
    Claude,
    /// `{"inputs": [...], "servers": {...}}` for VS Code's `mcp.json`.
    Vscode,
    /// `{"context_servers": {...}}` for Zed's `settings.json`.
    Zed,
    /// `{"mcpServers": {...}}` as RAGFlow imports it: remote servers only.
    Ragflow,
    /// `{"mcp": {...}}` for opencode's `opencode.json`.
    Opencode,
    /// Patchbay's own form: every server setting and the providers.
    Patchbay,
}

/// What to export and how.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportOptions {
    #[serde(default)]
    pub format: ExportFormat,
    /// Write secret values instead of placeholders. The caller must warn the user.
    #[serde(default)]
    pub include_secrets: bool,
}

/// The version written in Patchbay's form.
pub const PATCHBAY_FORMAT_VERSION: u64 = 1;

fn s(text: impl Into<String>) -> Node {
    Node::String(text.into())
}

/// Renders `servers` (and, in Patchbay's form, `providers`) as pretty JSON.
///
/// `secret` looks a secret's value up; it is called only with `include_secrets`.
pub fn render(
    servers: &[McpServerConfig],
    providers: &[ProviderProfile],
    options: ExportOptions,
    secret: &dyn Fn(&str) -> Result<Option<String>, ConfigError>,
) -> Result<String, ConfigError> {
    let mut inputs: Vec<(String, String)> = Vec::new();
    let mut value = |server: &str, key: &str, v: &ValueSource, vscode: bool| -> Result<Node, ConfigError> {
        Ok(match v {
            // Another app reads the reference from its own environment.
            ValueSource::Plain(text) | ValueSource::Env(text) => s(text.clone()),
            ValueSource::Secret(name) => match options.include_secrets.then(|| secret(name)).transpose()?.flatten() {
                Some(text) => s(text),
                None if vscode => {
                    if !inputs.iter().any(|(id, _)| id == name) {
                        inputs.push((name.clone(), format!("{key} for the {server} MCP server")));
                    }
                    s(format!("${{input:{name}}}"))
                }
                None => s(format!("${{keyring:{}}}", super::import::placeholder_name(name))),
            },
        })
    };
    let root = match options.format {
        ExportFormat::Claude | ExportFormat::Vscode | ExportFormat::Zed | ExportFormat::Opencode => {
            let vscode = options.format == ExportFormat::Vscode;
            let zed = options.format == ExportFormat::Zed;
            let opencode = options.format == ExportFormat::Opencode;
            let mut entries = Vec::new();
            for server in servers.iter().filter(|s| s.enabled || !zed) {
                let mut fields = Vec::new();
                let mut map = |values: &BTreeMap<String, ValueSource>| -> Result<Node, ConfigError> {
                    let items = values
                        .iter()
                        .map(|(k, v)| Ok((k.clone(), value(&server.name, k, v, vscode)?)))
                        .collect::<Result<Vec<_>, ConfigError>>()?;
                    Ok(Node::Object(items))
                };
                match &server.transport {
                    TransportConfig::Stdio { command, args, env, .. } if opencode => {
                        let words = std::iter::once(command).chain(args).map(|a| s(a.clone())).collect();
                        fields.push(("type".to_owned(), s("local")));
                        fields.push(("command".to_owned(), Node::Array(words)));
                        if !env.is_empty() {
                            fields.push(("environment".to_owned(), map(env)?));
                        }
                    }
                    TransportConfig::Stdio { command, args, env, cwd } => {
                        if vscode {
                            fields.push(("type".to_owned(), s("stdio")));
                        }
                        if zed {
                            fields.push(("source".to_owned(), s("custom")));
                        }
                        fields.push(("command".to_owned(), s(command.clone())));
                        fields.push(("args".to_owned(), Node::Array(args.iter().map(|a| s(a.clone())).collect())));
                        if !env.is_empty() {
                            fields.push(("env".to_owned(), map(env)?));
                        }
                        if let Some(cwd) = cwd.as_ref().filter(|_| !zed) {
                            fields.push(("cwd".to_owned(), s(cwd.to_string_lossy())));
                        }
                    }
                    TransportConfig::StreamableHttp { url, headers }
                    | TransportConfig::Sse { url, headers }
                    | TransportConfig::Auto { url, headers } => {
                        match &server.transport {
                            _ if opencode => fields.push(("type".to_owned(), s("remote"))),
                            _ if zed => {}
                            TransportConfig::StreamableHttp { .. } => fields.push(("type".to_owned(), s("http"))),
                            TransportConfig::Sse { .. } => fields.push(("type".to_owned(), s("sse"))),
                            _ => {}
                        }
                        fields.push(("url".to_owned(), s(url.clone())));
                        if !headers.is_empty() {
                            fields.push(("headers".to_owned(), map(headers)?));
                        }
                    }
                    // Patchbay's own tools: nothing another app could start.
                    TransportConfig::InProcess => continue,
                }
                if opencode {
                    fields.push(("enabled".to_owned(), Node::Bool(server.enabled)));
                } else if !server.enabled {
                    fields.push(("disabled".to_owned(), Node::Bool(true)));
                }
                if !zed && !opencode {
                    if let Some(title) = &server.title {
                        fields.push(("name".to_owned(), s(title.clone())));
                    }
                    fields.extend(kept_fields(server));
                }
                entries.push((server.name.clone(), Node::Object(fields)));
            }
            if vscode {
                let inputs = inputs
                    .iter()
                    .map(|(id, description)| {
                        Node::Object(vec![
                            ("type".to_owned(), s("promptString")),
                            ("id".to_owned(), s(id.clone())),
                            ("description".to_owned(), s(description.clone())),
                            ("password".to_owned(), Node::Bool(true)),
                        ])
                    })
                    .collect();
                Node::Object(vec![
                    ("inputs".to_owned(), Node::Array(inputs)),
                    ("servers".to_owned(), Node::Object(entries)),
                ])
            } else if zed {
                Node::Object(vec![("context_servers".to_owned(), Node::Object(entries))])
            } else if opencode {
                Node::Object(vec![
                    ("$schema".to_owned(), s("https://opencode.ai/config.json")),
                    ("mcp".to_owned(), Node::Object(entries)),
                ])
            } else {
                Node::Object(vec![("mcpServers".to_owned(), Node::Object(entries))])
            }
        }
        ExportFormat::Ragflow => {
            let mut entries = Vec::new();
            for server in servers {
                let (kind, url, headers) = match &server.transport {
                    TransportConfig::StreamableHttp { url, headers } | TransportConfig::Auto { url, headers } => {
                        ("streamable-http", url, headers)
                    }
                    TransportConfig::Sse { url, headers } => ("sse", url, headers),
                    TransportConfig::Stdio { .. } | TransportConfig::InProcess => continue,
                };
                let mut fields = vec![
                    ("type".to_owned(), s(kind)),
                    ("url".to_owned(), s(url.clone())),
                    ("name".to_owned(), s(shown_name(server))),
                ];
                let mut others = Vec::new();
                for (key, v) in headers {
                    let written = value(&server.name, key, v, false)?;
                    match written {
                        Node::String(text) if key.eq_ignore_ascii_case("authorization") => {
                            let token = text.strip_prefix("Bearer ").unwrap_or(&text).to_owned();
                            fields.push(("authorization_token".to_owned(), s(token)));
                        }
                        other => others.push((key.clone(), other)),
                    }
                }
                if !fields.iter().any(|(k, _)| k == "authorization_token") {
                    fields.push(("authorization_token".to_owned(), s("")));
                }
                // RAGFlow reads no other header; Patchbay reads them back.
                if !others.is_empty() {
                    fields.push(("headers".to_owned(), Node::Object(others)));
                }
                if !server.enabled {
                    fields.push(("disabled".to_owned(), Node::Bool(true)));
                }
                let mut kept = kept_fields(server);
                kept.retain(|(k, _)| k != "name");
                if !kept.iter().any(|(k, _)| k == "tool_configuration" || k == "tools") {
                    kept.push(("tool_configuration".to_owned(), tool_configuration(&serde_json::Map::new(), server)));
                }
                fields.extend(kept);
                entries.push((server.name.clone(), Node::Object(fields)));
            }
            Node::Object(vec![("mcpServers".to_owned(), Node::Object(entries))])
        }
        ExportFormat::Patchbay => {
            let mut list = Vec::new();
            for server in servers {
                let mut server = server.clone();
                if options.include_secrets {
                    for (_, v) in server.secret_fields_mut() {
                        if let ValueSource::Secret(name) = v
                            && let Some(text) = secret(name)?
                        {
                            *v = ValueSource::Plain(text);
                        }
                    }
                }
                list.push(ordered(&server)?);
            }
            let providers = providers.iter().map(ordered).collect::<Result<Vec<_>, _>>()?;
            Node::Object(vec![
                ("patchbay".to_owned(), Node::Number(PATCHBAY_FORMAT_VERSION.into())),
                ("servers".to_owned(), Node::Array(list)),
                ("providers".to_owned(), Node::Array(providers)),
            ])
        }
    };
    let mut text =
        serde_json::to_string_pretty(&root).map_err(|source| ConfigError::Decode { what: "export".into(), source })?;
    text.push('\n');
    Ok(text)
}

/// The name RAGFlow shows: the title, else a `name` an older import kept, else the stored name.
fn shown_name(server: &McpServerConfig) -> String {
    let kept = server.extra.get("name").and_then(serde_json::Value::as_str);
    server.title.as_deref().or(kept).unwrap_or(&server.name).to_owned()
}

/// The fields kept from an imported file, each as written then, but for the
/// tools' `enabled` flags in RAGFlow's `tool_configuration` (or `tools`), which
/// say what the server's settings say now.
fn kept_fields(server: &McpServerConfig) -> Vec<(String, Node)> {
    server
        .extra
        .iter()
        // The shown name is written from `title` (an older import kept it here).
        .filter(|(k, _)| !(k.as_str() == "name" && server.title.is_some()))
        .map(|(k, v)| match v {
            serde_json::Value::Object(tools) if k == "tool_configuration" || k == "tools" => {
                (k.clone(), tool_configuration(tools, server))
            }
            other => (k.clone(), Node::from(other)),
        })
        .collect()
}

/// RAGFlow's per-tool objects: those `kept`, each `enabled` as `server` says,
/// and one for each tool switched off that they do not name.
fn tool_configuration(kept: &serde_json::Map<String, serde_json::Value>, server: &McpServerConfig) -> Node {
    let mut tools: Vec<(String, Node)> = kept
        .iter()
        .map(|(tool, config)| {
            let enabled = !server.disabled_tools.contains(tool);
            let node = match config {
                // `enabled` is written where it was, or where it is now false.
                serde_json::Value::Object(fields) => {
                    let said = fields.contains_key("enabled");
                    let mut fields: Vec<(String, Node)> = fields
                        .iter()
                        .map(|(k, v)| (k.clone(), if k == "enabled" { Node::Bool(enabled) } else { Node::from(v) }))
                        .collect();
                    if !said && !enabled {
                        fields.push(("enabled".to_owned(), Node::Bool(false)));
                    }
                    Node::Object(fields)
                }
                other => Node::from(other),
            };
            (tool.clone(), node)
        })
        .collect();
    for tool in server.disabled_tools.iter().filter(|t| !kept.contains_key(*t)) {
        let fields = vec![("name".to_owned(), s(tool.clone())), ("enabled".to_owned(), Node::Bool(false))];
        tools.push((tool.clone(), Node::Object(fields)));
    }
    Node::Object(tools)
}

/// A value as a [`Node`], keys in the order its `Serialize` writes them.
fn ordered<T: Serialize>(value: &T) -> Result<Node, ConfigError> {
    let text = serde_json::to_string(value).map_err(|source| ConfigError::Decode { what: "export".into(), source })?;
    serde_json::from_str(&text).map_err(|source| ConfigError::Decode { what: "export".into(), source })
}

impl ConfigStore {
    /// Exports the stored servers (and, in Patchbay's form, providers) as pretty JSON.
    pub fn export(&self, options: ExportOptions, secrets: &dyn SecretStore) -> Result<String, ConfigError> {
        let servers = self.servers()?;
        let providers = if options.format == ExportFormat::Patchbay { self.providers()? } else { Vec::new() };
        render(&servers, &providers, options, &|name| Ok(secrets.get(name)?))
    }

    /// [`Self::export`] of the servers `names` only, in that order (no providers), to
    /// share one server or a few.
    pub fn export_servers(
        &self,
        names: &[String],
        options: ExportOptions,
        secrets: &dyn SecretStore,
    ) -> Result<String, ConfigError> {
        let servers = names.iter().map(|name| self.server(name)).collect::<Result<Vec<_>, _>>()?;
        render(&servers, &[], options, &|name| Ok(secrets.get(name)?))
    }
}
