//! Importing MCP servers from pasted text or a file, in every common shape: Claude Desktop and
//! Cursor's `mcpServers` (remote variants and Gemini CLI's `httpUrl` included), VS Code's `servers`
//! and `inputs`, Zed's `context_servers`, opencode's `mcp`, Codex's `config.toml`, RAGFlow's fields,
//! Patchbay's own export, a bare map of servers or one server; comments and trailing commas allowed.
//!
//! [`ConfigStore::preview_import`] compares the text with what is stored, writing nothing;
//! [`ConfigStore::apply_import`] applies the user's choice in one transaction, or nothing. Secret
//! values go to the [`SecretStore`], replaced by [`ValueSource::Secret`] references. A reference in
//! the text (`${keyring:…}`, an `${input:…}` named after a secret, `{"secret": …}`) may name only the
//! importing server's (or provider's) own entries, never a server's OAuth sign-in: a file must not
//! send a stored key to a server of its choosing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::jsonc::{self, Node};
use super::model::{BUILTIN_SERVER, McpServerConfig, ProviderProfile, TransportConfig, ValueSource};
use super::{ConfigError, ConfigStore};
use crate::secrets::SecretStore;
/// The one secret type ([`crate::secrets`]), named where the import and the editor use it.
pub use crate::secrets::SecretValue;

/// One problem in the imported text: where (a JSON path such as
/// `mcpServers.github.args[2]`, or `line 3, column 7`) and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportIssue {
    pub path: String,
    pub reason: String,
}

impl fmt::Display for ImportIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

/// Choices made before reading the text.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ImportOptions {
    /// Extra fields to treat as secrets, by server name (as stored, after normalisation) and
    /// env/header name.
    pub secret_fields: BTreeMap<String, BTreeSet<String>>,
}

/// The shape the text was recognised as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// `{"mcpServers": {...}}`: Claude Desktop, Cursor, Windsurf, Cline, RAGFlow.
    McpServers,
    /// `{"servers": {...}, "inputs": [...]}`: VS Code.
    VsCode,
    /// `{"context_servers": {...}}`: Zed.
    Zed,
    /// `{"mcp": {...}}`: opencode.
    OpenCode,
    /// `[mcp_servers.NAME]` tables in TOML: Codex.
    Codex,
    /// Patchbay's full export.
    Patchbay,
    /// A map of server name to server.
    BareMap,
    /// One server object.
    SingleServer,
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
    pub issues: Vec<ImportIssue>,
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

/// Where a secret-holding field's value comes from.
#[derive(Debug, Clone)]
enum SecretSource {
    Value(SecretValue),
    Reference,
    Prompt { input: String, template: String },
}

#[derive(Debug, Clone)]
struct SecretUse {
    field: String,
    secret: String,
    source: SecretSource,
}

/// A server read from the text, before comparing with the store.
#[derive(Debug)]
struct Parsed {
    name: String,
    source: String,
    server: Option<McpServerConfig>,
    secrets: Vec<SecretUse>,
    issues: Vec<ImportIssue>,
}

#[derive(Debug)]
struct Document {
    format: Option<SourceFormat>,
    servers: Vec<Parsed>,
    issues: Vec<ImportIssue>,
    /// Whether the shape holds Patchbay's own settings (timeouts, approvals);
    /// when not, a merge keeps the stored ones.
    carries_settings: bool,
    /// VS Code input descriptions, by id.
    inputs: BTreeMap<String, Option<String>>,
    /// Provider profiles (Patchbay's form only); API keys as secret names.
    providers: Vec<ProviderProfile>,
}

fn issue(path: &str, reason: impl Into<String>) -> ImportIssue {
    ImportIssue { path: path.to_owned(), reason: reason.into() }
}

fn join(path: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (true, false) => format!("[{key:?}]"),
        (false, true) => format!("{path}.{key}"),
        (false, false) => format!("{path}[{key:?}]"),
    }
}

/// The stored form of a server name: trimmed, runs of characters other than
/// letters, digits, `-` and `_` turned into one `-`.
pub fn normalize_name(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.trim().chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// Two names that differ only in case name the same server.
fn fold(name: &str) -> String {
    normalize_name(name).to_ascii_lowercase()
}

const MAX_NAME_LEN: usize = 48;

/// Which env and header names hold secrets, read on the name in ASCII capitals
/// with `-` as `_`. The one rule: the server editor applies the same data
/// (`ui/src/lib/secretNames.json`, written from this by a test that fails when
/// the two differ).
#[derive(Debug, Serialize)]
pub struct SecretNameRule {
    /// A name ending in one of these (`GITHUB_TOKEN`, `X-Api-Key`).
    pub suffixes: &'static [&'static str],
    /// A name that is one of these (`Authorization`).
    pub names: &'static [&'static str],
    /// A name with one of these in it (`DB_PASSWORD_FILE`).
    pub contains: &'static [&'static str],
}

/// The rule [`is_secret_name`] applies.
pub const SECRET_NAMES: SecretNameRule = SecretNameRule {
    suffixes: &["_KEY", "_TOKEN", "_SECRET"],
    names: &["KEY", "TOKEN", "SECRET", "APIKEY", "AUTHORIZATION", "PROXY_AUTHORIZATION"],
    contains: &["PASSWORD", "PASSWD"],
};

/// Whether an env or header name holds a secret (see [`SECRET_NAMES`]).
pub fn is_secret_name(key: &str) -> bool {
    let k = key.to_ascii_uppercase().replace('-', "_");
    SECRET_NAMES.suffixes.iter().any(|s| k.ends_with(s))
        || SECRET_NAMES.names.contains(&k.as_str())
        || SECRET_NAMES.contains.iter().any(|s| k.contains(s))
}

/// The secret-store name for a field of a server, e.g. `mcp/github/GITHUB_TOKEN`.
pub fn secret_name(server: &str, key: &str) -> String {
    format!("mcp/{server}/{key}")
}

/// The secret name that holds a server's OAuth credentials (`crate::mcp::oauth`).
pub fn oauth_secret_name(server: &str) -> String {
    format!("mcp/{server}/oauth")
}

/// How an MCP server's secret is named in an exported `${keyring:…}`
/// placeholder: `mcp/github/TOKEN` is written `patchbay/github/TOKEN`, so a
/// reader sees which app's keyring holds it. Other names are written as they are.
pub(crate) fn placeholder_name(secret: &str) -> String {
    match secret.strip_prefix("mcp/") {
        Some(rest) => format!("patchbay/{rest}"),
        None => secret.to_owned(),
    }
}

/// The secret a `${keyring:…}` placeholder refers to: the exported form
/// (`patchbay/github/TOKEN`) and the stored name (`mcp/github/TOKEN`) are both accepted.
fn secret_from_placeholder(reference: &str) -> String {
    match reference.strip_prefix("patchbay/") {
        Some(rest) => format!("mcp/{rest}"),
        None => reference.to_owned(),
    }
}

const KEYRING_PREFIX: &str = "${keyring:";
const INPUT_PREFIX: &str = "${input:";

/// The reference inside an exact `${keyring:NAME}` placeholder.
fn keyring_reference(value: &str) -> Option<&str> {
    value.strip_prefix(KEYRING_PREFIX)?.strip_suffix('}').filter(|n| !n.is_empty() && !n.contains('}'))
}

/// Every `${input:ID}` id in `value`.
fn input_ids(value: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find(INPUT_PREFIX) {
        rest = &rest[at + INPUT_PREFIX.len()..];
        if let Some(end) = rest.find('}') {
            ids.push(rest[..end].to_owned());
            rest = &rest[end + 1..];
        } else {
            break;
        }
    }
    ids
}

/// Reads `text` into servers and issues. Pure: touches no store.
fn read_document(text: &str, options: &ImportOptions) -> Document {
    let mut doc = Document {
        format: None,
        servers: Vec::new(),
        issues: Vec::new(),
        carries_settings: false,
        inputs: BTreeMap::new(),
        providers: Vec::new(),
    };
    let root = match jsonc::parse(text) {
        Ok(root) => root,
        Err(_) if is_codex_toml(text) => match codex_toml(text) {
            Ok(root) => root,
            Err(reason) => {
                doc.issues.push(issue("TOML", reason));
                return doc;
            }
        },
        Err(e) => {
            doc.issues.push(issue(&e.location, e.reason));
            return doc;
        }
    };
    let Node::Object(_) = &root else {
        let hint = if matches!(root, Node::Array(_)) {
            "; wrap the servers in {\"mcpServers\": {\"name\": {...}}}"
        } else {
            ""
        };
        doc.issues.push(issue(
            "(root)",
            format!(
                "expected an object with \"mcpServers\", \"servers\" or one server, found {}{hint}",
                root.describe()
            ),
        ));
        return doc;
    };
    let vscode_nested = root.get("mcp").filter(|m| m.get("servers").is_some());
    if root.get("patchbay").is_some() {
        doc.format = Some(SourceFormat::Patchbay);
        doc.carries_settings = true;
        read_patchbay(&root, options, &mut doc);
    } else if let Some(servers) = root.get("mcpServers") {
        doc.format = Some(SourceFormat::McpServers);
        read_map(servers, "mcpServers", options, &mut doc);
    } else if let Some((servers, prefix, inputs)) = root
        .get("servers")
        .map(|s| (s, "servers", root.get("inputs")))
        .or_else(|| vscode_nested.and_then(|m| Some((m.get("servers")?, "mcp.servers", m.get("inputs")))))
    {
        doc.format = Some(SourceFormat::VsCode);
        if let Some(inputs) = inputs {
            let path = if prefix == "servers" { "inputs" } else { "mcp.inputs" };
            read_inputs(inputs, path, &mut doc);
        }
        read_map(servers, prefix, options, &mut doc);
    } else if let Some(servers) = root.get("mcp_servers") {
        doc.format = Some(SourceFormat::Codex);
        read_map(servers, "mcp_servers", options, &mut doc);
    } else if let Some(servers) = root.get("context_servers") {
        doc.format = Some(SourceFormat::Zed);
        read_map(servers, "context_servers", options, &mut doc);
    } else if let Some(servers) = root.get("mcp").filter(|m| is_map_of_objects(m)) {
        doc.format = Some(SourceFormat::OpenCode);
        read_map(servers, "mcp", options, &mut doc);
    } else if looks_like_server(&root) {
        doc.format = Some(SourceFormat::SingleServer);
        let name = match root.get("name") {
            Some(Node::String(n)) if !normalize_name(n).is_empty() => n.clone(),
            _ => derive_name(&root),
        };
        let parsed = read_server(&name, "", &root, options);
        doc.servers.push(parsed);
    } else if is_map_of_objects(&root) {
        doc.format = Some(SourceFormat::BareMap);
        read_map(&root, "", options, &mut doc);
    } else {
        doc.issues.push(issue(
            "(root)",
            "no servers found: expected \"mcpServers\", \"servers\", a map of servers, or one server with \"command\" or \"url\"",
        ));
    }
    check_collisions(&mut doc.servers);
    doc
}

/// Whether `text` (which is not JSON) is a Codex `config.toml` with servers.
fn is_codex_toml(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("[mcp_servers.") || l.starts_with("[mcp_servers]") || l.starts_with("mcp_servers")
    })
}

/// A Codex `config.toml` as the JSON reader's tree: its `mcp_servers` (other
/// settings dropped), `http_headers` read as `headers`.
fn codex_toml(text: &str) -> Result<Node, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let at = e.span().map(|span| {
            let before = &text[..span.start.min(text.len())];
            format!(
                "line {}, column {}: ",
                before.matches('\n').count() + 1,
                before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1
            )
        });
        format!("{}{}", at.unwrap_or_default(), e.message())
    })?;
    let mut servers =
        serde_json::to_value(table.get("mcp_servers").cloned().unwrap_or(toml::Value::Table(Default::default())))
            .map_err(|e| e.to_string())?;
    if let Some(map) = servers.as_object_mut() {
        for server in map.values_mut().filter_map(|s| s.as_object_mut()) {
            if let Some(headers) = server.remove("http_headers") {
                server.insert("headers".into(), headers);
            }
        }
    }
    jsonc::parse(&serde_json::json!({"mcp_servers": servers}).to_string()).map_err(|e| e.reason)
}

/// A non-empty object whose values are all objects: a map of servers.
fn is_map_of_objects(node: &Node) -> bool {
    matches!(node, Node::Object(fields) if !fields.is_empty() && fields.iter().all(|(_, v)| matches!(v, Node::Object(_))))
}

fn looks_like_server(node: &Node) -> bool {
    ["command", "url", "serverUrl", "httpUrl"].iter().any(|k| node.get(k).is_some())
}

/// A name for a single pasted server without one: the package or program, or the URL's host.
fn derive_name(node: &Node) -> String {
    let from_command = || {
        let Some(Node::String(command)) = node.get("command") else { return None };
        let args: Vec<&str> = match node.get("args") {
            Some(Node::Array(items)) => {
                items.iter().filter_map(|a| if let Node::String(s) = a { Some(s.as_str()) } else { None }).collect()
            }
            _ => Vec::new(),
        };
        // `npx -y @scope/server-x@1.2` names the package; otherwise the program itself.
        let package = args
            .iter()
            .find(|a| !a.starts_with('-'))
            .filter(|_| matches!(command.rsplit('/').next(), Some("npx" | "uvx" | "bunx" | "pnpx" | "docker")));
        let raw = package.copied().unwrap_or(command.as_str());
        let last = raw.rsplit('/').next().unwrap_or(raw);
        let last = last.split('@').find(|s| !s.is_empty()).unwrap_or(last);
        Some(last.to_owned())
    };
    let from_url = || {
        let url = match ["url", "serverUrl", "httpUrl"].iter().find_map(|k| node.get(k)) {
            Some(Node::String(u)) => u,
            _ => return None,
        };
        reqwest::Url::parse(url).ok()?.host_str().map(str::to_owned)
    };
    from_command().or_else(from_url).filter(|n| !normalize_name(n).is_empty()).unwrap_or_else(|| "server".to_owned())
}

fn read_inputs(inputs: &Node, path: &str, doc: &mut Document) {
    let Node::Array(items) = inputs else {
        doc.issues.push(issue(path, format!("expected an array, found {}", inputs.describe())));
        return;
    };
    for (i, item) in items.iter().enumerate() {
        let at = format!("{path}[{i}]");
        match item.get("id") {
            Some(Node::String(id)) => {
                let description = match item.get("description") {
                    Some(Node::String(d)) => Some(d.clone()),
                    _ => None,
                };
                doc.inputs.insert(id.clone(), description);
            }
            Some(other) => {
                doc.issues.push(issue(&format!("{at}.id"), format!("expected a string, found {}", other.describe())))
            }
            None => doc.issues.push(issue(&at, "an input needs an \"id\"")),
        }
    }
}

fn read_map(servers: &Node, prefix: &str, options: &ImportOptions, doc: &mut Document) {
    let Node::Object(fields) = servers else {
        doc.issues.push(issue(prefix, format!("expected an object of servers, found {}", servers.describe())));
        return;
    };
    if fields.is_empty() {
        doc.issues.push(issue(if prefix.is_empty() { "(root)" } else { prefix }, "there are no servers in it"));
    }
    for (key, node) in fields {
        let path = join(prefix, key);
        let parsed = read_server(key, &path, node, options);
        doc.servers.push(parsed);
    }
}

fn read_patchbay(root: &Node, options: &ImportOptions, doc: &mut Document) {
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

fn check_name(raw: &str, path: &str, issues: &mut Vec<ImportIssue>) {
    let name = normalize_name(raw);
    if name.is_empty() {
        issues.push(issue(path, format!("the name {raw:?} has no letters or digits")));
    } else if name.len() > MAX_NAME_LEN {
        issues.push(issue(path, format!("the name is longer than {MAX_NAME_LEN} characters")));
    } else if is_reserved_name(&name) {
        issues.push(issue(path, format!("the name {name:?} is taken by Patchbay's built-in tools; rename the server")));
    } else if let Some(problem) = server_name_problem(&name) {
        issues.push(issue(path, problem));
    }
}

/// What Patchbay puts between a server's and a tool's name for the model
/// (`server__tool`, see `crate::mcp::protocol::naming`).
pub const TOOL_NAME_SEPARATOR: &str = "__";

/// Why `server` cannot be a server's name under the model-facing naming
/// scheme (`crate::mcp::protocol::naming`), if it cannot.
///
/// A server name holding the separator (`a__b`) or ending in `_` (`a_`) would
/// read like another server's tool: `a__b` + `c` and `a` + `b__c` are both
/// `a__b__c`, `a_` + `b` and `a` + `_b` both `a___b`. Names are refused when
/// a server is saved or imported, so the first `__` of a model-facing name
/// always ends its server part.
pub fn server_name_problem(server: &str) -> Option<String> {
    if server.contains(TOOL_NAME_SEPARATOR) {
        Some(format!(
            "the server name {server:?} holds {TOOL_NAME_SEPARATOR:?}, which Patchbay puts between a server's and a tool's \
             name for the model, so its tools could pass for another server's; use a single \"_\" or \"-\""
        ))
    } else if server.ends_with('_') {
        Some(format!(
            "the server name {server:?} ends in \"_\", so its tools' names (server{TOOL_NAME_SEPARATOR}tool) could pass for \
             another server's; remove the trailing \"_\""
        ))
    } else {
        None
    }
}

/// Whether `name` is the built-in tools' server name, which no configured server may take.
pub fn is_reserved_name(name: &str) -> bool {
    name.eq_ignore_ascii_case(BUILTIN_SERVER)
}

fn check_url(url: &str, path: &str, issues: &mut Vec<ImportIssue>) {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => {}
        Ok(u) => issues.push(issue(path, format!("{url:?} is not an http(s) URL (scheme {:?})", u.scheme()))),
        Err(e) => issues.push(issue(path, format!("{url:?} is not a valid URL ({e})"))),
    }
}

fn check_transport(transport: &TransportConfig, path: &str, issues: &mut Vec<ImportIssue>) {
    match transport {
        TransportConfig::Stdio { command, .. } if command.trim().is_empty() => {
            issues.push(issue(&format!("{path}.transport.command"), "the command is empty"));
        }
        TransportConfig::Stdio { .. } => {}
        TransportConfig::StreamableHttp { url, .. }
        | TransportConfig::Sse { url, .. }
        | TransportConfig::Auto { url, .. } => {
            check_url(url, &format!("{path}.transport.url"), issues);
        }
        // Never read from a file (the variant is not deserialised).
        TransportConfig::InProcess => {}
    }
}

/// Context for turning one env/header value into a [`ValueSource`].
struct FieldCtx<'a> {
    server: &'a str,
    key: &'a str,
    /// `env.KEY` or `headers.Name`, as shown in the preview.
    field: String,
    marked: Option<&'a BTreeSet<String>>,
}

/// Whether `secret` is an entry under `scope` (`mcp/github/`, `provider/ark/`).
fn in_scope(scope: &str, secret: &str) -> bool {
    secret.strip_prefix(scope).is_some_and(|key| !key.is_empty())
}

/// Why the imported server `server` may not use the stored secret `secret`, if
/// it may not. A server uses only its own entries (`mcp/<server>/…`, as
/// Patchbay names them) and never its OAuth sign-in, which only the sign-in
/// reads: otherwise a file could send a provider's key or another server's
/// token to a server of its choosing.
fn foreign_secret(server: &str, secret: &str) -> Option<String> {
    if !in_scope(&secret_name(server, ""), secret) {
        Some(format!(
            "names the secret {secret:?}, which is not this server's own; an imported server may use only its own \
             secrets (mcp/{server}/…)"
        ))
    } else if secret == oauth_secret_name(server) {
        Some(format!("names the secret {secret:?}, the server's OAuth sign-in, which no configuration may use"))
    } else {
        None
    }
}

/// A value that names the stored secret `secret`: noted for the preview, and
/// refused at `path` when the secret is not the server's own.
fn secret_reference(
    ctx: &FieldCtx<'_>,
    secret: String,
    source: SecretSource,
    path: &str,
    parsed: &mut Parsed,
) -> ValueSource {
    if let Some(reason) = foreign_secret(ctx.server, &secret) {
        parsed.issues.push(issue(path, reason));
    }
    parsed.secrets.push(SecretUse { field: ctx.field.clone(), secret: secret.clone(), source });
    ValueSource::Secret(secret)
}

/// A value of Patchbay's form as it is stored: a named secret is a reference
/// (checked like a placeholder), plain text is read as in any other form.
fn stored_form(ctx: &FieldCtx<'_>, value: &ValueSource, path: &str, parsed: &mut Parsed) -> ValueSource {
    match value {
        ValueSource::Secret(name) => secret_reference(ctx, name.clone(), SecretSource::Reference, path, parsed),
        ValueSource::Plain(text) => secret_field(ctx, text, path, parsed),
    }
}

/// Decides whether a value is a reference, a prompt, a secret to store or plain text.
fn secret_field(ctx: &FieldCtx<'_>, value: &str, path: &str, parsed: &mut Parsed) -> ValueSource {
    if let Some(reference) = keyring_reference(value) {
        return secret_reference(ctx, secret_from_placeholder(reference), SecretSource::Reference, path, parsed);
    }
    if value.contains(KEYRING_PREFIX) {
        parsed.issues.push(issue(path, "a ${keyring:…} placeholder must be the whole value"));
        return ValueSource::Plain(String::new());
    }
    let ids = input_ids(value);
    if let Some(first) = ids.first() {
        // Our own VS Code export names inputs after the secret (`mcp/github/TOKEN`).
        let secret = if ids.len() == 1 && first.contains('/') && value == format!("{INPUT_PREFIX}{first}}}") {
            first.clone()
        } else {
            secret_name(ctx.server, ctx.key)
        };
        if ids.len() > 1 {
            parsed.issues.push(issue(path, "only one ${input:…} placeholder per value is supported"));
        }
        let source = SecretSource::Prompt { input: first.clone(), template: value.to_owned() };
        return secret_reference(ctx, secret, source, path, parsed);
    }
    let marked = ctx.marked.is_some_and(|m| m.contains(ctx.key));
    if (marked || is_secret_name(ctx.key)) && !value.is_empty() {
        let source = SecretSource::Value(SecretValue::new(value));
        return secret_reference(ctx, secret_name(ctx.server, ctx.key), source, path, parsed);
    }
    ValueSource::Plain(value.to_owned())
}

/// Reads one server object of the Claude Desktop / VS Code / RAGFlow family.
fn read_server(raw_name: &str, path: &str, node: &Node, options: &ImportOptions) -> Parsed {
    let name = normalize_name(raw_name);
    let mut p = Parsed {
        name: name.clone(),
        source: if path.is_empty() { "(root)".to_owned() } else { path.to_owned() },
        server: None,
        secrets: Vec::new(),
        issues: Vec::new(),
    };
    let here = |key: &str| join(path, key);
    check_name(raw_name, &p.source, &mut p.issues);
    let Node::Object(fields) = node else {
        p.issues.push(issue(&p.source, format!("expected a server object, found {}", node.describe())));
        return p;
    };
    let marked = options.secret_fields.get(&name);
    let mut command = None;
    // Arguments given with the command (opencode's array, Zed's object) come before `args`.
    let mut command_args: Vec<String> = Vec::new();
    let mut args = Vec::new();
    let mut env = BTreeMap::new();
    let mut cwd = None;
    let mut url: Option<(String, String)> = None;
    let mut kind: Option<(String, String)> = None;
    let mut headers = BTreeMap::new();
    let mut enabled = true;
    let mut extra = serde_json::Map::new();
    let mut issues = Vec::new();
    let string = |key: &str, v: &Node, issues: &mut Vec<ImportIssue>| match v {
        Node::String(s) => Some(s.clone()),
        other => {
            issues.push(issue(&here(key), format!("expected a string, found {}", other.describe())));
            None
        }
    };
    for (key, value) in fields {
        match key.as_str() {
            "command" => match value {
                Node::Array(items) => {
                    let mut words = strings(items, &here(key), &mut issues);
                    if words.is_empty() {
                        issues.push(issue(&here(key), "the command is empty"));
                    } else {
                        command = Some(words.remove(0));
                        command_args = words;
                    }
                }
                // Zed's older form: {"path": …, "args": […], "env": {…}}.
                Node::Object(_) => {
                    let at = here(key);
                    match value.get("path") {
                        Some(path) => command = string(&format!("{key}.path"), path, &mut issues),
                        None => issues.push(issue(&at, "needs \"path\", the program to run")),
                    }
                    match value.get("args") {
                        Some(Node::Array(items)) => command_args = strings(items, &join(&at, "args"), &mut issues),
                        Some(other) => issues.push(issue(
                            &join(&at, "args"),
                            format!("expected an array of strings, found {}", other.describe()),
                        )),
                        None => {}
                    }
                    if let Some(vars) = value.get("env") {
                        string_map(vars, &join(&at, "env"), &mut env, &mut issues);
                    }
                }
                other => command = string(key, other, &mut issues),
            },
            "args" => {
                match value {
                    Node::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            match item {
                                Node::String(s) if s.contains(INPUT_PREFIX) || s.contains(KEYRING_PREFIX) => issues
                                    .push(issue(
                                        &format!("{}[{i}]", here(key)),
                                        "placeholders for secrets are supported in env and headers, not in args",
                                    )),
                                Node::String(s) => args.push(s.clone()),
                                other => issues.push(issue(
                                    &format!("{}[{i}]", here(key)),
                                    format!("expected a string, found {}", other.describe()),
                                )),
                            }
                        }
                    }
                    other => issues
                        .push(issue(&here(key), format!("expected an array of strings, found {}", other.describe()))),
                }
            }
            "env" | "environment" | "headers" => {
                let target = if key == "headers" { &mut headers } else { &mut env };
                string_map(value, &here(key), target, &mut issues);
            }
            "cwd" => cwd = string(key, value, &mut issues).map(PathBuf::from),
            "url" | "serverUrl" | "httpUrl" => {
                if key == "httpUrl" && kind.is_none() {
                    // Gemini CLI: `httpUrl` is streamable HTTP (its `url` is SSE).
                    kind = Some(("http".to_owned(), key.clone()));
                }
                if let Some(u) = string(key, value, &mut issues) {
                    match &url {
                        Some((prev, prev_key)) if *prev != u => {
                            issues.push(issue(&here(key), format!("differs from {}; give one URL", here(prev_key))))
                        }
                        _ => url = Some((u, key.clone())),
                    }
                }
            }
            "type" | "transport" => {
                if let Some(t) = string(key, value, &mut issues) {
                    match &kind {
                        Some((prev, prev_key)) if !prev.eq_ignore_ascii_case(&t) => {
                            issues.push(issue(&here(key), format!("{t:?} contradicts {} ({prev:?})", here(prev_key))))
                        }
                        _ => kind = Some((t, key.clone())),
                    }
                }
            }
            "disabled" | "enabled" => match value {
                Node::Bool(b) => enabled = if key == "enabled" { *b } else { !b },
                other => issues.push(issue(&here(key), format!("expected true or false, found {}", other.describe()))),
            },
            "authorization_token" => {
                if let Some(token) = string(key, value, &mut issues).filter(|t| !t.is_empty()) {
                    let value = if keyring_reference(&token).is_some() || token.starts_with("Bearer ") {
                        token
                    } else {
                        format!("Bearer {token}")
                    };
                    headers.insert("Authorization".to_owned(), (value, here(key)));
                }
            }
            "name" if matches!(value, Node::String(n) if normalize_name(n) == name) => {}
            _ => {
                extra.insert(key.clone(), value.to_value());
            }
        }
    }
    // opencode says `local` and `remote`.
    let transport_kind = kind.as_ref().map(|(t, _)| t.to_ascii_lowercase()).and_then(|t| match t.as_str() {
        "local" => Some("stdio".to_owned()),
        "remote" => None,
        _ => Some(t),
    });
    command_args.append(&mut args);
    let args = command_args;
    let kind_path = kind.as_ref().map(|(_, k)| here(k)).unwrap_or_default();
    let transport = match (transport_kind.as_deref(), command, url) {
        (_, Some(_), Some((_, url_key))) => {
            issues.push(issue(
                &p.source,
                format!("has both \"command\" and \"{url_key}\"; a server is either local or remote"),
            ));
            None
        }
        (None | Some("stdio"), Some(command), None) => {
            if command.trim().is_empty() {
                issues.push(issue(&here("command"), "the command is empty"));
            }
            Some(TransportConfig::Stdio { command, args, env: BTreeMap::new(), cwd })
        }
        (Some("stdio"), None, Some(_)) => {
            issues.push(issue(&kind_path, "\"stdio\" needs a \"command\", not a URL"));
            None
        }
        (t, None, Some((u, url_key))) => {
            check_url(&u, &here(&url_key), &mut issues);
            if !args.is_empty() || cwd.is_some() {
                issues.push(issue(&p.source, "\"args\" and \"cwd\" apply only to local servers with a \"command\""));
            }
            let headers = BTreeMap::new();
            match t {
                None => Some(TransportConfig::Auto { url: u, headers }),
                Some("sse") => Some(TransportConfig::Sse { url: u, headers }),
                Some("http" | "streamable-http" | "streamablehttp" | "streamable_http") => {
                    Some(TransportConfig::StreamableHttp { url: u, headers })
                }
                Some(_) => {
                    let (t, _) = kind.clone().unwrap_or_default();
                    issues.push(issue(
                        &kind_path,
                        format!("unknown transport {t:?}; expected \"stdio\", \"sse\", \"http\", \"streamable-http\" or \"streamableHttp\""),
                    ));
                    None
                }
            }
        }
        (Some(t), Some(_), None) => {
            let (orig, _) = kind.clone().unwrap_or_default();
            let reason = if matches!(t, "sse" | "http" | "streamable-http" | "streamablehttp" | "streamable_http") {
                format!("{orig:?} needs a \"url\", not a \"command\"")
            } else {
                format!(
                    "unknown transport {orig:?}; expected \"stdio\", \"sse\", \"http\", \"streamable-http\" or \"streamableHttp\""
                )
            };
            issues.push(issue(&kind_path, reason));
            None
        }
        // A `command` or `url` of the wrong type was reported already.
        (_, None, None) if looks_like_server(node) => None,
        (_, None, None) => {
            issues.push(issue(&p.source, "needs either \"command\" (a local program) or \"url\" (a remote server)"));
            None
        }
    };
    p.issues.append(&mut issues);
    let Some(mut transport) = transport else { return p };
    let values = |entries: BTreeMap<String, (String, String)>, group: &str, p: &mut Parsed| {
        entries
            .into_iter()
            .map(|(k, (v, field_path))| {
                let ctx = FieldCtx { server: &name, key: &k, field: format!("{group}.{k}"), marked };
                let source = secret_field(&ctx, &v, &field_path, p);
                (k, source)
            })
            .collect::<BTreeMap<_, _>>()
    };
    match &mut transport {
        TransportConfig::Stdio { env: target, .. } => {
            if !headers.is_empty() {
                p.issues.push(issue(&here("headers"), "headers apply only to remote servers with a \"url\""));
            }
            *target = values(env, "env", &mut p);
        }
        TransportConfig::StreamableHttp { headers: target, .. }
        | TransportConfig::Sse { headers: target, .. }
        | TransportConfig::Auto { headers: target, .. } => {
            if !env.is_empty() {
                p.issues.push(issue(&here("env"), "env applies only to local servers with a \"command\""));
            }
            *target = values(headers, "headers", &mut p);
        }
        // The reader above builds only file transports.
        TransportConfig::InProcess => {}
    }
    if p.issues.is_empty() {
        let mut server = McpServerConfig::with_transport(name, transport);
        server.enabled = enabled;
        server.extra = extra;
        p.server = Some(server);
    }
    p
}

/// The strings of an array at `path`; anything else in it is an issue.
fn strings(items: &[Node], path: &str, issues: &mut Vec<ImportIssue>) -> Vec<String> {
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            Node::String(s) => out.push(s.clone()),
            other => {
                issues.push(issue(&format!("{path}[{i}]"), format!("expected a string, found {}", other.describe())))
            }
        }
    }
    out
}

/// An object of strings at `path` (env, headers) into `target`, with each
/// value's path; anything else is an issue.
fn string_map(
    value: &Node,
    path: &str,
    target: &mut BTreeMap<String, (String, String)>,
    issues: &mut Vec<ImportIssue>,
) {
    let Node::Object(entries) = value else {
        issues.push(issue(path, format!("expected an object of strings, found {}", value.describe())));
        return;
    };
    for (k, v) in entries {
        let field_path = join(path, k);
        match v {
            Node::String(s) => {
                target.insert(k.clone(), (s.clone(), field_path));
            }
            other => issues.push(issue(&field_path, format!("expected a string, found {}", other.describe()))),
        }
    }
}

/// Marks servers whose names collide after normalisation with an earlier one.
fn check_collisions(servers: &mut [Parsed]) {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for p in servers.iter_mut() {
        if p.name.is_empty() {
            continue;
        }
        let key = fold(&p.name);
        if let Some(first) = seen.get(&key) {
            p.issues.push(issue(
                &p.source,
                format!(
                    "the name collides with {first} after normalisation (both become {:?})",
                    p.name.to_ascii_lowercase()
                ),
            ));
            p.server = None;
        } else {
            seen.insert(key, p.source.clone());
        }
    }
}

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
                keep_settings(server, stored);
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
            entries.push(PreviewEntry {
                name: parsed.name,
                source: parsed.source,
                status,
                server,
                secrets: notes,
                issues: parsed.issues,
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

/// Keeps Patchbay's own settings of a stored server when the imported shape cannot hold them.
fn keep_settings(server: &mut McpServerConfig, stored: &McpServerConfig) {
    server.timeouts = stored.timeouts;
    server.approval = stored.approval;
    server.tool_approval = stored.tool_approval.clone();
    server.disabled_tools = stored.disabled_tools.clone();
    server.share_roots = stored.share_roots;
    server.read_only_auto_allow = stored.read_only_auto_allow;
    server.policy = stored.policy.clone();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_that_break_the_scheme_are_refused() {
        for bad in ["a__b", "__a", "a___b", "a_", "_"] {
            let problem = server_name_problem(bad).unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert!(problem.contains(&format!("{bad:?}")), "{problem}");
        }
        for good in ["a", "a_b", "_a", "my-server", "a-_b"] {
            assert_eq!(server_name_problem(good), None, "{good:?}");
        }
    }

    /// Names the UI's copy of the rule is checked against, with the core's verdicts.
    const EXAMPLES: &[&str] = &[
        "GITHUB_TOKEN",
        "api-key",
        "X-Api-Key",
        "Authorization",
        "proxy-authorization",
        "apikey",
        "Secret",
        "DB_PASSWORD_FILE",
        "mysql_passwd",
        "CLIENT_SECRET",
        "LOG_LEVEL",
        "TOKENIZER",
        "KEYBOARD",
        "X-Team",
        "MONKEY",
        "\u{017F}ecret",
        "token\u{0131}",
        "",
    ];

    /// The server editor marks new env and header rows by the rule the import
    /// uses: `ui/src/lib/secretNames.json` holds it and these verdicts.
    /// `PATCHBAY_WRITE_UI=1` rewrites the file.
    #[test]
    fn the_ui_has_the_secret_name_rule_of_the_core() {
        #[derive(Serialize)]
        struct ForUi {
            rule: SecretNameRule,
            examples: Vec<(&'static str, bool)>,
        }
        let examples = EXAMPLES.iter().map(|n| (*n, is_secret_name(n))).collect();
        let expected = format!("{}\n", serde_json::to_string_pretty(&ForUi { rule: SECRET_NAMES, examples }).unwrap());
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ui/src/lib/secretNames.json");
        if std::env::var_os("PATCHBAY_WRITE_UI").is_some() {
            std::fs::write(path, &expected).unwrap();
        }
        let found = std::fs::read_to_string(path).unwrap_or_default();
        assert!(found == expected, "{path} differs from the core's rule; run this test with PATCHBAY_WRITE_UI=1");
    }
}
