//! MCP Apps: the `io.modelcontextprotocol/ui` extension (2026-01-26).
//!
//! A tool may name a view, a `ui://` resource of type [`MIME_TYPE`] holding an
//! HTML page, in its `_meta.ui.resourceUri`. The window shows that page with the
//! tool's call, in a sandboxed frame of its own origin, and speaks JSON-RPC with
//! it over `postMessage` (the page can call its server's tools, read its
//! resources, open links and send a message to the chat). This module reads the
//! tool's metadata ([`tool_view`]), checks the page a server returns
//! ([`AppPage::from_read`]) and turns the origins the page declares into the
//! Content-Security-Policy it is served with ([`AppCsp::header`]): without
//! declared origins, the page reaches nothing outside itself.
//!
//! A tool whose `visibility` leaves out `"model"` is for its view only: the
//! model never sees it ([`ToolView::for_model`]); a tool that leaves out
//! `"app"` cannot be called from a view ([`ToolView::for_app`]).

use rmcp::model::{JsonObject, ReadResourceResult, Resource, ResourceContents, Tool};
use serde::Serialize;

use crate::mcp::error::McpError;

/// The extension's identifier in client capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The type of a view's resource.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The largest page Patchbay shows (a view is one self-contained HTML file).
pub const MAX_PAGE_BYTES: usize = 8 * 1024 * 1024;

/// The view a tool names, and who may call the tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ToolView {
    /// The `ui://` resource of the view; `None` for a tool with no view of its own
    /// (its visibility may still be set).
    pub resource_uri: Option<String>,
    /// The model sees the tool.
    pub for_model: bool,
    /// Views of the same server may call it.
    pub for_app: bool,
}

impl Default for ToolView {
    fn default() -> Self {
        Self { resource_uri: None, for_model: true, for_app: true }
    }
}

/// What a tool's `_meta` says about views: `ui.resourceUri` (or the older
/// `ui/resourceUri` key) and `ui.visibility` (both `model` and `app` when unset).
/// A URI that is not `ui://` is ignored.
pub fn tool_view(tool: &Tool) -> ToolView {
    let Some(meta) = tool.meta.as_deref() else { return ToolView::default() };
    let ui = meta.get("ui").and_then(|v| v.as_object());
    let resource_uri = ui
        .and_then(|ui| ui.get("resourceUri"))
        .or_else(|| meta.get("ui/resourceUri"))
        .and_then(|v| v.as_str())
        .filter(|uri| uri.starts_with("ui://"))
        .map(str::to_owned);
    let visibility = ui.and_then(|ui| ui.get("visibility")).and_then(|v| v.as_array());
    let shown_to = |who: &str| visibility.is_none_or(|list| list.iter().any(|v| v.as_str() == Some(who)));
    ToolView { resource_uri, for_model: shown_to("model"), for_app: shown_to("app") }
}

/// The origins a view may reach (`_meta.ui.csp`), each checked to be a bare
/// origin (scheme `https`, `http`, `wss` or `ws`, a host that may start with
/// `*.`, an optional port). Anything else is dropped, so that a server cannot
/// write its own directives into the policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct AppCsp {
    /// `fetch`, XHR and WebSocket (`connect-src`).
    pub connect: Vec<String>,
    /// Scripts, styles, pictures, fonts and media.
    pub resources: Vec<String>,
    /// Frames inside the view.
    pub frames: Vec<String>,
    /// `<base href>`.
    pub base_uris: Vec<String>,
}

impl AppCsp {
    fn from_meta(csp: &JsonObject) -> Self {
        let list = |key: &str| -> Vec<String> {
            let values = csp.get(key).and_then(|v| v.as_array());
            values
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
                .filter(|s| is_origin(s))
                .map(str::to_owned)
                .collect()
        };
        Self {
            connect: list("connectDomains"),
            resources: list("resourceDomains"),
            frames: list("frameDomains"),
            base_uris: list("baseUriDomains"),
        }
    }

    /// The policy the page is served with: inline scripts and styles run, the
    /// page reaches only the origins it declared, no form leaves it, and it is
    /// sandboxed (scripts only, an origin of its own) wherever it is opened.
    pub fn header(&self) -> String {
        let with = |fixed: &str, extra: &[String]| {
            let mut out = fixed.to_owned();
            for origin in extra {
                out.push(' ');
                out.push_str(origin);
            }
            out
        };
        let or_none = |extra: &[String]| if extra.is_empty() { "'none'".to_owned() } else { extra.join(" ") };
        [
            "default-src 'none'".to_owned(),
            with("script-src 'unsafe-inline'", &self.resources),
            with("style-src 'unsafe-inline'", &self.resources),
            with("img-src data: blob:", &self.resources),
            with("font-src data:", &self.resources),
            with("media-src data: blob:", &self.resources),
            format!("connect-src {}", or_none(&self.connect)),
            format!("frame-src {}", or_none(&self.frames)),
            format!("base-uri {}", or_none(&self.base_uris)),
            "form-action 'none'".to_owned(),
            "object-src 'none'".to_owned(),
            // The frame's sandbox, again in the page's own policy: opened anywhere
            // else (a window, another frame), it still runs in an opaque origin
            // with scripts only.
            "sandbox allow-scripts".to_owned(),
        ]
        .join("; ")
    }
}

/// `https://api.example.com`, `wss://*.example.com:8443`, `http://localhost:3000`.
///
/// A wildcard must keep at least a registrable name under it (`*.example.com`,
/// not `*.com`), and no host under `localhost` passes (`*.localhost`,
/// `ipc.localhost`): on Windows the window's IPC and its own pages are served
/// from such hosts.
fn is_origin(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else { return false };
    if !matches!(scheme, "https" | "http" | "wss" | "ws") {
        return false;
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    let (wildcard, host) = match host.strip_prefix("*.") {
        Some(under) => (true, under),
        None => (false, host),
    };
    let labels: Vec<&str> = host.split('.').collect();
    let label_ok =
        |l: &&str| !l.is_empty() && !l.starts_with('-') && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    let last = labels.last().map(|l| l.to_ascii_lowercase());
    let host_ok = labels.iter().all(label_ok)
        && !(labels.len() > 1 && last.as_deref() == Some("localhost"))
        && !(wildcard && (labels.len() < 2 || last.as_deref() == Some("localhost")));
    let port_ok =
        port.is_none_or(|p| p == "*" || (!p.is_empty() && p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit())));
    host_ok && port_ok
}

/// A view's page, checked, with what it declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct AppPage {
    pub uri: String,
    #[serde(skip)]
    pub html: String,
    pub csp: AppCsp,
    /// The view asked to be drawn with (`true`) or without (`false`) a border.
    pub prefers_border: Option<bool>,
    /// It asked to write to the clipboard (`permissions.clipboardWrite`): the
    /// only permission Patchbay grants a view.
    pub clipboard_write: bool,
    /// The other permissions it asked for (`camera`, `microphone`,
    /// `geolocation`, …), by name: never granted, and said so on its card.
    pub withheld: Vec<String>,
}

impl AppPage {
    /// The page in a `resources/read` answer for `uri`: the first content of
    /// type [`MIME_TYPE`], as text or base64 UTF-8, at most [`MAX_PAGE_BYTES`].
    /// Its `_meta.ui` comes from the content, else from the resource's entry in
    /// the server's list (`listed`).
    pub fn from_read(
        server: &str,
        uri: &str,
        result: &ReadResourceResult,
        listed: Option<&Resource>,
    ) -> Result<Self, McpError> {
        let refuse = |reason: String| McpError::AppView { server: server.to_owned(), uri: uri.to_owned(), reason };
        let contents: Vec<Contents<'_>> = result.contents.iter().filter_map(Contents::of).collect();
        let is_page = |c: &&Contents<'_>| c.mime_type.is_some_and(|m| same_type(m, MIME_TYPE));
        let Some(content) = contents.iter().find(is_page) else {
            let types: Vec<&str> = contents.iter().map(|c| c.mime_type.unwrap_or("no type")).collect();
            return Err(refuse(if types.is_empty() {
                "the server returned no content".to_owned()
            } else {
                format!("it is not of type {MIME_TYPE} (the server sent: {})", types.join(", "))
            }));
        };
        let too_large = |bytes: usize| refuse(format!("the page is {bytes} bytes, over the limit of {MAX_PAGE_BYTES}"));
        let html = match content.body {
            Body::Text(text) if text.len() > MAX_PAGE_BYTES => return Err(too_large(text.len())),
            Body::Text(text) => text.to_owned(),
            Body::Blob(blob) if blob.len() / 4 * 3 > MAX_PAGE_BYTES => return Err(too_large(blob.len() / 4 * 3)),
            Body::Blob(blob) => {
                use base64::Engine as _;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(blob.trim())
                    .map_err(|e| refuse(format!("its blob is not base64: {e}")))?;
                String::from_utf8(bytes).map_err(|_| refuse("the page is not UTF-8 text".to_owned()))?
            }
        };
        let meta = content.meta;
        let ui_of = |meta: Option<&JsonObject>| meta?.get("ui")?.as_object().cloned();
        let ui = ui_of(meta).or_else(|| ui_of(listed?.meta.as_deref())).unwrap_or_default();
        let csp = ui.get("csp").and_then(|v| v.as_object()).map(AppCsp::from_meta).unwrap_or_default();
        let permissions = ui.get("permissions").and_then(|v| v.as_object());
        let clipboard_write = permissions.is_some_and(|p| p.contains_key("clipboardWrite"));
        let withheld =
            permissions.into_iter().flat_map(|p| p.keys()).filter(|k| *k != "clipboardWrite").cloned().collect();
        let prefers_border = ui.get("prefersBorder").and_then(|v| v.as_bool());
        Ok(Self { uri: uri.to_owned(), html, csp, prefers_border, clipboard_write, withheld })
    }
}

/// One content of a `resources/read` answer, whichever kind it is.
struct Contents<'a> {
    mime_type: Option<&'a str>,
    body: Body<'a>,
    meta: Option<&'a JsonObject>,
}

enum Body<'a> {
    Text(&'a str),
    Blob(&'a str),
}

impl<'a> Contents<'a> {
    /// `None` for a kind of content this rmcp does not know yet.
    fn of(content: &'a ResourceContents) -> Option<Self> {
        match content {
            ResourceContents::TextResourceContents { mime_type, text, meta, .. } => {
                Some(Self { mime_type: mime_type.as_deref(), body: Body::Text(text), meta: meta.as_deref() })
            }
            ResourceContents::BlobResourceContents { mime_type, blob, meta, .. } => {
                Some(Self { mime_type: mime_type.as_deref(), body: Body::Blob(blob), meta: meta.as_deref() })
            }
            _ => None,
        }
    }
}

/// `text/html;profile=mcp-app` and `text/html; profile="mcp-app"` are one type.
fn same_type(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.to_ascii_lowercase().replace([' ', '"'], "");
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(meta: serde_json::Value) -> Tool {
        serde_json::from_value(json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": meta})).unwrap()
    }

    #[test]
    fn a_tool_names_its_view_and_who_may_call_it() {
        let plain: Tool = serde_json::from_value(json!({"name": "t", "inputSchema": {"type": "object"}})).unwrap();
        assert_eq!(tool_view(&plain), ToolView::default());
        let view = tool_view(&tool(json!({"ui": {"resourceUri": "ui://weather/view.html"}})));
        assert_eq!(view.resource_uri.as_deref(), Some("ui://weather/view.html"));
        assert!(view.for_model && view.for_app);
        let old = tool_view(&tool(json!({"ui/resourceUri": "ui://old/view"})));
        assert_eq!(old.resource_uri.as_deref(), Some("ui://old/view"));
        let app_only = tool_view(&tool(json!({"ui": {"visibility": ["app"]}})));
        assert_eq!(app_only, ToolView { resource_uri: None, for_model: false, for_app: true });
        let model_only = tool_view(&tool(json!({"ui": {"resourceUri": "ui://v", "visibility": ["model"]}})));
        assert!(model_only.for_model && !model_only.for_app);
        let not_ui = tool_view(&tool(json!({"ui": {"resourceUri": "https://example.com/view.html"}})));
        assert_eq!(not_ui.resource_uri, None, "only ui:// resources are views");
    }

    fn read(contents: serde_json::Value) -> ReadResourceResult {
        serde_json::from_value(json!({ "contents": contents })).unwrap()
    }

    #[test]
    fn a_page_is_read_from_text_or_blob_with_its_declared_origins() {
        let result = read(json!([{
            "uri": "ui://v", "mimeType": "text/html; profile=\"mcp-app\"", "text": "<p>hi</p>",
            "_meta": {"ui": {
                "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://*.cdn.example:8443"]},
                "permissions": {"clipboardWrite": {}, "camera": {}, "geolocation": {}},
                "prefersBorder": false
            }}
        }]));
        let page = AppPage::from_read("s", "ui://v", &result, None).unwrap();
        assert_eq!(page.html, "<p>hi</p>");
        assert_eq!(page.csp.connect, ["https://api.example.com"]);
        assert_eq!(page.prefers_border, Some(false));
        assert!(page.clipboard_write);
        assert_eq!(page.withheld, ["camera", "geolocation"]);
        let header = page.csp.header();
        assert!(header.contains("connect-src https://api.example.com;"), "{header}");
        assert!(header.contains("script-src 'unsafe-inline' https://*.cdn.example:8443;"), "{header}");
        assert!(header.contains("frame-src 'none'") && header.starts_with("default-src 'none'"), "{header}");

        use base64::Engine as _;
        let blob = base64::engine::general_purpose::STANDARD.encode("<b>é</b>");
        let listed: Resource = serde_json::from_value(json!({
            "uri": "ui://v", "name": "v", "_meta": {"ui": {"csp": {"frameDomains": ["https://www.youtube.com"]}}}
        }))
        .unwrap();
        let result = read(json!([{"uri": "ui://v", "mimeType": MIME_TYPE, "blob": blob}]));
        let page = AppPage::from_read("s", "ui://v", &result, Some(&listed)).unwrap();
        assert_eq!(page.html, "<b>é</b>");
        assert_eq!(page.csp.frames, ["https://www.youtube.com"], "the listed entry's _meta when the content has none");
        assert!(page.csp.header().contains("connect-src 'none'"));
    }

    #[test]
    fn origins_that_would_write_their_own_directives_are_dropped() {
        for bad in [
            "https://a.example; script-src *",
            "*",
            "'unsafe-eval'",
            "javascript://x",
            "https://",
            "https://a.example/path",
            "https://a b",
            "data:",
            "https://a.example:99999x",
        ] {
            assert!(!is_origin(bad), "{bad} passed");
        }
        for good in ["https://a.example", "wss://*.a.example:443", "http://localhost:5173", "https://a.example:*"] {
            assert!(is_origin(good), "{good} refused");
        }
    }

    #[test]
    fn wildcards_keep_a_name_under_them_and_nothing_under_localhost_passes() {
        for bad in [
            "*.localhost",
            "http://*.localhost",
            "https://*.LocalHost:8080",
            "http://*.ipc.localhost",
            "http://ipc.localhost",
            "http://tauri.localhost",
            "https://*.com",
            "https://*.example",
            "https://*.",
            "https://a..example.com",
            "https://a.example.com.",
        ] {
            assert!(!is_origin(bad), "{bad} passed");
        }
        for good in ["https://api.example.com", "https://*.example.com", "http://localhost"] {
            assert!(is_origin(good), "{good} refused");
        }
    }

    #[test]
    fn the_page_is_sandboxed_by_its_own_policy() {
        let header = AppCsp::default().header();
        let directives: Vec<&str> = header.split("; ").collect();
        assert!(directives.contains(&"sandbox allow-scripts"), "{header}");
        assert!(!header.contains("allow-same-origin"), "{header}");
    }

    #[test]
    fn what_is_not_a_page_says_what_the_server_sent() {
        let err = |contents| AppPage::from_read("weather", "ui://v", &read(contents), None).unwrap_err().to_string();
        let plain = err(json!([{"uri": "ui://v", "mimeType": "text/html", "text": "<p>"}]));
        assert!(plain.contains("weather") && plain.contains("ui://v") && plain.contains("text/html)"), "{plain}");
        assert!(err(json!([])).contains("no content"));
        let huge = "x".repeat(MAX_PAGE_BYTES + 1);
        let big = err(json!([{"uri": "ui://v", "mimeType": MIME_TYPE, "text": huge}]));
        assert!(big.contains("over the limit"), "{big}");
        let bad = err(json!([{"uri": "ui://v", "mimeType": MIME_TYPE, "blob": "%%%"}]));
        assert!(bad.contains("not base64"), "{bad}");
    }
}
