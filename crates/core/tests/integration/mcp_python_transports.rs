//! One tiny Python `MCPServer` (the official SDK, mcp 2.x) served over every
//! transport a user meets: stdio, legacy SSE, stateful streamable HTTP and
//! stateless streamable HTTP (no session id: each POST stands alone). Through
//! the registry, each one lists and calls tools, routes a call's progress and
//! log messages to that call, and serves a prompt and a resource. Over stdio and
//! HTTP it speaks 2026-07-28 (`server/discover`, the log level in each request's
//! `_meta`); over legacy SSE, 2025-11-25.

use crate::mcp_common as common;

use std::collections::BTreeMap;

use common::*;
use patchbay_core::config::{McpServerConfig, TransportConfig};
use patchbay_core::mcp::{CallEvent, CallOptions, LogLevel, McpRegistry};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// `python server.py MODE [PORT]`; MODE is stdio, sse, stateful or stateless.
const SERVER: &str = r#"
import sys
from mcp.server.mcpserver import MCPServer, Context
import uvicorn

mcp = MCPServer("tiny")

@mcp.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b

@mcp.tool()
async def count(n: int, ctx: Context) -> str:
    """Counts to n, reporting progress and logging each step."""
    for i in range(1, n + 1):
        await ctx.info(f"step {i}")
        await ctx.report_progress(i, n, f"counted {i}")
    return f"counted to {n}"

@mcp.prompt()
def greet(name: str) -> str:
    """Greets someone."""
    return f"Please greet {name} warmly."

@mcp.resource("note://readme")
def readme() -> str:
    """A short note."""
    return "tiny server notes"

mode = sys.argv[1]
if mode == "stdio":
    mcp.run("stdio")
else:
    if mode == "sse":
        app = mcp.sse_app()
    else:
        app = mcp.streamable_http_app(stateless_http=mode == "stateless")
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"#;

const MODES: [&str; 4] = ["stdio", "sse", "stateful", "stateless"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_server_works_over_stdio_sse_and_stateful_and_stateless_http() {
    let server = PyServer::new(SERVER);
    let mut running = Vec::new();
    let mut configs = vec![server.stdio("stdio", &["stdio"])];
    for mode in &MODES[1..] {
        let (peer, port) = server.serve(&[mode]).await;
        running.push(peer);
        let transport = match *mode {
            "sse" => TransportConfig::Sse { url: format!("http://127.0.0.1:{port}/sse"), headers: BTreeMap::new() },
            _ => TransportConfig::StreamableHttp {
                url: format!("http://127.0.0.1:{port}/mcp"),
                headers: BTreeMap::new(),
            },
        };
        configs.push(McpServerConfig::with_transport(*mode, transport));
    }
    let registry = registry();
    registry.configure(configs);
    registry.start_all().await;

    for mode in MODES {
        start_ready(&registry, mode).await;
        // The newest revision the SDK speaks; legacy SSE stays on the handshake.
        let revision = if mode == "sse" { "2025-11-25" } else { "2026-07-28" };
        assert_eq!(registry.about(mode).unwrap().unwrap().protocol_version, revision, "{mode}");
        let mut tools: Vec<String> = registry.tools(mode).unwrap().into_iter().map(|t| t.name.to_string()).collect();
        tools.sort();
        assert_eq!(tools, ["add", "count"], "{mode}");

        let sum = registry
            .call_tool(mode, "add", json!({"a": 2, "b": 3}).as_object().cloned(), CallOptions::default(), ct())
            .await
            .unwrap();
        assert_eq!(text(&sum), "5", "{mode}");

        let events = count(&registry, mode, 3).await;
        let progress: Vec<(f64, Option<f64>, Option<String>)> = events
            .iter()
            .filter_map(|e| match e {
                CallEvent::Progress { progress, total, message } => Some((*progress, *total, message.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(progress.first(), Some(&(1.0, Some(3.0), Some("counted 1".to_owned()))), "{mode}: {events:?}");
        let logs: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                CallEvent::Log(log) => Some(log.data.to_string()),
                _ => None,
            })
            .collect();
        assert!(logs.first().is_some_and(|l| l.contains("step 1")), "{mode}: {events:?}");

        let prompts: Vec<String> = registry.prompts(mode).unwrap().into_iter().map(|p| p.name).collect();
        assert_eq!(prompts, ["greet"], "{mode}");
        let greeting =
            registry.get_prompt(mode, "greet", json!({"name": "Ada"}).as_object().cloned(), ct()).await.unwrap();
        let said = serde_json::to_string(&greeting.messages).unwrap();
        assert!(said.contains("Please greet Ada warmly."), "{mode}: {said}");

        let uris: Vec<String> = registry.resources(mode).unwrap().into_iter().map(|r| r.uri.clone()).collect();
        assert_eq!(uris, ["note://readme"], "{mode}");
        let note = registry.read_resource(mode, "note://readme", ct()).await.unwrap();
        assert_eq!(note.contents.len(), 1, "{mode}: {note:?}");
        let body = serde_json::to_value(&note.contents[0]).unwrap();
        assert_eq!(body["text"], "tiny server notes", "{mode}: {body}");
    }

    // A level set by the user reaches a 2026-07-28 server in each request's `_meta` (this SDK
    // no longer offers `logging/setLevel`): above `info`, the count's steps are not logged.
    for mode in ["stdio", "stateful", "stateless"] {
        registry.set_log_level(mode, LogLevel::Warning, ct()).await.unwrap();
        let events = count(&registry, mode, 2).await;
        assert!(events.iter().any(|e| matches!(e, CallEvent::Progress { .. })), "{mode}: {events:?}");
        assert!(!events.iter().any(|e| matches!(e, CallEvent::Log(_))), "{mode}: {events:?}");
    }
    registry.shutdown().await;
    drop(running);
}

/// A server of 2026-07-28 slower to start than Patchbay waits for its answer to
/// `server/discover` (as Python is on a loaded machine): it reads the probe only after the
/// handshake was sent, answers it, then refuses the handshake. Patchbay starts it again and waits
/// for discovery, within the start timeout.
const SLOW: &str = r#"
import sys, time
print("starting", file=sys.stderr, flush=True)
time.sleep(7)
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("slow")

@mcp.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b

mcp.run("stdio")
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_answers_discovery_after_the_handshake_was_sent_starts_again_by_it() {
    let server = PyServer::new(SLOW);
    let registry = registry();
    let mut config = server.stdio("slow", &[]);
    config.timeouts.startup_secs = 60;
    registry.configure(vec![config]);
    start_ready(&registry, "slow").await;
    let stderr = registry.stderr_tail("slow", 500).unwrap();
    assert_eq!(stderr.iter().filter(|l| l.contains("starting")).count(), 2, "launched twice: {stderr:?}");
    assert_eq!(registry.about("slow").unwrap().unwrap().protocol_version, "2026-07-28");
    let sum = registry
        .call_tool("slow", "add", json!({"a": 2, "b": 3}).as_object().cloned(), CallOptions::default(), ct())
        .await
        .unwrap();
    assert_eq!(text(&sum), "5");
    // Known to speak 2026-07-28 now: its next start waits for its answer, launching it once.
    registry.restart("slow").await.unwrap();
    start_ready(&registry, "slow").await;
    let stderr = registry.stderr_tail("slow", 500).unwrap();
    assert_eq!(stderr.iter().filter(|l| l.contains("starting")).count(), 3, "launched once more: {stderr:?}");
    assert_eq!(registry.about("slow").unwrap().unwrap().protocol_version, "2026-07-28");
    registry.shutdown().await;
}

/// Calls `count` to `n` on `mode` and returns the call's events: each step's progress and
/// log message (over HTTP the last ones may race the result, so they are waited for briefly).
async fn count(registry: &McpRegistry, mode: &str, n: u32) -> Vec<CallEvent> {
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions { timeout: None, events: Some(tx), ..CallOptions::default() };
    let counted = registry.call_tool(mode, "count", json!({"n": n}).as_object().cloned(), options, ct()).await.unwrap();
    assert_eq!(text(&counted), format!("counted to {n}"), "{mode}");
    let mut events = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(std::time::Duration::from_secs(2), rx.recv()).await {
        events.push(event);
        if events.len() == 2 * n as usize {
            break;
        }
    }
    events
}

fn ct() -> CancellationToken {
    CancellationToken::new()
}
