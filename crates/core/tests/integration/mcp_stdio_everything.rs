//! server-everything over stdio: inventory, tools, progress, logs, resources, prompts, env.

use crate::mcp_common as common;

use std::time::Duration;

use common::*;
use patchbay_core::config::{TransportConfig, ValueSource};
use patchbay_core::mcp::{CallEvent, CallOptions, LogLevel, McpError};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn args(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
    v.as_object().cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio_serves_tools_resources_and_prompts() {
    let registry = registry();
    let mut config = everything_stdio("everything");
    if let TransportConfig::Stdio { env, .. } = &mut config.transport {
        env.insert("PATCHBAY_TEST_VAR".into(), ValueSource::Plain("from-config".into()));
    }
    registry.configure([config]);
    start_ready(&registry, "everything").await;

    let tools = registry.tools("everything").unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in ["echo", "get-sum", "trigger-long-running-operation", "get-env", "toggle-simulated-logging"] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    let snapshot = registry.snapshot();
    assert_eq!(snapshot[0].tools, tools.len());
    assert!(snapshot[0].command.as_ref().unwrap().is_absolute());

    let ct = CancellationToken::new;
    let echo = registry
        .call_tool("everything", "echo", args(json!({"message": "hi there"})), CallOptions::default(), ct())
        .await
        .unwrap();
    assert!(text(&echo).contains("hi there"), "{}", text(&echo));

    let sum = registry
        .call_tool("everything", "get-sum", args(json!({"a": 2, "b": 40})), CallOptions::default(), ct())
        .await
        .unwrap();
    assert!(text(&sum).contains("42"), "{}", text(&sum));

    // The login environment plus the configured variable.
    let env = registry.call_tool("everything", "get-env", None, CallOptions::default(), ct()).await.unwrap();
    let env: serde_json::Value = serde_json::from_str(&text(&env)).unwrap();
    assert_eq!(env["PATCHBAY_TEST_VAR"], "from-config");
    assert!(env["HOME"].is_string() && env["PATH"].is_string(), "{env}");

    // Progress reaches the call, and resets its timeout: 3 s of work under a 2 s timeout.
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions { timeout: Some(Duration::from_secs(2)), events: Some(tx), ..CallOptions::default() };
    let long = registry
        .call_tool(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 3, "steps": 3})),
            options,
            ct(),
        )
        .await
        .unwrap();
    assert!(text(&long).contains("completed"), "{}", text(&long));
    // The last notification is routed on another task than the result and may
    // land just after it: wait (bounded) for all three.
    let mut progress = Vec::new();
    while progress.len() < 3 {
        match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
            Ok(Some(CallEvent::Progress { progress: p, total, .. })) => {
                assert_eq!(total, Some(3.0));
                progress.push(p);
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    assert_eq!(progress, vec![1.0, 2.0, 3.0]);

    // Resources and prompts.
    let resources = registry.resources("everything").unwrap();
    assert!(!resources.is_empty());
    let read = registry.read_resource("everything", &resources[0].uri, ct()).await.unwrap();
    assert!(!read.contents.is_empty());
    assert!(!registry.resource_templates("everything").unwrap().is_empty());
    let prompts = registry.prompts("everything").unwrap();
    let simple =
        prompts.iter().find(|p| p.arguments.as_ref().is_none_or(|a| a.iter().all(|a| a.required != Some(true))));
    let simple = simple.expect("a prompt without required arguments");
    let got = registry.get_prompt("everything", &simple.name, None, ct()).await.unwrap();
    assert!(!got.messages.is_empty());

    // An unknown tool is the server's error, typed.
    let err = registry.call_tool("everything", "no-such-tool", None, CallOptions::default(), ct()).await;
    match err {
        Ok(result) => assert_eq!(result.is_error, Some(true)),
        Err(McpError::Server { .. }) => {}
        Err(other) => panic!("unexpected {other:?}"),
    }
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_reach_the_call_and_the_event_stream_and_cancel_is_sent() {
    let registry = registry();
    registry.configure([everything_stdio("everything")]);
    start_ready(&registry, "everything").await;
    let mut events = registry.subscribe();

    // The server logs at a random level each time; the registry asks for info
    // and above by default, which would filter out a debug line: ask for all.
    registry.set_log_level("everything", LogLevel::Debug, CancellationToken::new()).await.unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions { timeout: None, events: Some(tx), ..CallOptions::default() };
    registry
        .call_tool("everything", "toggle-simulated-logging", None, options, CancellationToken::new())
        .await
        .unwrap();
    // Like progress, a log is routed on another task than the result and may
    // land just after it: wait (bounded) for the first one.
    let mut call_events = Vec::new();
    let call_log = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(event) = rx.recv().await {
            if matches!(event, CallEvent::Log(_)) {
                return true;
            }
            call_events.push(event);
        }
        false
    })
    .await;
    assert_eq!(call_log, Ok(true), "no log reached the call; other events: {call_events:?}");
    let log = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(patchbay_core::mcp::McpEvent::Log { server, message }) = events.recv().await {
                return (server, message);
            }
        }
    })
    .await
    .expect("a log event");
    assert_eq!(log.0, "everything");
    assert!(log.1.data.as_str().unwrap_or_default().contains("message"), "{:?}", log.1);

    // Cancelling a long call returns at once and leaves the connection usable.
    let ct = CancellationToken::new();
    let cancel = ct.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = std::time::Instant::now();
    let err = registry
        .call_tool(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 20, "steps": 2})),
            CallOptions::default(),
            ct,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Cancelled { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let echo = registry
        .call_tool(
            "everything",
            "echo",
            args(json!({"message": "still here"})),
            CallOptions::default(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(text(&echo).contains("still here"));
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_from_several_conversations_run_concurrently() {
    let registry = registry();
    registry.configure([everything_stdio("everything")]);
    start_ready(&registry, "everything").await;
    let started = std::time::Instant::now();
    let calls = (0..4).map(|_| {
        let registry = registry.clone();
        async move {
            registry
                .call_tool(
                    "everything",
                    "trigger-long-running-operation",
                    args(json!({"duration": 2, "steps": 1})),
                    CallOptions::default(),
                    CancellationToken::new(),
                )
                .await
        }
    });
    for result in futures::future::join_all(calls).await {
        assert!(text(&result.unwrap()).contains("completed"));
    }
    // Four 2 s calls in sequence would take 8 s.
    assert!(started.elapsed() < Duration::from_secs(6), "{:?}", started.elapsed());
    registry.shutdown().await;
}
