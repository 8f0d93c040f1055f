//! The supervisor of each started server: it connects within the start
//! timeout, restores the log level and subscriptions, pings the server while
//! it is ready and restarts it with exponential backoff when it crashes.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ServerNotification;
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::connect::{self, Connection, Context, StartFailure};
use super::listen::{Heard, Listener};
use super::{
    HealthCheck, Listened, Live, RegistryOptions, Shared, Slot, lock, read, set_level_request, subscription_request,
    write,
};
use crate::mcp::error::McpError;
use crate::mcp::launch::egress::BlockListener;
use crate::mcp::protocol::client::{CallRoutes, HostHandler};
use crate::mcp::protocol::client_tasks::ClientTasks;
use crate::mcp::protocol::events::McpEvent;
use crate::mcp::protocol::inventory::Listing;
use crate::mcp::protocol::revision;
use crate::mcp::status::ServerStatus;

/// After a (re)start: the log level and the subscriptions the server had
/// (a 2026-07-28 server gets both another way: [`listen`], [`revision`]).
/// Failures are logged, not fatal: the server still works without them.
async fn restore(shared: &Shared, slot: &Slot, peer: &Peer<RoleClient>, timeout: Duration) {
    if revision::is_modern(peer) {
        return;
    }
    let info = peer.peer_info();
    let caps = info.as_ref().map(|i| &i.capabilities);
    let level = shared.log_level(slot);
    let mut requests = Vec::new();
    if let Some(level) = level.filter(|_| caps.is_some_and(|c| c.logging.is_some())) {
        requests.push(set_level_request(level));
    }
    let subscriptions: Vec<String> = lock(&slot.subscriptions).iter().cloned().collect();
    requests.extend(subscriptions.iter().map(|uri| subscription_request(uri, true)));
    for request in requests {
        let options = PeerRequestOptions::with_timeout(timeout);
        let outcome = match peer.send_request_with_option(request, options).await {
            Ok(handle) => handle.await_response().await,
            Err(e) => Err(e),
        };
        if let Err(e) = outcome {
            tracing::warn!(server = %slot.name, error = %e, "restoring the log level or a subscription failed");
        }
    }
}

/// Pings the server and keeps how it went as its last health check.
pub(super) async fn check_health(
    slot: &Slot,
    peer: &Peer<RoleClient>,
    timeout: Duration,
) -> Result<HealthCheck, McpError> {
    let (at_ms, started) = (crate::clock::now_ms(), std::time::Instant::now());
    let request = revision::liveness_request(revision::is_modern(peer));
    let outcome = match tokio::time::timeout(timeout, peer.send_request(request)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(McpError::from_service(&slot.name, e)),
        Err(_) => Err(McpError::Timeout { server: slot.name.clone(), after: timeout }),
    };
    let round_trip_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let check = HealthCheck { at_ms, round_trip_ms, error: outcome.as_ref().err().map(ToString::to_string) };
    *lock(&slot.health) = Some(check.clone());
    outcome.map(|()| check)
}

fn backoff(options: &RegistryOptions, attempt: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
    options.backoff_initial.saturating_mul(factor).min(options.backoff_max)
}

/// Owns one server's connections from start to stop.
pub(super) async fn supervise(shared: Arc<Shared>, slot: Arc<Slot>, stop: CancellationToken) {
    let mut attempt = 0u32;
    loop {
        let status = if attempt == 0 { ServerStatus::Starting } else { ServerStatus::Restarting { attempt } };
        shared.set_status(&slot, status);
        // `start_once` watches `stop` itself: a running server must get its
        // graceful shutdown (stdin closed, the grace period, then the group
        // killed), which dropping the future would skip.
        let outcome = start_once(&shared, &slot, &stop).await;
        if stop.is_cancelled() {
            // However the connection ended, it ended because it was stopped.
            break;
        }
        let reason = match outcome {
            Ok(Ended::Stopped) => break,
            Ok(Ended::Crashed(reason)) => {
                attempt = 0;
                reason
            }
            Err(reason) if attempt == 0 => {
                shared.set_status(&slot, ServerStatus::Failed { reason });
                return;
            }
            Err(reason) => reason,
        };
        if attempt >= shared.options.max_restarts {
            shared.set_status(&slot, ServerStatus::Failed { reason });
            return;
        }
        attempt += 1;
        shared.set_status(&slot, ServerStatus::Restarting { attempt });
        tracing::warn!(server = %slot.name, attempt, %reason, "MCP server stopped; restarting");
        tokio::select! {
            () = stop.cancelled() => break,
            () = tokio::time::sleep(backoff(&shared.options, attempt)) => {}
        }
    }
    shared.set_status(&slot, ServerStatus::Stopped);
}

enum Ended {
    Stopped,
    Crashed(String),
}

/// One connection's life: connect, serve until stopped or closed, clean up.
/// `Err` is a failed start.
async fn start_once(shared: &Shared, slot: &Slot, stop: &CancellationToken) -> Result<Ended, String> {
    let config = lock(&slot.config).clone();
    let (changed_tx, mut changed_rx) = mpsc::unbounded_channel();
    let routes = CallRoutes::default();
    let tasks = ClientTasks::default();
    // What the server's requests still run as tasks stops with this connection.
    let _tasks_end = tasks.end_with_connection();
    let handler = HostHandler {
        server: slot.name.clone(),
        routes: routes.clone(),
        events: shared.events.clone(),
        changed: changed_tx,
        hooks: read(&shared.hooks).clone(),
        hook_timeout: shared.options.hook_timeout,
        roots: shared.roots.clone(),
        share_roots: config.share_roots,
        tasks,
    };
    let hears = handler.clone();
    let env = shared.env().await;
    let in_process = read(&shared.in_process).get(&slot.name).cloned();
    let on_block: BlockListener = {
        let (server, events, stderr) = (slot.name.clone(), shared.events.clone(), slot.stderr.clone());
        Arc::new(move |host: &str| {
            tracing::warn!(%server, %host, "blocked a connection: not in the allowed domains");
            stderr.push(format!("patchbay: blocked a connection to {host}: not in the allowed domains"));
            let _ = events.send(McpEvent::ConnectionBlocked { server: server.clone(), host: host.to_owned() });
        })
    };
    let cx = Context {
        env,
        secrets: &shared.secrets,
        stderr: &slot.stderr,
        handler,
        ct: stop.child_token(),
        in_process,
        policy: shared.policy(&config),
        protected: &shared.options.protected,
        on_block,
        probed: &slot.probed,
    };
    let connected = tokio::select! {
        // Stopped while starting: dropping the attempt kills what it spawned.
        () = stop.cancelled() => return Ok(Ended::Stopped),
        connected = connect::connect(&config, cx) => connected,
    };
    let (conn, report) = match connected {
        Ok(ok) => ok,
        Err(StartFailure { error, report }) => {
            *lock(&slot.report) = report.map(|r| *r);
            return Err(error.to_string());
        }
    };
    *lock(&slot.report) = report;
    // The filtering proxy lives as long as this connection.
    let Connection { service, ct, mut child, kind, inventory, lane, egress: _egress } = conn;
    let listing = Listing::of(lane.clone(), kind);
    let peer = service.peer().clone();
    let pid = child.as_ref().and_then(|c| c.pid());
    *write(&slot.inventory) = inventory;
    let call_timeout = Duration::from_secs(config.timeouts.call_secs);
    tokio::select! {
        biased;
        () = restore(shared, slot, &peer, call_timeout) => {}
        // Stopped meanwhile: the loop below ends at once and shuts the server down.
        () = stop.cancelled() => {}
    }
    let modern = revision::is_modern(&peer);
    let mut listener = Listener::new(&slot.name, &peer);
    let subscribed = || lock(&slot.subscriptions).iter().cloned().collect::<Vec<String>>();
    if modern {
        listener.open(subscribed());
    }
    let share_roots = config.share_roots;
    *write(&slot.live) = Some(Live { peer: peer.clone(), lane, routes, kind, pid, share_roots, modern });
    let _ = shared.events.send(McpEvent::InventoryChanged { server: slot.name.clone() });
    shared.set_status(slot, ServerStatus::Ready);

    let mut health = tokio::time::interval(shared.options.health_interval);
    health.tick().await;
    let waiting = service.waiting();
    tokio::pin!(waiting);
    let mut closed = false;
    let ended = loop {
        tokio::select! {
            // A stop also closes the connection (its token descends from the stop): it wins.
            biased;
            () = stop.cancelled() => break Ended::Stopped,
            _ = &mut waiting => {
                closed = true;
                break Ended::Crashed("the connection closed".to_owned());
            }
            heard = listener.next(subscribed), if modern => match heard {
                Heard::Notification(ServerNotification::ResourceUpdatedNotification(updated))
                    if !lock(&slot.subscriptions).contains(&updated.params.uri) => {}
                Heard::Notification(notification) => hears.heard(notification),
                Heard::Opened { missed, acknowledged, refused } => {
                    if !refused.is_empty() {
                        tracing::warn!(server = %slot.name, ?refused, "the server does not send updates of these resources");
                        lock(&slot.subscriptions).retain(|uri| !refused.contains(uri));
                    }
                    slot.listened.send_replace(Listened { acknowledged, refused });
                    if missed {
                        // Whatever changed while no stream was open: the lists, and (perhaps) each resource.
                        hears.missed();
                        for uri in subscribed() {
                            let _ = shared.events.send(McpEvent::ResourceUpdated { server: slot.name.clone(), uri });
                        }
                    }
                }
                Heard::Refused { asked } => {
                    // Answers those waiting for a resource in it; the set is theirs to change.
                    slot.listened.send_replace(Listened { acknowledged: Vec::new(), refused: asked });
                }
            },
            () = slot.relisten.notified(), if modern => listener.open(subscribed()),
            Some(list) = changed_rx.recv() => {
                let mut fresh = read(&slot.inventory).clone();
                match fresh.refresh(&slot.name, &peer, &listing, list, call_timeout).await {
                    Ok(()) => {
                        *write(&slot.inventory) = fresh;
                        let _ = shared.events.send(McpEvent::InventoryChanged { server: slot.name.clone() });
                    }
                    Err(e) => tracing::warn!(server = %slot.name, error = %e, "refreshing the inventory failed"),
                }
            }
            _ = health.tick() => {
                if let Err(e) = check_health(slot, &peer, shared.options.ping_timeout).await {
                    break Ended::Crashed(format!("health check failed: {e}"));
                }
            }
        }
    };
    *write(&slot.live) = None;
    ct.cancel();
    if !closed {
        let _ = tokio::time::timeout(shared.options.shutdown_grace, &mut waiting).await;
    }
    if let Some(child) = child.as_mut() {
        let status = child.shutdown(shared.options.shutdown_grace).await;
        if let (Ended::Crashed(_), Some(report)) = (&ended, lock(&slot.report).as_mut()) {
            (report.exit_code, report.signal) = crate::mcp::launch::stdio::describe(status);
            report.stderr_tail = slot.stderr.tail(40);
        }
    }
    Ok(ended)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_limit() {
        let options = RegistryOptions {
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_millis(500),
            ..RegistryOptions::default()
        };
        let waits: Vec<u128> = (1..=5).map(|a| backoff(&options, a).as_millis()).collect();
        assert_eq!(waits, vec![100, 200, 400, 500, 500]);
    }
}
