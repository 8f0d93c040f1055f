//! `patchbay kb serve` as a real MCP server, driven by the official Python SDK
//! client and by Patchbay's own client (`McpRegistry`), over stdio and
//! Streamable HTTP; the HTTP guard (bearer token, Origin) on raw requests;
//! an address other computers reach only with `--allow-remote`, and a warning.
//!
//! The HTTP server keeps its token in the OS keyring: the test command runs
//! under a private D-Bus session with an unlocked keyring.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use patchbay_core::config::{McpServerConfig, TransportConfig, ValueSource};
use patchbay_core::mcp::{CallOptions, McpRegistry, RegistryOptions, ServerStatus};
use patchbay_core::secrets::MemoryStore;
use patchbay_test_support::peers;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::common::{BIN, command, fixture, patchbay};

/// A data dir with one extra indexed folder holding `birds.md`; returns (tempdir, data dir, birds.md).
fn indexed() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("birds.md"), "# Birds\n\n## Parrots\n\nThe kakapo is a flightless nocturnal parrot.\n")
        .unwrap();
    for args in [&["kb", "add", docs.to_str().unwrap()][..], &["kb", "index"]] {
        let out = patchbay(&data, args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let birds = std::fs::canonicalize(docs.join("birds.md")).unwrap();
    (tmp, data, birds)
}

/// `patchbay kb serve --http 127.0.0.1:0`, killed on drop.
struct HttpServe {
    child: Child,
    url: String,
    /// The token printed by a first start (empty when the stored one was reused).
    token: String,
    /// The token line, as printed.
    token_line: String,
    /// Every line printed before the server said where it serves.
    said: Vec<String>,
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_http(data: &Path) -> HttpServe {
    serve_http_with(data, &["127.0.0.1:0"])
}

/// `patchbay kb serve --http ARGS…`, killed on drop.
fn serve_http_with(data: &Path, args: &[&str]) -> HttpServe {
    let mut child = command(data)
        .args(["kb", "serve", "--http"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut token_line = String::new();
    let mut url = None;
    let mut said = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        said.push(line.clone());
        if line.contains("bearer token") {
            token_line = line.clone();
        }
        if let Some(rest) = line.strip_prefix("serving the knowledge base at ") {
            url = Some(rest.to_owned());
            break;
        }
    }
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    let url = url.unwrap_or_else(|| panic!("the server did not start; it said: {said:?}"));
    let token = if token_line.contains("shown once") {
        token_line.rsplit(' ').next().unwrap().to_owned()
    } else {
        String::new()
    };
    HttpServe { child, url, token, token_line, said }
}

fn python_client(args: &[&str]) -> Value {
    let out = Command::new(peers::python())
        .arg(fixture("kb_mcp_client.py"))
        .args(args)
        .output()
        .expect("run the Python MCP client");
    assert!(out.status.success(), "python client failed:\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn check_python_answer(answer: &Value, birds: &Path) {
    assert_eq!(answer["tools"], json!(["knowledge_search"]));
    assert_eq!(answer["is_error"], false);
    let top = &answer["hits"][0];
    assert_eq!(top["path"], birds.to_str().unwrap(), "{answer}");
    assert_eq!(top["heading"], "Birds > Parrots");
    assert_eq!(top["lines"], json!([3, 5]));
    assert!(top["text"].as_str().unwrap().contains("kakapo"));
    let uri = format!("file://{}", birds.display());
    assert!(answer["resources"].as_array().unwrap().contains(&json!(uri)), "{answer}");
    // The samples are indexed too: the resource list holds more than our file.
    assert!(answer["resources"].as_array().unwrap().len() > 1);
    // Every Markdown document reads back as its text, Chinese file names (percent-encoded) included.
    let reads = answer["reads"].as_array().unwrap();
    assert!(reads.iter().any(|r| r["uri"].as_str().unwrap().contains("%E6%A3%80%E7%B4%A2")), "{answer}");
    for read in reads {
        assert_eq!(read["text"], std::fs::read_to_string(read["path"].as_str().unwrap()).unwrap(), "{read}");
    }
}

#[test]
fn python_sdk_client_over_stdio() {
    let (_tmp, data, birds) = indexed();
    let answer = python_client(&["stdio", BIN, data.to_str().unwrap(), "flightless parrot"]);
    check_python_answer(&answer, &birds);
}

#[test]
fn python_sdk_client_over_http_with_the_bearer_token() {
    let (_tmp, data, birds) = indexed();
    let server = serve_http(&data);
    assert!(server.token_line.contains("shown once"), "{}", server.token_line);
    let answer = python_client(&["http", &server.url, &server.token, "flightless parrot"]);
    check_python_answer(&answer, &birds);
    let first = server.token.clone();
    drop(server);

    // The token is kept in the keyring: the next start reuses it and does not print it again.
    let again = serve_http(&data);
    assert!(again.token_line.contains("stored in the keyring"), "{}", again.token_line);
    assert!(!again.token_line.contains(&first), "the stored token was printed again");
    let bearer = format!("Bearer {first}");
    assert_eq!(post_initialize(&again.url, &[("Authorization", &bearer)]), 200);
}

/// POSTs an `initialize` request with extra headers (a `Host` among them
/// replaces the URL's); returns the HTTP status.
fn post_initialize(url: &str, headers: &[(&str, &str)]) -> u16 {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    })
    .to_string();
    let mut request = format!(
        "POST /{path} HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {host}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    std::str::from_utf8(&head[9..12]).unwrap().parse().unwrap()
}

#[test]
fn http_requires_the_token_and_refuses_browsers() {
    let (_tmp, data, _birds) = indexed();
    let server = serve_http(&data);
    let bearer = format!("Bearer {}", server.token);
    assert_eq!(post_initialize(&server.url, &[]), 401, "no token");
    assert_eq!(post_initialize(&server.url, &[("Authorization", "Bearer wrong")]), 401, "wrong token");
    let almost = format!("Bearer {}x", server.token);
    assert_eq!(post_initialize(&server.url, &[("Authorization", &almost)]), 401, "token with a suffix");
    // A web page sends its Origin: refused even with the right token.
    for origin in ["https://evil.example", "http://127.0.0.1:1", "null"] {
        assert_eq!(post_initialize(&server.url, &[("Authorization", &bearer), ("Origin", origin)]), 403, "{origin}");
    }
    assert_eq!(post_initialize(&server.url, &[("Authorization", &bearer)]), 200, "the right token");
}

/// `patchbay kb serve ARGS…` run to its end, killed if it is still running
/// after 30 s (then it serves: the test fails).
fn serve_to_the_end(data: &Path, args: &[&str]) -> Output {
    let mut child = command(data)
        .args(["kb", "serve"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..300 {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    panic!("`kb serve {}` kept serving; it said: {}", args.join(" "), String::from_utf8_lossy(&output.stderr));
}

#[test]
fn http_on_an_address_other_computers_reach_needs_allow_remote_and_warns() {
    let (_tmp, data, _birds) = indexed();
    for addr in ["0.0.0.0:0", "[::]:0"] {
        let refused = serve_to_the_end(&data, &["--http", addr]);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success(), "{stderr}");
        assert!(stderr.contains("not serving on") && stderr.contains("plain HTTP"), "{stderr}");
        assert!(stderr.contains("--allow-remote"), "{stderr}");
        assert!(!stderr.contains("bearer token"), "no token was made: {stderr}");
    }

    let server = serve_http_with(&data, &["0.0.0.0:0", "--allow-remote"]);
    let warning = server.said.iter().find(|line| line.starts_with("warning: serving on 0.0.0.0:0 over plain HTTP"));
    assert!(warning.is_some(), "{:?}", server.said);
    assert!(server.url.starts_with("http://0.0.0.0:"), "{}", server.url);
    // A client elsewhere names the machine by the address it reaches it at.
    let bearer = format!("Bearer {}", server.token);
    assert_eq!(post_initialize(&server.url, &[("Authorization", &bearer), ("Host", "192.0.2.7:8765")]), 200);
    assert_eq!(post_initialize(&server.url, &[("Host", "192.0.2.7:8765")]), 401, "still only with the token");
}

#[test]
fn http_with_a_port_alone_serves_on_loopback_without_a_warning() {
    let (_tmp, data, _birds) = indexed();
    let server = serve_http_with(&data, &["0"]);
    assert!(server.url.starts_with("http://127.0.0.1:"), "{}", server.url);
    assert!(!server.said.iter().any(|line| line.starts_with("warning:")), "{:?}", server.said);
    let bearer = format!("Bearer {}", server.token);
    assert_eq!(post_initialize(&server.url, &[("Authorization", &bearer)]), 200);
    // A loopback server keeps refusing requests that name another host (DNS rebinding).
    assert_ne!(post_initialize(&server.url, &[("Authorization", &bearer), ("Host", "192.0.2.7:8765")]), 200);
}

fn registry() -> McpRegistry {
    let options = RegistryOptions { shutdown_grace: Duration::from_millis(500), ..RegistryOptions::default() };
    McpRegistry::new(Arc::new(MemoryStore::new()), options)
}

async fn start_ready(registry: &McpRegistry, name: &str) {
    registry.start(name).await.unwrap();
    for _ in 0..600 {
        if registry.status(name).unwrap() == ServerStatus::Ready {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} is {}: {:?}", registry.status(name).unwrap(), registry.stderr_tail(name, 50));
}

/// Patchbay's own client: tools, a search, the resource list and one read.
async fn check_with_patchbay_client(registry: &McpRegistry, name: &str, birds: &Path) {
    start_ready(registry, name).await;
    let tools = registry.tools(name).unwrap();
    assert_eq!(tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), ["knowledge_search"]);
    let schema = serde_json::to_value(&tools[0].input_schema).unwrap();
    assert!(schema["properties"]["query"].is_object(), "{schema}");

    let args = json!({"query": "kakapo", "top_k": 2}).as_object().unwrap().clone();
    let result = registry
        .call_tool(name, "knowledge_search", Some(args), CallOptions::default(), CancellationToken::new())
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true));
    let text = result.content[0].as_text().unwrap().text.clone();
    let hits: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(hits[0]["path"], birds.to_str().unwrap(), "{hits}");
    assert_eq!(hits[0]["heading"], "Birds > Parrots");

    // Vector search without embeddings is the caller's mistake: a tool error, not a protocol error.
    let args = json!({"query": "kakapo", "mode": "vector"}).as_object().unwrap().clone();
    let result = registry
        .call_tool(name, "knowledge_search", Some(args), CallOptions::default(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(result.content[0].as_text().unwrap().text.contains("no embeddings"));

    let uri = format!("file://{}", birds.display());
    assert!(registry.resources(name).unwrap().iter().any(|r| r.uri == uri));
    let read = registry.read_resource(name, &uri, CancellationToken::new()).await.unwrap();
    let serialized = serde_json::to_value(&read).unwrap();
    assert_eq!(serialized["contents"][0]["text"], std::fs::read_to_string(birds).unwrap());
    // Only indexed documents are readable.
    let outside = registry.read_resource(name, "file:///etc/passwd", CancellationToken::new()).await;
    assert!(outside.is_err(), "{outside:?}");
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patchbay_client_over_stdio() {
    let (_tmp, data, birds) = indexed();
    let registry = registry();
    let data = data.to_str().unwrap();
    let mut kb = McpServerConfig::stdio("kb", BIN, &["--data-dir", data, "kb", "serve", "--stdio"]);
    // Sandboxed at normal, it reads home and its data folder; its documents here are in /tmp.
    kb.policy.read = vec![birds.parent().unwrap().canonicalize().unwrap()];
    registry.configure([kb]);
    check_with_patchbay_client(&registry, "kb", &birds).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patchbay_client_over_http() {
    let (_tmp, data, birds) = indexed();
    let server = tokio::task::spawn_blocking(move || serve_http(&data)).await.unwrap();
    let registry = registry();
    let headers =
        BTreeMap::from([("Authorization".to_owned(), ValueSource::Plain(format!("Bearer {}", server.token)))]);
    let transport = TransportConfig::StreamableHttp { url: server.url.clone(), headers };
    registry.configure([McpServerConfig::with_transport("kb", transport)]);
    check_with_patchbay_client(&registry, "kb", &birds).await;

    // Without the token Patchbay's client reports the server as failed, not ready.
    let registry = self::registry();
    let transport = TransportConfig::StreamableHttp { url: server.url.clone(), headers: BTreeMap::new() };
    registry.configure([McpServerConfig::with_transport("kb", transport)]);
    registry.start("kb").await.ok();
    for _ in 0..100 {
        if matches!(registry.status("kb").unwrap(), ServerStatus::Failed { .. }) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = registry.status("kb").unwrap();
    assert!(matches!(status, ServerStatus::Failed { .. }), "{status}");
    assert!(status.to_string().to_lowercase().contains("auth"), "{status}");
    registry.shutdown().await;
}
