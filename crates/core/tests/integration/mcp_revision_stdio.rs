//! Which revision a stdio server gets: the newest it speaks, found by a probe on its pipe
//! (`server/discover`). A server that speaks only 2026-07-28 (no `initialize`) starts and is
//! called; server-everything (the TypeScript SDK, which refuses the probe at once) gets the
//! handshake on the same pipe; one that ignores requests before `initialize` (as the Python
//! SDK's older releases do) gets it after the probe's wait, and is not probed again when it
//! starts again.

use crate::mcp_common as common;

use common::*;
use patchbay_core::config::McpServerConfig;
use patchbay_core::mcp::{CallOptions, McpRegistry};
use patchbay_test_support::hostile::hostile_mcp;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_stdio_server_gets_the_newest_revision_it_speaks() {
    let hostile = hostile_mcp();
    let hostile = hostile.to_str().unwrap();
    let mut quiet = McpServerConfig::stdio("quiet", hostile, &["quiet-before-init"]);
    // The probe waits at most half of it.
    quiet.timeouts.startup_secs = 4;
    let registry = registry();
    registry.configure([McpServerConfig::stdio("modern", hostile, &["modern"]), quiet, everything_stdio("everything")]);
    registry.start_all().await;
    for (name, revision, tool) in
        [("modern", "2026-07-28", "poke"), ("quiet", "2025-11-25", "poke"), ("everything", "2025-11-25", "echo")]
    {
        start_ready(&registry, name).await;
        assert_eq!(registry.about(name).unwrap().unwrap().protocol_version, revision, "{name}");
        let arguments = serde_json::json!({"message": "hi"}).as_object().cloned();
        let called = registry
            .call_tool(name, tool, arguments, CallOptions::default(), CancellationToken::new())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!text(&called).is_empty(), "{name}");
    }
    // A 2026-07-28 server's health check is a `server/discover`, which it answers.
    let health = registry.ping("modern").await.unwrap();
    assert!(health.error.is_none(), "{health:?}");

    assert_eq!(probes_ignored(&registry), 1);
    registry.restart("quiet").await.unwrap();
    start_ready(&registry, "quiet").await;
    assert_eq!(registry.about("quiet").unwrap().unwrap().protocol_version, "2025-11-25");
    assert_eq!(probes_ignored(&registry), 1, "known to be older: not probed again");
    registry.shutdown().await;
}

/// The `server/discover` requests the quiet server ignored, as its stderr says.
fn probes_ignored(registry: &McpRegistry) -> usize {
    let lines = registry.stderr_tail("quiet", 200).unwrap();
    lines.iter().filter(|line| line.contains("ignored server/discover")).count()
}
