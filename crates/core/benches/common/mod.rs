//! What the MCP benchmarks share: server-everything, a registry that runs
//! servers unsandboxed unless their config asks for a level, the registry's
//! round trip, starts timed by status events, and clients taking turns.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::future::BoxFuture;
use patchbay_core::config::{McpServerConfig, PolicyDefaults, SecurityLevel};
use patchbay_core::mcp::protocol::approval::{ToolFingerprint, check_unchanged};
use patchbay_core::mcp::{CallOptions, McpEvent, McpRegistry, RegistryOptions, ServerStatus};
use patchbay_core::secrets::MemoryStore;
use patchbay_test_support::peers;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub const WARMUP: usize = 50;

pub fn everything() -> String {
    peers::npm_bin("mcp-server-everything").display().to_string()
}

/// A registry whose default level is permissive, so a server runs as the SDK
/// clients and floors run theirs (unconfined) unless its own policy sets a level.
pub fn registry() -> McpRegistry {
    let policy = PolicyDefaults { level: SecurityLevel::Permissive, ..PolicyDefaults::default() };
    McpRegistry::new(Arc::new(MemoryStore::new()), RegistryOptions { policy, ..RegistryOptions::default() })
}

pub async fn wait_ready(registry: &McpRegistry, names: &[String]) -> Result<()> {
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

/// `calls` sequential calls of `tool` with `args` (after [`WARMUP`] more)
/// through the registry's `call_tool`, as the chat loop uses it; the time of
/// the measured calls. A result marked as an error fails the run. When
/// `checked`, each call first checks that the tool's definition is the one
/// fingerprinted at the start, as the chat's host does before every call
/// (`RegistryTools::call_tool`: the server's tools, the tool, `check_unchanged`).
pub async fn round_trips(
    config: McpServerConfig,
    tool: &str,
    args: Value,
    calls: usize,
    checked: bool,
) -> Result<Duration> {
    let registry = registry();
    let name = config.name.clone();
    registry.configure([config]);
    registry.start(&name).await?;
    wait_ready(&registry, std::slice::from_ref(&name)).await?;
    let args: Option<Map<String, Value>> = args.as_object().cloned();
    let current = || registry.tools(&name).ok().and_then(|t| t.into_iter().find(|t| t.name == tool));
    let pin = current().map(|t| ToolFingerprint::of(&t).as_str().to_owned()).with_context(|| format!("no {tool}"))?;
    let call = async || -> Result<()> {
        if checked {
            check_unchanged(&name, tool, &pin, current().as_ref())?;
        }
        let result =
            registry.call_tool(&name, tool, args.clone(), CallOptions::default(), CancellationToken::new()).await?;
        if result.is_error == Some(true) {
            bail!("{name} answered {tool} with an error: {:?}", result.content);
        }
        Ok(())
    };
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

/// A client measured by [`take_turns`]: its name and one run.
pub type Client<'a> = (&'static str, Box<dyn Fn() -> BoxFuture<'a, Result<Duration>> + Send + Sync + 'a>);

/// Runs every client once per round, for `rounds` rounds, and gives each
/// client's median. Taking turns keeps a drift over the run from favouring
/// whoever runs last: a shared server gets faster as Node's JIT warms up, and
/// the machine's state changes. Each round starts one client further on, so
/// that no client always goes first.
pub async fn take_turns(rounds: usize, clients: Vec<Client<'_>>) -> Result<Vec<(String, Duration)>> {
    let mut times = vec![Vec::with_capacity(rounds); clients.len()];
    for round in 0..rounds {
        for i in (0..clients.len()).map(|i| (i + round) % clients.len()) {
            times[i].push((clients[i].1)().await?);
        }
    }
    Ok(clients.iter().zip(times).map(|((name, _), times)| ((*name).to_owned(), median_of(times))).collect())
}

pub fn median_of(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Makes the config of a stdio server named by its argument.
pub type ServerFactory = fn(&str) -> McpServerConfig;

/// Starts `n` stdio servers (made by `server`) at once. Gives the time until
/// all are ready, and the longest any one of them took from starting to ready,
/// as the registry's status events tell it.
pub async fn start_servers(n: usize, server: ServerFactory) -> Result<(Duration, Duration)> {
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

pub fn per_call(total: Duration, calls: usize) -> f64 {
    total.as_secs_f64() * 1e6 / calls as f64
}
