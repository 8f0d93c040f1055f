//! The window's navigation guard.
//!
//! The window shows Patchbay's own pages and its frames show tools' views
//! (`mcp_apps.rs`); nothing else is ever loaded in it. A link is handed to the
//! browser by `open_link` before it could navigate, so whatever still tries (a
//! link that slipped past `ui/src/lib/links.ts`, a script setting `location`, a
//! view sending its frame to a site its policy does not name) is refused here
//! and logged, by its origin only: a view could put anything in the rest.

use tauri::plugin::{Builder, TauriPlugin};
use tauri::{Runtime, Url};

use crate::mcp_apps;

/// A plugin whose only part is the guard: every webview's navigations go through it.
pub fn guard<R: Runtime>() -> TauriPlugin<R> {
    Builder::new("navigation-guard")
        .on_navigation(|webview, url| {
            let allowed = allowed(url);
            if !allowed {
                let origin = url.origin().ascii_serialization();
                let shown = if origin == "null" { format!("{}:", url.scheme()) } else { origin };
                tracing::warn!(
                    webview = webview.label(),
                    "refused a navigation to {shown}: the window shows only Patchbay's pages"
                );
            }
            allowed
        })
        .build()
}

/// Patchbay's own pages (`tauri://localhost`, `http(s)://tauri.localhost` on
/// Windows), tools' views, and the empty documents frames start with.
fn allowed(url: &Url) -> bool {
    let host = url.host_str();
    match url.scheme() {
        "tauri" => host == Some("localhost"),
        scheme if scheme == mcp_apps::SCHEME => host == Some("localhost"),
        "about" => matches!(url.path(), "blank" | "srcdoc"),
        "http" | "https" if cfg!(windows) => {
            url.port().is_none() && matches!(host, Some("tauri.localhost") | Some("mcp-app.localhost"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(url: &str) -> bool {
        allowed(&Url::parse(url).unwrap())
    }

    #[test]
    fn only_patchbays_pages_and_views_are_loaded() {
        for ok in
            ["tauri://localhost/", "tauri://localhost/index.html#/chat", "mcp-app://localhost/abc123", "about:blank"]
        {
            assert!(allows(ok), "{ok} refused");
        }
        for refused in [
            "https://example.com/",
            "http://localhost:8080/",
            "file:///etc/passwd",
            "tauri://evil.example/",
            "mcp-app://elsewhere/abc",
            "javascript:alert(1)",
            "data:text/html,<p>hi</p>",
            "about:config",
            "smb://server/share",
        ] {
            assert!(!allows(refused), "{refused} allowed");
        }
        assert_eq!(allows("http://tauri.localhost/"), cfg!(windows));
    }
}
