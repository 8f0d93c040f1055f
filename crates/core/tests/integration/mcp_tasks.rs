//! Task-augmented tool calls (2025-11-25) against a scripted server that
//! speaks the wire format, line by line over a pipe and as JSON bodies over
//! streamable HTTP (which rmcp's client would read into its own types, losing
//! a tool's `execution` and a task's fields): which tools run as tasks, status by
//! polling when the server sends no notifications, the clock that restarts
//! with each new status, `tasks/cancel` when a call is given up, and a failed
//! task's error. (server-everything's task tool is called in
//! mcp_everything_tools and mcp_server_requests.)

use crate::mcp_common as common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use common::*;
use patchbay_core::config::{McpServerConfig, TransportConfig};
use patchbay_core::mcp::traces::traced_call;
use patchbay_core::mcp::{CallEvent, CallOptions, InProcessServer, McpError, McpRegistry};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The scripted task's status message changes at each poll, "step 1" to
/// "step {STEPS}", then stays at the last.
const STEPS: usize = 10;

/// A server whose `slow` and `fails` tools must run as tasks and whose
/// `quick` tool may; every message it gets is kept.
#[derive(Clone, Default)]
struct Scripted {
    got: Arc<Mutex<Vec<Value>>>,
    /// Requests whose POST is still open, waiting for an answer that never comes.
    waiting: Arc<Mutex<Vec<String>>>,
}

/// Keeps a request's method in [`Scripted::waiting`] while its POST is open.
struct Waiting(Arc<Mutex<Vec<String>>>, String);

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut waiting = self.0.lock().unwrap();
        if let Some(at) = waiting.iter().position(|m| *m == self.1) {
            waiting.remove(at);
        }
    }
}

impl Scripted {
    fn got(&self, method: &str) -> Vec<Value> {
        self.got.lock().unwrap().iter().filter(|m| m["method"] == method).cloned().collect()
    }
}

fn task(id: &str, status: &str, message: Option<&str>, at: u32) -> Value {
    json!({"taskId": id, "status": status, "statusMessage": message, "pollInterval": 50, "ttl": 60000,
        "createdAt": "2026-11-26T10:00:00.000Z", "lastUpdatedAt": format!("2026-11-26T10:00:{at:02}.000Z")})
}

impl Scripted {
    /// The reply to `message`, as the whole JSON-RPC message; `None` for a
    /// notification and for what the server never answers. `polls` counts
    /// the server's `tasks/get` requests.
    fn reply(&self, message: Value, polls: &mut usize) -> Option<Value> {
        self.got.lock().unwrap().push(message.clone());
        let params = &message["params"];
        let result = match message["method"].as_str().unwrap_or_default() {
            "initialize" => {
                json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "scripted", "version": "1"},
                "capabilities": {"tools": {}, "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}}})
            }
            "tools/list" => json!({"tools": [
                {"name": "slow", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
                {"name": "fails", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
                {"name": "quick", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}},
            ]}),
            "tools/call" if params.get("task").is_some() => {
                json!({"task": task(params["name"].as_str().unwrap(), "working", None, 0)})
            }
            "tools/call" => json!({"content": [{"type": "text", "text": "quick answer"}]}),
            "tasks/get" => {
                *polls = (*polls + 1).min(STEPS);
                let step = format!("step {polls}");
                task(params["taskId"].as_str().unwrap(), "working", Some(&step), *polls as u32)
            }
            // `slow` never ends by itself; `fails` has failed.
            "tasks/result" if params["taskId"] == "fails" => {
                let error = json!({"code": -32603, "message": "the research failed"});
                return Some(json!({"jsonrpc": "2.0", "id": message["id"], "error": error}));
            }
            "tasks/result" => return None,
            "tasks/cancel" => task(params["taskId"].as_str().unwrap(), "cancelled", None, 59),
            "ping" => json!({}),
            _ => return None,
        };
        Some(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
    }

    /// Serves the script over streamable HTTP, every answer a JSON body (as a
    /// server in JSON response mode sends it); returns its URL.
    async fn serve_http(&self) -> String {
        let polls = Arc::new(Mutex::new(0));
        let server = self.clone();
        let post = move |axum::Json(message): axum::Json<Value>| {
            let (server, polls) = (server.clone(), polls.clone());
            async move {
                let request = message.get("id").is_some();
                let method = message["method"].as_str().unwrap_or_default().to_owned();
                let reply = server.reply(message, &mut polls.lock().unwrap());
                match reply {
                    Some(reply) => ([("mcp-session-id", "s1")], axum::Json(reply)).into_response(),
                    // A request the script never answers: its POST stays open until the client goes.
                    None if request => {
                        server.waiting.lock().unwrap().push(method.clone());
                        let _open = Waiting(server.waiting.clone(), method);
                        std::future::pending().await
                    }
                    None => StatusCode::ACCEPTED.into_response(),
                }
            }
        };
        let refuse_get = || async { StatusCode::METHOD_NOT_ALLOWED };
        let app = axum::Router::new().route("/mcp", axum::routing::post(post).get(refuse_get));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        url
    }
}

impl InProcessServer for Scripted {
    fn spawn(&self, io: DuplexStream, cancel: CancellationToken) {
        let server = self.clone();
        tokio::spawn(async move {
            let (read, mut write) = tokio::io::split(io);
            let mut lines = BufReader::new(read).lines();
            let mut polls = 0;
            loop {
                let line = tokio::select! {
                    () = cancel.cancelled() => return,
                    line = lines.next_line() => match line {
                        Ok(Some(line)) => line,
                        _ => return,
                    },
                };
                if let Some(reply) = server.reply(serde_json::from_str(&line).unwrap(), &mut polls) {
                    write.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
                }
            }
        });
    }
}

/// How the tests reach the scripted server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Over {
    /// The in-process pipe, a message per line.
    Pipe,
    /// Streamable HTTP, every answer a JSON body.
    JsonHttp,
}

const BOTH: [Over; 2] = [Over::Pipe, Over::JsonHttp];

async fn scripted(over: Over) -> (McpRegistry, Scripted) {
    let registry = registry();
    let server = Scripted::default();
    match over {
        Over::Pipe => registry.attach_in_process(
            McpServerConfig::with_transport("scripted", TransportConfig::InProcess),
            Arc::new(server.clone()),
        ),
        Over::JsonHttp => {
            let transport =
                TransportConfig::StreamableHttp { url: server.serve_http().await, headers: Default::default() };
            registry.configure([McpServerConfig::with_transport("scripted", transport)]);
        }
    }
    start_ready(&registry, "scripted").await;
    // The server never answered `server/discover` (it predates 2026-07-28): the start went on
    // with the handshake and gave up the probe's POST instead of leaving it open.
    if over == Over::JsonHttp {
        assert_eq!(server.got("server/discover").len(), 1);
        let closed = async {
            while server.waiting.lock().unwrap().iter().any(|m| m == "server/discover") {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(5), closed).await.expect("the probe's POST is given up");
    }
    (registry, server)
}

fn with_events() -> (CallOptions, mpsc::Receiver<CallEvent>) {
    let (tx, rx) = mpsc::channel(64);
    (CallOptions { events: Some(tx), ..CallOptions::default() }, rx)
}

fn messages(rx: &mut mpsc::Receiver<CallEvent>) -> Vec<String> {
    let mut got = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let CallEvent::Progress { message: Some(message), .. } = event {
            got.push(message);
        }
    }
    got
}

/// Waits until the server got `method`.
async fn until_got(server: &Scripted, method: &str) -> Vec<Value> {
    for _ in 0..100 {
        let got = server.got(method);
        if !got.is_empty() {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server never got {method}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_call_is_cancelled_at_the_server_and_only_required_tools_run_as_tasks() {
    for over in BOTH {
        cancelled_task(over).await;
    }
}

async fn cancelled_task(over: Over) {
    let (registry, server) = scripted(over).await;
    // An optional tool is called as usual.
    let quick = registry.call_tool("scripted", "quick", None, CallOptions::default(), CancellationToken::new()).await;
    assert_eq!(serde_json::to_value(quick.unwrap().content).unwrap()[0]["text"], "quick answer");
    assert!(server.got("tools/call")[0]["params"].get("task").is_none());

    let (options, mut rx) = with_events();
    let ct = CancellationToken::new();
    let call = tokio::spawn({
        let (registry, ct) = (registry.clone(), ct.clone());
        async move { registry.call_tool("scripted", "slow", None, options, ct).await }
    });
    // The status comes from polls (this server sends no notifications).
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match rx.recv().await {
            Some(CallEvent::Progress { message: Some(message), .. }) => seen.push(message),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(seen, ["working", "step 1"], "{over:?}");
    ct.cancel();
    assert!(matches!(call.await.unwrap(), Err(McpError::Cancelled { .. })));
    let cancels = until_got(&server, "tasks/cancel").await;
    assert_eq!(cancels[0]["params"]["taskId"], "slow");
    // The creating call asked for a task and named its progress token.
    let created = server.got("tools/call")[1].clone();
    assert_eq!(created["params"]["name"], "slow");
    assert!(created["params"]["task"]["ttl"].as_u64().is_some_and(|ttl| ttl > 0), "{created}");
    assert!(created["params"]["_meta"]["progressToken"].is_string(), "{created}");
    assert_eq!(server.got("tasks/result").len(), 1);
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_calls_clock_restarts_with_each_new_status_and_then_runs_out() {
    for over in BOTH {
        clock_restarts(over).await;
    }
}

async fn clock_restarts(over: Over) {
    let (registry, server) = scripted(over).await;
    let (mut options, mut rx) = with_events();
    // Shorter than the ten status changes together (one per 50 ms poll),
    // far longer than the time between two of them.
    options.timeout = Some(Duration::from_millis(300));
    let outcome = registry.call_tool("scripted", "slow", None, options, CancellationToken::new()).await;
    assert!(matches!(outcome, Err(McpError::Timeout { .. })), "{over:?}: {outcome:?}");
    // Every change came before the clock ran out: each one restarted it.
    let steps = (1..=STEPS).map(|n| format!("step {n}"));
    assert_eq!(messages(&mut rx), std::iter::once("working".to_owned()).chain(steps).collect::<Vec<_>>());
    assert!(server.got("tasks/get").len() >= STEPS);
    assert_eq!(until_got(&server, "tasks/cancel").await[0]["params"]["taskId"], "slow");
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_task_fails_the_call_with_the_servers_error() {
    for over in BOTH {
        failed_task(over).await;
    }
}

async fn failed_task(over: Over) {
    let (registry, server) = scripted(over).await;
    let traced =
        traced_call(&registry, "c1", None, "scripted", "fails", None, CallOptions::default(), CancellationToken::new())
            .await;
    // The trace shows the call as it went out (asking for a task) and the task's error.
    let request: Value = serde_json::from_str(&traced.trace.request.text).unwrap();
    assert_eq!(request["params"]["task"], server.got("tools/call")[0]["params"]["task"], "{request}");
    assert!(traced.trace.is_error);
    match traced.result {
        Err(McpError::Server { code, message, .. }) => {
            assert_eq!((code, message.as_str()), (-32603, "the research failed"))
        }
        other => panic!("{over:?}: {other:?}"),
    }
    // It ended: nothing to cancel.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(server.got("tasks/cancel").is_empty());
    registry.shutdown().await;
}
