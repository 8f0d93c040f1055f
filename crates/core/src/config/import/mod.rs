//! Importing MCP servers from pasted text or a file, in every common shape: Claude Desktop and
//! Cursor's `mcpServers` (remote variants and Gemini CLI's `httpUrl` included), VS Code's `servers`
//! and `inputs`, Zed's `context_servers`, opencode's `mcp`, Codex's `config.toml`, RAGFlow's fields,
//! Patchbay's own export, a bare map of servers or one server; comments and trailing commas allowed;
//! and the install links of Patchbay, Cursor and VS Code (`link`).
//!
//! [`ConfigStore::preview_import`](super::ConfigStore::preview_import) compares the text with what is
//! stored, writing nothing; [`ConfigStore::apply_import`](super::ConfigStore::apply_import) applies the
//! user's choice in one transaction, or nothing. Secret values go to the
//! [`SecretStore`](crate::secrets::SecretStore), replaced by [`ValueSource::Secret`](super::ValueSource::Secret)
//! references. A reference in the text (`${keyring:…}`, an `${input:…}` named after a secret,
//! `{"secret": …}`) may name only the importing server's (or provider's) own entries, never a
//! server's OAuth sign-in: a file must not send a stored key to a server of its choosing.
//!
//! Here the shape is recognised; `server` reads a server object with each dialect's fields in its
//! own file; `vscode`, `codex`, `patchbay` read what their documents add; `apply` writes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::jsonc::{self, Node};
use super::model::ProviderProfile;
/// The one secret type ([`crate::secrets`]), named where the import and the editor use it.
pub use crate::secrets::SecretValue;
pub use entry::ImportIssue;
use entry::{Parsed, check_collisions, issue};
pub use link::{LinkKind, is_link};
pub(crate) use names::placeholder_name;
pub use names::{
    SECRET_NAMES, SecretNameRule, TOOL_NAME_SEPARATOR, is_reserved_name, is_secret_name, normalize_name,
    oauth_secret_name, secret_name, server_name_problem, steers_program,
};
pub use preview::{
    EntryStatus, EnvironmentRead, FieldChange, ImportChoice, ImportMode, ImportOptions, ImportOutcome, ImportPreview,
    PreviewEntry, SecretNote, SecretState,
};

mod apply;
mod claude;
mod codex;
mod entry;
mod link;
mod names;
mod opencode;
mod patchbay;
mod preview;
mod ragflow;
mod server;
mod values;
mod vscode;
mod zed;

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
    /// An install link (`patchbay://mcp/install?…`, Cursor's, VS Code's).
    Link(LinkKind),
}

/// What the text holds, read by the dialect's reader.
#[derive(Debug, Default)]
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

/// Reads `text` into servers and issues. Pure: touches no store.
fn read_document(text: &str, options: &ImportOptions) -> Document {
    if link::is_link(text) {
        return match link::read(text) {
            Ok(decoded) => {
                let mut doc = read_document(&decoded.text, options);
                doc.format = Some(SourceFormat::Link(decoded.kind));
                doc.issues.extend(decoded.refused);
                doc.servers.iter_mut().for_each(link::refuse_secrets);
                doc
            }
            Err(refused) => Document { issues: vec![refused], ..Document::default() },
        };
    }
    let mut doc = Document::default();
    let root = match jsonc::parse(text) {
        Ok(root) => root,
        Err(_) if codex::is_config(text) => match codex::tree(text) {
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
    if root.get("patchbay").is_some() {
        doc.format = Some(SourceFormat::Patchbay);
        doc.carries_settings = true;
        patchbay::read(&root, options, &mut doc);
    } else if let Some(servers) = root.get("mcpServers") {
        doc.format = Some(SourceFormat::McpServers);
        server::read_map(servers, "mcpServers", options, &mut doc);
    } else if let Some(found) = vscode::locate(&root) {
        doc.format = Some(SourceFormat::VsCode);
        vscode::read(found, options, &mut doc);
    } else if let Some(servers) = root.get("mcp_servers") {
        doc.format = Some(SourceFormat::Codex);
        server::read_map(servers, "mcp_servers", options, &mut doc);
    } else if let Some(servers) = root.get("context_servers") {
        doc.format = Some(SourceFormat::Zed);
        server::read_map(servers, "context_servers", options, &mut doc);
    } else if let Some(servers) = root.get("mcp").filter(|m| server::is_map_of_objects(m)) {
        doc.format = Some(SourceFormat::OpenCode);
        server::read_map(servers, "mcp", options, &mut doc);
    } else if server::looks_like_server(&root) {
        doc.format = Some(SourceFormat::SingleServer);
        doc.servers.push(server::read_single(&root, options));
    } else if server::is_map_of_objects(&root) {
        doc.format = Some(SourceFormat::BareMap);
        server::read_map(&root, "", options, &mut doc);
    } else {
        doc.issues.push(issue(
            "(root)",
            "no servers found: expected \"mcpServers\", \"servers\", a map of servers, or one server with \"command\" or \"url\"",
        ));
    }
    check_collisions(&mut doc.servers);
    doc
}
