//! The registry over legacy SSE and auto-detection, against real servers:
//! server-everything in `sse` mode (2024-11-05) and in `streamableHttp` mode.

use crate::mcp_common as common;

use std::collections::BTreeMap;
use std::process::Stdio;

use common::*;
use patchbay_core::config::{McpServerConfig, TransportConfig};
use patchbay_core::mcp::{CallOptions, ServerStatus, TransportKind};
use patchbay_test_support::peers;
use serde_json::json;
use tokio_util::sync::CancellationToken;

async fn everything(mode: &str, port: u16) -> tokio::process::Child {
    let child = tokio::process::Command::new(peers::npm_bin("mcp-server-everything"))
        .arg(mode)
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    peers::wait_listening(port).await;
    child
}

fn transport_of(registry: &patchbay_core::mcp::McpRegistry, name: &str) -> Option<TransportKind> {
    registry.snapshot().into_iter().find(|s| s.name == name).and_then(|s| s.transport)
}

async fn echo(registry: &patchbay_core::mcp::McpRegistry, server: &str, message: &str) -> String {
    let result = registry
        .call_tool(
            server,
            "echo",
            json!({ "message": message }).as_object().cloned(),
            CallOptions::default(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    text(&result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_and_auto_detected_servers_become_ready_and_answer() {
    let (sse_port, http_port) = (free_port(), free_port());
    let _sse = everything("sse", sse_port).await;
    let _http = everything("streamableHttp", http_port).await;
    let registry = registry();
    let url = |port: u16, path: &str| format!("http://127.0.0.1:{port}/{path}");
    registry.configure([
        McpServerConfig::with_transport(
            "legacy",
            TransportConfig::Sse { url: url(sse_port, "sse"), headers: BTreeMap::new() },
        ),
        // Only a URL: the probe gets 404/405 from the SSE-only server's /sse POST and falls back.
        McpServerConfig::with_transport(
            "auto-sse",
            TransportConfig::Auto { url: url(sse_port, "sse"), headers: BTreeMap::new() },
        ),
        McpServerConfig::with_transport(
            "auto-http",
            TransportConfig::Auto { url: url(http_port, "mcp"), headers: BTreeMap::new() },
        ),
    ]);
    for name in ["legacy", "auto-sse", "auto-http"] {
        start_ready(&registry, name).await;
        assert!(matches!(registry.status(name).unwrap(), ServerStatus::Ready), "{name}");
        assert!(echo(&registry, name, name).await.contains(name), "{name} echoes");
    }
    assert_eq!(transport_of(&registry, "legacy"), Some(TransportKind::Sse));
    assert_eq!(transport_of(&registry, "auto-sse"), Some(TransportKind::Sse));
    assert_eq!(transport_of(&registry, "auto-http"), Some(TransportKind::StreamableHttp));
    // Who each is, as the settings page says: the transport detection chose, no process of ours.
    for (name, transport) in [("auto-sse", TransportKind::Sse), ("auto-http", TransportKind::StreamableHttp)] {
        let about = registry.about(name).unwrap().expect("a ready server's identity");
        assert_eq!((about.transport, about.pid, about.command.as_deref()), (transport, None, None), "{name}");
        assert_eq!(about.name.as_deref(), Some("mcp-servers/everything"), "{name}");
    }
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_url_where_nothing_listens_fails_with_the_reason() {
    let port = free_port();
    let registry = registry();
    registry.configure([McpServerConfig::with_transport(
        "gone",
        TransportConfig::Sse { url: format!("http://127.0.0.1:{port}/sse"), headers: BTreeMap::new() },
    )]);
    registry.start_all().await;
    wait_for(&registry, "gone", |s| matches!(s, ServerStatus::Failed { .. })).await;
    let ServerStatus::Failed { reason } = registry.status("gone").unwrap() else { unreachable!() };
    assert!(reason.contains("gone") || reason.contains("127.0.0.1"), "reason: {reason}");
}
