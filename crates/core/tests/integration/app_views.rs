//! MCP Apps against the Python SDK's own `Apps` extension (tests/peers/counter_app.py):
//! the app says it shows views (the server's tool sees it), a tool's view is read
//! and checked, the model never sees a tool made for views, and a view may call
//! only the tools its server made for it, as their approval allows; what a
//! view downloads is saved from its own server; a call is called off by its token.

use std::sync::Arc;
use std::time::Duration;

use patchbay_core::agent::ToolHost;
use patchbay_core::app::{App, AppEvents};
use patchbay_core::config::{ApprovalMode, McpServerConfig};
use patchbay_core::mcp::RegistryTools;
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::peers;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn counter() -> McpServerConfig {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/peers/counter_app.py");
    McpServerConfig::stdio("counter", peers::python().to_str().unwrap(), &[script])
}

async fn counter_app(data: DataDir) -> App {
    let store = Store::open(&data).unwrap();
    let app =
        App::open(data, store, Arc::new(MemoryStore::default()), AppEvents::unwatched()).unwrap().with_env(|_| None);
    app.start().unwrap();
    app.save_server(counter(), &Default::default()).await.unwrap();
    ready(&app).await;
    app
}

async fn ready(app: &App) {
    for _ in 0..600 {
        if app.list_servers().unwrap().iter().any(|s| s.config.name == "counter" && s.status.state == "ready") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("counter did not become ready: {:?}", app.list_servers().unwrap());
}

fn text(result: &serde_json::Value) -> String {
    result["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_view_is_read_and_views_call_only_the_tools_made_for_them() {
    let tmp = tempfile::tempdir().unwrap();
    let app = counter_app(DataDir::new(tmp.path().join("data"))).await;

    // The inventory says which tool has a view and who may call each.
    let tools = app.list_tools(Some("counter")).unwrap();
    let view = |name: &str| tools.iter().find(|t| t.name == name).unwrap().view.clone();
    assert_eq!(view("show_counter").resource_uri.as_deref(), Some("ui://counter/view.html"));
    assert!(view("show_counter").for_model && view("show_counter").for_app);
    assert!(!view("bump").for_model && view("bump").for_app);
    assert!(view("reset").for_model && !view("reset").for_app);

    // The model sees the tool with a view and the model's own, never the view's.
    let config = app.list_servers().unwrap().into_iter().find(|s| s.config.name == "counter").unwrap().config;
    let host = RegistryTools::new(app.registry().clone(), [config]);
    let mut offered: Vec<String> =
        host.list_tools(CancellationToken::new()).await.into_iter().map(|t| t.tool).collect();
    offered.sort();
    assert_eq!(offered, ["reset", "show_counter", "wait"]);

    // The server learnt at initialisation that Patchbay shows views.
    let shown =
        app.call_tool("counter", "show_counter", json!({"start": 42}), None, CancellationToken::new()).await.unwrap();
    assert!(format!("{:?}", shown.content).contains("shown in its view"), "{shown:?}");

    // The view's page, checked, with the origins it declared.
    let page = app.app_page("counter", "ui://counter/view.html", CancellationToken::new()).await.unwrap();
    assert!(page.html.contains("a plain counter page"), "{}", page.html);
    assert_eq!(page.csp.connect, ["https://api.counter.example"]);
    assert_eq!(page.prefers_border, Some(true));
    assert!(page.csp.header().contains("connect-src https://api.counter.example;"));
    let not_a_view = app.app_page("counter", "file:///etc/passwd", CancellationToken::new()).await.unwrap_err();
    assert!(not_a_view.to_string().contains("a view is a ui:// resource"), "{not_a_view}");

    // A view may call the tool made for it once allowed; approval ask waits for the window.
    let args = |by: i64| json!({"by": by}).as_object().unwrap().clone();
    let asked = app.call_tool_for_view("counter", "bump", args(5), false, CancellationToken::new()).await.unwrap_err();
    assert!(asked.to_string().contains("needs your approval"), "{asked}");
    let bumped = app.call_tool_for_view("counter", "bump", args(5), true, CancellationToken::new()).await.unwrap();
    assert_eq!(text(&bumped), "bumped to 47");
    app.set_tool_approval("counter", "bump", ApprovalMode::Allow).unwrap();
    let bumped = app.call_tool_for_view("counter", "bump", args(1), false, CancellationToken::new()).await.unwrap();
    assert_eq!(text(&bumped), "bumped to 48");
    // Not a tool the server made for the model only, nor one set to deny or switched off.
    let model_only = app
        .call_tool_for_view("counter", "reset", Default::default(), true, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(model_only.to_string().contains("for the model only"), "{model_only}");
    app.set_tool_approval("counter", "bump", ApprovalMode::Deny).unwrap();
    let denied = app.call_tool_for_view("counter", "bump", args(1), true, CancellationToken::new()).await.unwrap_err();
    assert!(denied.to_string().contains("set to deny"), "{denied}");
    app.set_tool_approval("counter", "bump", ApprovalMode::Allow).unwrap();
    app.set_tool_enabled("counter", "bump", false).unwrap();
    let off = app.call_tool_for_view("counter", "bump", args(1), true, CancellationToken::new()).await.unwrap_err();
    assert!(off.to_string().contains("switched off"), "{off}");
    let missing = app
        .call_tool_for_view("counter", "nothing", Default::default(), true, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("has no tool \"nothing\""), "{missing}");

    // A view lists its server's resources as MCP JSON.
    let listed = app.list_resources_for_view("counter").unwrap();
    let uris: Vec<_> = listed["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert!(uris.contains(&"ui://counter/report.csv") && uris.contains(&"ui://counter/view.html"), "{listed}");
    assert_eq!(app.list_resources_for_view("nowhere").unwrap_err().kind(), patchbay_core::app::ErrorKind::NotFound);
    // A view reads its server's resources as MCP JSON.
    let read = app.read_resource_for_view("counter", "ui://counter/view.html", CancellationToken::new()).await.unwrap();
    assert_eq!(read["contents"][0]["mimeType"], "text/html;profile=mcp-app");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_views_download_is_saved_from_what_it_sent_and_what_its_server_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let app = counter_app(DataDir::new(tmp.path().join("data"))).await;
    let downloads = tmp.path().join("Downloads");
    std::fs::create_dir(&downloads).unwrap();
    app.call_tool("counter", "show_counter", json!({"start": 12}), None, CancellationToken::new()).await.unwrap();
    let contents = [
        json!({"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "twelve"}}),
        json!({"type": "resource_link", "uri": "ui://counter/report.csv", "name": "counter report", "mimeType": "text/csv"}),
    ];
    let saved = app.save_files(Some("counter"), &contents, &downloads, CancellationToken::new()).await.unwrap();
    let names: Vec<_> = saved.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["notes.txt", "counter report.csv"]);
    assert_eq!(std::fs::read_to_string(downloads.join("notes.txt")).unwrap(), "twelve");
    assert_eq!(std::fs::read_to_string(&saved[1].path).unwrap(), "name,count\ncounter,12\n");

    // Saved again: new names beside the first ones.
    let again = app.save_files(Some("counter"), &contents, &downloads, CancellationToken::new()).await.unwrap();
    assert_eq!(again[0].name, "notes (1).txt");
    // A link the server cannot read saves nothing at all, and says which.
    let broken =
        [contents[0].clone(), json!({"type": "resource_link", "uri": "ui://counter/missing.csv", "name": "m"})];
    let e = app.save_files(Some("counter"), &broken, &downloads, CancellationToken::new()).await.unwrap_err();
    assert!(e.to_string().contains("ui://counter/missing.csv"), "{e}");
    assert_eq!(std::fs::read_dir(&downloads).unwrap().count(), 4);
    // A link with no server to read it from is refused as such.
    let e = app.save_files(None, &contents, &downloads, CancellationToken::new()).await.unwrap_err();
    assert!(e.to_string().contains("ui://counter/report.csv: no server was named"), "{e}");
    assert_eq!(std::fs::read_dir(&downloads).unwrap().count(), 4);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_call_is_called_off_by_its_token() {
    let tmp = tempfile::tempdir().unwrap();
    let app = counter_app(DataDir::new(tmp.path().join("data"))).await;
    let cancel = CancellationToken::new();
    let call_off = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        call_off.cancel();
    });
    let started = std::time::Instant::now();
    let e = app.call_tool("counter", "wait", json!({"seconds": 60}), None, cancel).await.unwrap_err();
    assert_eq!(e.kind(), patchbay_core::app::ErrorKind::Cancelled, "{e}");
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    // The server is still there for the next call.
    let done =
        app.call_tool("counter", "wait", json!({"seconds": 0.01}), None, CancellationToken::new()).await.unwrap();
    assert!(format!("{:?}", done.content).contains("waited 0.01 s"), "{done:?}");
    app.shutdown().await;
}
