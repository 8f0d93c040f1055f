//! `logging/setLevel` and resource subscriptions against the real
//! server-everything over stdio: messages below the chosen level are not sent,
//! those at or above it arrive as `McpEvent::Log`; a subscribed resource's
//! updates arrive as `McpEvent::ResourceUpdated` and stop after unsubscribing.

use crate::mcp_common as common;

use std::time::Duration;

use common::*;
use patchbay_core::mcp::{CallOptions, LogLevel, McpEvent};
use tokio::sync::broadcast::Receiver;
use tokio_util::sync::CancellationToken;

/// Events for `server` until `until` matches one (which ends the list), or `limit` passes.
async fn events_until(
    events: &mut Receiver<McpEvent>,
    limit: Duration,
    until: impl Fn(&McpEvent) -> bool,
) -> (Vec<McpEvent>, bool) {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + limit;
    while let Ok(Ok(event)) = tokio::time::timeout_at(deadline, events.recv()).await {
        let done = until(&event);
        seen.push(event);
        if done {
            return (seen, true);
        }
    }
    (seen, false)
}

fn log_text(event: &McpEvent) -> Option<(String, String)> {
    match event {
        McpEvent::Log { server, message } if server == "everything" => {
            Some((message.level.clone(), message.data.to_string()))
        }
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_level_filters_messages_and_subscriptions_deliver_updates_until_unsubscribed() {
    let registry = registry();
    registry.configure([everything_stdio("everything")]);
    start_ready(&registry, "everything").await;
    let ct = CancellationToken::new;
    let uri = registry.resources("everything").unwrap().first().expect("server-everything has resources").uri.clone();
    let mut events = registry.subscribe();

    // At `error`, the server's `info` acknowledgement of the subscription is not sent.
    registry.set_log_level("everything", LogLevel::Error, ct()).await.unwrap();
    registry.subscribe_resource("everything", &uri, ct()).await.unwrap();
    registry.call_tool("everything", "toggle-subscriber-updates", None, CallOptions::default(), ct()).await.unwrap();
    let updated =
        |e: &McpEvent| matches!(e, McpEvent::ResourceUpdated { server, uri: u } if server == "everything" && *u == uri);
    let (seen, got) = events_until(&mut events, Duration::from_secs(20), updated).await;
    assert!(got, "no ResourceUpdated for {uri}: {seen:?}");

    // At `info`, the acknowledgement of unsubscribing arrives.
    registry.set_log_level("everything", LogLevel::Info, ct()).await.unwrap();
    registry.unsubscribe_resource("everything", &uri, ct()).await.unwrap();
    let acknowledged =
        |e: &McpEvent| log_text(e).is_some_and(|(_, text)| text.contains("Received Unsubscribe Resource"));
    let (later, got) = events_until(&mut events, Duration::from_secs(10), acknowledged).await;
    assert!(got, "the info-level acknowledgement did not arrive: {later:?}");
    let logs: Vec<(String, String)> = seen.iter().chain(&later).filter_map(log_text).collect();
    assert!(
        !logs.iter().any(|(_, text)| text.contains("Received Subscribe Resource")),
        "a message below the level was delivered: {logs:?}"
    );
    assert_eq!(logs.last().map(|(level, _)| level.as_str()), Some("info"));

    // Updates come every 5 s while subscribed; none comes after unsubscribing.
    let (after, got) = events_until(&mut events, Duration::from_secs(7), updated).await;
    assert!(!got, "an update arrived after unsubscribing: {after:?}");
    registry.shutdown().await;
}
