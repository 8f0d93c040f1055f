//! The classic agent task through `patchbay ask`, with real MCP servers and a
//! scripted OpenAI-compatible model: fetch a page served on 127.0.0.1 with
//! mcp-server-fetch, summarise it, write the summary to a file with
//! server-filesystem. The file must exist with the scripted content, the page
//! must have reached the model, and the trace must be in the database.

use std::path::Path;

use patchbay_core::config::McpServerConfig;
use patchbay_core::mcp::protocol::naming::ToolNames;
use patchbay_test_support::peers;
use patchbay_test_support::scripted::{Format, ScriptedServer, openai};
use serde_json::json;

use crate::common::{offered, patchbay, seed_scripted_provider, seed_servers};

const PAGE: &str = "<html><head><title>Tides</title></head><body><h1>Tides</h1>\
<p>The moon's gravity raises two bulges of water; most coasts see two high tides a day.</p></body></html>";
const SUMMARY: &str = "Tides: the moon raises two bulges, so most coasts get two high tides daily.";

/// Serves `PAGE` on 127.0.0.1 until the test ends.
async fn serve_page() -> (String, tokio::task::JoinHandle<()>) {
    let app = axum::Router::new().route("/tides.html", axum::routing::get(|| async { axum::response::Html(PAGE) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/tides.html", listener.local_addr().unwrap());
    (url, tokio::spawn(async move { axum::serve(listener, app).await.unwrap() }))
}

fn seed(dir: &Path, model_url: &str, files_root: &Path) {
    seed_scripted_provider(dir, model_url);
    let fetch = McpServerConfig::stdio(
        "fetch",
        peers::venv_bin("mcp-server-fetch").to_str().unwrap(),
        &["--allow-private-ips", "--ignore-robots-txt"],
    );
    let files = McpServerConfig::stdio(
        "files",
        peers::npm_bin("mcp-server-filesystem").to_str().unwrap(),
        &[files_root.to_str().unwrap()],
    );
    seed_servers(dir, &[fetch, files]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_summarise_and_write_a_file() {
    let (page_url, _page) = serve_page().await;
    let data = tempfile::tempdir().unwrap();
    let files_root = tempfile::tempdir().unwrap();
    let files_root = files_root.path().canonicalize().unwrap();
    let summary_path = files_root.join("summary.md");

    let names = ToolNames::build([("fetch", "fetch"), ("files", "write_file")]);
    let fetch_tool = names.model_name("fetch", "fetch").unwrap().to_owned();
    let write_tool = names.model_name("files", "write_file").unwrap().to_owned();
    let fetch_args = json!({ "url": page_url }).to_string();
    let write_args = json!({ "path": summary_path, "content": SUMMARY }).to_string();
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::tool_calls_reply(&[("call_fetch", &fetch_tool, &[&fetch_args])]),
            openai::tool_calls_reply(&[("call_write", &write_tool, &[&write_args])]),
            openai::text_reply(&["I saved the summary ", "to summary.md."]),
        ],
    )
    .await
    .unwrap();
    seed(data.path(), &model.url(), &files_root);

    let out = patchbay(
        data.path(),
        &["ask", "--auto-approve", "Summarise the page at the URL I gave and save it to summary.md"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ask failed\nstdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("I saved the summary to summary.md."), "stdout: {stdout}");

    // The file was written by server-filesystem with the content the model chose.
    assert_eq!(std::fs::read_to_string(&summary_path).unwrap(), SUMMARY);

    // The model was offered both servers' tools and read the fetched page.
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "one request per round");
    let offered = offered(&requests[0].body);
    assert!(offered.contains(&fetch_tool) && offered.contains(&write_tool), "{offered:?}");
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("two high tides a day"), "the fetched page never reached the model: {second}");

    // The trace is in the database: the exported conversation holds both calls and their results.
    let list = patchbay(data.path(), &["conversation", "list"]);
    let listing = String::from_utf8_lossy(&list.stdout);
    let id = listing.split_whitespace().next().expect("one conversation listed");
    let export = patchbay(data.path(), &["conversation", "export", id, "--format", "json"]);
    let exported = String::from_utf8_lossy(&export.stdout);
    assert!(export.status.success(), "{}", String::from_utf8_lossy(&export.stderr));
    for needle in ["\"fetch\"", "\"write_file\"", "two high tides a day", "summary.md"] {
        assert!(exported.contains(needle), "{needle} missing from the stored conversation: {exported}");
    }
}
