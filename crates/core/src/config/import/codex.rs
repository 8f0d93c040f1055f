//! Codex's `config.toml`: its `[mcp_servers.NAME]` tables read as the JSON
//! reader's tree, so the servers in it are read like any other map.

use crate::config::jsonc::{self, Node};

/// Whether `text` (which is not JSON) is a Codex `config.toml` with servers.
pub(super) fn is_config(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("[mcp_servers.") || l.starts_with("[mcp_servers]") || l.starts_with("mcp_servers")
    })
}

/// A Codex `config.toml` as the JSON reader's tree: its `mcp_servers` (other
/// settings dropped), `http_headers` read as `headers`.
pub(super) fn tree(text: &str) -> Result<Node, String> {
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
