//! A tool that answers with 100 MB, through the registry: the call fails at
//! once with [`McpError::MessageTooLarge`] naming the server and the limit (no
//! timeout), this process's peak memory grows by far less than the answer,
//! and the next call to the same server works.
//!
//! Its own test binary, so the peak-memory reading (`VmHWM`) is not shared
//! with other tests.

#[path = "mcp_common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use patchbay_core::config::McpServerConfig;
use patchbay_core::mcp::wire::frame::MAX_MESSAGE_BYTES;
use patchbay_core::mcp::{CallOptions, McpError};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_answer_fails_the_call_clearly_with_bounded_memory_and_the_server_stays_usable() {
    let hostile = patchbay_test_support::hostile::hostile_mcp();
    let registry = registry();
    registry.configure([McpServerConfig::stdio("huge", hostile.to_str().unwrap(), &["huge-result:100"])]);
    start_ready(&registry, "huge").await;
    let pid = registry.snapshot()[0].pid.unwrap();

    let before = peak_rss();
    let started = Instant::now();
    let options = || CallOptions { timeout: Some(Duration::from_secs(30)), ..CallOptions::default() };
    let outcome = registry.call_tool("huge", "poke", None, options(), CancellationToken::new()).await;
    match &outcome {
        Err(McpError::MessageTooLarge { server, limit, size }) => {
            assert_eq!(server, "huge");
            assert_eq!(*limit, MAX_MESSAGE_BYTES);
            assert!(size.is_some_and(|s| s > 100 << 20), "size {size:?}");
        }
        other => panic!("expected MessageTooLarge, got {other:?}"),
    }
    let message = outcome.unwrap_err().to_string();
    assert!(message.contains("\"huge\"") && message.contains(&MAX_MESSAGE_BYTES.to_string()), "{message}");
    assert!(started.elapsed() < Duration::from_secs(25), "failed by timeout after {:?}", started.elapsed());
    let growth = peak_rss().saturating_sub(before);
    eprintln!("peak memory growth during the 100 MB answer: {} MB", growth >> 20);
    // Buffering the answer whole would take 100 MB for the line and as much again parsed.
    assert!(growth < 48 << 20, "peak memory grew by {} MB", growth >> 20);

    // Same process, same connection: the next call is answered.
    let args = serde_json::json!({"small": true}).as_object().cloned();
    let result = registry.call_tool("huge", "poke", args, options(), CancellationToken::new()).await.unwrap();
    assert_eq!(text(&result), "poked");
    assert_eq!(registry.snapshot()[0].pid, Some(pid));
    registry.shutdown().await;
    assert_group_gone(pid).await;
}
