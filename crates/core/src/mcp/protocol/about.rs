//! [`ServerAbout`]: who a running server says it is and what it offers, from
//! its `initialize` answer, with how Patchbay reaches it.
//!
//! The server's words are untrusted: its website is kept only when the browser
//! may open it ([`crate::net::browsable`]), and every text is cut to a length a
//! settings page can show.

use rmcp::model::{ServerCapabilities, ServerPeerInfo};
use serde::Serialize;

use crate::mcp::wire::TransportKind;

/// The most characters kept of a server's name, title, version or description.
const MAX_TEXT: usize = 500;

/// Who a ready server is, as the settings page and `patchbay mcp info` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ServerAbout {
    /// Its `serverInfo` name (`mcp-servers/everything`); `None` when it gave none.
    pub name: Option<String>,
    /// Its display name (`serverInfo.title`).
    pub title: Option<String>,
    pub version: Option<String>,
    pub description: Option<String>,
    /// Its `websiteUrl`, when that is an `http(s)` URL.
    pub website: Option<String>,
    /// The protocol version the handshake agreed on (`2025-06-18`).
    pub protocol_version: String,
    /// The transport in use: for a configuration that gives only a URL, the one detection chose.
    pub transport: TransportKind,
    /// The stdio server's process id.
    pub pid: Option<u32>,
    /// Where its command was found, for a stdio server.
    pub command: Option<String>,
    /// What it declared it can do (see [`capabilities`]).
    pub capabilities: Vec<String>,
}

impl ServerAbout {
    /// The view of a server's `initialize` answer, reached over `transport`.
    pub fn new(info: &ServerPeerInfo, transport: TransportKind, pid: Option<u32>, command: Option<String>) -> Self {
        let implementation = info.server_info.as_ref();
        let text = |s: Option<&String>| s.map(|s| cut(s.trim())).filter(|s| !s.is_empty());
        Self {
            name: text(implementation.map(|i| &i.name)),
            title: text(implementation.and_then(|i| i.title.as_ref())),
            version: text(implementation.map(|i| &i.version)),
            description: text(implementation.and_then(|i| i.description.as_ref())),
            website: implementation
                .and_then(|i| i.website_url.as_deref())
                .and_then(|url| crate::net::browsable(url).ok())
                .filter(|url| url.scheme() != "mailto")
                .map(String::from),
            protocol_version: cut(info.protocol_version.as_str()),
            transport,
            pid,
            command,
            capabilities: capabilities(&info.capabilities),
        }
    }
}

fn cut(text: &str) -> String {
    crate::text::cut(text, MAX_TEXT)
}

/// What `caps` declares, by name: `tools`, `tools.list_changed`, `prompts`,
/// `prompts.list_changed`, `resources`, `resources.subscribe`,
/// `resources.list_changed`, `logging`, `completions`, then the extensions it
/// names (`io.modelcontextprotocol/apps`), in order.
pub fn capabilities(caps: &ServerCapabilities) -> Vec<String> {
    let mut names: Vec<&str> = Vec::new();
    if let Some(tools) = &caps.tools {
        names.push("tools");
        if tools.list_changed == Some(true) {
            names.push("tools.list_changed");
        }
    }
    if let Some(prompts) = &caps.prompts {
        names.push("prompts");
        if prompts.list_changed == Some(true) {
            names.push("prompts.list_changed");
        }
    }
    if let Some(resources) = &caps.resources {
        names.push("resources");
        if resources.subscribe == Some(true) {
            names.push("resources.subscribe");
        }
        if resources.list_changed == Some(true) {
            names.push("resources.list_changed");
        }
    }
    if caps.logging.is_some() {
        names.push("logging");
    }
    if caps.completions.is_some() {
        names.push("completions");
    }
    let mut out: Vec<String> = names.into_iter().map(str::to_owned).collect();
    out.extend(caps.extensions.iter().flat_map(|e| e.keys().map(|k| cut(k))));
    out
}

#[cfg(test)]
mod tests {
    use rmcp::model::{Implementation, ProtocolVersion};

    use super::*;

    fn info(implementation: serde_json::Value, capabilities: serde_json::Value) -> ServerPeerInfo {
        let server_info: Implementation = serde_json::from_value(implementation).unwrap();
        let capabilities: ServerCapabilities = serde_json::from_value(capabilities).unwrap();
        ServerPeerInfo::new(ProtocolVersion::V_2025_06_18, capabilities).with_server_info(server_info)
    }

    #[test]
    fn a_servers_identity_and_capabilities_are_listed() {
        let info = info(
            serde_json::json!({
                "name": "notes", "title": " Notes ", "version": "1.2.0",
                "description": "Keeps notes.", "websiteUrl": "https://notes.example.com/"
            }),
            serde_json::json!({
                "tools": {"listChanged": true}, "prompts": {}, "resources": {"subscribe": true},
                "logging": {}, "completions": {}, "extensions": {"io.modelcontextprotocol/apps": {}}
            }),
        );
        let about = ServerAbout::new(&info, TransportKind::Stdio, Some(42), Some("/usr/bin/notes".into()));
        assert_eq!(about.name.as_deref(), Some("notes"));
        assert_eq!(about.title.as_deref(), Some("Notes"));
        assert_eq!(about.version.as_deref(), Some("1.2.0"));
        assert_eq!(about.description.as_deref(), Some("Keeps notes."));
        assert_eq!(about.website.as_deref(), Some("https://notes.example.com/"));
        assert_eq!(about.protocol_version, "2025-06-18");
        assert_eq!(
            about.capabilities,
            [
                "tools",
                "tools.list_changed",
                "prompts",
                "resources",
                "resources.subscribe",
                "logging",
                "completions",
                "io.modelcontextprotocol/apps"
            ]
        );
        assert_eq!(serde_json::to_value(&about).unwrap()["transport"], "stdio");
    }

    #[test]
    fn a_website_the_browser_may_not_open_and_endless_words_are_not_shown_whole() {
        let long = "x".repeat(2 * MAX_TEXT);
        for url in ["file:///etc/passwd", "javascript:alert(1)", "mailto:a@example.com", "not a url"] {
            let info = info(serde_json::json!({"name": "n", "version": "", "websiteUrl": url}), serde_json::json!({}));
            let about = ServerAbout::new(&info, TransportKind::Sse, None, None);
            assert_eq!(about.website, None, "{url} was kept");
            assert_eq!(about.version, None, "an empty version is none");
            assert!(about.capabilities.is_empty());
        }
        let info = info(serde_json::json!({"name": "n", "version": "1", "description": long}), serde_json::json!({}));
        let description = ServerAbout::new(&info, TransportKind::StreamableHttp, None, None).description.unwrap();
        assert_eq!(description.chars().count(), MAX_TEXT + 1);
        assert!(description.ends_with('…'));
    }
}
