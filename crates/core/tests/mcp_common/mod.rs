//! Helpers for the MCP integration tests: registries over real peers.

#![allow(dead_code, reason = "each test file uses a different part")]

use std::sync::Arc;
use std::time::Duration;

use patchbay_core::config::{McpServerConfig, TransportConfig};
use patchbay_core::mcp::{CallOptions, McpEvent, McpRegistry, RegistryOptions, ServerStatus};
use patchbay_core::secrets::{MemoryStore, SecretStore};
use patchbay_test_support::peers;
use tokio_util::sync::CancellationToken;

/// Fast timings so restarts and shutdowns happen within a test.
pub fn options() -> RegistryOptions {
    RegistryOptions {
        backoff_initial: Duration::from_millis(200),
        backoff_max: Duration::from_secs(2),
        shutdown_grace: Duration::from_millis(500),
        ..RegistryOptions::default()
    }
}

pub fn registry_with(secrets: Arc<dyn SecretStore>) -> McpRegistry {
    McpRegistry::new(secrets, options())
}

pub fn registry() -> McpRegistry {
    registry_with(Arc::new(MemoryStore::new()))
}

/// server-everything over stdio.
pub fn everything_stdio(name: &str) -> McpServerConfig {
    McpServerConfig::stdio(name, peers::npm_bin("mcp-server-everything").to_str().unwrap(), &["stdio"])
}

/// Starts `name` and waits until it is ready; panics with its status and stderr otherwise.
pub async fn start_ready(registry: &McpRegistry, name: &str) {
    registry.start(name).await.unwrap();
    wait_for(registry, name, |s| *s == ServerStatus::Ready).await;
}

/// Waits up to 60 s for `name`'s status to satisfy `pred`.
pub async fn wait_for(registry: &McpRegistry, name: &str, pred: impl Fn(&ServerStatus) -> bool) {
    for _ in 0..600 {
        let status = registry.status(name).unwrap();
        if pred(&status) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{name} is {}; stderr:\n{}",
        registry.status(name).unwrap(),
        registry.stderr_tail(name, 50).unwrap().join("\n")
    );
}

/// Statuses of `name` from `events` until one satisfies `last`.
pub async fn statuses_until(
    events: &mut tokio::sync::broadcast::Receiver<McpEvent>,
    name: &str,
    last: impl Fn(&ServerStatus) -> bool,
) -> Vec<ServerStatus> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), events.recv()).await.expect("status event").unwrap();
        if let McpEvent::Status { server, status } = event
            && server == name
        {
            let done = last(&status);
            seen.push(status);
            if done {
                return seen;
            }
        }
    }
}

/// The text of a tool result's content blocks, joined.
pub fn text(result: &rmcp::model::CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

/// Calls `tool` of `server` with `args` (a JSON object) and no options; panics on a protocol error.
pub async fn call(
    registry: &McpRegistry,
    server: &str,
    tool: &str,
    args: serde_json::Value,
) -> rmcp::model::CallToolResult {
    registry
        .call_tool(server, tool, args.as_object().cloned(), CallOptions::default(), CancellationToken::new())
        .await
        .unwrap()
}

/// A local HTTP server on 127.0.0.1 answering `200 ok` to every request, on a thread; its port.
pub fn ok_http_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 2048];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    port
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub use patchbay_test_support::processes::group_members;

/// Waits up to 5 s for process group `pgid` to be empty.
pub async fn assert_group_gone(pgid: u32) {
    for _ in 0..50 {
        if group_members(pgid).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("process group {pgid} still has {:?}", group_members(pgid));
}

/// A peer process killed when the test ends.
pub struct Peer(pub tokio::process::Child);

/// Starts a server process (output discarded) and waits until it listens on `port`.
pub async fn spawn(cmd: &mut tokio::process::Command, port: u16) -> Peer {
    let child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    patchbay_test_support::peers::wait_listening(port).await;
    Peer(child)
}

/// server-everything as three servers: `stdio`, and `sse` and `http` served
/// by their own processes (killed when the peers returned are dropped).
pub async fn everything_on_every_transport() -> (Vec<McpServerConfig>, Vec<Peer>) {
    let mut running = Vec::new();
    let mut configs = vec![everything_stdio("stdio")];
    for (name, mode) in [("sse", "sse"), ("http", "streamableHttp")] {
        let port = free_port();
        let mut cmd = tokio::process::Command::new(peers::npm_bin("mcp-server-everything"));
        cmd.arg(mode).env("PORT", port.to_string());
        running.push(spawn(&mut cmd, port).await);
        let headers = std::collections::BTreeMap::new();
        let transport = match name {
            "sse" => TransportConfig::Sse { url: format!("http://127.0.0.1:{port}/sse"), headers },
            _ => TransportConfig::StreamableHttp { url: format!("http://127.0.0.1:{port}/mcp"), headers },
        };
        configs.push(McpServerConfig::with_transport(name, transport));
    }
    (configs, running)
}

/// This process's peak resident set size in bytes (Linux `/proc`).
pub fn peak_rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc/self/status");
    let kb: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// A Python MCP server (official SDK) written to a temporary folder and run
/// with the peers' Python.
pub struct PyServer {
    _dir: tempfile::TempDir,
    pub python: String,
    pub script: String,
}

impl PyServer {
    pub fn new(source: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("server.py");
        std::fs::write(&script, source).unwrap();
        let python = peers::python().to_str().unwrap().to_owned();
        Self { script: script.to_str().unwrap().to_owned(), python, _dir: dir }
    }

    /// A stdio server config: `python server.py ARGS…`.
    pub fn stdio(&self, name: &str, args: &[&str]) -> McpServerConfig {
        let args: Vec<&str> = std::iter::once(self.script.as_str()).chain(args.iter().copied()).collect();
        McpServerConfig::stdio(name, self.python.as_str(), &args)
    }

    /// Starts `python server.py ARGS… PORT` on a free port and waits until it listens.
    pub async fn serve(&self, args: &[&str]) -> (Peer, u16) {
        let port = free_port();
        let mut cmd = tokio::process::Command::new(&self.python);
        cmd.arg(&self.script).args(args).arg(port.to_string());
        (spawn(&mut cmd, port).await, port)
    }
}
