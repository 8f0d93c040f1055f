//! The roots the app shares with MCP servers: every knowledge-base folder and
//! the shared folders, kept current as either changes, and none for a server
//! whose `share_roots` is off. server-filesystem (started without directory
//! arguments, so it works only in the client's roots) is the real peer.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use patchbay_core::app::{App, AppEvents, ErrorKind};
use patchbay_core::config::McpServerConfig;
use patchbay_core::mcp::CallOptions;
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::peers;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A folder holding one file `name` with `text`; its canonical path.
fn folder_with(parent: &Path, folder: &str, name: &str, text: &str) -> PathBuf {
    let dir = parent.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), text).unwrap();
    dir.canonicalize().unwrap()
}

fn filesystem(name: &str, share_roots: bool) -> McpServerConfig {
    let mut config = McpServerConfig::stdio(name, peers::npm_bin("mcp-server-filesystem").to_str().unwrap(), &[]);
    config.share_roots = share_roots;
    config
}

/// `read_text_file` on `server`: the text, or the server's refusal as `Err`.
async fn read(app: &App, server: &str, path: &Path) -> Result<String, String> {
    let args = json!({"path": path.to_str().unwrap()});
    let result = app
        .registry()
        .call_tool(
            server,
            "read_text_file",
            args.as_object().cloned(),
            CallOptions::default(),
            CancellationToken::new(),
        )
        .await
        .map_err(|e| e.to_string())?;
    let text: String = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
    if result.is_error == Some(true) { Err(text) } else { Ok(text) }
}

/// Reads until the outcome is what `want` says (the server learns new roots
/// asynchronously, after `notifications/roots/list_changed`).
async fn read_until(
    app: &App,
    server: &str,
    path: &Path,
    want: impl Fn(&Result<String, String>) -> bool,
) -> Result<String, String> {
    let mut outcome = read(app, server, path).await;
    for _ in 0..100 {
        if want(&outcome) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        outcome = read(app, server, path).await;
    }
    outcome
}

async fn wait_ready(app: &App, name: &str) {
    for _ in 0..600 {
        if app.list_servers().unwrap().iter().any(|s| s.config.name == name && s.status.state == "ready") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} did not become ready: {:?}", app.list_servers().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_work_in_the_knowledge_base_and_shared_folders_and_nowhere_else() {
    let tmp = tempfile::tempdir().unwrap();
    let kb = folder_with(tmp.path(), "kb", "kb.txt", "from the knowledge base");
    let shared = folder_with(tmp.path(), "shared", "shared.txt", "from a shared folder");
    let outside = folder_with(tmp.path(), "outside", "secret.txt", "not for servers");

    let data = DataDir::new(tmp.path().join("data"));
    let store = Store::open(&data).unwrap();
    let app =
        App::open(data, store, Arc::new(MemoryStore::default()), AppEvents::unwatched()).unwrap().with_env(|_| None);
    app.start().unwrap();
    app.save_server(filesystem("fs", true), &Default::default()).await.unwrap();
    app.save_server(filesystem("fs-private", false), &Default::default()).await.unwrap();
    wait_ready(&app, "fs").await;
    wait_ready(&app, "fs-private").await;

    // Added while the servers run: they are told and ask again.
    app.kb_add_folder(kb.to_str().unwrap()).unwrap();
    let roots = app.add_shared_folder(shared.to_str().unwrap()).await.unwrap();
    assert_eq!(roots.shared, vec![shared.display().to_string()]);
    assert!(roots.knowledge.contains(&kb.display().to_string()), "{roots:?}");

    let text = read_until(&app, "fs", &kb.join("kb.txt"), Result::is_ok).await;
    assert_eq!(text.as_deref(), Ok("from the knowledge base"));
    let text = read_until(&app, "fs", &shared.join("shared.txt"), Result::is_ok).await;
    assert_eq!(text.as_deref(), Ok("from a shared folder"));
    let refused = read(&app, "fs", &outside.join("secret.txt")).await;
    assert!(refused.as_ref().is_err_and(|e| e.contains("outside allowed directories")), "{refused:?}");

    // The listing shows the shared folder's file.
    let args = json!({"path": shared.to_str().unwrap()});
    let listing = app
        .registry()
        .call_tool("fs", "list_directory", args.as_object().cloned(), CallOptions::default(), CancellationToken::new())
        .await
        .unwrap();
    assert!(format!("{:?}", listing.content).contains("shared.txt"), "{listing:?}");

    // A server with share_roots off sees no folder at all.
    for path in [kb.join("kb.txt"), shared.join("shared.txt")] {
        let refused = read(&app, "fs-private", &path).await;
        assert!(refused.is_err(), "{path:?}: {refused:?}");
    }
    let allowed = app
        .registry()
        .call_tool("fs-private", "list_allowed_directories", None, CallOptions::default(), CancellationToken::new())
        .await
        .unwrap();
    let allowed: String = allowed.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
    assert_eq!(allowed.trim(), "Allowed directories:");

    // Stopping to share a folder takes it away from the servers; the knowledge base stays.
    let roots = app.remove_shared_folder(shared.to_str().unwrap()).await.unwrap();
    assert!(roots.shared.is_empty());
    let refused = read_until(&app, "fs", &shared.join("shared.txt"), Result::is_err).await;
    assert!(refused.is_err(), "{refused:?}");
    // (A sandboxed server is restarted with its new roots: it reads them again once started.)
    let kept = read_until(&app, "fs", &kb.join("kb.txt"), Result::is_ok).await;
    assert_eq!(kept.as_deref(), Ok("from the knowledge base"));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_folders_are_checked_and_kept_in_the_data_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = folder_with(tmp.path(), "shared", "a.txt", "a");
    let data = DataDir::new(tmp.path().join("data"));
    let open = || {
        let store = Store::open(&data).unwrap();
        App::open(data.clone(), store, Arc::new(MemoryStore::default()), AppEvents::unwatched())
            .unwrap()
            .with_env(|_| None)
    };
    let app = open();
    app.add_shared_folder(shared.to_str().unwrap()).await.unwrap();
    let twice = app.add_shared_folder(shared.to_str().unwrap()).await.unwrap_err();
    assert_eq!(twice.kind(), ErrorKind::InvalidInput, "{twice}");
    let missing = app.add_shared_folder(tmp.path().join("nope").to_str().unwrap()).await.unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
    let file = app.add_shared_folder(shared.join("a.txt").to_str().unwrap()).await.unwrap_err();
    assert_eq!(file.kind(), ErrorKind::InvalidInput, "{file}");
    // The registry has them at once, knowledge-base folders (the samples) included.
    let uris: Vec<String> = app.registry().roots().into_iter().map(|r| r.uri).collect();
    assert!(uris.iter().any(|u| u.ends_with("/shared")), "{uris:?}");
    assert!(uris.len() >= 2, "{uris:?}");
    drop(app);

    let app = open();
    assert_eq!(app.list_roots().unwrap().shared, vec![shared.display().to_string()]);
}
