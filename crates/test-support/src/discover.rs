//! An MCP Registry served on 127.0.0.1 (`GET /v0.1/servers`), listing the
//! servers it is given: those whose name contains `search`, with a next
//! cursor on the first page. The search "down" answers 503, "garbage" an
//! HTML page, "flood" 20 MB. It can also serve files (`GET /files/NAME`), such as the
//! `.mcpb` bundles an `mcpb` package points to.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

/// Serves `servers` (each a registry listing: `{"server": {...}, "_meta": …}`)
/// until the runtime ends; returns the registry's base URL.
pub async fn serve(servers: Vec<Value>) -> String {
    serve_with_files(servers, Vec::new()).await
}

/// [`serve`], also serving each `(name, bytes)` at `/files/NAME`; `{registry}`
/// in the listings' text becomes the registry's base URL.
pub async fn serve_with_files(servers: Vec<Value>, files: Vec<(String, Vec<u8>)>) -> String {
    async fn list(State(servers): State<Arc<Vec<Value>>>, Query(q): Query<BTreeMap<String, String>>) -> Response {
        let search = q.get("search").cloned().unwrap_or_default();
        match search.as_str() {
            "down" => return (StatusCode::SERVICE_UNAVAILABLE, "maintenance").into_response(),
            "garbage" => return "<html>not json</html>".into_response(),
            "flood" => return vec![b' '; 20 << 20].into_response(),
            _ => {}
        }
        let found: Vec<&Value> = servers
            .iter()
            .filter(|s| s["server"]["name"].as_str().is_some_and(|n| n.contains(&search)))
            .filter(|_| q.get("version").map(String::as_str) == Some("latest"))
            .collect();
        let next = (!q.contains_key("cursor") && !found.is_empty()).then_some("page-2");
        axum::Json(json!({"servers": found, "metadata": {"nextCursor": next, "count": found.len()}})).into_response()
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the registry");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    let servers: Vec<Value> = servers
        .iter()
        .map(|s| serde_json::from_str(&s.to_string().replace("{registry}", &url)).expect("a listing"))
        .collect();
    let files: Arc<BTreeMap<String, Vec<u8>>> = Arc::new(files.into_iter().collect());
    let file = move |Path(name): Path<String>| {
        let files = files.clone();
        async move {
            match files.get(&name) {
                Some(bytes) => bytes.clone().into_response(),
                None => StatusCode::NOT_FOUND.into_response(),
            }
        }
    };
    let app =
        Router::new().route("/v0.1/servers", get(list)).with_state(Arc::new(servers)).route("/files/{name}", get(file));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve the registry") });
    url
}
