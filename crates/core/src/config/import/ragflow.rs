//! RAGFlow's fields in the `mcpServers` shape: `authorization_token`, sent as
//! a bearer `Authorization` header, and `name`, the server's own (a single
//! pasted server is named by it too). Its `tool_configuration`, like any field
//! no reader knows, is kept as it is.

use super::entry::Fields;
use super::names::normalize_name;
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
        // Another name is kept as it is.
        "name" => matches!(value, Node::String(n) if normalize_name(n) == f.name),
        _ => false,
    }
}
