//! Hostile MCP servers (`hostile-mcp` from test-support) over rmcp's
//! child-process transport: each misbehaviour gives a clear error within a
//! time limit, results stay bounded once capped, and the process is gone
//! afterwards.
//!
//! Linux only: process liveness and groups are read from `/proc`.
#![cfg(target_os = "linux")]

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use patchbay_core::llm::ContentPart;
use patchbay_core::mcp::protocol::content::{ResultLimits, for_model, for_ui};
#[allow(deprecated)]
use rmcp::model::{CallToolRequestParams, LoggingMessageNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStderr, Command};

/// Counts log notifications.
#[derive(Clone, Default)]
struct CountLogs(Arc<AtomicUsize>);

// Logging is deprecated in the newest spec, but servers still flood with it.
#[allow(deprecated)]
impl ClientHandler for CountLogs {
    async fn on_logging_message(&self, _: LoggingMessageNotificationParam, _: NotificationContext<RoleClient>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

struct Hostile {
    transport: TokioChildProcess,
    pid: u32,
    stderr: ChildStderr,
}

fn spawn(mode: &str) -> Result<Hostile> {
    let mut command = Command::new(patchbay_test_support::hostile::hostile_mcp());
    command.arg(mode);
    let (transport, stderr) = TokioChildProcess::builder(command).stderr(Stdio::piped()).spawn()?;
    let pid = transport.id().context("child has a pid")?;
    Ok(Hostile { transport, pid, stderr: stderr.context("stderr is piped")? })
}

/// Whether `pid` is still a live (not zombie) process.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next()) != Some('Z'))
        .unwrap_or(false)
}

async fn assert_gone(pid: u32) {
    for _ in 0..100 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("hostile server {pid} is still running");
}

async fn stderr_text(mut stderr: ChildStderr) -> String {
    let mut text = String::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stderr.read_to_string(&mut text)).await;
    text
}

async fn connect<H: ClientHandler>(handler: H, mode: &str) -> Result<(RunningService<RoleClient, H>, u32)> {
    let hostile = spawn(mode)?;
    let client = tokio::time::timeout(Duration::from_secs(20), handler.serve(hostile.transport)).await??;
    Ok((client, hostile.pid))
}

fn poke() -> CallToolRequestParams {
    CallToolRequestParams::new("poke")
}

#[tokio::test]
async fn garbage_on_stdout_fails_initialize_and_leaves_no_process() -> Result<()> {
    let hostile = spawn("garbage")?;
    let pid = hostile.pid;
    let outcome = tokio::time::timeout(Duration::from_secs(3), ().serve(hostile.transport)).await;
    assert!(!matches!(outcome, Ok(Ok(_))), "initialize must not succeed against garbage");
    drop(outcome);
    assert_gone(pid).await;
    Ok(())
}

#[tokio::test]
async fn exit_during_initialize_is_an_error_with_the_stderr_reason() -> Result<()> {
    let hostile = spawn("exit-during-init")?;
    let (pid, stderr) = (hostile.pid, hostile.stderr);
    let error = tokio::time::timeout(Duration::from_secs(20), ().serve(hostile.transport))
        .await
        .context("initialize must fail fast, not hang")?
        .err()
        .context("initialize must fail")?;
    assert!(!error.to_string().is_empty());
    assert!(stderr_text(stderr).await.contains("giving up during initialize"));
    assert_gone(pid).await;
    Ok(())
}

#[tokio::test]
async fn crash_mid_call_fails_the_call() -> Result<()> {
    let Hostile { transport, pid, stderr } = spawn("crash-mid-call")?;
    let client = tokio::time::timeout(Duration::from_secs(20), ().serve(transport)).await??;
    assert_eq!(client.list_all_tools().await?.len(), 1);
    let call = tokio::time::timeout(Duration::from_secs(20), client.call_tool(poke())).await.context("no hang")?;
    assert!(call.is_err(), "a crashed server cannot answer: {call:?}");
    assert!(stderr_text(stderr).await.contains("crashing mid-call"));
    drop(client);
    assert_gone(pid).await;
    Ok(())
}

#[tokio::test]
async fn a_call_that_is_never_answered_times_out_and_the_client_stays_usable() -> Result<()> {
    let (client, pid) = connect((), "never-answer").await?;
    let call = tokio::time::timeout(Duration::from_secs(2), client.call_tool(poke())).await;
    assert!(call.is_err(), "the call must time out");
    // The connection still works for other requests.
    assert_eq!(client.list_all_tools().await?.len(), 1);
    client.cancel().await?;
    assert_gone(pid).await;
    Ok(())
}

#[tokio::test]
async fn a_100_mb_result_is_dropped_by_the_line_limit_and_the_client_stays_usable() -> Result<()> {
    let (client, pid) = connect((), "huge-result:100").await?;
    // Bare rmcp refuses lines over 16 MB without buffering them, so the call gets no answer;
    // through the registry the call fails at once instead (mcp_oversized_result.rs).
    let call = tokio::time::timeout(Duration::from_secs(20), client.call_tool(poke())).await;
    assert!(!matches!(call, Ok(Ok(_))), "a 100 MB line must not be accepted");
    assert_eq!(client.list_all_tools().await?.len(), 1);
    client.cancel().await?;
    assert_gone(pid).await;
    Ok(())
}

#[tokio::test]
async fn a_12_mb_result_is_capped_for_the_model_and_the_ui() -> Result<()> {
    let (client, pid) = connect((), "huge-result:12").await?;
    let result = tokio::time::timeout(Duration::from_secs(60), client.call_tool(poke())).await??;
    let limits = ResultLimits::default();
    let model = for_model(&result, &limits);
    let text: usize = model
        .parts
        .iter()
        .map(|part| match part {
            ContentPart::Text { text } => text.chars().count(),
            _ => 0,
        })
        .sum();
    assert!(text <= limits.model_chars + 300, "model text is {text} characters");
    let truncation = model.truncated.context("the model is told the result was cut")?;
    assert_eq!(truncation.total_chars, 12 << 20);
    let ui = for_ui(&result, &limits);
    assert_eq!(ui.truncated.context("the UI is told too")?.kept_bytes, limits.ui_bytes);
    client.cancel().await?;
    assert_gone(pid).await;
    Ok(())
}

#[tokio::test]
async fn a_slow_start_is_bounded_by_the_start_timeout() -> Result<()> {
    let hostile = spawn("slow-start:30")?;
    let pid = hostile.pid;
    let outcome = tokio::time::timeout(Duration::from_secs(1), ().serve(hostile.transport)).await;
    assert!(outcome.is_err(), "the start timeout must fire first");
    assert_gone(pid).await;
    // A server that is slow but within the limit starts.
    let (client, pid) = connect((), "slow-start:1").await?;
    assert_eq!(client.list_all_tools().await?.len(), 1);
    client.cancel().await?;
    assert_gone(pid).await;
    Ok(())
}

#[tokio::test]
async fn a_notification_flood_does_not_stop_the_result() -> Result<()> {
    let logs = CountLogs::default();
    let (client, pid) = connect(logs.clone(), "flood:20000").await?;
    let result = tokio::time::timeout(Duration::from_secs(60), client.call_tool(poke())).await??;
    let text = result.content[0].as_text().context("text result")?.text.clone();
    assert_eq!(text, "flooded 20000");
    // Every notification reaches the handler; none is lost or merged.
    for _ in 0..50 {
        if logs.0.load(Ordering::Relaxed) == 20_000 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(logs.0.load(Ordering::Relaxed), 20_000);
    client.cancel().await?;
    assert_gone(pid).await;
    Ok(())
}

#[tokio::test]
async fn a_server_ignoring_stdin_close_is_still_stopped() -> Result<()> {
    let (client, pid) = connect((), "ignore-stdin-close").await?;
    assert_eq!(client.call_tool(poke()).await?.content[0].as_text().context("text")?.text, "poked");
    client.cancel().await?;
    assert_gone(pid).await;
    Ok(())
}
