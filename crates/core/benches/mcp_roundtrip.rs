//! MCP client speed against the official SDKs and a raw floor, in one run.
//!
//! Sequential `tools/call echo` round trips against server-everything over
//! stdio and streamable HTTP, by: Patchbay's registry (rmcp), the official
//! TypeScript SDK client, the official Python SDK client, and a raw floor (a
//! minimal hand-written JSON-RPC client over the same pipe or HTTP
//! connection), taking turns round by round. The floor runs twice: with the
//! bare request, and with the request Patchbay sends (a string id and a
//! progress token), which can cost the server more. Then the time to start 10
//! stdio servers in parallel against the slowest single start, read two ways
//! (the slowest of ten starts made alone, and the slowest of the ten starts in
//! the parallel run), for server-everything (CPU-bound start) and for a server
//! whose start is a 1 s wait.
//!
//! `cargo bench -p patchbay-core --bench mcp_roundtrip -- [CALLS]` (needs the
//! peers: `bash tests/peers/install.sh`). Prints a Markdown table for
//! docs/BENCHMARKS.md.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::FutureExt;
use futures::future::BoxFuture;
use patchbay_core::config::{McpServerConfig, TransportConfig};
use patchbay_core::mcp::{CallOptions, McpEvent, McpRegistry, RegistryOptions, ServerStatus};
use patchbay_core::secrets::MemoryStore;
use patchbay_test_support::hostile::hostile_mcp;
use patchbay_test_support::peers;
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

const WARMUP: usize = 50;

fn everything() -> String {
    peers::npm_bin("mcp-server-everything").display().to_string()
}

fn registry() -> McpRegistry {
    McpRegistry::new(Arc::new(MemoryStore::new()), RegistryOptions::default())
}

async fn wait_ready(registry: &McpRegistry, names: &[String]) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let statuses: Vec<ServerStatus> = names.iter().map(|n| registry.status(n)).collect::<Result<_, _>>()?;
        if statuses.iter().all(|s| *s == ServerStatus::Ready) {
            return Ok(());
        }
        if let Some(failed) = statuses.iter().find(|s| matches!(s, ServerStatus::Failed { .. })) {
            bail!("a server failed: {failed}");
        }
        if Instant::now() > deadline {
            bail!("servers not ready: {statuses:?}");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Patchbay: the registry's `call_tool`, as the chat loop uses it.
async fn patchbay(config: McpServerConfig, calls: usize) -> Result<Duration> {
    let registry = registry();
    let name = config.name.clone();
    registry.configure([config]);
    registry.start(&name).await?;
    wait_ready(&registry, std::slice::from_ref(&name)).await?;
    let args = json!({"message": "hello"}).as_object().cloned();
    let call = || registry.call_tool(&name, "echo", args.clone(), CallOptions::default(), CancellationToken::new());
    for _ in 0..WARMUP {
        call().await?;
    }
    let start = Instant::now();
    for _ in 0..calls {
        call().await?;
    }
    let elapsed = start.elapsed();
    registry.shutdown().await;
    Ok(elapsed)
}

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

/// A client measured by [`take_turns`]: its name and one run.
type Client<'a> = (&'static str, Box<dyn Fn() -> BoxFuture<'a, Result<Duration>> + Send + Sync + 'a>);

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
        ("Patchbay (registry)", Box::new(move || patchbay(config.clone(), calls).boxed())),
        ("TypeScript SDK", Box::new(move || ts(mode, target, calls).boxed())),
        ("Python SDK", Box::new(move || py(mode, target, calls).boxed())),
        ("raw JSON-RPC floor, bare request", Box::new(move || floor(Request::Bare))),
        ("raw JSON-RPC floor, Patchbay's request", Box::new(move || floor(Request::LikePatchbay))),
    ]
}

/// Runs every client once per round, for `rounds` rounds, and gives each
/// client's median. Taking turns keeps a drift over the run from favouring
/// whoever runs last: the HTTP server is shared by every client and gets faster
/// as Node's JIT warms up, and the machine's state changes. Each round starts
/// one client further on, so that no client always meets the server first.
async fn take_turns(rounds: usize, clients: Vec<Client<'_>>) -> Result<Vec<(String, Duration)>> {
    let mut times = vec![Vec::with_capacity(rounds); clients.len()];
    for round in 0..rounds {
        for i in (0..clients.len()).map(|i| (i + round) % clients.len()) {
            times[i].push((clients[i].1)().await?);
        }
    }
    Ok(clients.iter().zip(times).map(|((name, _), times)| ((*name).to_owned(), median_of(times))).collect())
}

fn median_of(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Makes the config of a stdio server named by its argument.
type ServerFactory = fn(&str) -> McpServerConfig;

/// Starts `n` stdio servers (made by `server`) at once. Gives the time until
/// all are ready, and the longest any one of them took from starting to ready,
/// as the registry's status events tell it.
async fn start_servers(n: usize, server: ServerFactory) -> Result<(Duration, Duration)> {
    let registry = registry();
    let names: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    registry.configure(names.iter().map(|n| server(n)));
    let mut events = registry.subscribe();
    let start = Instant::now();
    registry.start_all().await;
    let mut starting = HashMap::new();
    let mut slowest = Duration::ZERO;
    let mut ready = 0;
    while ready < n {
        let event = tokio::time::timeout(Duration::from_secs(120), events.recv())
            .await
            .context("servers not ready after 120 s")??;
        let McpEvent::Status { server, status } = event else { continue };
        match status {
            ServerStatus::Starting => {
                starting.insert(server, Instant::now());
            }
            ServerStatus::Ready => {
                let began = starting.get(&server).with_context(|| format!("{server} was ready before it started"))?;
                slowest = slowest.max(began.elapsed());
                ready += 1;
            }
            ServerStatus::Failed { reason } => bail!("{server} failed: {reason}"),
            _ => {}
        }
    }
    let elapsed = start.elapsed();
    registry.shutdown().await;
    Ok((elapsed, slowest))
}

fn per_call(total: Duration, calls: usize) -> f64 {
    total.as_secs_f64() * 1e6 / calls as f64
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
