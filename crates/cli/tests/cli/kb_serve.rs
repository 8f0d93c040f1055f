//! `patchbay kb serve` as a real MCP server, driven by the official Python and
//! TypeScript SDK clients and by Patchbay's own client (`McpRegistry`), over
//! stdio, Streamable HTTP and legacy SSE, with `knowledge_search` and RAGFlow's
//! tools; the HTTP guard (bearer token, Origin, Host) on raw requests, SSE's too;
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
pub struct HttpServe {
    child: Child,
    /// The Streamable HTTP endpoint (`…/mcp`).
    pub url: String,
    /// The legacy SSE endpoint (`…/sse`).
    pub sse: String,
    /// The token printed by a first start (empty when the stored one was reused).
    pub token: String,
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

pub fn serve_http(data: &Path) -> HttpServe {
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
            url =
                Some(rest.split(' ').filter(|word| word.starts_with("http://")).map(str::to_owned).collect::<Vec<_>>());
            break;
        }
    }
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    let urls = url.unwrap_or_else(|| panic!("the server did not start; it said: {said:?}"));
    let [url, sse] = <[String; 2]>::try_from(urls).unwrap_or_else(|urls| panic!("two endpoints, not {urls:?}"));
    assert!(url.ends_with("/mcp") && sse.ends_with("/sse"), "{url} {sse}");
    let token = if token_line.contains("shown once") {
        token_line.rsplit(' ').next().unwrap().to_owned()
    } else {
        String::new()
    };
    HttpServe { child, url, sse, token, token_line, said }
}

fn python_client(args: &[&str]) -> Value {
    sdk_client(Command::new(peers::python()).arg(fixture("kb_mcp_client.py")), args)
}

fn typescript_client(args: &[&str]) -> Value {
    let sdk = peers::node_module("@modelcontextprotocol/sdk");
    sdk_client(Command::new(peers::node22()).arg(fixture("kb_mcp_client.mjs")).arg(sdk), args)
}

fn sdk_client(command: &mut Command, args: &[&str]) -> Value {
    let out = command.args(args).output().expect("run the SDK's MCP client");
    assert!(out.status.success(), "the SDK client failed:\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What an SDK client found: the tools, a search, the resources read back, and
/// the RAGFlow-compatible tools with each argument form.
fn check_sdk_answer(answer: &Value, birds: &Path) {
    assert_eq!(answer["tools"], json!(["knowledge_search", "ragflow_list_datasets", "ragflow_retrieval"]));
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
    check_ragflow(answer, birds);
}

/// The RAGFlow-compatible tools: folders as datasets, RAGFlow's chunk fields, each argument form.
fn check_ragflow(answer: &Value, birds: &Path) {
    let rf = &answer["ragflow"];
    let docs = birds.parent().unwrap();
    // Two datasets: the test's folder and the shipped samples; the description lists both, as RAGFlow's does.
    let datasets = rf["datasets"].as_array().unwrap();
    assert_eq!(datasets.len(), 2, "{rf}");
    let ours = datasets.iter().find(|d| d["description"] == docs.to_str().unwrap()).expect("our folder is a dataset");
    assert_eq!(ours["name"], "docs");
    let description = answer["retrieval_description"].as_str().unwrap();
    assert!(datasets.iter().all(|d| description.contains(d["id"].as_str().unwrap())), "{description}");

    let top = &rf["all"]["chunks"][0];
    assert_eq!(top["path"], birds.to_str().unwrap(), "{rf}");
    assert_eq!(top["document_keyword"], "birds.md");
    assert_eq!(top["dataset_id"], ours["id"]);
    assert_eq!(top["kb_id"], ours["id"]);
    assert_eq!(top["dataset_name"], "docs");
    assert_eq!(top["lines"], json!([3, 5]));
    assert!(top["content"].as_str().unwrap().contains("kakapo"));
    assert!(top["similarity"].as_f64().unwrap() >= 0.2 && top["term_similarity"].as_f64().unwrap() > 0.0);
    assert_eq!(rf["all"]["pagination"]["page"], 1);
    assert_eq!(rf["all"]["pagination"]["page_size"], 10);
    assert_eq!(rf["all"]["query_info"]["dataset_count"], 2);
    let total = rf["all"]["pagination"]["total_chunks"].as_u64().unwrap() as usize;
    assert_eq!(rf["all"]["chunks"].as_array().unwrap().len(), total.min(10));

    // One dataset at a time (a question with a word from each): only its folder's chunks.
    for (id, found) in rf["per_dataset"].as_object().unwrap() {
        let folder = datasets.iter().find(|d| d["id"] == id.as_str()).unwrap()["description"].as_str().unwrap();
        let chunks = found["chunks"].as_array().unwrap();
        assert!(!chunks.is_empty(), "{id}: {found}");
        assert!(
            chunks.iter().all(|c| c["path"].as_str().unwrap().starts_with(folder) && c["dataset_id"] == id.as_str())
        );
        assert_eq!(found["query_info"]["dataset_count"], 1);
    }
    // Everything the question finds, in every dataset, with no floor.
    let all_unfloored = rf["per_dataset"]
        .as_object()
        .unwrap()
        .values()
        .map(|f| f["pagination"]["total_chunks"].as_u64().unwrap())
        .sum::<u64>();
    // One document: only its chunks, where the question finds others too.
    let document = rf["document"]["chunks"].as_array().unwrap();
    assert!(!document.is_empty() && document.iter().all(|c| c["document_id"] == top["document_id"]), "{rf}");
    assert!(rf["document"]["pagination"]["total_chunks"].as_u64().unwrap() < all_unfloored, "{rf}");
    assert_eq!(rf["unknown_document"]["is_error"], true);
    assert!(rf["unknown_document"]["text"].as_str().unwrap().contains("no document has the id \"0000\""), "{rf}");
    // Pages: the second page of one holds the second passage of the whole list.
    assert_eq!(
        rf["page_two"]["pagination"],
        json!({"page": 2, "page_size": 1, "total_chunks": all_unfloored, "total_pages": all_unfloored})
    );
    assert_eq!(rf["page_two"]["chunks"].as_array().unwrap().len(), 1);
    // A floor of 0.99 keeps only passages that match the whole question.
    let strict = rf["strict"]["chunks"].as_array().unwrap();
    assert!(!strict.is_empty(), "birds.md holds both words asked: {rf}");
    assert!(strict.iter().all(|c| c["similarity"].as_f64().unwrap() >= 0.99), "{rf}");
    assert!(strict.len() < all_unfloored as usize);
    // RAGFlow's clients send null for what they leave out.
    assert_eq!(rf["nulls"]["chunks"], rf["all"]["chunks"]);
    // Arguments the knowledge base cannot honour are tool errors that say which and why.
    assert_eq!(rf["unknown_dataset"]["is_error"], true);
    assert!(rf["unknown_dataset"]["text"].as_str().unwrap().contains("\"nope\""), "{rf}");
    assert_eq!(rf["bad_threshold"]["is_error"], true);
    assert!(
        rf["bad_threshold"]["text"].as_str().unwrap().contains("similarity_threshold must be between 0 and 1, not 1.5")
    );
}

/// An SDK client that only connects and lists tools with extra headers: `None` when it got in,
/// else its error.
fn sdk_refused(client: fn(&[&str]) -> Value, kind: &str, url: &str, headers: &[&str]) -> Option<String> {
    let args: Vec<&str> = [kind, url, "unused", "x"].into_iter().chain(headers.iter().copied()).collect();
    let probe = client(&args);
    (!probe["connected"].as_bool().unwrap()).then(|| probe["error"].as_str().unwrap().to_owned())
}

/// Both SDK clients over both HTTP transports: the right token gets in, a wrong one or a
/// browser's `Origin` is refused, and the client's error says which (the Python SDK's streamable
/// HTTP client reports only that the server answered with an error).
fn check_http_guards(server: &HttpServe) {
    let bearer = format!("Authorization=Bearer {}", server.token);
    let clients = [("python", python_client as fn(&[&str]) -> Value), ("typescript", typescript_client)];
    for (sdk, client) in clients {
        for (kind, url) in [("http", &server.url), ("sse", &server.sse)] {
            let says = |error: &str, status: &str, words: &str| {
                let opaque = sdk == "python" && kind == "http" && error.contains("Server returned an error response");
                error.contains(status) || error.contains(words) || opaque
            };
            assert_eq!(sdk_refused(client, kind, url, &[&bearer]), None, "{sdk} {kind}: the right token");
            let wrong = sdk_refused(client, kind, url, &["Authorization=Bearer wrong"]).expect("a wrong token");
            assert!(says(&wrong, "401", "bearer token"), "{sdk} {kind}: {wrong}");
            let browser = sdk_refused(client, kind, url, &["Origin=https://evil.example", &bearer]).expect("a browser");
            assert!(says(&browser, "403", "cross-origin"), "{sdk} {kind}: {browser}");
        }
    }
}

#[test]
fn python_sdk_client_over_stdio() {
    let (_tmp, data, birds) = indexed();
    let answer = python_client(&["stdio", BIN, data.to_str().unwrap(), "flightless parrot"]);
    check_sdk_answer(&answer, &birds);
}

#[test]
fn typescript_sdk_client_over_stdio() {
    let (_tmp, data, birds) = indexed();
    let answer = typescript_client(&["stdio", BIN, data.to_str().unwrap(), "flightless parrot"]);
    check_sdk_answer(&answer, &birds);
}

#[test]
fn sdk_clients_over_http_and_legacy_sse_with_the_bearer_token() {
    let (_tmp, data, birds) = indexed();
    let server = serve_http(&data);
    for client in [python_client as fn(&[&str]) -> Value, typescript_client] {
        for url in [&server.url, &server.sse] {
            let kind = if url.ends_with("/sse") { "sse" } else { "http" };
            check_sdk_answer(&client(&[kind, url, &server.token, "flightless parrot"]), &birds);
        }
    }
    check_http_guards(&server);
}

#[test]
fn the_bearer_token_is_kept_in_the_keyring() {
    let (_tmp, data, _birds) = indexed();
    let server = serve_http(&data);
    assert!(server.token_line.contains("shown once"), "{}", server.token_line);
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
    let path = &url[url.strip_prefix("http://").unwrap().find('/').unwrap() + "http://".len()..];
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    })
    .to_string();
    let mut all = vec![("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    all.extend_from_slice(headers);
    raw(url, "POST", path, &all, &body).0
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

/// Sends a raw HTTP/1.1 request to the server at `url`'s host; returns the status and the
/// connection (to read the rest of an event stream from).
fn raw(url: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, BufReader<TcpStream>) {
    let host = url.strip_prefix("http://").unwrap().split('/').next().unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {host}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    (status[9..12].parse().unwrap(), reader)
}

#[test]
fn legacy_sse_requires_the_token_refuses_browsers_and_checks_each_message() {
    let (_tmp, data, _birds) = indexed();
    let server = serve_http(&data);
    let bearer = format!("Bearer {}", server.token);
    let get = |headers: &[(&str, &str)]| raw(&server.sse, "GET", "/sse", headers, "").0;
    assert_eq!(get(&[]), 401, "no token");
    assert_eq!(get(&[("Authorization", "Bearer wrong")]), 401, "wrong token");
    assert_eq!(get(&[("Authorization", &bearer), ("Origin", "https://evil.example")]), 403, "a browser");
    assert_eq!(get(&[("Authorization", &bearer), ("Host", "rebound.example:80")]), 403, "DNS rebinding");

    // A session: the stream names where to post, each post is checked and answered on the stream.
    let (status, mut events) = raw(&server.sse, "GET", "/sse", &[("Authorization", &bearer)], "");
    assert_eq!(status, 200);
    let endpoint = events
        .by_ref()
        .lines()
        .map(Result::unwrap)
        .find_map(|line| line.strip_prefix("data: ").map(str::to_owned))
        .unwrap();
    assert!(endpoint.starts_with("/messages/?session_id="), "{endpoint}");
    let post = |path: &str, headers: &[(&str, &str)], body: &str| raw(&server.sse, "POST", path, headers, body).0;
    let json = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
    assert_eq!(post(&endpoint, &json, "{not json"), 400);
    assert_eq!(post("/messages/?session_id=0000", &json, "{}"), 404, "an unknown session");
    assert_eq!(post(&endpoint, &[("Content-Type", "application/json")], "{}"), 401, "a post without the token");
    let initialize = json!({
        "jsonrpc": "2.0", "id": 7, "method": "initialize",
        "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    });
    assert_eq!(post(&endpoint, &json, &initialize.to_string()), 202);
    let answer: Value = events
        .by_ref()
        .lines()
        .map(Result::unwrap)
        .find_map(|line| line.strip_prefix("data: ").and_then(|data| serde_json::from_str(data).ok()))
        .unwrap();
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["result"]["protocolVersion"], "2024-11-05", "{answer}");

    // A client that closes its stream ends its session: its posts are then refused.
    drop(events);
    let ping = json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}).to_string();
    let started = std::time::Instant::now();
    while post(&endpoint, &json, &ping) != 404 {
        assert!(started.elapsed() < Duration::from_secs(30), "the session outlived its stream");
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("session ended {:?} after its stream closed", started.elapsed());
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
    assert_eq!(post_initialize(&server.url, &[("Authorization", &bearer), ("Host", "192.0.2.7:8765")]), 403);
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
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(names, ["knowledge_search", "ragflow_list_datasets", "ragflow_retrieval"]);
    let search = tools.iter().find(|t| t.name == "knowledge_search").unwrap();
    let schema = serde_json::to_value(&search.input_schema).unwrap();
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

/// Patchbay's client against `kb serve --http`, over one of its transports; returns the server
/// (and the folder it serves from).
async fn check_patchbay_client_over(
    transport: fn(&HttpServe, BTreeMap<String, ValueSource>) -> TransportConfig,
) -> (tempfile::TempDir, HttpServe) {
    let (tmp, data, birds) = indexed();
    let server = tokio::task::spawn_blocking(move || serve_http(&data)).await.unwrap();
    let registry = registry();
    let headers =
        BTreeMap::from([("Authorization".to_owned(), ValueSource::Plain(format!("Bearer {}", server.token)))]);
    registry.configure([McpServerConfig::with_transport("kb", transport(&server, headers))]);
    check_with_patchbay_client(&registry, "kb", &birds).await;
    (tmp, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patchbay_client_over_legacy_sse() {
    check_patchbay_client_over(|server, headers| TransportConfig::Sse { url: server.sse.clone(), headers }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patchbay_client_over_http() {
    let (_tmp, server) = check_patchbay_client_over(|server, headers| TransportConfig::StreamableHttp {
        url: server.url.clone(),
        headers,
    })
    .await;

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
