//! Tools' views (MCP Apps): the pages the window shows in sandboxed frames.
//!
//! `open_app_view` reads a view's page through the core and keeps it here
//! under a random token; the frame loads it from the `mcp-app` scheme, which
//! serves it with the Content-Security-Policy its server declared (nothing
//! outside the page when it declared nothing). The scheme is not the window's
//! origin, and the frame is sandboxed without `allow-same-origin`, so a view
//! cannot reach the window, its IPC or another view: it speaks only through
//! `postMessage`, which the window's bridge (`ui/src/lib/mcpApps.ts`) answers.

use std::collections::VecDeque;
use std::sync::Mutex;

use patchbay_core::mcp::protocol::apps::AppPage;
use serde::Serialize;
use tauri::http::{Request, Response, StatusCode, header};

/// The scheme views are served from.
pub const SCHEME: &str = "mcp-app";
/// Pages kept at once (one per server and view); the oldest goes first.
const KEPT: usize = 16;

/// A page kept for its frame.
struct Kept {
    server: String,
    uri: String,
    token: String,
    html: String,
    csp: String,
}

/// The pages views load, by token.
#[derive(Default)]
pub struct ViewPages(Mutex<VecDeque<Kept>>);

/// What the window needs to show a view.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct AppViewInfo {
    /// Where the frame loads the page.
    pub url: String,
    #[serde(flatten)]
    pub page: AppPage,
}

impl ViewPages {
    /// Keeps `page` (replacing what its server's view held before) and says
    /// where its frame loads it.
    pub fn keep(&self, server: &str, page: AppPage) -> AppViewInfo {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let token = match kept.iter().position(|k| k.server == server && k.uri == page.uri) {
            Some(i) => kept.remove(i).map(|k| k.token).unwrap_or_default(),
            None => uuid::Uuid::new_v4().simple().to_string(),
        };
        if kept.len() >= KEPT {
            kept.pop_front();
        }
        kept.push_back(Kept {
            server: server.to_owned(),
            uri: page.uri.clone(),
            token: token.clone(),
            html: page.html.clone(),
            csp: page.csp.header(),
        });
        AppViewInfo { url: url(&token), page }
    }

    /// The page and policy under `token`.
    fn page(&self, token: &str) -> Option<(String, String)> {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().find(|k| k.token == token).map(|k| (k.html.clone(), k.csp.clone()))
    }

    /// Answers a frame's request: the page with its policy, or 404.
    pub fn serve(&self, request: &Request<Vec<u8>>) -> Response<Vec<u8>> {
        let token = request.uri().path().trim_start_matches('/');
        let builder = Response::builder().header(header::CACHE_CONTROL, "no-store");
        let response = match self.page(token) {
            Some((html, csp)) => builder
                .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
                .header(header::CONTENT_SECURITY_POLICY, csp)
                .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
                .body(html.into_bytes()),
            None => builder
                .status(StatusCode::NOT_FOUND)
                .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
                .body(b"This view is no longer open; show the conversation again.".to_vec()),
        };
        response.unwrap_or_else(|_| Response::new(Vec::new()))
    }
}

/// The URL of a page: `mcp-app://localhost/TOKEN`, or the `http://mcp-app.localhost`
/// form WebView2 needs on Windows.
fn url(token: &str) -> String {
    if cfg!(windows) { format!("http://{SCHEME}.localhost/{token}") } else { format!("{SCHEME}://localhost/{token}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use patchbay_core::mcp::protocol::apps::AppCsp;

    fn page(uri: &str, html: &str) -> AppPage {
        AppPage {
            uri: uri.into(),
            html: html.into(),
            csp: AppCsp { connect: vec!["https://api.example.com".into()], ..AppCsp::default() },
            prefers_border: None,
            clipboard_write: false,
            withheld: Vec::new(),
        }
    }

    fn get(pages: &ViewPages, url: &str) -> Response<Vec<u8>> {
        pages.serve(&Request::builder().uri(url).body(Vec::new()).unwrap())
    }

    #[test]
    fn a_page_is_served_under_its_token_with_its_policy_and_a_new_read_replaces_it() {
        let pages = ViewPages::default();
        let first = pages.keep("weather", page("ui://w/view", "<p>one</p>"));
        assert!(first.url.starts_with("mcp-app://localhost/") || first.url.starts_with("http://mcp-app.localhost/"));
        let response = get(&pages, &first.url);
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.body(), b"<p>one</p>");
        let csp = response.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("connect-src https://api.example.com"), "{csp}");

        let again = pages.keep("weather", page("ui://w/view", "<p>two</p>"));
        assert_eq!(again.url, first.url, "one token per server and view");
        assert_eq!(get(&pages, &first.url).body(), b"<p>two</p>");
        let other = pages.keep("maps", page("ui://w/view", "<p>maps</p>"));
        assert_ne!(other.url, first.url);
        assert_eq!(get(&pages, "mcp-app://localhost/nothing-here").status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn only_the_newest_pages_are_kept() {
        let pages = ViewPages::default();
        let urls: Vec<String> = (0..KEPT + 1).map(|i| pages.keep("s", page(&format!("ui://v/{i}"), "x")).url).collect();
        assert_eq!(get(&pages, &urls[0]).status(), StatusCode::NOT_FOUND, "the oldest went");
        assert_eq!(get(&pages, &urls[KEPT]).status(), StatusCode::OK);
        assert_eq!(pages.0.lock().unwrap().len(), KEPT);
    }
}
