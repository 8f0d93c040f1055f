//! The fields of Claude Desktop's `{"mcpServers": {...}}`, which Cursor,
//! Windsurf, Cline, Gemini CLI, VS Code, Codex and a bare map share:
//! `command`, `args`, `env`, `headers`, `cwd`, a URL (`url`, Cursor's
//! `serverUrl`, Gemini CLI's `httpUrl`), `type`/`transport` and `disabled`.

use std::path::PathBuf;

use super::entry::{Fields, issue, string_map};
use super::values::{INPUT_PREFIX, KEYRING_PREFIX};
use crate::config::jsonc::Node;

/// Reads `key` into `f` when it is one of these fields.
pub(super) fn field(key: &str, value: &Node, f: &mut Fields) -> bool {
    match key {
        // A command array is opencode's, an object Zed's.
        "command" if !matches!(value, Node::Array(_) | Node::Object(_)) => f.command = f.string(key, value),
        "args" => args(key, value, f),
        "env" | "headers" => {
            let at = f.here(key);
            let target = if key == "headers" { &mut f.headers } else { &mut f.env };
            string_map(value, &at, target, &mut f.issues);
        }
        "cwd" => f.cwd = f.string(key, value).map(PathBuf::from),
        "url" | "serverUrl" | "httpUrl" => {
            if key == "httpUrl" && f.kind.is_none() {
                // Gemini CLI: `httpUrl` is streamable HTTP (its `url` is SSE).
                f.kind = Some(("http".to_owned(), key.to_owned()));
            }
            if let Some(u) = f.string(key, value) {
                match &f.url {
                    Some((prev, prev_key)) if *prev != u => {
                        let (at, reason) = (f.here(key), format!("differs from {}; give one URL", f.here(prev_key)));
                        f.issues.push(issue(&at, reason))
                    }
                    _ => f.url = Some((u, key.to_owned())),
                }
            }
        }
        "type" | "transport" => {
            if let Some(t) = f.string(key, value) {
                match &f.kind {
                    Some((prev, prev_key)) if !prev.eq_ignore_ascii_case(&t) => {
                        let (at, reason) = (f.here(key), format!("{t:?} contradicts {} ({prev:?})", f.here(prev_key)));
                        f.issues.push(issue(&at, reason))
                    }
                    _ => f.kind = Some((t, key.to_owned())),
                }
            }
        }
        "disabled" => {
            if let Some(disabled) = f.boolean(key, value) {
                f.enabled = !disabled;
            }
        }
        _ => return false,
    }
    true
}

/// The arguments: strings, with no secret placeholder in them.
fn args(key: &str, value: &Node, f: &mut Fields) {
    let Node::Array(items) = value else {
        let at = f.here(key);
        f.issues.push(issue(&at, format!("expected an array of strings, found {}", value.describe())));
        return;
    };
    for (i, item) in items.iter().enumerate() {
        let at = format!("{}[{i}]", f.here(key));
        match item {
            Node::String(s) if s.contains(INPUT_PREFIX) || s.contains(KEYRING_PREFIX) => {
                f.issues.push(issue(&at, "placeholders for secrets are supported in env and headers, not in args"))
            }
            Node::String(s) => f.args.push(s.clone()),
            other => f.issues.push(issue(&at, format!("expected a string, found {}", other.describe()))),
        }
    }
}
