//! Server lifecycle against real processes: status order, restart after a crash,
//! no orphans after shutdown, and the launch doctor.
//!
//! Linux only: process liveness and groups are read from `/proc`.
#![cfg(target_os = "linux")]

use crate::mcp_common as common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use patchbay_core::config::{McpServerConfig, SecurityLevel, TransportConfig, ValueSource};
use patchbay_core::mcp::{McpEvent, McpRegistry, RegistryOptions, ServerStatus};
use patchbay_core::secrets::MemoryStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_events_come_in_order_and_a_killed_server_is_restarted() {
    let registry = registry();
    registry.configure([everything_stdio("everything")]);
    let mut events = registry.subscribe();
    registry.start_all().await;
    let seen = statuses_until(&mut events, "everything", |s| s.is_settled()).await;
    assert_eq!(seen, vec![ServerStatus::Starting, ServerStatus::Ready]);

    let pid = registry.snapshot()[0].pid.expect("a pid");
    std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    let seen = statuses_until(&mut events, "everything", |s| *s == ServerStatus::Ready).await;
    assert_eq!(seen, vec![ServerStatus::Restarting { attempt: 1 }, ServerStatus::Ready]);
    let new_pid = registry.snapshot()[0].pid.expect("a new pid");
    assert_ne!(pid, new_pid);
    assert!(!registry.tools("everything").unwrap().is_empty());

    registry.stop("everything").await.unwrap();
    let seen = statuses_until(&mut events, "everything", |s| *s == ServerStatus::Stopped).await;
    assert_eq!(seen, vec![ServerStatus::Stopped]);
    assert_group_gone(new_pid).await;
}

/// The health check: a ready server is pinged every `health_interval` and the
/// answer kept as its last check; one that stays alive but stops answering
/// (every process of it stopped with SIGSTOP) fails the check and is restarted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_answering_fails_its_health_check_and_is_restarted() {
    let options = patchbay_core::mcp::RegistryOptions {
        health_interval: Duration::from_millis(700),
        ping_timeout: Duration::from_millis(500),
        ..options()
    };
    let registry =
        patchbay_core::mcp::McpRegistry::new(std::sync::Arc::new(patchbay_core::secrets::MemoryStore::new()), options);
    registry.configure([everything_stdio("everything")]);
    start_ready(&registry, "everything").await;
    let mut events = registry.subscribe();
    let answered = until(|| registry.health("everything")).await;
    assert_eq!(answered.error, None, "{answered:?}");
    assert!(answered.at_ms > 0 && answered.round_trip_ms < 500, "{answered:?}");
    // "Check now": a fresh check, kept as the last.
    let now = registry.ping("everything").await.unwrap();
    assert!(now.at_ms >= answered.at_ms && now.error.is_none(), "{now:?}");

    let pid = registry.snapshot()[0].pid.expect("a pid");
    let stopped = patchbay_test_support::processes::process_tree(pid);
    for p in &stopped {
        std::process::Command::new("kill").args(["-STOP", &p.to_string()]).status().unwrap();
    }
    let failed = until(|| registry.health("everything").filter(|h| h.error.is_some())).await;
    assert!(failed.error.as_deref().is_some_and(|e| e.contains("did not answer within")), "{failed:?}");
    assert!(failed.round_trip_ms >= 500, "{failed:?}");
    let seen = statuses_until(&mut events, "everything", |s| *s == ServerStatus::Ready).await;
    assert_eq!(seen.first(), Some(&ServerStatus::Restarting { attempt: 1 }), "{seen:?}");
    assert_ne!(registry.snapshot()[0].pid, Some(pid), "a new process answers");
    assert_eq!(registry.status("everything").unwrap(), ServerStatus::Ready);
    // The stopped processes were killed, not left behind stopped.
    assert_group_gone(pid).await;
    for p in stopped {
        // Gone, or dead and waiting for init to reap it (a zombie, state `Z`).
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]);
        assert!(matches!(state, None | Some("Z")), "process {p} of the stopped server lives on: {stat}");
    }
    registry.shutdown().await;
}

/// Polls `get` every 50 ms for up to 30 s until it gives something.
async fn until<T>(get: impl Fn() -> Option<T>) -> T {
    for _ in 0..600 {
        if let Some(v) = get() {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("gave nothing for 30 s")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_leaves_no_process_of_the_group_even_when_stdin_is_ignored_and_starts_nothing_after() {
    // A wrapper that keeps a grandchild and ignores SIGTERM and stdin closing:
    // only killing the whole group ends it.
    let everything = patchbay_test_support::peers::npm_bin("mcp-server-everything");
    let script = format!("trap '' TERM; sleep 300 & {} stdio; wait", everything.display());
    // A grace period long enough to ask for a start while the stop waits it out, on a slow machine.
    let grace = Duration::from_secs(3);
    let registry =
        McpRegistry::new(Arc::new(MemoryStore::new()), RegistryOptions { shutdown_grace: grace, ..options() });
    // Unsandboxed (permissive): the wrapper, sleep and node share the server's process group.
    let mut wrapped = McpServerConfig::stdio("wrapped", "sh", &["-c", &script]);
    wrapped.policy.level = Some(SecurityLevel::Permissive);
    registry.configure([wrapped]);
    start_ready(&registry, "wrapped").await;
    let pid = registry.snapshot()[0].pid.unwrap();
    assert!(group_members(pid).len() >= 3, "{:?}", group_members(pid));
    let stopping = tokio::spawn({
        let registry = registry.clone();
        async move { registry.shutdown().await }
    });
    // While the stop waits out the grace period (the wrapper ignores it), a start asked for (a
    // click while Patchbay quits) is refused: a server started now would outlive the stop.
    tokio::time::sleep(grace / 10).await;
    let refused = registry.start("wrapped").await.unwrap_err();
    assert!(!stopping.is_finished(), "the start was asked for only after the stop");
    assert_eq!(refused.to_string(), "MCP server \"wrapped\" was not started: Patchbay is quitting");
    stopping.await.unwrap();
    assert_eq!(registry.status("wrapped").unwrap(), ServerStatus::Stopped);
    assert_group_gone(pid).await;
    // And for good.
    registry.start_all().await;
    let after = &registry.snapshot()[0];
    assert_eq!((&after.status, after.pid), (&ServerStatus::Stopped, None));
}

/// In the sandbox the server runs in its own session (no terminal to type into), so it is
/// not in the group the host kills: killing bubblewrap ends its PID namespace, and with it
/// every process of the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_leaves_no_process_of_a_sandboxed_server() {
    let everything = patchbay_test_support::peers::npm_bin("mcp-server-everything");
    let script = format!("trap '' TERM; sleep 300 & {} stdio; wait", everything.display());
    let registry = registry();
    let mut wrapped = McpServerConfig::stdio("wrapped", "sh", &["-c", &script]);
    wrapped.policy.level = Some(SecurityLevel::Normal);
    registry.configure([wrapped]);
    start_ready(&registry, "wrapped").await;
    let pid = registry.snapshot()[0].pid.unwrap();
    // bubblewrap, its init in the sandbox, the wrapper, sleep and node.
    let tree = patchbay_test_support::processes::process_tree(pid);
    assert!(tree.len() >= 5, "{tree:?}");
    registry.shutdown().await;
    for _ in 0..50 {
        if patchbay_test_support::processes::still_alive(&tree).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("still alive after shutdown: {:?}", patchbay_test_support::processes::still_alive(&tree));
}

/// Stopping a running server closes its stdin and gives it the grace period
/// before its group is killed. (A stop once dropped the running connection,
/// which killed the group at once, before the server could read end-of-file.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_server_reads_end_of_file_and_gets_its_grace_period() {
    let registry = registry();
    let hostile = patchbay_test_support::hostile::hostile_mcp();
    let stubborn = |name: &str| McpServerConfig::stdio(name, hostile.to_string_lossy(), &["ignore-stdin-close"]);
    registry.configure([stubborn("stubborn")]);
    start_ready(&registry, "stubborn").await;
    let pid = registry.snapshot()[0].pid.unwrap();
    let started = std::time::Instant::now();
    registry.stop("stubborn").await.unwrap();
    let took = started.elapsed();
    assert!(took >= options().shutdown_grace, "stopped after {took:?}, before the grace period ended");
    let stderr = registry.stderr_tail("stubborn", 10).unwrap();
    assert!(stderr.iter().any(|l| l.contains("stdin closed, staying alive anyway")), "{stderr:?}");
    assert_group_gone(pid).await;

    // Shutdown gives every server its grace period at the same time, not one after another.
    let names: Vec<String> = (0..4).map(|i| format!("stubborn-{i}")).collect();
    registry.configure(names.iter().map(|n| stubborn(n)));
    for name in &names {
        start_ready(&registry, name).await;
    }
    let started = std::time::Instant::now();
    registry.shutdown().await;
    let took = started.elapsed();
    assert!(took < options().shutdown_grace * 4, "four stubborn servers took {took:?} to stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_registry_handle_stops_its_servers() {
    let registry = registry();
    registry.configure([everything_stdio("everything")]);
    start_ready(&registry, "everything").await;
    let pid = registry.snapshot()[0].pid.unwrap();
    let clone = registry.clone();
    drop(registry);
    assert!(!group_members(pid).is_empty(), "a clone still holds the registry");
    drop(clone);
    assert_group_gone(pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_start_in_parallel_and_a_failing_one_blocks_no_other() {
    let registry = registry();
    let mut slow = McpServerConfig::stdio("hangs", "sleep", &["300"]);
    slow.timeouts.startup_secs = 2;
    registry.configure([
        everything_stdio("a"),
        everything_stdio("b"),
        slow,
        McpServerConfig::stdio("missing", "surely-not-a-command-xyz", &[]),
    ]);
    let mut events = registry.subscribe();
    registry.start_all().await;
    // "a" and "b" become ready while "hangs" is still starting.
    let mut ready = 0;
    while ready < 2 {
        if let McpEvent::Status { server, status: ServerStatus::Ready } =
            tokio::time::timeout(Duration::from_secs(60), events.recv()).await.unwrap().unwrap()
        {
            assert!(server == "a" || server == "b");
            ready += 1;
        }
    }
    registry.wait_settled(Duration::from_secs(30)).await;
    match registry.status("hangs").unwrap() {
        ServerStatus::Failed { reason } => assert!(reason.contains("did not start within 2s"), "{reason}"),
        other => panic!("{other:?}"),
    }
    match registry.status("missing").unwrap() {
        ServerStatus::Failed { reason } => assert!(reason.contains("not found on PATH"), "{reason}"),
        other => panic!("{other:?}"),
    }
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_doctor_reports_exit_code_env_keys_and_stderr() {
    let registry = registry();
    let mut config = McpServerConfig::stdio("broken", "sh", &["-c", "echo 'cannot find module foo' >&2; exit 3"]);
    if let TransportConfig::Stdio { env, .. } = &mut config.transport {
        env.insert("API_TOKEN".into(), ValueSource::Plain("value-not-shown".into()));
    }
    registry.configure([config, McpServerConfig::stdio("missing", "surely-not-a-command-xyz", &[])]);
    registry.start_all().await;
    registry.wait_settled(Duration::from_secs(30)).await;
    assert!(matches!(registry.status("broken").unwrap(), ServerStatus::Failed { .. }));

    let report = registry.doctor("broken").await.unwrap().unwrap();
    assert_eq!(report.exit_code, Some(3));
    assert_eq!(report.env_added, vec!["API_TOKEN".to_owned()]);
    assert!(report.resolved.as_ref().unwrap().is_absolute());
    assert_eq!(report.stderr_tail, vec!["cannot find module foo".to_owned()]);
    let text = report.to_string();
    assert!(text.contains("exit code: 3") && !text.contains("value-not-shown"), "{text}");

    let missing = registry.doctor("missing").await.unwrap().unwrap();
    assert_eq!(missing.resolved, None);
    assert!(!missing.searched.is_empty());
    assert!(missing.to_string().contains("not found on PATH; looked in"), "{missing}");
}
