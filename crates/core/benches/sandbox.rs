//! What the sandbox of a stdio server costs (issue 31), the sides taking turns round by round
//! ([`common::take_turns`]): server-everything's start and `tools/call echo` round trip at normal and
//! strict against permissive; and fetches through the filtering proxy, end to end (`hostile-mcp
//! fetch` and mcp-server-fetch at network `domains: [localhost]` against network any) and the proxy
//! alone (`mcp::launch::egress::Egress` on a listener `patchbay-sandbox-init` hands it, against a
//! direct TCP connection).
//!
//! `cargo build --release -p patchbay-sandbox-init && cargo bench -p patchbay-core --bench sandbox
//! -- [CALLS]` (needs the peers, `bash tests/peers/install.sh`, and bubblewrap). Prints Markdown
//! tables for docs/BENCHMARKS.md.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use common::{Client, ServerFactory, WARMUP, everything, per_call, round_trips, start_servers, take_turns};
use futures::FutureExt;
use patchbay_core::config::{McpServerConfig, Network, SecurityLevel};
use patchbay_core::mcp::launch::egress::Egress;
use patchbay_test_support::hostile::hostile_mcp;
use patchbay_test_support::peers;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The local page: 16 KiB of HTML-ish text.
const PAGE_BYTES: usize = 16 * 1024;

fn everything_at(name: &str, level: SecurityLevel) -> McpServerConfig {
    let mut config = McpServerConfig::stdio(name, everything(), &["stdio"]);
    config.policy.level = Some(level);
    config
}

/// `hostile-mcp fetch`: a GET of the page and nothing else, per call.
fn fetcher(network: Network) -> McpServerConfig {
    at_normal(McpServerConfig::stdio("fetcher", hostile_mcp().to_string_lossy(), &["fetch"]), network)
}

/// mcp-server-fetch (PyPI), as a user adds it; its `fetch` with `raw` returns the page as it is.
fn fetch_server(network: Network) -> McpServerConfig {
    let program = peers::venv_bin("mcp-server-fetch");
    let args = ["--allow-private-ips", "--ignore-robots-txt"];
    at_normal(McpServerConfig::stdio("fetch", program.to_string_lossy(), &args), network)
}

fn at_normal(mut config: McpServerConfig, network: Network) -> McpServerConfig {
    config.policy.level = Some(SecurityLevel::Normal);
    config.policy.network = Some(network);
    config
}

/// `labels[0]`: `server` at normal with the whole network (a direct fetch);
/// `labels[1]`: with `domains: [localhost]` (through the proxy); each run is
/// `calls` calls of its `fetch` with `args`.
fn proxy_sides<'a>(
    labels: [&'static str; 2],
    server: fn(Network) -> McpServerConfig,
    args: serde_json::Value,
    calls: usize,
) -> Vec<Client<'a>> {
    labels
        .into_iter()
        .zip([Network::Any, Network::Domains(vec!["localhost".into()])])
        .map(|(side, network)| -> Client {
            let args = args.clone();
            (side, Box::new(move || round_trips(server(network.clone()), "fetch", args.clone(), calls, false).boxed()))
        })
        .collect()
}

/// Serves the page to every connection, then closes it.
async fn serve_page(listener: TcpListener) {
    let page = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {PAGE_BYTES}\r\nConnection: close\r\n\r\n{}",
        "x".repeat(PAGE_BYTES)
    );
    let page: Arc<[u8]> = page.into_bytes().into();
    loop {
        let Ok((mut stream, _)) = listener.accept().await else { continue };
        let page = page.clone();
        tokio::spawn(async move {
            let mut head = Vec::new();
            let mut buf = [0u8; 2048];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = stream.write_all(&page).await;
            let _ = stream.shutdown().await;
        });
    }
}

/// One GET of `target` on a new connection, read to its end.
async fn get(mut stream: impl AsyncRead + AsyncWrite + Unpin, target: &str, host: &str) -> Result<()> {
    stream.write_all(format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes()).await?;
    let mut answer = Vec::with_capacity(PAGE_BYTES + 256);
    stream.read_to_end(&mut answer).await?;
    if !answer.starts_with(b"HTTP/1.1 200 ") || answer.len() < PAGE_BYTES {
        bail!("unexpected answer: {}", String::from_utf8_lossy(&answer[..answer.len().min(200)]));
    }
    Ok(())
}

/// `fetches` GETs of the page (after [`WARMUP`] more): through the proxy's
/// port when one is given, else straight to the page's port.
async fn fetch_page(port: u16, proxy: Option<u16>, fetches: usize) -> Result<Duration> {
    let host = format!("localhost:{port}");
    let mut start = Instant::now();
    for i in 0..WARMUP + fetches {
        if i == WARMUP {
            start = Instant::now();
        }
        match proxy {
            Some(proxy) => {
                get(TcpStream::connect(("127.0.0.1", proxy)).await?, &format!("http://{host}/"), &host).await?
            }
            None => get(TcpStream::connect(("127.0.0.1", port)).await?, "/", &host).await?,
        }
    }
    Ok(start.elapsed())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Prints one table: each side's figure and its ratio to the first side's.
fn table(what: &str, unit: &str, goal: &str, rows: &[(String, f64)]) {
    println!();
    println!("| {what} | {unit} | ratio | goal |");
    println!("|---|---:|---:|---|");
    let base = rows[0].1;
    for (i, (side, value)) in rows.iter().enumerate() {
        let goal = if i == 0 { "" } else { goal };
        println!("| {side} | {value:.0} | {:.2}× | {goal} |", value / base);
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    // On a runtime worker, as the app's servers start and calls run.
    tokio::spawn(run()).await?
}

async fn run() -> Result<()> {
    if ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"].iter().any(|v| std::env::var_os(v).is_some()) {
        bail!("unset the proxy variables: a sandboxed server keeps them, and the direct fetch must be direct");
    }
    let calls: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(1000);
    let (start_rounds, rounds) = (15, 9);

    // The first sandboxed start also probes bubblewrap once; not measured.
    start_servers(1, |n| everything_at(n, SecurityLevel::Strict)).await?;
    eprintln!("start of server-everything, median of {start_rounds} rounds");
    let levels: [(&'static str, ServerFactory); 3] = [
        ("permissive (no sandbox)", |n| everything_at(n, SecurityLevel::Permissive)),
        ("normal", |n| everything_at(n, SecurityLevel::Normal)),
        ("strict", |n| everything_at(n, SecurityLevel::Strict)),
    ];
    let clients: Vec<Client> = levels
        .iter()
        .map(|&(side, server)| -> Client {
            (side, Box::new(move || start_servers(1, server).map(|started| started.map(|(total, _)| total)).boxed()))
        })
        .collect();
    let starts = take_turns(start_rounds, clients).await?;
    table(
        "server-everything start to ready (stdio)",
        &format!("ms, median of {start_rounds}"),
        "≤ 1.10×",
        &starts.into_iter().map(|(side, d)| (side, ms(d))).collect::<Vec<_>>(),
    );

    eprintln!("echo round trips: {calls} calls per side, median of {rounds} rounds");
    let echo = json!({"message": "hello"});
    let clients: Vec<Client> = [SecurityLevel::Permissive, SecurityLevel::Normal, SecurityLevel::Strict]
        .into_iter()
        .zip(levels.iter().map(|(side, _)| *side))
        .map(|(level, side)| -> Client {
            let echo = echo.clone();
            (
                side,
                Box::new(move || {
                    round_trips(everything_at("everything", level), "echo", echo.clone(), calls, false).boxed()
                }),
            )
        })
        .collect();
    let trips = take_turns(rounds, clients).await?;
    table(
        "`tools/call echo` of server-everything (stdio, sequential)",
        &format!("µs per call, median of {rounds}"),
        "≤ 1.05×",
        &trips.into_iter().map(|(side, d)| (side, per_call(d, calls))).collect::<Vec<_>>(),
    );

    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let page_server = tokio::spawn(serve_page(listener));
    let fetches = calls / 4;
    eprintln!("fetches of a {PAGE_BYTES}-byte page: {fetches} per side, median of {rounds} rounds");
    let url = json!({"url": format!("http://localhost:{port}/")});
    let clients = proxy_sides(
        [
            "`hostile-mcp fetch` at normal, network any: direct",
            "`hostile-mcp fetch` at normal, domains [localhost]: through the proxy",
        ],
        fetcher,
        url,
        fetches,
    );
    let end_to_end = take_turns(rounds, clients).await?;
    let real_fetches = (calls / 20).max(5);
    eprintln!("mcp-server-fetch: {real_fetches} fetches per side, median of {rounds} rounds");
    let page = json!({"url": format!("http://localhost:{port}/"), "raw": true});
    let clients = proxy_sides(
        [
            "`mcp-server-fetch` at normal, network any: direct",
            "`mcp-server-fetch` at normal, domains [localhost]: through the proxy",
        ],
        fetch_server,
        page,
        real_fetches,
    );
    let real = take_turns(rounds, clients).await?;
    let proxy = Egress::start(
        Network::Domains(vec!["localhost".into()]),
        Arc::new(|host: &str| eprintln!("the proxy refused {host}")),
        &std::env::temp_dir(),
    )?;
    let proxy_port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let init = std::env::current_exe()?
        .parent()
        .and_then(Path::parent)
        .context("the bench runs in target/*/deps")?
        .join("patchbay-sandbox-init");
    let mut handing = tokio::process::Command::new(&init)
        .arg("--proxy")
        .arg(proxy_port.to_string())
        .arg(proxy.dir().join(proxy.socket_name()))
        .args(["--", "sleep", "3600"])
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("{} (cargo build --release -p patchbay-sandbox-init)", init.display()))?;
    // The proxy removes its hand-over socket once it holds the listener.
    let handed = proxy.dir().join(proxy.socket_name());
    for _ in 0..500 {
        if !handed.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if handed.exists() {
        bail!("patchbay-sandbox-init handed the proxy no listener in 5 s");
    }
    let clients: Vec<Client> = vec![
        ("the bench's GET: direct TCP", Box::new(move || fetch_page(port, None, fetches).boxed())),
        ("the bench's GET: the proxy", Box::new(move || fetch_page(port, Some(proxy_port), fetches).boxed())),
    ];
    let alone = take_turns(rounds, clients).await?;
    let per_fetch = |sides: Vec<(String, Duration)>| -> Vec<(String, f64)> {
        sides.into_iter().map(|(side, d)| (side, per_call(d, fetches))).collect()
    };
    table(
        &format!("fetch of a local {} KiB page, new connection each", PAGE_BYTES / 1024),
        &format!("µs per fetch, median of {rounds}"),
        "≤ 1.2×",
        &per_fetch(end_to_end),
    );
    table(
        &format!("`fetch` of mcp-server-fetch, a local {} KiB page (raw)", PAGE_BYTES / 1024),
        &format!("µs per call, median of {rounds}"),
        "≤ 1.2×",
        &real.into_iter().map(|(side, d)| (side, per_call(d, real_fetches))).collect::<Vec<_>>(),
    );
    let unit = format!("µs per fetch, median of {rounds}");
    table("the proxy alone (no MCP, no sandbox)", &unit, "", &per_fetch(alone));
    handing.kill().await?;
    page_server.abort();
    Ok(())
}
