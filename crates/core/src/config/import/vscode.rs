//! VS Code's `{"servers": {...}, "inputs": [...]}` (also nested under `"mcp"`):
//! the servers are read like any other map; the inputs describe the
//! `${input:…}` prompts.

use super::entry::issue;
use super::server::read_map;
use super::{Document, ImportOptions};
use crate::config::jsonc::Node;

/// Where a VS Code document keeps its servers: the node, its path, and the inputs beside it.
pub(super) type Located<'a> = (&'a Node, &'static str, Option<&'a Node>);

/// The servers of a VS Code document, at the top or nested under `"mcp"`.
pub(super) fn locate(root: &Node) -> Option<Located<'_>> {
    let nested = root.get("mcp").filter(|m| m.get("servers").is_some());
    root.get("servers")
        .map(|s| (s, "servers", root.get("inputs")))
        .or_else(|| nested.and_then(|m| Some((m.get("servers")?, "mcp.servers", m.get("inputs")))))
}

/// Reads the inputs, then the servers.
pub(super) fn read((servers, prefix, inputs): Located<'_>, options: &ImportOptions, doc: &mut Document) {
    if let Some(inputs) = inputs {
        let path = if prefix == "servers" { "inputs" } else { "mcp.inputs" };
        read_inputs(inputs, path, doc);
    }
    read_map(servers, prefix, options, doc);
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
