//! Requests servers send to the host: sampling and elicitation through the
//! `ServerRequests` hook (also run as tasks when the server asks), roots from
//! the registry's list; against server-everything and server-filesystem over
//! stdio (and server-everything over legacy SSE and streamable HTTP, for tasks).

use crate::mcp_common as common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use patchbay_core::config::{McpServerConfig, TransportConfig};
use patchbay_core::llm::ContentPart;
use patchbay_core::mcp::{
    CallEvent, CallOptions, ElicitationAnswer, ElicitationKind, ElicitationRequest, HookSupport, McpRoot, Refusal,
    SamplingReply, SamplingRequest, SamplingRole, ServerRequests,
};
use patchbay_test_support::peers;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Answers with what the test chose and keeps every request.
#[derive(Default)]
struct Recorder {
    refuse_sampling: bool,
    answer: Mutex<Option<ElicitationAnswer>>,
    samples: Mutex<Vec<SamplingRequest>>,
    elicitations: Mutex<Vec<ElicitationRequest>>,
}

#[async_trait::async_trait]
impl ServerRequests for Recorder {
    fn supports(&self) -> HookSupport {
        HookSupport::ALL
    }

    async fn sample(&self, request: SamplingRequest, _ct: CancellationToken) -> Result<SamplingReply, Refusal> {
        self.samples.lock().unwrap().push(request);
        if self.refuse_sampling {
            return Err(Refusal::new("the user said no"));
        }
        Ok(SamplingReply {
            model: "test-model".into(),
            text: "a reviewed answer".into(),
            stop_reason: Some("endTurn".into()),
        })
    }

    async fn elicit(&self, request: ElicitationRequest, _ct: CancellationToken) -> ElicitationAnswer {
        self.elicitations.lock().unwrap().push(request);
        self.answer.lock().unwrap().clone().unwrap_or(ElicitationAnswer::Cancel)
    }
}

fn args(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
    v.as_object().cloned()
}

/// Waits until `server` lists `tool` (server-everything adds the
/// capability-dependent tools just after initialisation).
async fn wait_for_tool(registry: &patchbay_core::mcp::McpRegistry, server: &str, tool: &str) {
    for _ in 0..100 {
        if registry.tools(server).unwrap().iter().any(|t| t.name == tool) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{server} never listed {tool}");
}

async fn call(registry: &patchbay_core::mcp::McpRegistry, server: &str, tool: &str, a: serde_json::Value) -> String {
    let result =
        registry.call_tool(server, tool, args(a), CallOptions::default(), CancellationToken::new()).await.unwrap();
    text(&result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_reaches_the_hook_and_its_answer_reaches_the_server() {
    let registry = registry();
    let hook = Arc::new(Recorder::default());
    registry.set_server_requests(hook.clone());
    registry.configure([everything_stdio("everything")]);
    start_ready(&registry, "everything").await;
    wait_for_tool(&registry, "everything", "trigger-sampling-request").await;

    let out =
        call(&registry, "everything", "trigger-sampling-request", json!({"prompt": "tell me", "maxTokens": 77})).await;
    assert!(out.contains("a reviewed answer") && out.contains("test-model"), "{out}");
    let samples = hook.samples.lock().unwrap().clone();
    assert_eq!(samples.len(), 1);
    let sample = &samples[0];
    assert_eq!(sample.server, "everything");
    assert_eq!(sample.max_tokens, 77);
    assert_eq!(sample.system_prompt.as_deref(), Some("You are a helpful test server."));
    assert_eq!(sample.messages[0].role, SamplingRole::User);
    assert!(
        matches!(&sample.messages[0].parts[0], ContentPart::Text { text } if text.contains("tell me")),
        "{:?}",
        sample.messages
    );
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_sampling_request_fails_the_servers_tool_with_the_reason() {
    let registry = registry();
    registry.set_server_requests(Arc::new(Recorder { refuse_sampling: true, ..Recorder::default() }));
    registry.configure([everything_stdio("everything")]);
    start_ready(&registry, "everything").await;
    wait_for_tool(&registry, "everything", "trigger-sampling-request").await;
    let result = registry
        .call_tool(
            "everything",
            "trigger-sampling-request",
            args(json!({"prompt": "x"})),
            CallOptions::default(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("the user said no"), "{}", text(&result));
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_forms_and_urls_are_answered_by_the_hook() {
    let registry = registry();
    let hook = Arc::new(Recorder::default());
    registry.set_server_requests(hook.clone());
    registry.configure([everything_stdio("everything")]);
    start_ready(&registry, "everything").await;
    wait_for_tool(&registry, "everything", "trigger-elicitation-request").await;

    let content = json!({"name": "Ada Lovelace", "check": true, "integer": 7});
    *hook.answer.lock().unwrap() = Some(ElicitationAnswer::Accept { content: content.as_object().cloned() });
    let out = call(&registry, "everything", "trigger-elicitation-request", json!({})).await;
    assert!(out.contains("- Name: Ada Lovelace") && out.contains("- Favorite Integer: 7"), "{out}");
    {
        let seen = hook.elicitations.lock().unwrap();
        let ElicitationKind::Form { schema } = &seen[0].kind else { panic!("{:?}", seen[0]) };
        assert_eq!(seen[0].server, "everything");
        assert_eq!(schema["properties"]["name"]["type"], "string");
        assert_eq!(schema["required"], json!(["name"]));
    }

    *hook.answer.lock().unwrap() = Some(ElicitationAnswer::Decline);
    let out = call(&registry, "everything", "trigger-elicitation-request", json!({})).await;
    assert!(out.contains("declined"), "{out}");

    wait_for_tool(&registry, "everything", "trigger-url-elicitation").await;
    *hook.answer.lock().unwrap() = Some(ElicitationAnswer::Accept { content: None });
    let out = call(
        &registry,
        "everything",
        "trigger-url-elicitation",
        json!({"url": "https://example.com/authorize", "elicitationId": "e-1"}),
    )
    .await;
    assert!(out.contains("completed the URL elicitation"), "{out}");
    let seen = hook.elicitations.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        seen.kind,
        ElicitationKind::Url { url: "https://example.com/authorize".into(), elicitation_id: "e-1".into() }
    );
    registry.shutdown().await;
}

/// A tool that runs as a task (2025-11-25) pauses in `input_required` and asks
/// the user through elicitation while the host waits on `tasks/result`; the
/// answer reaches the server and the task finishes with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_needs_clarification_asks_the_user_and_finishes_with_the_answer() {
    let registry = registry();
    let hook = Arc::new(Recorder::default());
    registry.set_server_requests(hook.clone());
    registry.configure([everything_stdio("everything")]);
    start_ready(&registry, "everything").await;
    wait_for_tool(&registry, "everything", "simulate-research-query").await;

    let content = json!({"interpretation": "historical"});
    *hook.answer.lock().unwrap() = Some(ElicitationAnswer::Accept { content: content.as_object().cloned() });
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions { events: Some(tx), ..CallOptions::default() };
    let arguments = args(json!({"topic": "ancient rome", "ambiguous": true}));
    let result = registry
        .call_tool("everything", "simulate-research-query", arguments, options, CancellationToken::new())
        .await
        .unwrap();
    let out = text(&result);
    assert!(out.contains("# Research Report: ancient rome (historical)"), "{out}");
    let seen = hook.elicitations.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].message.contains("could have multiple interpretations"), "{:?}", seen[0]);
    let mut stages = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let CallEvent::Progress { message: Some(message), .. } = event {
            stages.push(message);
        }
    }
    // Every status the server announced, in order, is the call's progress
    // (over stdio its notifications are read in order, before the result).
    let expected = [
        "Gathering sources...",
        "Analyzing content...",
        "Synthesizing findings...",
        "Found multiple interpretations for \"ancient rome\". Requesting clarification...",
        "Continuing with interpretation: \"historical\"...",
        "Generating report...",
        "completed",
    ];
    assert_eq!(stages, expected);
    registry.shutdown().await;
}

/// The same over streamable HTTP, where the server's question comes on the
/// event stream of the waiting `tasks/result` and is answered by its own POST.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_streamable_http_a_task_asks_the_user_on_its_result_stream() {
    let port = free_port();
    let mut cmd = tokio::process::Command::new(peers::npm_bin("mcp-server-everything"));
    cmd.arg("streamableHttp").env("PORT", port.to_string());
    let _server = spawn(&mut cmd, port).await;
    let registry = registry();
    let hook = Arc::new(Recorder::default());
    registry.set_server_requests(hook.clone());
    let url = format!("http://127.0.0.1:{port}/mcp");
    let transport = TransportConfig::StreamableHttp { url, headers: std::collections::BTreeMap::new() };
    registry.configure([McpServerConfig::with_transport("everything", transport)]);
    start_ready(&registry, "everything").await;
    wait_for_tool(&registry, "everything", "simulate-research-query").await;
    assert!(registry.runs_as_task("everything", "simulate-research-query"));

    let content = json!({"interpretation": "current"});
    *hook.answer.lock().unwrap() = Some(ElicitationAnswer::Accept { content: content.as_object().cloned() });
    let out =
        call(&registry, "everything", "simulate-research-query", json!({"topic": "tides", "ambiguous": true})).await;
    assert!(out.contains("# Research Report: tides (current)"), "{out}");
    assert_eq!(hook.elicitations.lock().unwrap().len(), 1);
    registry.shutdown().await;
}

/// server-everything offers its async sampling and elicitation tools to a
/// client that can run those requests as tasks (2025-11-25): it asks for a
/// task, polls `tasks/get` and fetches `tasks/result`. Over stdio, legacy SSE
/// and streamable HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_and_elicitation_a_server_asks_to_run_as_tasks_run_as_tasks() {
    let (configs, running) = everything_on_every_transport().await;
    let registry = registry();
    let hook = Arc::new(Recorder::default());
    let content = json!({"name": "Ada", "favoriteColor": "Blue"});
    *hook.answer.lock().unwrap() = Some(ElicitationAnswer::Accept { content: content.as_object().cloned() });
    registry.set_server_requests(hook.clone());
    registry.configure(configs);
    for server in ["stdio", "sse", "http"] {
        start_ready(&registry, server).await;
        wait_for_tool(&registry, server, "trigger-sampling-request-async").await;
        wait_for_tool(&registry, server, "trigger-elicitation-request-async").await;

        let out =
            call(&registry, server, "trigger-sampling-request-async", json!({"prompt": "tides", "maxTokens": 20}))
                .await;
        // A task was created, polled to its end and its result fetched, tied to the task.
        assert!(out.starts_with("[COMPLETED] Async sampling completed!"), "{server}: {out}");
        assert!(out.contains("Task created: ") && out.contains(": completed"), "{server}: {out}");
        assert!(
            out.contains("a reviewed answer") && out.contains("io.modelcontextprotocol/related-task"),
            "{server}: {out}"
        );
        let sample = hook.samples.lock().unwrap().pop().expect("the hook saw the request");
        assert_eq!(sample.max_tokens, 20);
        assert!(matches!(&sample.messages[0].parts[0], ContentPart::Text { text } if text.contains("tides")));

        let out = call(&registry, server, "trigger-elicitation-request-async", json!({})).await;
        assert!(out.contains("[COMPLETED] User provided the requested information!"), "{server}: {out}");
        assert!(out.contains("- Name: Ada") && out.contains("- Favorite Color: Blue"), "{server}: {out}");
        let asked = hook.elicitations.lock().unwrap().pop().expect("the hook saw the request");
        assert!(asked.message.contains("async task demo"), "{asked:?}");
    }
    registry.shutdown().await;
    drop(running);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_hook_sampling_and_elicitation_are_not_advertised() {
    let registry = registry();
    registry.configure([everything_stdio("everything")]);
    start_ready(&registry, "everything").await;
    // Roots are always advertised, so the roots tool appears; the others never do.
    wait_for_tool(&registry, "everything", "get-roots-list").await;
    let names: Vec<String> = registry.tools("everything").unwrap().iter().map(|t| t.name.to_string()).collect();
    for absent in ["trigger-sampling-request", "trigger-elicitation-request", "trigger-url-elicitation"] {
        assert!(!names.iter().any(|n| n == absent), "{absent} in {names:?}");
    }
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roots_are_listed_and_a_change_is_announced() {
    let registry = registry();
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    registry.set_roots(vec![McpRoot::from_path(one.path())]).await;
    let mut everything = everything_stdio("everything");
    everything.share_roots = true;
    registry.configure([everything]);
    start_ready(&registry, "everything").await;
    wait_for_tool(&registry, "everything", "get-roots-list").await;

    let out = call(&registry, "everything", "get-roots-list", json!({})).await;
    assert!(out.contains(&McpRoot::from_path(one.path()).uri), "{out}");

    registry.set_roots(vec![McpRoot::from_path(one.path()), McpRoot::from_path(two.path())]).await;
    // The server asks for the list again when told it changed.
    let want = McpRoot::from_path(two.path()).uri;
    let mut out = String::new();
    for _ in 0..50 {
        out = call(&registry, "everything", "get-roots-list", json!({})).await;
        if out.contains(&want) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(out.contains("(2 total)") && out.contains(&want), "{out}");
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_filesystem_without_directories_works_in_the_clients_roots() {
    let one = tempfile::tempdir().unwrap();
    let one_path = one.path().canonicalize().unwrap();
    std::fs::write(one_path.join("note.txt"), "from the first root").unwrap();
    let two = tempfile::tempdir().unwrap();
    let two_path = two.path().canonicalize().unwrap();
    std::fs::write(two_path.join("other.txt"), "from the second root").unwrap();

    let registry = registry();
    registry.set_roots(vec![McpRoot::from_path(&one_path)]).await;
    let mut fs = McpServerConfig::stdio("fs", peers::npm_bin("mcp-server-filesystem").to_str().unwrap(), &[]);
    fs.share_roots = true;
    registry.configure([fs]);
    start_ready(&registry, "fs").await;

    let read = |path: std::path::PathBuf| {
        let registry = registry.clone();
        async move {
            let args = json!({"path": path.to_str().unwrap()});
            registry
                .call_tool(
                    "fs",
                    "read_text_file",
                    args.as_object().cloned(),
                    CallOptions::default(),
                    CancellationToken::new(),
                )
                .await
                .unwrap()
        }
    };
    // The server fetches the roots just after initialisation.
    let mut result = read(one_path.join("note.txt")).await;
    for _ in 0..50 {
        if result.is_error != Some(true) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        result = read(one_path.join("note.txt")).await;
    }
    assert!(text(&result).contains("from the first root"), "{}", text(&result));
    let outside = read(two_path.join("other.txt")).await;
    assert_eq!(outside.is_error, Some(true), "{}", text(&outside));

    // New roots replace the allowed directories.
    registry.set_roots(vec![McpRoot::from_path(&two_path)]).await;
    let mut result = read(two_path.join("other.txt")).await;
    for _ in 0..50 {
        if result.is_error != Some(true) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        result = read(two_path.join("other.txt")).await;
    }
    assert!(text(&result).contains("from the second root"), "{}", text(&result));
    registry.shutdown().await;
}
