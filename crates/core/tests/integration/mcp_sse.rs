//! The legacy SSE client transport and transport detection against real
//! servers: server-everything in `sse` and `streamableHttp` modes, a tiny
//! Python `MCPServer` that requires a header, and raw HTTP servers that
//! misbehave.

use std::net::TcpListener as StdListener;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use patchbay_core::mcp::wire::sse::{DetectedTransport, SseClientTransport, SseConfig, SseError, StreamEnd, detect};
use patchbay_test_support::peers;
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{Client, Url};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, ResourceContents};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

const START: Duration = Duration::from_secs(60);

fn free_port() -> Result<u16> {
    Ok(StdListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

async fn wait_listening(port: u16, child: &mut Child) -> Result<()> {
    let deadline = tokio::time::Instant::now() + START;
    while tokio::time::Instant::now() < deadline {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            bail!("server exited before listening: {status}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("server did not listen on {port} within {START:?}")
}

/// server-everything in `mode` on a free port; killed when dropped.
async fn everything(mode: &str) -> Result<(Child, u16)> {
    let port = free_port()?;
    let mut child = Command::new(peers::npm_bin("mcp-server-everything"))
        .arg(mode)
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    wait_listening(port, &mut child).await?;
    Ok((child, port))
}

/// The Python SSE server that wants `X-Patchbay-Token: let-me-in`; killed when dropped.
async fn python_header_server() -> Result<(Child, u16)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sse_header_server.py");
    let mut child = Command::new(peers::python())
        .arg(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()?;
    let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let line = tokio::time::timeout(START, lines.next_line()).await??.context("server printed nothing")?;
    let port = line.strip_prefix("PORT ").context("PORT line")?.parse()?;
    Ok((child, port))
}

fn token_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("x-patchbay-token", HeaderValue::from_static("let-me-in"));
    headers
}

fn url(port: u16, path: &str) -> Url {
    Url::parse(&format!("http://127.0.0.1:{port}{path}")).expect("valid URL")
}

#[tokio::test]
async fn server_everything_over_sse_calls_tools_and_reads_resources() -> Result<()> {
    let (_server, port) = everything("sse").await?;
    let transport =
        SseClientTransport::connect(Client::new(), SseConfig::new(url(port, "/sse")), CancellationToken::new()).await?;
    assert_eq!(transport.endpoint().path(), "/message");
    let end = transport.end_handle();
    let client = ().serve(transport).await?;

    let tools = client.list_all_tools().await?;
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let args = json!({"message": "over sse"}).as_object().cloned().context("object")?;
    let echoed = client.call_tool(CallToolRequestParams::new("echo").with_arguments(args)).await?;
    let text = &echoed.content[0].as_text().context("text")?.text;
    assert!(text.contains("over sse"), "{text}");
    let sum = json!({"a": 2, "b": 40}).as_object().cloned().context("object")?;
    let sum = client.call_tool(CallToolRequestParams::new("get-sum").with_arguments(sum)).await?;
    assert!(sum.content[0].as_text().context("text")?.text.contains("42"));

    let resources = client.list_all_resources().await?;
    let first = resources.first().context("server-everything lists resources")?;
    let read = client.read_resource(ReadResourceRequestParams::new(first.uri.clone())).await?;
    assert!(!read.contents.is_empty());

    assert_eq!(end.reason(), None, "the stream is open during the session");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn custom_headers_reach_the_get_and_every_post() -> Result<()> {
    let (_server, port) = python_header_server().await?;
    let cancel = CancellationToken::new();

    let refused = SseClientTransport::connect(Client::new(), SseConfig::new(url(port, "/sse")), cancel.clone()).await;
    match refused {
        Err(SseError::Unauthorized { status: 401, method: "GET", .. }) => {}
        other => bail!("expected a 401 on the GET, got {:?}", other.map(|t| t.endpoint().clone())),
    }

    let mut config = SseConfig::new(url(port, "/sse"));
    config.headers = token_headers();
    let client = ().serve(SseClientTransport::connect(Client::new(), config, cancel.clone()).await?).await?;
    let args = json!({"a": 2, "b": 3}).as_object().cloned().context("object")?;
    let added = client.call_tool(CallToolRequestParams::new("add").with_arguments(args)).await?;
    assert_eq!(added.content[0].as_text().context("text")?.text, "5");
    let posts = client.call_tool(CallToolRequestParams::new("posts_seen")).await?;
    let posts: u32 = posts.content[0].as_text().context("text")?.text.parse()?;
    assert!(posts >= 4, "initialize, initialized, add and this call were POSTed with the header: {posts}");
    let read = client.read_resource(ReadResourceRequestParams::new("memo://greeting")).await?;
    match &read.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => assert_eq!(text, "hello from python"),
        other => bail!("unexpected resource {other:?}"),
    }
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn detection_prefers_streamable_http_falls_back_to_sse_and_reports_auth() -> Result<()> {
    let http = Client::new();
    let cancel = CancellationToken::new();
    let limit = Duration::from_secs(10);
    let none = HeaderMap::new();

    let (_streamable, port) = everything("streamableHttp").await?;
    assert_eq!(detect(&http, &url(port, "/mcp"), &none, limit, &cancel).await?, DetectedTransport::StreamableHttp);

    let (_sse, port) = everything("sse").await?;
    assert_eq!(detect(&http, &url(port, "/sse"), &none, limit, &cancel).await?, DetectedTransport::Sse);

    let (_python, port) = python_header_server().await?;
    match detect(&http, &url(port, "/sse"), &none, limit, &cancel).await {
        Err(SseError::Unauthorized { status: 401, method: "POST", .. }) => {}
        other => bail!("a 401 must be reported, not fallen back from: {other:?}"),
    }
    // With the header the POST gets 405 and the GET an event stream.
    assert_eq!(detect(&http, &url(port, "/sse"), &token_headers(), limit, &cancel).await?, DetectedTransport::Sse);

    // A server of 2026-07-28 only: `server/discover` answered, `initialize` refused, no GET stream.
    let modern = modern_only_server().await?;
    assert_eq!(detect(&http, &modern, &none, limit, &cancel).await?, DetectedTransport::StreamableHttp);
    Ok(())
}

/// A streamable HTTP server that answers `server/discover` and refuses everything else as a
/// protocol version it does not speak (as a 2026-07-28-only server refuses `initialize`).
async fn modern_only_server() -> Result<Url> {
    let post = |axum::Json(message): axum::Json<serde_json::Value>| async move {
        use axum::response::IntoResponse;
        if message["method"] == "server/discover" {
            let result = json!({"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}}});
            return axum::Json(json!({"jsonrpc": "2.0", "id": message["id"], "result": result})).into_response();
        }
        let error =
            json!({"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2026-07-28"]}});
        let body = json!({"jsonrpc": "2.0", "id": message["id"], "error": error});
        (axum::http::StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
    };
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(post).get(|| async { axum::http::StatusCode::METHOD_NOT_ALLOWED }));
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(Url::parse(&format!("http://{address}/mcp"))?)
}

/// A one-connection HTTP server answering the first request with `head` then `body`, then idling.
async fn raw_server(head: &'static str, body: &'static str) -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else { return };
        let mut request = [0u8; 4096];
        let _ = socket.read(&mut request).await;
        let _ = socket.write_all(head.as_bytes()).await;
        let _ = socket.write_all(body.as_bytes()).await;
        if head.contains("keep-open") {
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
    });
    Ok(port)
}

fn quick(port: u16) -> SseConfig {
    let mut config = SseConfig::new(url(port, "/sse"));
    config.endpoint_timeout = Duration::from_millis(500);
    config
}

const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-test: keep-open\r\n\r\n";

#[tokio::test]
async fn an_endpoint_that_never_comes_times_out() -> Result<()> {
    let port = raw_server(STREAM_HEAD, ": hello\n\nevent: other\ndata: x\n\n").await?;
    match SseClientTransport::connect(Client::new(), quick(port), CancellationToken::new()).await {
        Err(SseError::EndpointTimeout { after, .. }) => assert_eq!(after, Duration::from_millis(500)),
        other => bail!("expected a timeout, got {:?}", other.err()),
    }
    Ok(())
}

#[tokio::test]
async fn a_stream_that_ends_before_the_endpoint_says_so() -> Result<()> {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    let port = raw_server(head, ": bye\n\n").await?;
    match SseClientTransport::connect(Client::new(), quick(port), CancellationToken::new()).await {
        Err(SseError::StreamEnded { reason: StreamEnd::Closed, .. }) => Ok(()),
        other => bail!("expected the stream to end, got {:?}", other.err()),
    }
}

#[tokio::test]
async fn http_errors_and_wrong_content_types_are_reported() -> Result<()> {
    let port =
        raw_server("HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\nconnection: close\r\n\r\n", "not here!").await?;
    match SseClientTransport::connect(Client::new(), quick(port), CancellationToken::new()).await {
        Err(SseError::Status { status: 404, body, .. }) => assert_eq!(body, "not here!"),
        other => bail!("expected a 404, got {:?}", other.err()),
    }
    let port = raw_server(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 2\r\nconnection: close\r\n\r\n",
        "hi",
    )
    .await?;
    match SseClientTransport::connect(Client::new(), quick(port), CancellationToken::new()).await {
        Err(SseError::NotEventStream { content_type, .. }) => assert_eq!(content_type, "text/html"),
        other => bail!("expected a content-type error, got {:?}", other.err()),
    }
    Ok(())
}

#[tokio::test]
async fn a_foreign_endpoint_is_refused_and_cancel_stops_the_wait() -> Result<()> {
    let port = raw_server(STREAM_HEAD, "event: endpoint\ndata: http://elsewhere.example/steal\n\n").await?;
    match SseClientTransport::connect(Client::new(), quick(port), CancellationToken::new()).await {
        Err(SseError::BadEndpoint { endpoint, .. }) => assert_eq!(endpoint, "http://elsewhere.example/steal"),
        other => bail!("expected a refused endpoint, got {:?}", other.err()),
    }
    let port = raw_server(STREAM_HEAD, ": waiting\n\n").await?;
    let cancel = CancellationToken::new();
    let mut config = quick(port);
    config.endpoint_timeout = Duration::from_secs(30);
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        canceller.cancel();
    });
    match SseClientTransport::connect(Client::new(), config, cancel).await {
        Err(SseError::Cancelled) => Ok(()),
        other => bail!("expected cancellation, got {:?}", other.err()),
    }
}
