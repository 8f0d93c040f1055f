//! The field of Zed's `{"context_servers": {...}}` the others lack: its older
//! `"command": {"path", "args", "env"}`.

use super::entry::{Fields, issue, join, string_map, strings};
use crate::config::jsonc::Node;

/// Reads `key` into `f` when it is a command object.
pub(super) fn field(key: &str, value: &Node, f: &mut Fields) -> bool {
    if key != "command" || !matches!(value, Node::Object(_)) {
        return false;
    }
    let at = f.here(key);
    match value.get("path") {
        Some(path) => f.command = f.string(&format!("{key}.path"), path),
        None => f.issues.push(issue(&at, "needs \"path\", the program to run")),
    }
    match value.get("args") {
        Some(Node::Array(items)) => f.command_args = strings(items, &join(&at, "args"), &mut f.issues),
        Some(other) => f
            .issues
            .push(issue(&join(&at, "args"), format!("expected an array of strings, found {}", other.describe()))),
        None => {}
    }
    if let Some(vars) = value.get("env") {
        string_map(vars, &join(&at, "env"), &mut f.env, &mut f.issues);
    }
    true
}
