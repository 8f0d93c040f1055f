//! The fields of opencode's `{"mcp": {...}}`: a `command` array (the program
//! and its arguments), `environment` for `env`, `enabled`, and a `type` of
//! `local` or `remote`.

use super::entry::{Fields, issue, string_map, strings};
use crate::config::jsonc::Node;

/// Reads `key` into `f` when it is one of these fields.
pub(super) fn field(key: &str, value: &Node, f: &mut Fields) -> bool {
    match (key, value) {
        ("command", Node::Array(items)) => {
            let at = f.here(key);
            let mut words = strings(items, &at, &mut f.issues);
            if words.is_empty() {
                f.issues.push(issue(&at, "the command is empty"));
            } else {
                f.command = Some(words.remove(0));
                f.command_args = words;
            }
        }
        ("environment", _) => {
            let at = f.here(key);
            string_map(value, &at, &mut f.env, &mut f.issues);
        }
        ("enabled", _) => {
            if let Some(enabled) = f.boolean(key, value) {
                f.enabled = enabled;
            }
        }
        _ => return false,
    }
    true
}

/// The transport a `type` (in lower case) asks for: opencode's `local` is
/// `stdio`, its `remote` leaves the choice to the URL (`None`).
pub(super) fn transport_kind(kind: String) -> Option<String> {
    match kind.as_str() {
        "local" => Some("stdio".to_owned()),
        "remote" => None,
        _ => Some(kind),
    }
}
