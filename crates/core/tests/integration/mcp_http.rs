//! Streamable HTTP against real servers: server-everything, and a Python
//! `MCPServer` that requires an auth header (value from the secret store).

use crate::mcp_common as common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use patchbay_core::config::{McpServerConfig, TransportConfig, ValueSource};
use patchbay_core::mcp::{CallEvent, CallOptions, McpError, ServerStatus};
use patchbay_core::secrets::{MemoryStore, SecretStore};
use patchbay_test_support::peers;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn http(name: &str, url: String, headers: BTreeMap<String, ValueSource>) -> McpServerConfig {
    McpServerConfig::with_transport(name, TransportConfig::StreamableHttp { url, headers })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http_with_progress_and_recovery_after_a_server_restart() {
    let port = free_port();
    let start = || {
        let mut cmd = tokio::process::Command::new(peers::npm_bin("mcp-server-everything"));
        cmd.arg("streamableHttp").env("PORT", port.to_string());
        cmd
    };
    let mut server = spawn(&mut start(), port).await;
    let registry = registry();
    let headers = BTreeMap::from([("X-Patchbay-Test".to_owned(), ValueSource::Plain("1".into()))]);
    registry.configure([http("remote", format!("http://127.0.0.1:{port}/mcp"), headers)]);
    start_ready(&registry, "remote").await;
    assert!(registry.tools("remote").unwrap().iter().any(|t| t.name == "echo"));

    let echo = registry
        .call_tool(
            "remote",
            "echo",
            json!({"message": "over http"}).as_object().cloned(),
            CallOptions::default(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(text(&echo).contains("over http"));

    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let long = registry
        .call_tool(
            "remote",
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}).as_object().cloned(),
            CallOptions { timeout: None, events: Some(tx), ..CallOptions::default() },
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(text(&long).contains("completed"));
    // The last notification may race the result over HTTP; the first cannot. (Log messages,
    // such as the server noting the host's roots, may come along too.)
    let progress: Vec<CallEvent> =
        std::iter::from_fn(|| rx.try_recv().ok()).filter(|e| matches!(e, CallEvent::Progress { .. })).collect();
    assert!(!progress.is_empty() && progress.len() <= 2, "{progress:?}");
    assert_eq!(progress[0], CallEvent::Progress { progress: 1.0, total: Some(2.0), message: None });

    // The server restarts and forgets the session: the next call re-initialises.
    server.0.kill().await.unwrap();
    server = spawn(&mut start(), port).await;
    // The registry notices the lost connection and reconnects (or rmcp
    // re-initialises the expired session): calls work again without user action.
    let mut echo = None;
    for _ in 0..150 {
        let result = registry
            .call_tool(
                "remote",
                "echo",
                json!({"message": "again"}).as_object().cloned(),
                CallOptions::default(),
                CancellationToken::new(),
            )
            .await;
        match result {
            Ok(result) => {
                echo = Some(result);
                break;
            }
            // Until the registry has a session with the new server, a call is refused
            // (server-everything answers an unknown session with HTTP 400) or finds
            // the connection closed.
            Err(McpError::Server { message, .. }) if message.contains("session") => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(McpError::ConnectionClosed { .. } | McpError::NotReady { .. }) => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    assert!(text(&echo.expect("the server is usable again")).contains("again"));
    registry.shutdown().await;
    drop(server);
}

const AUTH_SERVER: &str = r#"
import sys
from mcp.server.mcpserver import MCPServer
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import PlainTextResponse
import uvicorn

mcp = MCPServer("auth-test")

@mcp.tool()
def whoami() -> str:
    """Says who is calling."""
    return "authorised caller"

class RequireToken(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        if request.headers.get("authorization") != "Bearer sekrit" or request.headers.get("x-team") != "blue":
            return PlainTextResponse("unauthorised", status_code=401)
        return await call_next(request)

app = mcp.streamable_http_app()
app.add_middleware(RequireToken)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_requiring_an_auth_header_gets_it_from_the_secret_store() {
    let server = PyServer::new(AUTH_SERVER);
    let (_server, port) = server.serve(&[]).await;

    let secrets = Arc::new(MemoryStore::new());
    secrets.set("mcp/auth/token", "sekrit").unwrap();
    let registry = registry_with(secrets);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let good = BTreeMap::from([
        ("Authorization".to_owned(), ValueSource::Secret("mcp/auth/token".into())),
        ("X-Team".to_owned(), ValueSource::Plain("blue".into())),
    ]);
    let no_team = BTreeMap::from([("Authorization".to_owned(), ValueSource::Secret("mcp/auth/token".into()))]);
    let missing = BTreeMap::from([("Authorization".to_owned(), ValueSource::Secret("mcp/auth/absent".into()))]);
    registry.configure([
        http("good", url.clone(), good),
        http("no-team", url.clone(), no_team),
        http("no-secret", url, missing),
    ]);
    registry.start_all().await;
    registry.wait_settled(Duration::from_secs(60)).await;

    assert_eq!(registry.status("good").unwrap(), ServerStatus::Ready);
    let result =
        registry.call_tool("good", "whoami", None, CallOptions::default(), CancellationToken::new()).await.unwrap();
    assert_eq!(text(&result), "authorised caller");
    assert!(matches!(registry.status("no-team").unwrap(), ServerStatus::Failed { .. }));
    match registry.status("no-secret").unwrap() {
        ServerStatus::Failed { reason } => assert!(reason.contains("mcp/auth/absent"), "{reason}"),
        other => panic!("{other:?}"),
    }
    registry.shutdown().await;
}
