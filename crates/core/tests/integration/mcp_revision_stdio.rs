//! Which revision a stdio server gets: the newest it speaks, found by a probe on its pipe
//! (`server/discover`). A server that speaks only 2026-07-28 (no `initialize`) starts and is
//! called; server-everything (the TypeScript SDK, which refuses the probe at once) gets the
//! handshake on the same pipe; one that ignores requests before `initialize` (as the Python
//! SDK's older releases do) gets it after the probe's wait, and is not probed again when it
//! starts again. One that refuses `initialize` naming 2026-07-28 before it answers the probe
//! starts again by discovery.

use crate::mcp_common as common;

use common::*;
use patchbay_core::config::McpServerConfig;
use patchbay_core::mcp::{CallOptions, McpRegistry, ServerStatus};
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

    assert_eq!(probes_ignored(&registry, "quiet"), 1);
    registry.restart("quiet").await.unwrap();
    start_ready(&registry, "quiet").await;
    assert_eq!(registry.about("quiet").unwrap().unwrap().protocol_version, "2025-11-25");
    assert_eq!(probes_ignored(&registry, "quiet"), 1, "known to be older: not probed again");
    registry.shutdown().await;
}

/// A server of 2026-07-28 that answers the probe late and refuses the handshake at once, before
/// that answer (as one that handles requests side by side does): the refusal names the revision
/// it speaks, so it is launched again and started by discovery, and known for its next start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_that_names_the_newest_revision_starts_the_server_again_by_discovery() {
    let mut config = McpServerConfig::stdio("late", hostile_mcp().to_str().unwrap(), &["modern:6"]);
    // The probe waits 5 s, the server answers it after 6; the second launch has the rest.
    config.timeouts.startup_secs = 20;
    let registry = registry();
    registry.configure([config]);
    start_ready(&registry, "late").await;
    assert_eq!(registry.about("late").unwrap().unwrap().protocol_version, "2026-07-28");
    let launches = || {
        let lines = registry.stderr_tail("late", 200).unwrap();
        lines.iter().filter(|line| line.contains("hostile-mcp modern:6 started")).count()
    };
    assert_eq!(launches(), 2, "launched again after the refusal");
    let called =
        registry.call_tool("late", "poke", None, CallOptions::default(), CancellationToken::new()).await.unwrap();
    assert_eq!(text(&called), "poked");
    registry.restart("late").await.unwrap();
    start_ready(&registry, "late").await;
    assert_eq!(launches(), 3, "known to speak it: its answer is waited for");
    registry.shutdown().await;
}

/// The `server/discover` requests `server` ignored, as its stderr says.
fn probes_ignored(registry: &McpRegistry, server: &str) -> usize {
    let lines = registry.stderr_tail(server, 200).unwrap();
    lines.iter().filter(|line| line.contains("ignored server/discover")).count()
}

/// A server known to speak 2026-07-28 that went back to an older release, one that ignores
/// requests before `initialize`: its next start waits the whole start timeout for the answer
/// and fails; the start after that asks afresh and gets the handshake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_known_to_speak_the_newest_revision_that_went_back_is_asked_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let mode = dir.path().join("mode");
    std::fs::write(&mode, "modern").unwrap();
    let wrapper = dir.path().join("server.sh");
    // The mode file is an argument, so that the sandbox shows it to the server.
    std::fs::write(&wrapper, format!("exec '{}' \"$(cat \"$1\")\"\n", hostile_mcp().display())).unwrap();
    let mut config = McpServerConfig::stdio("changing", "sh", &[wrapper.to_str().unwrap(), mode.to_str().unwrap()]);
    config.timeouts.startup_secs = 4;
    let registry = registry();
    registry.configure([config]);
    start_ready(&registry, "changing").await;
    assert_eq!(registry.about("changing").unwrap().unwrap().protocol_version, "2026-07-28");

    std::fs::write(&mode, "quiet-before-init").unwrap();
    registry.restart("changing").await.unwrap();
    wait_for(&registry, "changing", |s| matches!(s, ServerStatus::Failed { .. })).await;
    let status = registry.status("changing").unwrap();
    let timed_out = matches!(&status, ServerStatus::Failed { reason } if reason.contains("did not start within 4s"));
    assert!(timed_out, "the whole start timeout went to the probe: {status:?}");
    assert_eq!(probes_ignored(&registry, "changing"), 1);

    start_ready(&registry, "changing").await;
    assert_eq!(registry.about("changing").unwrap().unwrap().protocol_version, "2025-11-25");
    assert_eq!(probes_ignored(&registry, "changing"), 2, "asked afresh");
    registry.shutdown().await;
}
