//! What every dialect's reader shares: a server read from the text
//! ([`Parsed`]), the fields of a server object as the dialects gather them
//! ([`Fields`]), and the checks and issues at a JSON path.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use super::names::{MAX_NAME_LEN, fold, is_reserved_name, normalize_name, server_name_problem};
use crate::config::jsonc::Node;
use crate::config::model::{McpServerConfig, TransportConfig};
use crate::secrets::SecretValue;

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

/// Where a secret-holding field's value comes from.
#[derive(Debug, Clone)]
pub(super) enum SecretSource {
    Value(SecretValue),
    Reference,
    Prompt { input: String, template: String },
}

#[derive(Debug, Clone)]
pub(super) struct SecretUse {
    pub field: String,
    pub secret: String,
    pub source: SecretSource,
}

/// A server read from the text, before comparing with the store.
#[derive(Debug)]
pub(super) struct Parsed {
    pub name: String,
    pub source: String,
    pub server: Option<McpServerConfig>,
    pub secrets: Vec<SecretUse>,
    pub issues: Vec<ImportIssue>,
}

pub(super) fn issue(path: &str, reason: impl Into<String>) -> ImportIssue {
    ImportIssue { path: path.to_owned(), reason: reason.into() }
}

pub(super) fn join(path: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (true, false) => format!("[{key:?}]"),
        (false, true) => format!("{path}.{key}"),
        (false, false) => format!("{path}[{key:?}]"),
    }
}

pub(super) fn check_name(raw: &str, path: &str, issues: &mut Vec<ImportIssue>) {
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

pub(super) fn check_url(url: &str, path: &str, issues: &mut Vec<ImportIssue>) {
    let shown = redacted(url);
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => {}
        Ok(u) => issues.push(issue(path, format!("{shown:?} is not an http(s) URL (scheme {:?})", u.scheme()))),
        Err(e) => issues.push(issue(path, format!("{shown:?} is not a valid URL ({e})"))),
    }
}

/// `url` as a message may repeat it: without the user and password before
/// `@` or the query after `?`, where secrets ride.
fn redacted(url: &str) -> String {
    let mut shown = url.split(['?', '#']).next().unwrap_or_default().to_owned();
    if let Some(scheme_end) = shown.find("://") {
        let rest = &shown[scheme_end + 3..];
        let authority_end = rest.find('/').unwrap_or(rest.len());
        if let Some(at) = rest[..authority_end].rfind('@') {
            shown = format!("{}…@{}", &shown[..scheme_end + 3], &rest[at + 1..]);
        }
    }
    if shown.len() < url.len() && !shown.contains('@') {
        shown.push('…');
    }
    shown
}

pub(super) fn check_transport(transport: &TransportConfig, path: &str, issues: &mut Vec<ImportIssue>) {
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

/// The strings of an array at `path`; anything else in it is an issue.
pub(super) fn strings(items: &[Node], path: &str, issues: &mut Vec<ImportIssue>) -> Vec<String> {
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
pub(super) fn string_map(
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
pub(super) fn check_collisions(servers: &mut [Parsed]) {
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

/// What one server object's fields say, gathered by the dialects' field
/// readers before the server is built from them.
#[derive(Debug)]
pub(super) struct Fields {
    /// The server's path in the text (`mcpServers.github`; empty at the root).
    pub path: String,
    /// The name the server is stored under.
    pub name: String,
    pub command: Option<String>,
    /// Arguments given with the command (opencode's array, Zed's object); they come before `args`.
    pub command_args: Vec<String>,
    pub args: Vec<String>,
    /// Env and header values by name, each with its path.
    pub env: BTreeMap<String, (String, String)>,
    pub headers: BTreeMap<String, (String, String)>,
    pub cwd: Option<PathBuf>,
    /// The URL, with the key it was given under.
    pub url: Option<(String, String)>,
    /// The transport (`type` or `transport`), with the key it was given under.
    pub kind: Option<(String, String)>,
    pub enabled: bool,
    /// The name to show, where the file gives one apart from the key.
    pub title: Option<String>,
    /// Tools the file switches off.
    pub disabled_tools: BTreeSet<String>,
    pub issues: Vec<ImportIssue>,
}

impl Fields {
    pub fn new(path: &str, name: &str) -> Self {
        Self {
            path: path.to_owned(),
            name: name.to_owned(),
            command: None,
            command_args: Vec::new(),
            args: Vec::new(),
            env: BTreeMap::new(),
            headers: BTreeMap::new(),
            cwd: None,
            url: None,
            kind: None,
            enabled: true,
            title: None,
            disabled_tools: BTreeSet::new(),
            issues: Vec::new(),
        }
    }

    /// The path of the server's field `key`.
    pub fn here(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// The string at `key`; anything else is an issue.
    pub fn string(&mut self, key: &str, value: &Node) -> Option<String> {
        match value {
            Node::String(s) => Some(s.clone()),
            other => {
                let at = self.here(key);
                self.issues.push(issue(&at, format!("expected a string, found {}", other.describe())));
                None
            }
        }
    }

    /// The boolean at `key`; anything else is an issue.
    pub fn boolean(&mut self, key: &str, value: &Node) -> Option<bool> {
        match value {
            Node::Bool(b) => Some(*b),
            other => {
                let at = self.here(key);
                self.issues.push(issue(&at, format!("expected true or false, found {}", other.describe())));
                None
            }
        }
    }
}

#[cfg(test)]
mod url_tests {
    #[test]
    fn a_bad_url_is_named_without_its_credentials_or_query() {
        let mut issues = Vec::new();
        super::check_url("wss://user:sk-secret@h.example/x?token=sk-2", "url", &mut issues);
        super::check_url("https://u:sk-secret@h.example:99999/", "url", &mut issues);
        let text: Vec<String> = issues.iter().map(ToString::to_string).collect();
        assert_eq!(text[0], "url: \"wss://…@h.example/x\" is not an http(s) URL (scheme \"wss\")");
        assert!(text[1].starts_with("url: \"https://…@h.example:99999/\" is not a valid URL"), "{text:?}");
        assert!(!text.iter().any(|t| t.contains("sk-")), "{text:?}");
    }
}
