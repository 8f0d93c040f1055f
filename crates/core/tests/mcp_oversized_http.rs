//! A tool that answers with 100 MB over streamable HTTP, through the registry:
//! the call fails at once with [`McpError::MessageTooLarge`] (no timeout, no
//! generic "stream closed"), this process's peak memory grows by far less than
//! the answer, and the next call on the same session works. Both ways a server
//! can answer a POST: an SSE stream (the default) and a plain JSON body.
//!
//! Its own test binary, so the peak-memory reading (`VmHWM`) is not shared
//! with other tests.

#[path = "mcp_common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::*;
use patchbay_core::config::{McpServerConfig, TransportConfig};
use patchbay_core::mcp::wire::frame::MAX_MESSAGE_BYTES;
use patchbay_core::mcp::{CallOptions, McpError};
use tokio_util::sync::CancellationToken;

/// A Python `MCPServer` on streamable HTTP; `json` answers POSTs with JSON bodies.
const SERVER: &str = r#"
import sys
from mcp.server.mcpserver import MCPServer
import uvicorn

mcp = MCPServer("huge")

@mcp.tool()
def huge() -> str:
    """Answers with 100 MB of text."""
    return "x" * (100 << 20)

@mcp.tool()
def small() -> str:
    """Answers briefly."""
    return "still here"

app = mcp.streamable_http_app(json_response=sys.argv[1] == "json")
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_answer_over_http_fails_its_call_and_the_session_stays_usable() {
    let server = PyServer::new(SERVER);
    let registry = registry();
    let mut peers_running = Vec::new();
    let mut configs = Vec::new();
    for mode in ["sse", "json"] {
        let (peer, port) = server.serve(&[mode]).await;
        peers_running.push(peer);
        let url = format!("http://127.0.0.1:{port}/mcp");
        configs.push(McpServerConfig::with_transport(
            mode,
            TransportConfig::StreamableHttp { url, headers: BTreeMap::new() },
        ));
    }
    registry.configure(configs);

    let options = || CallOptions { timeout: Some(Duration::from_secs(50)), ..CallOptions::default() };
    for mode in ["sse", "json"] {
        start_ready(&registry, mode).await;
        let before = peak_rss();
        let started = Instant::now();
        let outcome = registry.call_tool(mode, "huge", None, options(), CancellationToken::new()).await;
        match &outcome {
            Err(McpError::MessageTooLarge { server, limit, size }) => {
                assert_eq!(server, mode);
                assert_eq!(*limit, MAX_MESSAGE_BYTES);
                assert_eq!(*size, None, "HTTP refuses the answer as it crosses the limit");
            }
            other => panic!("{mode}: expected MessageTooLarge, got {other:?}"),
        }
        let message = outcome.unwrap_err().to_string();
        assert!(message.contains("larger than the limit of 16777216 bytes"), "{message}");
        assert!(started.elapsed() < Duration::from_secs(45), "{mode}: failed by timeout after {:?}", started.elapsed());
        let growth = peak_rss().saturating_sub(before);
        eprintln!("{mode}: peak memory growth during the 100 MB answer: {} MB", growth >> 20);
        // Keeping the answer would take 100 MB, and as much again parsed.
        assert!(growth < 64 << 20, "{mode}: peak memory grew by {} MB", growth >> 20);

        // Same session: the next call is answered.
        let result = registry.call_tool(mode, "small", None, options(), CancellationToken::new()).await.unwrap();
        assert_eq!(text(&result), "still here");
    }
    registry.shutdown().await;
    drop(peers_running);
}
