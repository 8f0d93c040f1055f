//! Real servers at strict, with only what they declare: server-everything
//! (nothing), server-filesystem (its folder, from its arguments),
//! mcp-server-fetch (domains: `localhost`, through the filtering proxy; the
//! same page as `127.0.0.1` is refused), mcp-server-time (nothing, network
//! off) and a bundle-shaped entry (its folder as `cwd`). Each works; what
//! they were not given fails. (At normal, every other MCP test runs these
//! servers, since normal is the default.)
#![cfg(target_os = "linux")]

use crate::mcp_common as common;

use common::*;
use patchbay_core::config::{McpServerConfig, Network, SecurityLevel, TransportConfig};
use patchbay_core::mcp::McpEvent;
use patchbay_test_support::peers;
use serde_json::json;

fn strict(mut config: McpServerConfig) -> McpServerConfig {
    config.policy.level = Some(SecurityLevel::Strict);
    config
}

fn bin(path: std::path::PathBuf) -> String {
    path.to_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_servers_work_at_strict_with_their_declared_needs() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new().route(
        "/page",
        axum::routing::get(|| async { axum::response::Html("<html><body><p>marmalade</p></body></html>") }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("shared")).unwrap();
    let folder = tmp.path().join("shared").canonicalize().unwrap();
    std::fs::write(folder.join("notes.txt"), "filesystem says hello").unwrap();
    let elsewhere = tmp.path().join("elsewhere.txt");
    std::fs::write(&elsewhere, "not shared").unwrap();
    // A bundle's shape: its server in its folder, started there.
    let bundle = tmp.path().join("extensions/poker");
    std::fs::create_dir_all(bundle.join("server")).unwrap();
    std::fs::copy(patchbay_test_support::hostile::hostile_mcp(), bundle.join("server/poker")).unwrap();
    let mut poker = McpServerConfig::stdio("poker", bin(bundle.join("server/poker")), &["huge-result:1"]);
    if let TransportConfig::Stdio { cwd, .. } = &mut poker.transport {
        *cwd = Some(bundle.clone());
    }

    let mut fetch = McpServerConfig::stdio(
        "fetch",
        bin(peers::venv_bin("mcp-server-fetch")),
        &["--allow-private-ips", "--ignore-robots-txt"],
    );
    fetch.policy.network = Some(Network::Domains(vec!["localhost".into()]));
    let registry = registry();
    let mut events = registry.subscribe();
    registry.configure(
        [
            McpServerConfig::stdio("everything", bin(peers::npm_bin("mcp-server-everything")), &["stdio"]),
            McpServerConfig::stdio("fs", bin(peers::npm_bin("mcp-server-filesystem")), &[folder.to_str().unwrap()]),
            fetch,
            McpServerConfig::stdio("time", bin(peers::venv_bin("mcp-server-time")), &["--local-timezone", "UTC"]),
            poker,
        ]
        .map(strict),
    );
    registry.start_all().await;
    for name in ["everything", "fs", "fetch", "time", "poker"] {
        wait_for(&registry, name, |s| s.is_settled()).await;
        assert_eq!(
            registry.status(name).unwrap(),
            patchbay_core::mcp::ServerStatus::Ready,
            "{name}: {}",
            registry.stderr_tail(name, 20).unwrap().join("\n")
        );
        let report = registry.doctor(name).await.unwrap().unwrap();
        assert!(report.policy.as_ref().is_some_and(|p| p.to_string().starts_with("strict: ")), "{report}");
    }

    let echo = call(&registry, "everything", "echo", json!({"message": "sandboxed"})).await;
    assert!(text(&echo).contains("sandboxed"), "{}", text(&echo));

    let read = call(&registry, "fs", "read_text_file", json!({"path": folder.join("notes.txt")})).await;
    assert!(text(&read).contains("filesystem says hello"), "{}", text(&read));
    let wrote =
        call(&registry, "fs", "write_file", json!({"path": folder.join("new.txt"), "content": "from the sandbox"}))
            .await;
    assert_ne!(wrote.is_error, Some(true), "{}", text(&wrote));
    assert_eq!(std::fs::read_to_string(folder.join("new.txt")).unwrap(), "from the sandbox");
    let outside = call(&registry, "fs", "read_text_file", json!({"path": elsewhere})).await;
    assert_eq!(outside.is_error, Some(true), "{}", text(&outside));

    // Raw: simplifying HTML makes readabilipy `npm install` into its package folder, read-only at strict.
    let page =
        call(&registry, "fetch", "fetch", json!({"url": format!("http://localhost:{port}/page"), "raw": true})).await;
    assert_ne!(page.is_error, Some(true), "{}", text(&page));
    assert!(text(&page).contains("marmalade"), "{}", text(&page));
    let refused =
        call(&registry, "fetch", "fetch", json!({"url": format!("http://127.0.0.1:{port}/page"), "raw": true})).await;
    assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
    assert!(text(&refused).contains("403"), "{}", text(&refused));
    let mut blocked = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let McpEvent::ConnectionBlocked { server, host } = event {
            blocked.push((server, host));
        }
    }
    assert_eq!(blocked, [("fetch".to_owned(), "127.0.0.1".to_owned())]);
    let log = registry.stderr_tail("fetch", 50).unwrap();
    assert!(
        log.iter().any(|l| l == "patchbay: blocked a connection to 127.0.0.1: not in the allowed domains"),
        "{log:?}"
    );

    let now = call(&registry, "time", "get_current_time", json!({"timezone": "UTC"})).await;
    assert!(text(&now).contains("UTC"), "{}", text(&now));

    let poked = call(&registry, "poker", "poke", json!({"small": true})).await;
    assert_eq!(text(&poked), "poked");
    registry.shutdown().await;
}
