//! When the `patchbay` process is killed with `SIGKILL` (no cleanup code runs),
//! the stdio server it started dies with it, grandchildren included: the
//! server's process-group watchdog sees Patchbay's end of its pipe close and
//! kills the group.

#![cfg(unix)]

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use patchbay_core::config::{McpServerConfig, SecurityLevel};
use patchbay_test_support::peers;
use patchbay_test_support::processes::group_members;

use crate::common::{command, seed_servers};

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_killed_host_leaves_no_process_of_the_servers_group() {
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = tmp.path().join("server.pid");
    // Like `npx`: a wrapper that ignores SIGTERM, keeps a grandchild and runs the real server.
    let everything = peers::npm_bin("mcp-server-everything");
    let script =
        format!("echo $$ > '{}'; trap '' TERM; sleep 300 & {} stdio; wait", pid_file.display(), everything.display());
    // Unsandboxed (permissive), so that the test reads the wrapper's pid file and its process group from outside.
    let mut wrapped = McpServerConfig::stdio("wrapped", "sh", &["-c", &script]);
    wrapped.policy.level = Some(SecurityLevel::Permissive);
    seed_servers(tmp.path(), &[wrapped]);

    let args = r#"{"duration": 120, "steps": 120}"#;
    let mut host = command(tmp.path())
        .args(["mcp", "call", "wrapped", "trigger-long-running-operation", "--args", args])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut pgid = 0;
    wait_until("the server to start", Duration::from_secs(60), || {
        pgid = std::fs::read_to_string(&pid_file).ok().and_then(|p| p.trim().parse().ok()).unwrap_or(0);
        // The wrapper, sleep and node (and the watchdog).
        pgid != 0 && group_members(pgid).len() >= 3
    });
    // Let the call reach the server.
    std::thread::sleep(Duration::from_secs(2));
    assert!(host.try_wait().unwrap().is_none(), "patchbay is still calling the tool");

    host.kill().unwrap(); // SIGKILL
    host.wait().unwrap();
    wait_until("the server's process group to be gone", Duration::from_secs(5), || group_members(pgid).is_empty());
}

#[test]
fn the_test_sees_processes_it_started() {
    // Guards the check above against a `group_members` that never finds anything.
    let mut child = Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
    let pid = child.id();
    assert_eq!(group_members(pid), vec![pid]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(group_members(pid).is_empty());
}
