//! Other real servers over stdio: mcp-server-time, mcp-server-fetch (a page served
//! on 127.0.0.1) and server-filesystem.

use crate::mcp_common as common;

use common::*;
use patchbay_core::config::McpServerConfig;
use patchbay_test_support::peers;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn bin(path: std::path::PathBuf) -> String {
    path.to_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_fetch_and_filesystem_servers_answer() {
    // A page on 127.0.0.1 for mcp-server-fetch.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().route(
        "/page",
        axum::routing::get(|| async {
            axum::response::Html("<html><body><h1>Patchbay test page</h1><p>marmalade</p></body></html>")
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "filesystem says hello").unwrap();
    let dir_arg = dir.path().canonicalize().unwrap();

    let registry = registry();
    registry.configure([
        McpServerConfig::stdio("time", bin(peers::venv_bin("mcp-server-time")), &["--local-timezone", "UTC"]),
        McpServerConfig::stdio(
            "fetch",
            bin(peers::venv_bin("mcp-server-fetch")),
            &["--allow-private-ips", "--ignore-robots-txt"],
        ),
        McpServerConfig::stdio("fs", bin(peers::npm_bin("mcp-server-filesystem")), &[dir_arg.to_str().unwrap()]),
    ]);
    registry.start_all().await;
    for name in ["time", "fetch", "fs"] {
        wait_for(&registry, name, |s| s.is_settled()).await;
        assert_eq!(registry.status(name).unwrap(), patchbay_core::mcp::ServerStatus::Ready, "{name}");
    }

    let now = call(&registry, "time", "get_current_time", json!({"timezone": "UTC"})).await;
    assert!(text(&now).contains("UTC"), "{}", text(&now));

    let page = call(&registry, "fetch", "fetch", json!({"url": format!("http://{addr}/page")})).await;
    assert_ne!(page.is_error, Some(true), "{}", text(&page));
    assert!(text(&page).contains("marmalade"), "{}", text(&page));
    // Its "fetch" prompt takes a URL, but the server offers no completions: none are asked for
    // (a request would be answered "method not found").
    let prompt = rmcp::model::Reference::for_prompt("fetch");
    let argument = rmcp::model::ArgumentInfo::new("url", "http");
    let none =
        registry.complete("fetch", prompt, argument, Default::default(), CancellationToken::new()).await.unwrap();
    assert!(none.values.is_empty());

    let file = call(&registry, "fs", "read_text_file", json!({"path": dir_arg.join("notes.txt")})).await;
    assert!(text(&file).contains("filesystem says hello"), "{}", text(&file));
    registry.shutdown().await;
}
