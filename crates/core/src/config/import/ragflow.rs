//! RAGFlow's fields in the `mcpServers` shape: `authorization_token`, sent as
//! a bearer `Authorization` header; `name`, the name shown for the server (a
//! single pasted server is stored under it too); and `tool_configuration`
//! (`tools` in RAGFlow's newer export), one object per tool whose
//! `"enabled": false` switches the tool off. The tool objects are kept as they
//! are, for an export back to RAGFlow.

use super::entry::Fields;
use super::values::keyring_reference;
use crate::config::jsonc::Node;

/// Reads `key` into `f` when it is one of these fields.
pub(super) fn field(key: &str, value: &Node, f: &mut Fields) -> bool {
    match key {
        "authorization_token" => {
            if let Some(token) = f.string(key, value).filter(|t| !t.is_empty()) {
                let value = if keyring_reference(&token).is_some() || token.starts_with("Bearer ") {
                    token
                } else {
                    format!("Bearer {token}")
                };
                let at = f.here(key);
                f.headers.insert("Authorization".to_owned(), (value, at));
            }
            true
        }
        "name" => match value {
            Node::String(n) => {
                if n.trim() != f.name && !n.trim().is_empty() {
                    f.title = Some(n.trim().to_owned());
                }
                true
            }
            _ => false,
        },
        // Read, then kept as they are (`false`): the tools' objects go back to RAGFlow on export.
        "tool_configuration" | "tools" => {
            if let Node::Object(tools) = value {
                for (tool, config) in tools {
                    if matches!(config.get("enabled"), Some(Node::Bool(false))) {
                        f.disabled_tools.insert(tool.clone());
                    }
                }
            }
            false
        }
        _ => false,
    }
}
