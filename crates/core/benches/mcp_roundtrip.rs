//! MCP client speed against the official SDKs and a raw floor, in one run: sequential
//! `tools/call echo` round trips against server-everything over stdio and streamable HTTP by
//! Patchbay's registry (also with the chat host's check that a tool is still the one approved), the
//! TypeScript and Python SDK clients, and a hand-written JSON-RPC floor (with the bare request and
//! with Patchbay's), taking turns round by round; then 10 stdio servers started in parallel against
//! the slowest single start. Servers run unsandboxed, as the other clients run theirs; the `sandbox`
//! bench measures the sandbox.
//!
//! `cargo bench -p patchbay-core --bench mcp_roundtrip -- [CALLS]` (needs the peers: `bash
//! tests/peers/install.sh`). Prints a Markdown table for docs/BENCHMARKS.md.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use common::{Client, ServerFactory, WARMUP, everything, per_call, round_trips, start_servers, take_turns};
use futures::FutureExt;
use futures::future::BoxFuture;
use patchbay_core::config::{McpServerConfig, TransportConfig};
use patchbay_test_support::hostile::hostile_mcp;
use patchbay_test_support::peers;
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The protocol version the floor speaks: the newest one with an `initialize`
/// handshake, which is what rmcp (and the TypeScript SDK) agree on with the server.
/// The server's work differs by version (from 2025-11-25 it primes each SSE answer
/// with an event id), so the floor must not pick an older, cheaper one.
const PROTOCOL: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

fn initialize(id: u64) -> Value {
    request(
        json!(id),
        "initialize",
        json!({"protocolVersion": PROTOCOL.as_str(), "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
    )
}

/// What a floor sends. The server's work per call can depend on it: with a
/// progress token, server-everything's first calls after the warm-up were
/// slower in runs of the floor alone (docs/BENCHMARKS.md).
#[derive(Clone, Copy)]
enum Request {
    /// The least a call needs: a number id, the tool and its arguments.
    Bare,
    /// What the registry sends: a string id and a progress token (so that the
    /// call's progress reaches it and keeps the call's deadline off).
    LikePatchbay,
}

/// The `echo` call `n` as `shape` sends it, and its id.
fn echo(n: u64, shape: Request) -> (Value, Value) {
    let mut params = json!({"name": "echo", "arguments": {"message": "hello"}});
    let id = match shape {
        Request::Bare => json!(n),
        Request::LikePatchbay => {
            let id = json!(format!("pb-{n}"));
            params["_meta"] = json!({"progressToken": id});
            id
        }
    };
    (request(id.clone(), "tools/call", params), id)
}

/// The raw floor over stdio: one line out, read lines until the answer's id.
async fn raw_stdio(calls: usize, shape: Request) -> Result<Duration> {
    let mut child = tokio::process::Command::new(everything())
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let mut send = async |message: Value| -> Result<()> {
        stdin.write_all(format!("{message}\n").as_bytes()).await?;
        Ok(stdin.flush().await?)
    };
    send(initialize(0)).await?;
    wait_line(&mut lines, &json!(0)).await?;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
    let mut start = Instant::now();
    for i in 0..WARMUP + calls {
        if i == WARMUP {
            start = Instant::now();
        }
        let (call, id) = echo(i as u64 + 1, shape);
        send(call).await?;
        wait_line(&mut lines, &id).await?;
    }
    Ok(start.elapsed())
}

async fn wait_line(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>, id: &Value) -> Result<()> {
    while let Some(line) = lines.next_line().await? {
        let message: Value = serde_json::from_str(&line)?;
        if message["id"] == *id {
            if message.get("error").is_some() {
                bail!("error answer: {message}");
            }
            return Ok(());
        }
    }
    bail!("the server closed its output")
}

/// The raw floor over streamable HTTP: one keep-alive connection, a POST per
/// call, the answer read from the JSON or SSE body.
async fn raw_http(url: &str, calls: usize, shape: Request) -> Result<Duration> {
    let http = reqwest::Client::new();
    let post = async |session: Option<&str>, body: Value| -> Result<(Option<String>, String)> {
        let mut request = http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL.as_str())
            .json(&body);
        if let Some(s) = session {
            request = request.header("mcp-session-id", s);
        }
        let response = request.send().await?.error_for_status()?;
        let session = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        Ok((session, response.text().await?))
    };
    let (session, _) = post(None, initialize(0)).await?;
    let session = session.context("no mcp-session-id")?;
    post(Some(&session), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
    let mut start = Instant::now();
    for i in 0..WARMUP + calls {
        if i == WARMUP {
            start = Instant::now();
        }
        let (_, body) = post(Some(&session), echo(i as u64 + 1, shape).0).await?;
        if !body.contains("hello") {
            bail!("unexpected answer: {body}");
        }
    }
    Ok(start.elapsed())
}

/// Runs an SDK client script that prints `{"calls", "total_ms"}`.
async fn sdk(program: &Path, args: &[String]) -> Result<Duration> {
    let output = tokio::process::Command::new(program).args(args).stderr(Stdio::inherit()).output().await?;
    if !output.status.success() {
        bail!("{} failed: {}", program.display(), String::from_utf8_lossy(&output.stdout));
    }
    let text = String::from_utf8(output.stdout)?;
    let result: Value = serde_json::from_str(text.lines().last().unwrap_or_default())?;
    Ok(Duration::from_secs_f64(result["total_ms"].as_f64().context("total_ms")? / 1000.0))
}

fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/mcp").join(name).display().to_string()
}

async fn ts(mode: &str, target: &str, calls: usize) -> Result<Duration> {
    let sdk_dir = peers::node_module("@modelcontextprotocol/sdk").display().to_string();
    let args = [script("ts_client.mjs"), sdk_dir, mode.into(), target.into(), calls.to_string(), WARMUP.to_string()];
    sdk(&peers::node22(), &args).await
}

async fn py(mode: &str, target: &str, calls: usize) -> Result<Duration> {
    let args = [script("py_client.py"), mode.into(), target.into(), calls.to_string(), WARMUP.to_string()];
    sdk(&peers::python(), &args).await
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn hello() -> Value {
    json!({"message": "hello"})
}

/// The clients of one transport: Patchbay's registry with `config`, the
/// SDK scripts in `mode` against `target`, and the transport's `floor`
/// sending each [`Request`].
fn clients<'a>(
    config: &'a McpServerConfig,
    mode: &'a str,
    target: &'a str,
    calls: usize,
    floor: impl Fn(Request) -> BoxFuture<'a, Result<Duration>> + Copy + Send + Sync + 'a,
) -> Vec<Client<'a>> {
    vec![
        ("Patchbay (registry)", Box::new(move || round_trips(config.clone(), "echo", hello(), calls, false).boxed())),
        (
            "Patchbay (registry) + the chat's definition check",
            Box::new(move || round_trips(config.clone(), "echo", hello(), calls, true).boxed()),
        ),
        ("TypeScript SDK", Box::new(move || ts(mode, target, calls).boxed())),
        ("Python SDK", Box::new(move || py(mode, target, calls).boxed())),
        ("raw JSON-RPC floor, bare request", Box::new(move || floor(Request::Bare))),
        ("raw JSON-RPC floor, Patchbay's request", Box::new(move || floor(Request::LikePatchbay))),
    ]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    // On a runtime worker, as the app's chat turns and commands run, not on the
    // thread that blocks on `main` (every client measured here runs there too).
    tokio::spawn(run()).await?
}

async fn run() -> Result<()> {
    let calls: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(1000);
    // Round trips vary by ±10% from one run of a client to the next (the
    // server's JIT and GC, where the scheduler puts it): a median of 7.
    let rounds = 7;
    let runs = 3;
    let command = everything();
    let stdio_config = McpServerConfig::stdio("everything", &command, &["stdio"]);
    let mut rows: BTreeMap<&str, Vec<(String, f64)>> = BTreeMap::new();

    eprintln!("stdio: {calls} calls per client, median of {rounds} rounds");
    let floor = |shape| raw_stdio(calls, shape).boxed();
    let stdio = take_turns(rounds, clients(&stdio_config, "stdio", &command, calls, floor)).await?;
    rows.insert("stdio", stdio.into_iter().map(|(n, d)| (n, per_call(d, calls))).collect());

    let port = free_port()?;
    let mut server = tokio::process::Command::new(everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        if Instant::now() > deadline {
            bail!("the HTTP server did not listen");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!("streamable HTTP: {calls} calls per client, median of {rounds} rounds");
    let http_config = McpServerConfig::with_transport(
        "remote",
        TransportConfig::StreamableHttp { url: url.clone(), headers: BTreeMap::new() },
    );
    let url = url.as_str();
    let floor = move |shape| raw_http(url, calls, shape).boxed();
    let http = take_turns(rounds, clients(&http_config, "http", url, calls, floor)).await?;
    rows.insert("streamable HTTP", http.into_iter().map(|(n, d)| (n, per_call(d, calls))).collect());
    server.kill().await?;

    println!("| transport | client | µs per call | calls per second | Patchbay speed vs this client |");
    println!("|---|---|---:|---:|---:|");
    for (transport, clients) in &rows {
        let ours = clients[0].1;
        for (client, us) in clients {
            println!("| {transport} | {client} | {us:.0} | {:.0} | {:.2}× |", 1e6 / us, us / ours);
        }
    }

    // server-everything (a Node process that spends its start loading code:
    // CPU-bound), then a server whose start is a wait (`hostile-mcp
    // slow-start:1` sleeps 1 s before answering `initialize`), which shows what
    // the host itself adds when ten start at once.
    let kinds: [(&str, ServerFactory); 2] = [
        ("server-everything", |n| McpServerConfig::stdio(n, everything(), &["stdio"])),
        ("hostile-mcp slow-start:1", |n| McpServerConfig::stdio(n, hostile_mcp().to_string_lossy(), &["slow-start:1"])),
    ];
    // The goal's "slowest single start" read two ways: the slowest of ten
    // starts each made alone, and the slowest of the ten starts in the parallel
    // run itself (each server's own time from starting to ready).
    println!();
    println!(
        "| server | slowest of 10 starts alone | 10 in parallel (median of {runs}) | ratio | slowest start in that parallel run | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for (kind, server) in kinds {
        eprintln!("starting 10 {kind} servers vs one at a time");
        let mut alone = Duration::ZERO;
        for _ in 0..10 {
            alone = alone.max(start_servers(1, server).await?.0);
        }
        let mut together = Vec::with_capacity(runs);
        for _ in 0..runs {
            together.push(start_servers(10, server).await?);
        }
        together.sort();
        let (total, slowest) = together[runs / 2];
        println!(
            "| {kind} | {:.0} ms | {:.0} ms | {:.2} | {:.0} ms | {:.2} |",
            ms(alone),
            ms(total),
            total.as_secs_f64() / alone.as_secs_f64(),
            ms(slowest),
            total.as_secs_f64() / slowest.as_secs_f64()
        );
    }
    Ok(())
}
