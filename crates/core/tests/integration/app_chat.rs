//! The desktop's services end to end, without a window: a turn through the
//! real async-openai client against a scripted model, with a tool of the real
//! server-everything that needs approval; stopping mid-stream; the
//! conversation as the chat view reloads it; branches and search.

use crate::app_events::{Recorder, Seen};
use std::sync::Arc;
use std::time::Duration;

use patchbay_core::agent::BUILTIN_SERVER;
use patchbay_core::app::views::{ConversationRenamed, ConversationSettings, GeneralSettings, TraceStatus, TurnEvent};
use patchbay_core::app::{
    App, ApprovalAnswer, ErrorKind, ServerRequestResponse, ServerRequestView, TextMessage, TurnInput,
};
use patchbay_core::config::{ApprovalMode, ConfigStore, McpServerConfig, ProviderProfile};
use patchbay_core::llm::{ContentPart, ReasoningEffort, ThinkingParam};
use patchbay_core::mcp::protocol::naming::ToolNames;
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::peers;
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, openai};
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct Fixture {
    app: App,
    events: Arc<Recorder>,
    dir: tempfile::TempDir,
}

fn provider(url: &str) -> ProviderProfile {
    ProviderProfile::openai_compatible("scripted", format!("{url}/v1"), "scripted-model")
}

/// The app with the scripted provider and `servers`. The model does not name
/// conversations here, so that every request it gets is a turn's; titles have
/// their own test (`open_titled`).
fn open(url: &str, servers: &[McpServerConfig]) -> Fixture {
    let f = open_titled(url, servers);
    let settings = f.app.get_settings().unwrap();
    f.app.save_settings(&GeneralSettings { auto_title: false, ..settings }).unwrap();
    f
}

fn open_titled(url: &str, servers: &[McpServerConfig]) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::new(dir.path());
    let store = Store::open(&data).unwrap();
    let config = ConfigStore::new(store.clone());
    config.save_provider(&provider(url)).unwrap();
    config.replace_servers(servers).unwrap();
    let (sender, events) = Recorder::new();
    let app = App::open(data, store, Arc::new(MemoryStore::default()), sender).unwrap().with_env(|_| None);
    app.start().unwrap();
    Fixture { app, events, dir }
}

async fn wait_ready(app: &App, name: &str) {
    for _ in 0..600 {
        let servers = app.list_servers().unwrap();
        let server = servers.iter().find(|s| s.config.name == name).expect("configured");
        match server.status.state {
            "ready" => return,
            "failed" => panic!("{name} failed: {:?}", server.status.error),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("{name} did not become ready");
}

fn everything(approval: ApprovalMode) -> McpServerConfig {
    let mut config =
        McpServerConfig::stdio("everything", peers::npm_bin("mcp-server-everything").to_str().unwrap(), &["stdio"]);
    config.approval = approval;
    // For echo as well: a per-tool setting wins over the server's.
    config.tool_approval.insert("echo".into(), approval);
    config
}

/// A turn's kinds up to the first piece of the one call the model wrote, then `rest`.
fn written(rest: &[&'static str]) -> Vec<&'static str> {
    [&["turn_started", "tool_call_writing", "tool_arguments"][..], rest].concat()
}

fn kinds(events: &[TurnEvent]) -> Vec<&'static str> {
    events
        .iter()
        .map(|e| match e {
            TurnEvent::TurnStarted { .. } => "turn_started",
            TurnEvent::TextDelta { .. } => "text",
            TurnEvent::ReasoningDelta { .. } => "reasoning",
            TurnEvent::ToolCallWriting { .. } => "tool_call_writing",
            TurnEvent::ToolArgumentsDelta { .. } => "tool_arguments",
            TurnEvent::ToolCallStarted { .. } => "tool_call_started",
            TurnEvent::ApprovalNeeded { .. } => "approval_needed",
            TurnEvent::ToolRunning { .. } => "tool_running",
            TurnEvent::ToolProgress { .. } => "tool_progress",
            TurnEvent::ToolLog { .. } => "tool_log",
            TurnEvent::ToolResult { .. } => "tool_result",
            TurnEvent::ToolFailed { .. } => "tool_failed",
            TurnEvent::ToolCancelled { .. } => "tool_cancelled",
            TurnEvent::ToolDenied { .. } => "tool_denied",
            TurnEvent::Citations { .. } => "citations",
            TurnEvent::ContextTrimmed { .. } => "context_trimmed",
            TurnEvent::ToolSearch { .. } => "tool_search",
            TurnEvent::Usage { .. } => "usage",
            TurnEvent::Error { .. } => "error",
            TurnEvent::Done { .. } => "done",
        })
        // The default assistant cites the sample knowledge base when a word matches.
        .filter(|k| !matches!(*k, "text" | "usage" | "citations"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_waits_for_approval_runs_and_is_kept_with_its_trace() {
    let echo = ToolNames::build([("everything", "echo")]).model_name("everything", "echo").unwrap().to_owned();
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::tool_calls_reply(&[("call_1", &echo, &["{\"message\":", " \"hi there\"}"])]),
            openai::text_reply(&["The server ", "said hi there."]),
        ],
    )
    .await
    .unwrap();
    let f = open(&model.url(), &[everything(ApprovalMode::Ask)]);
    wait_ready(&f.app, "everything").await;
    let ready = |seen: &Seen| seen.statuses.iter().any(|s| s.server == "everything" && s.state == "ready");
    f.events.until("the window was not told the server is ready", ready).await;
    let conversation = f.app.create_conversation(None).unwrap();

    let app = f.app.clone();
    let mut events = Vec::new();
    let answer = f
        .app
        .run_turn(
            &conversation.id,
            TurnInput::Send { text: "Ask the server to echo".into(), attachments: vec![] },
            |e| {
                if let TurnEvent::ApprovalNeeded { call_id, .. } = &e {
                    app.respond_approval(call_id, ApprovalAnswer::AllowAlways).unwrap();
                }
                events.push(e);
            },
        )
        .await
        .unwrap();

    // server-everything also sends a log message every few seconds, which a slow
    // call can hear: those come when they come, so they are left out here.
    let mut seen = kinds(&events);
    seen.retain(|k| *k != "tool_log");
    assert_eq!(
        seen,
        written(&["tool_arguments", "tool_call_started", "approval_needed", "tool_running", "tool_result", "done"])
    );
    // The call is shown as the model writes it, piece by piece.
    let written: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolCallWriting { call_id, server, tool } => Some(format!("{call_id} {server}/{tool}")),
            TurnEvent::ToolArgumentsDelta { call_id, delta } => Some(format!("{call_id} {delta}")),
            _ => None,
        })
        .collect();
    assert_eq!(written, ["call_1 everything/echo", "call_1 {\"message\":", "call_1  \"hi there\"}"]);
    let TurnEvent::TurnStarted { user_message: Some(user), assistant_message_id, model: used } = &events[0] else {
        panic!("{:?}", events[0]);
    };
    assert_eq!((user.text.as_str(), used.as_str()), ("Ask the server to echo", "scripted-model"));
    assert_eq!(assistant_message_id, &answer);
    let started = events.iter().find(|e| matches!(e, TurnEvent::ToolCallStarted { .. })).unwrap();
    assert_eq!(
        started,
        &TurnEvent::ToolCallStarted {
            call_id: "call_1".into(),
            server: "everything".into(),
            tool: "echo".into(),
            arguments: json!({"message": "hi there"}),
            status: TraceStatus::PendingApproval,
        }
    );
    let Some(TurnEvent::ToolResult { result, .. }) = events.iter().find(|e| matches!(e, TurnEvent::ToolResult { .. }))
    else {
        unreachable!()
    };
    assert!(!result.is_error);
    assert!(matches!(&result.content[0], ContentPart::Text { text } if text.contains("hi there")), "{result:?}");
    assert!(matches!(events.last(), Some(TurnEvent::Done { .. })));
    // The model read the tool's answer.
    let second = &model.requests()[1].body;
    assert!(second.to_string().contains("hi there"), "{second}");
    // The server's own instructions (from its `initialize` answer) are in the system prompt.
    let system = model.requests()[0].body["messages"][0].clone();
    assert_eq!(system["role"], "system");
    let system = system["content"].as_str().unwrap_or_default().to_owned();
    assert!(system.contains("# MCP servers\n"), "{system}");
    assert!(system.contains("## everything\n# Everything Server – Server Instructions"), "{system}");
    let listed = f.app.list_servers().unwrap();
    let shown = listed.iter().find(|v| v.config.name == "everything").and_then(|v| v.instructions.clone());
    assert!(shown.is_some_and(|i| i.starts_with("# Everything Server")), "the settings page shows them too");
    // "Always allow" is stored for the tool.
    let tools = f.app.list_tools(Some("everything")).unwrap();
    let echo_info = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo_info.approval, ApprovalMode::Allow);
    assert!(echo_info.schema_tokens > 0);
    let stats = echo_info.stats.as_ref().expect("the call is counted");
    assert_eq!((stats.calls, stats.success_rate), (1, 1.0));
    // The inspector's raw JSON-RPC of the call.
    let trace = f.app.get_trace("call_1").unwrap();
    assert_eq!(trace.request["method"], "tools/call");
    assert_eq!(trace.request["params"]["arguments"], json!({"message": "hi there"}));
    // With the id and progress token it went out with (the lane's `pb-N`), which the answer carries.
    let wire = &trace.request["id"];
    assert!(wire.as_str().is_some_and(|id| id.starts_with("pb-")), "{}", trace.request);
    assert_eq!(&trace.request["params"]["_meta"]["progressToken"], wire);
    let response = trace.response.unwrap();
    assert_eq!(&response["id"], wire);
    assert!(response["result"]["content"].to_string().contains("hi there"));
    assert_eq!(f.app.get_trace("nope").unwrap_err().kind(), ErrorKind::NotFound);

    // Reloaded as the chat view does after the turn (and after a restart).
    let detail = f.app.get_conversation(&conversation.id, None).unwrap();
    assert_eq!(detail.messages.len(), 2);
    let reply = &detail.messages[1];
    assert_eq!(reply.id, answer);
    assert_eq!(reply.text, "The server said hi there.");
    assert_eq!(reply.tool_calls.len(), 1);
    let trace = &reply.tool_calls[0];
    assert_eq!((trace.server.as_str(), trace.tool.as_str(), trace.status), ("everything", "echo", TraceStatus::Done));
    assert_eq!(trace.arguments, json!({"message": "hi there"}));
    assert!(trace.duration_ms.is_some());
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_call_is_reported_denied_and_the_model_told() {
    let echo = ToolNames::build([("everything", "echo")]).model_name("everything", "echo").unwrap().to_owned();
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::tool_calls_reply(&[("call_9", &echo, &["{\"message\": \"no\"}"])]),
            openai::text_reply(&["Understood."]),
        ],
    )
    .await
    .unwrap();
    let f = open(&model.url(), &[everything(ApprovalMode::Ask)]);
    wait_ready(&f.app, "everything").await;
    let conversation = f.app.create_conversation(None).unwrap();
    let app = f.app.clone();
    let mut events = Vec::new();
    let input = TurnInput::Send { text: "echo no".into(), attachments: vec![] };
    f.app
        .run_turn(&conversation.id, input, |e| {
            if let TurnEvent::ApprovalNeeded { call_id, .. } = &e {
                app.respond_approval(call_id, ApprovalAnswer::Deny).unwrap();
            }
            events.push(e);
        })
        .await
        .unwrap();
    assert_eq!(kinds(&events), written(&["tool_call_started", "approval_needed", "tool_denied", "done"]));
    assert!(model.requests()[1].body.to_string().contains("declined"));
    // Nothing is waiting any more.
    let err = f.app.respond_approval("call_9", ApprovalAnswer::AllowOnce).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_mid_stream_keeps_the_text_and_ends_cancelled() {
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![Reply::hanging(vec![
            openai::delta(json!({"role": "assistant", "content": ""})),
            openai::delta(json!({"content": "The first half"})),
        ])],
    )
    .await
    .unwrap();
    let f = open(&model.url(), &[]);
    let conversation = f.app.create_conversation(None).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let app = f.app.clone();
    let id = conversation.id.clone();
    let turn = tokio::spawn(async move {
        let input = TurnInput::Send { text: "go".into(), attachments: vec![] };
        app.run_turn(&id, input, move |e| tx.send(e).unwrap()).await
    });
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        let text = matches!(e, TurnEvent::TextDelta { .. });
        events.push(e);
        if text {
            // Nothing is deleted under a running turn.
            let question = f.app.get_conversation(&conversation.id, None).unwrap().messages[0].id.clone();
            let refused = f.app.delete_message(&conversation.id, &question).unwrap_err();
            assert_eq!(refused.kind(), ErrorKind::InvalidInput, "{refused}");
            f.app.cancel_turn(&conversation.id).unwrap();
        }
    }
    turn.await.unwrap().unwrap();
    assert_eq!(events.last(), Some(&TurnEvent::Done { reason: patchbay_core::app::views::DoneReason::Cancelled }));
    let detail = f.app.get_conversation(&conversation.id, None).unwrap();
    assert_eq!(detail.messages[1].text, "The first half");
    assert!(detail.messages[1].error.is_none());
    // No turn runs any more.
    assert_eq!(f.app.cancel_turn(&conversation.id).unwrap_err().kind(), ErrorKind::NotFound);
    // The stopped answer can go; the question stays, shown alone.
    let shown = f.app.delete_message(&conversation.id, &detail.messages[1].id).unwrap();
    assert_eq!(shown.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(), ["go"]);
    let missing = f.app.delete_message(&conversation.id, &detail.messages[1].id).unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_branch_search_rename_and_keep_their_settings() {
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![openai::text_reply(&["Paris."]), openai::text_reply(&["It is Paris."]), openai::text_reply(&["巴黎。"])],
    )
    .await
    .unwrap();
    let f = open(&model.url(), &[]);
    let c = f.app.create_conversation(None).unwrap();
    let send = |text: &str| TurnInput::Send { text: text.into(), attachments: vec![] };
    let first = f.app.run_turn(&c.id, send("Capital of France?"), |_| {}).await.unwrap();
    let second = f.app.run_turn(&c.id, TurnInput::Regenerate { message: first.clone() }, |_| {}).await.unwrap();
    let detail = f.app.get_conversation(&c.id, None).unwrap();
    assert_eq!(detail.messages[1].text, "It is Paris.");
    assert_eq!(detail.messages[1].siblings, [first.clone(), second.clone()]);
    let branch = f.app.switch_branch(&c.id, &first).unwrap();
    assert_eq!(branch[1].text, "Paris.");

    let user = detail.messages[0].id.clone();
    let edited = TurnInput::Edit { message: user, text: "法国的首都？".into() };
    f.app.run_turn(&c.id, edited, |_| {}).await.unwrap();
    let detail = f.app.get_conversation(&c.id, None).unwrap();
    assert_eq!((detail.messages[0].text.as_str(), detail.messages[1].text.as_str()), ("法国的首都？", "巴黎。"));
    assert_eq!(detail.messages[0].siblings.len(), 2);
    assert_eq!(detail.earlier, 0);
    // A tail of the branch, then the message before it, for scrolling back.
    let tail = f.app.get_conversation(&c.id, Some(1)).unwrap();
    assert_eq!((tail.earlier, tail.messages.len(), tail.messages[0].text.as_str()), (1, 1, "巴黎。"));
    let page = f.app.earlier_messages(&c.id, &tail.messages[0].id, 10).unwrap();
    assert_eq!((page.earlier, page.messages), (0, detail.messages[..1].to_vec()));
    assert_eq!(f.app.earlier_messages(&c.id, "x", 10).unwrap_err().kind(), ErrorKind::InvalidInput);

    f.app.rename_conversation(&c.id, "Geography").unwrap();
    let other = f.app.create_conversation(None).unwrap();
    let listed = f.app.list_conversations(None).unwrap();
    assert_eq!(listed.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), [other.id.as_str(), c.id.as_str()]);
    let found = f.app.list_conversations(Some("首都")).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].title, "Geography");
    assert!(found[0].snippet.as_deref().unwrap().contains("首都"));

    let settings = ConversationSettings {
        provider: Some("scripted".into()),
        model: Some("other-model".into()),
        servers: Some(vec![]),
        disabled_tools: vec!["builtin/current_time".into()],
        assistant_id: Some("Default".into()),
        system_prompt: None,
        reasoning: Some(ReasoningEffort::Low),
    };
    f.app.update_conversation_settings(&c.id, &settings).unwrap();
    assert_eq!(f.app.get_conversation(&c.id, None).unwrap().settings, settings);
    let bad = ConversationSettings { provider: Some("nope".into()), ..settings.clone() };
    assert_eq!(f.app.update_conversation_settings(&c.id, &bad).unwrap_err().kind(), ErrorKind::NotFound);

    let file = f.app.export_conversation(&c.id, patchbay_core::conversations::ExportFormat::Markdown).unwrap();
    assert_eq!(file.name, "Geography.md");
    assert!(file.text.contains("巴黎"));

    // Carrying on from the first message in a new conversation: that message, the same settings.
    let shown = f.app.get_conversation(&c.id, None).unwrap();
    let fork = f.app.fork_conversation(&c.id, &shown.messages[0].id).unwrap();
    assert_ne!(fork.id, c.id);
    let forked = f.app.get_conversation(&fork.id, None).unwrap();
    assert_eq!(forked.messages.len(), 1);
    assert_eq!(forked.messages[0].text, shown.messages[0].text);
    assert_eq!(forked.settings, settings, "the fork keeps the model, servers and reasoning");
    assert_eq!(f.app.list_conversations(None).unwrap()[0].id, fork.id, "newest first");
    let missing = f.app.fork_conversation(&c.id, "999").unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
    f.app.delete_conversation(&c.id).unwrap();
    assert_eq!(f.app.get_conversation(&c.id, None).unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(f.app.get_conversation("abc", None).unwrap_err().kind(), ErrorKind::InvalidInput);
}

/// Built-in tools are an in-process MCP server: a turn right after start-up
/// offers `current_time` under its bare name, runs it without asking, and the
/// call keeps its JSON-RPC trace like any other MCP call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_built_in_tool_runs_through_the_registry_and_keeps_its_trace() {
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![openai::tool_calls_reply(&[("call_now", "current_time", &["{}"])]), openai::text_reply(&["Noted."])],
    )
    .await
    .unwrap();
    let f = open(&model.url(), &[]);
    let c = f.app.create_conversation(None).unwrap();
    let mut events = Vec::new();
    let input = TurnInput::Send { text: "What time is it?".into(), attachments: vec![] };
    f.app.run_turn(&c.id, input, |e| events.push(e)).await.unwrap();

    let offered = &model.requests()[0].body["tools"];
    assert!(offered.as_array().unwrap().iter().any(|t| t["function"]["name"] == "current_time"), "{offered}");
    assert_eq!(kinds(&events), written(&["tool_call_started", "tool_running", "tool_result", "done"]));
    let Some(TurnEvent::ToolResult { result, .. }) = events.iter().find(|e| matches!(e, TurnEvent::ToolResult { .. }))
    else {
        unreachable!()
    };
    assert!(!result.is_error, "{result:?}");
    assert!(matches!(&result.content[0], ContentPart::Text { text } if text.contains("(unix ")), "{result:?}");
    let trace = f.app.get_trace("call_now").unwrap();
    assert_eq!((trace.server.as_str(), trace.tool.as_str()), ("builtin", "current_time"));
    assert_eq!(trace.request["method"], "tools/call");
    assert!(trace.response.unwrap()["result"]["content"].to_string().contains("unix"));
    // The built-in server is not a configured server: the settings page lists none.
    assert!(f.app.list_servers().unwrap().is_empty());
}

/// A turn that comes before start-up has started the built-in server (it starts
/// after the roots are read) starts it itself, and offers its tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_before_the_built_in_server_has_started_starts_it() {
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Noon."])]).await.unwrap();
    let f = open(&model.url(), &[]);
    let registry = f.app.registry();
    registry.wait_server_settled(BUILTIN_SERVER, Duration::from_secs(10)).await.unwrap();
    // As it is between `App::start` and the start-up task reaching the built-in server.
    registry.stop(BUILTIN_SERVER).await.unwrap();
    let c = f.app.create_conversation(None).unwrap();
    let input = TurnInput::Send { text: "What time is it?".into(), attachments: vec![] };
    f.app.run_turn(&c.id, input, |_| {}).await.unwrap();
    let offered = &model.requests()[0].body["tools"];
    assert!(offered.as_array().is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "current_time")), "{offered}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_error_arrives_as_an_error_event_and_is_kept_on_the_message() {
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![Reply::status(400, json!({"error": {"message": "upstream exploded"}}))],
    )
    .await
    .unwrap();
    let f = open(&model.url(), &[]);
    let c = f.app.create_conversation(None).unwrap();
    let mut events = Vec::new();
    let input = TurnInput::Send { text: "hello".into(), attachments: vec![] };
    f.app.run_turn(&c.id, input, |e| events.push(e)).await.unwrap();
    let error = events.iter().find_map(|e| if let TurnEvent::Error { error } = e { Some(error) } else { None });
    let error = error.expect("an error event");
    assert_eq!(error.kind, ErrorKind::Provider);
    assert!(error.message.contains("upstream exploded"), "{}", error.message);
    let detail = f.app.get_conversation(&c.id, None).unwrap();
    assert_eq!(detail.messages[0].text, "hello", "the question is kept");
    let kept = detail.messages[1].error.as_ref().unwrap();
    assert!(kept.message.contains("upstream exploded"));
    assert_eq!(kept.kind, ErrorKind::Provider, "the kind is kept with the answer");
}

/// A picture, a text and a document (HTML, read as the knowledge base reads
/// it) attached by the user reach the model as an image part and as text under
/// their names, are kept with the question, and come back in the chat view; an
/// attachment no model takes is refused before anything is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_and_files_attached_by_the_user_reach_the_model() {
    use base64::Engine as _;
    use patchbay_core::app::AttachmentInput;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["A red square."])]).await.unwrap();
    let f = open(&model.url(), &[]);
    let c = f.app.create_conversation(None).unwrap();
    let png = b64(b"\x89PNG\r\n\x1a\n not really a picture");
    let image = |title: &str, mime_type: &str, data: &str| AttachmentInput::Image {
        mime_type: mime_type.into(),
        data: data.into(),
        title: Some(title.into()),
    };
    let attachments = vec![
        image("square.png", "image/png", &png),
        AttachmentInput::Text { text: "# Notes\nsquares are red".into(), title: Some("notes.md".into()) },
        AttachmentInput::File { title: "page.html".into(), data: b64(b"<h1>Shapes</h1><p>Red &amp; square</p>") },
    ];
    let input = TurnInput::Send { text: "What is in the picture?".into(), attachments };
    f.app.run_turn(&c.id, input, |_| {}).await.unwrap();

    let sent = &model.requests()[0].body;
    let user = sent["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").expect("a user message");
    let parts = user["content"].as_array().expect("content parts");
    assert_eq!(parts[0]["text"], "What is in the picture?");
    assert_eq!(parts[1]["type"], "image_url");
    assert_eq!(parts[1]["image_url"]["url"], format!("data:image/png;base64,{png}"));
    let notes = parts[2]["text"].as_str().unwrap();
    assert!(notes.starts_with("<attachment title=\"notes.md\">") && notes.contains("squares are red"), "{notes}");
    let page = parts[3]["text"].as_str().unwrap();
    assert!(page.starts_with("<attachment title=\"page.html\">") && page.contains("# Shapes"), "{page}");
    assert!(page.contains("Red & square") && !page.contains("<p>"), "{page}");

    let question = &f.app.get_conversation(&c.id, None).unwrap().messages[0];
    assert_eq!(question.parts[0], ContentPart::Image { mime_type: "image/png".into(), data: png.clone() });
    assert_eq!(question.parts[1], ContentPart::text("notes.md\n\n# Notes\nsquares are red"));

    let refused = [
        (image("photo", "image/heic", &png), "photo: image/heic cannot be attached"),
        (image("photo", "image/png", "not base64!"), "photo: the attached image/png data is not base64"),
        (
            AttachmentInput::Text { text: "x".repeat(2 << 20), title: Some("log".into()) },
            "log is 2.0 MB; an attachment can be at most 1 MB",
        ),
        (
            AttachmentInput::File { title: "backup.zip".into(), data: b64(b"PK\x03\x04\0\0\xff\xfe") },
            "backup.zip: a binary file cannot be attached",
        ),
    ];
    for (attachment, why) in refused {
        let input = TurnInput::Send { text: "again".into(), attachments: vec![attachment] };
        let error = f.app.run_turn(&c.id, input, |_| {}).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(error.to_string().starts_with(why), "{error}");
    }
    assert_eq!(f.app.get_conversation(&c.id, None).unwrap().messages.len(), 2, "nothing refused was stored");
    assert_eq!(model.requests().len(), 1);

    // A turn that cannot start (its provider is gone) leaves a new conversation as it was, name included.
    f.app.delete_provider("scripted").unwrap();
    let fresh = f.app.create_conversation(None).unwrap();
    let input = TurnInput::Send { text: "hello?".into(), attachments: vec![] };
    f.app.run_turn(&fresh.id, input, |_| {}).await.unwrap_err();
    let detail = f.app.get_conversation(&fresh.id, None).unwrap();
    assert_eq!((detail.conversation.title.as_str(), detail.messages.len()), (fresh.title.as_str(), 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_assistant_cites_the_knowledge_base() {
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Two bulges [1]."])]).await.unwrap();
    let f = open(&model.url(), &[]);
    let notes = f.dir.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("tides.md"), "# Tides\n\nThe moon's gravity raises two tidal bulges.\n").unwrap();
    f.app.kb_add_folder(notes.to_str().unwrap()).unwrap();
    let folder = notes.display().to_string();
    for _ in 0..300 {
        if f.app.kb_status().unwrap().iter().any(|s| s.path == folder && s.documents == 1 && s.state == "idle") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let c = f.app.create_conversation(None).unwrap();
    let mut events = Vec::new();
    let input = TurnInput::Send { text: "What do tidal bulges come from?".into(), attachments: vec![] };
    f.app.run_turn(&c.id, input, |e| events.push(e)).await.unwrap();
    let cited =
        events.iter().find_map(|e| if let TurnEvent::Citations { citations, .. } = e { Some(citations) } else { None });
    let cited = cited.expect("a citations event");
    assert_eq!((cited[0].index, cited[0].document.as_str()), (1, "tides.md"));
    assert_eq!((cited[0].heading.as_deref(), cited[0].lines), (Some("Tides"), Some([1, 3])), "where in the document");
    assert!(model.requests()[0].body.to_string().contains("two tidal bulges"), "the passage reached the model");
    // The question's words are marked in the passage, and kept with the conversation.
    let units: Vec<u16> = cited[0].text.encode_utf16().collect();
    let marked: Vec<String> =
        cited[0].marks.iter().map(|[s, e]| String::from_utf16(&units[*s..*e]).unwrap().to_lowercase()).collect();
    assert!(marked.iter().any(|w| w == "tidal") && marked.iter().any(|w| w.starts_with("bulge")), "{marked:?}");
    let detail = f.app.get_conversation(&c.id, None).unwrap();
    assert_eq!(detail.messages[1].citations[0].document, "tides.md");
    assert_eq!(detail.messages[1].citations[0].marks, cited[0].marks);
}

async fn wait_for_tool(app: &App, tool: &str) {
    for _ in 0..300 {
        if app.list_tools(Some("everything")).unwrap().iter().any(|t| t.name == tool) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("server-everything never offered {tool}");
}

/// Waits for the next dialog the app asks the window to show.
async fn next_request(events: &Recorder) -> ServerRequestView {
    for _ in 0..300 {
        if let Some(r) = events.seen().requests.pop() {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no server request reached the window");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_and_elicitation_requests_wait_for_the_users_answer() {
    let model =
        ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Sampled ", "answer."])]).await.unwrap();
    let f = open(&model.url(), &[everything(ApprovalMode::Ask)]);
    wait_ready(&f.app, "everything").await;
    wait_for_tool(&f.app, "trigger-sampling-request").await;

    let app = f.app.clone();
    let call = tokio::spawn(async move {
        let args = json!({"prompt": "tell me a story", "maxTokens": 50});
        app.call_tool("everything", "trigger-sampling-request", args, None, CancellationToken::new()).await
    });
    let ServerRequestView::Sampling { id, server, messages, model: answering, .. } = next_request(&f.events).await
    else {
        panic!("not a sampling request")
    };
    assert_eq!(server, "everything");
    assert_eq!(answering, "scripted / scripted-model", "the dialog says which model answers");
    assert!(messages[0].text.contains("tell me a story"), "{messages:?}");
    let edited = vec![TextMessage { role: "user".into(), text: "an edited prompt".into() }];
    f.app
        .respond_server_request(&id, ServerRequestResponse::ApproveSampling { messages: edited, system_prompt: None })
        .unwrap();
    let result = call.await.unwrap().unwrap();
    assert!(serde_json::to_string(&result.content).unwrap().contains("Sampled answer."), "{result:?}");
    assert!(model.requests()[0].body.to_string().contains("an edited prompt"), "the model got the edited prompt");
    assert_eq!(
        f.app.respond_server_request(&id, ServerRequestResponse::Decline).unwrap_err().kind(),
        ErrorKind::NotFound
    );

    wait_for_tool(&f.app, "trigger-elicitation-request").await;
    let app = f.app.clone();
    let call = tokio::spawn(async move {
        app.call_tool("everything", "trigger-elicitation-request", json!({}), None, CancellationToken::new()).await
    });
    let ServerRequestView::Elicitation { id, requested_schema, .. } = next_request(&f.events).await else {
        panic!("not an elicitation request")
    };
    assert!(requested_schema["properties"].get("name").is_some(), "{requested_schema}");
    let content = json!({"name": "Ada Lovelace", "check": true, "integer": 7}).as_object().cloned().unwrap();
    f.app.respond_server_request(&id, ServerRequestResponse::Accept { content }).unwrap();
    let result = call.await.unwrap().unwrap();
    assert!(serde_json::to_string(&result.content).unwrap().contains("Ada Lovelace"), "{result:?}");
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_views_request_to_ask_the_model_is_reviewed_as_a_servers_is() {
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Four."])]).await.unwrap();
    let f = open(&model.url(), &[]);
    let params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "What is 2 + 2?"}}],
        "systemPrompt": "Answer in one word.",
        "maxTokens": 20
    });
    let app = f.app.clone();
    let asked = tokio::spawn(async move { app.sample_for_view("counter", params, CancellationToken::new()).await });
    let ServerRequestView::Sampling { id, server, messages, system_prompt, .. } = next_request(&f.events).await else {
        panic!("not a sampling request")
    };
    assert_eq!(server, "counter (its view)", "the dialog says the view asks");
    // A window that opens now, after the event, still finds the request.
    let waiting = f.app.waiting_server_requests();
    assert_eq!(waiting.iter().map(ServerRequestView::id).collect::<Vec<_>>(), [id.as_str()]);
    assert_eq!(messages, [TextMessage { role: "user".into(), text: "What is 2 + 2?".into() }]);
    assert_eq!(system_prompt.as_deref(), Some("Answer in one word."));
    f.app.respond_server_request(&id, ServerRequestResponse::ApproveSampling { messages, system_prompt }).unwrap();
    let answer = asked.await.unwrap().unwrap();
    assert_eq!(answer["role"], "assistant");
    assert_eq!(answer["content"]["text"], "Four.");
    assert_eq!(answer["model"], "scripted-model");
    assert!(f.app.waiting_server_requests().is_empty(), "an answered request waits no more");
    f.events.until("the windows are told the request ended", |seen| seen.ended.contains(&id)).await;
    assert!(model.requests()[0].body.to_string().contains("What is 2 + 2?"));

    // Given up (the view's call stopped) before anyone answered: it waits no more, and the
    // windows are told, so that no dialog is left for a request nobody listens to.
    let app = f.app.clone();
    let stop = CancellationToken::new();
    let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "later"}}], "maxTokens": 5});
    let stopping = stop.clone();
    let asked = tokio::spawn(async move { app.sample_for_view("counter", params, stopping).await });
    let ServerRequestView::Sampling { id, .. } = next_request(&f.events).await else {
        panic!("not a sampling request")
    };
    assert!(!f.events.seen().ended.contains(&id));
    stop.cancel();
    let _ = asked.await.unwrap();
    f.events.until("the windows are told a request given up ended", |seen| seen.ended.contains(&id)).await;
    assert!(f.app.waiting_server_requests().is_empty(), "a request given up waits no more");

    // Declined: the view hears why; unusable parameters are refused before anyone is asked.
    let app = f.app.clone();
    let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "again"}}], "maxTokens": 5});
    let asked = tokio::spawn(async move { app.sample_for_view("counter", params, CancellationToken::new()).await });
    let ServerRequestView::Sampling { id, .. } = next_request(&f.events).await else {
        panic!("not a sampling request")
    };
    f.app.respond_server_request(&id, ServerRequestResponse::Decline).unwrap();
    let refused = asked.await.unwrap().unwrap_err();
    assert!(refused.to_string().contains("the user declined"), "{refused}");
    let wrong =
        f.app.sample_for_view("counter", json!({"messages": "hi"}), CancellationToken::new()).await.unwrap_err();
    assert!(wrong.to_string().starts_with("the view of counter asked the model with unusable parameters"), "{wrong}");
    f.app.shutdown().await;
}

/// Waits up to 10 s for `done`.
async fn eventually(done: impl Fn() -> bool, what: &str) {
    for _ in 0..200 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}");
}

/// Waits until the model has been asked `n` times.
async fn wait_requests(model: &ScriptedServer, n: usize) {
    eventually(|| model.requests().len() >= n, &format!("the model was not asked {n} times")).await;
}

async fn send(app: &App, conversation: &str, text: &str) {
    let input = TurnInput::Send { text: text.into(), attachments: vec![] };
    app.run_turn(conversation, input, |_| {}).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_names_a_new_conversation_after_its_first_answer() {
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::text_reply(&["The Moon's pull ", "raises two bulges."]),
            openai::text_reply(&["\"Why the Moon ", "Makes Two Tides.\""]),
            openai::text_reply(&["Twice a day."]),
        ],
    )
    .await
    .unwrap();
    let f = open_titled(&model.url(), &[]);
    let conversation = f.app.create_conversation(None).unwrap();
    send(&f.app, &conversation.id, "why are there two tides a day?").await;
    // Named after the question at once, by the model once it has answered.
    wait_requests(&model, 2).await;
    eventually(|| !f.events.seen().renamed.is_empty(), "the conversation was not renamed").await;
    let renamed = f.events.seen().renamed.clone();
    assert_eq!(
        renamed,
        [ConversationRenamed { id: conversation.id.clone(), title: "Why the Moon Makes Two Tides".into() }]
    );
    let listed = f.app.list_conversations(None).unwrap();
    assert_eq!(listed[0].title, "Why the Moon Makes Two Tides");

    let asked = &model.requests()[1].body;
    let prompt = asked["messages"].to_string();
    assert!(prompt.contains("Write a title") && prompt.contains("why are there two tides a day?"), "{prompt}");
    assert!(prompt.contains("raises two bulges"), "the answer is part of what is named: {prompt}");
    assert!(asked.get("tools").is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)), "no tools: {asked}");

    // Later turns leave the title alone.
    send(&f.app, &conversation.id, "how often?").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(model.requests().len(), 3);
    assert_eq!(f.events.seen().renamed.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_title_the_user_gave_or_a_failed_title_request_leaves_the_name() {
    // A 400 is not retried (a 5xx would be, and take the next reply).
    let refused = json!({"error": {"message": "max_tokens is too large", "type": "invalid_request_error"}});
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![openai::text_reply(&["Answer one."]), Reply::status(400, refused), openai::text_reply(&["Answer two."])],
    )
    .await
    .unwrap();
    let f = open_titled(&model.url(), &[]);

    // The title request fails: the question stays the name.
    let first = f.app.create_conversation(None).unwrap();
    send(&f.app, &first.id, "first question").await;
    wait_requests(&model, 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let title = |id: &str| f.app.list_conversations(None).unwrap().into_iter().find(|c| c.id == id).unwrap().title;
    assert_eq!(title(&first.id), "first question");

    // Renamed by the user while the answer streams: the model is not asked.
    let second = f.app.create_conversation(None).unwrap();
    let app = f.app.clone();
    let id = second.id.clone();
    let input = TurnInput::Send { text: "second question".into(), attachments: vec![] };
    f.app
        .run_turn(&second.id, input, move |e| {
            if matches!(e, TurnEvent::TextDelta { .. }) {
                app.rename_conversation(&id, "My own name").unwrap();
            }
        })
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(model.requests().len(), 3, "no title request for a conversation the user named");
    assert_eq!(title(&second.id), "My own name");
    assert!(f.events.seen().renamed.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversations_reasoning_effort_replaces_its_assistants_in_the_providers_field() {
    let replies = vec![openai::text_reply(&["One."]), openai::text_reply(&["Two."]), openai::text_reply(&["Three."])];
    let model = ScriptedServer::start(Format::OpenAi, replies).await.unwrap();
    let f = open(&model.url(), &[]);
    let c = f.app.create_conversation(None).unwrap();
    send(&f.app, &c.id, "quick").await;
    assert!(model.requests()[0].body.get("reasoning_effort").is_none(), "the default assistant sets none");
    let settings = f.app.get_conversation(&c.id, None).unwrap().settings;
    let thorough = ConversationSettings { reasoning: Some(ReasoningEffort::High), ..settings };
    f.app.update_conversation_settings(&c.id, &thorough).unwrap();
    send(&f.app, &c.id, "think hard").await;
    assert_eq!(model.requests()[1].body["reasoning_effort"], "high");

    // Off, to a provider set up for Qwen's field.
    let qwen = ProviderProfile { thinking: ThinkingParam::EnableThinking, ..provider(&model.url()) };
    f.app.save_provider(qwen, None).unwrap();
    let off = ConversationSettings { reasoning: Some(ReasoningEffort::Off), ..thorough };
    f.app.update_conversation_settings(&c.id, &off).unwrap();
    send(&f.app, &c.id, "just answer").await;
    let body = &model.requests()[2].body;
    assert_eq!(body["enable_thinking"], false);
    assert!(body.get("reasoning_effort").is_none(), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversations_own_instructions_replace_its_assistants_prompt() {
    let model =
        ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Bonjour."]), openai::text_reply(&["Hi."])])
            .await
            .unwrap();
    let f = open(&model.url(), &[]);
    let c = f.app.create_conversation(None).unwrap();
    let settings = f.app.get_conversation(&c.id, None).unwrap().settings;
    assert_eq!(settings.system_prompt, None);

    let french = ConversationSettings { system_prompt: Some("  Answer in French.  ".into()), ..settings.clone() };
    f.app.update_conversation_settings(&c.id, &french).unwrap();
    assert_eq!(
        f.app.get_conversation(&c.id, None).unwrap().settings.system_prompt.as_deref(),
        Some("Answer in French.")
    );
    // Another choice in the composer leaves the instructions, and the conversation's date, alone.
    let updated = |f: &Fixture| f.app.get_conversation(&c.id, None).unwrap().conversation.updated_at;
    let before = updated(&f);
    tokio::time::sleep(Duration::from_millis(5)).await;
    let other_model = ConversationSettings { model: Some("other-model".into()), ..french.clone() };
    f.app.update_conversation_settings(&c.id, &other_model).unwrap();
    assert_eq!(updated(&f), before, "choosing a model is not activity");
    f.app.update_conversation_settings(&c.id, &french).unwrap();
    send(&f.app, &c.id, "hello").await;
    let system = |i: usize| model.requests()[i].body["messages"][0].clone();
    assert_eq!(system(0)["role"], "system");
    let text = system(0)["content"].to_string();
    assert!(text.contains("Answer in French.") && !text.contains("You are Patchbay"), "{text}");

    // Emptied, the assistant's prompt is back.
    let cleared = ConversationSettings { system_prompt: Some(" ".into()), ..settings };
    f.app.update_conversation_settings(&c.id, &cleared).unwrap();
    assert_eq!(f.app.get_conversation(&c.id, None).unwrap().settings.system_prompt, None);
    send(&f.app, &c.id, "hello again").await;
    let text = system(1)["content"].to_string();
    assert!(text.contains("You are Patchbay") && !text.contains("French"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_conversation_leads_the_list_until_unpinned() {
    let f = open("http://127.0.0.1:9", &[]);
    let older = f.app.create_conversation(None).unwrap();
    let newer = f.app.create_conversation(None).unwrap();
    let order = |f: &Fixture| -> Vec<(String, bool)> {
        f.app.list_conversations(None).unwrap().into_iter().map(|c| (c.id, c.pinned)).collect()
    };
    assert_eq!(order(&f), [(newer.id.clone(), false), (older.id.clone(), false)]);
    f.app.pin_conversation(&older.id, true).unwrap();
    assert_eq!(order(&f), [(older.id.clone(), true), (newer.id.clone(), false)]);
    f.app.pin_conversation(&older.id, false).unwrap();
    assert_eq!(order(&f), [(newer.id.clone(), false), (older.id.clone(), false)]);
    assert_eq!(f.app.pin_conversation("999", true).unwrap_err().kind(), ErrorKind::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_arguments_and_template_variables_are_completed_and_a_templates_resource_reaches_the_model() {
    use patchbay_core::app::AttachmentInput;
    use patchbay_core::app::views::CompletionTarget;
    use std::collections::BTreeMap;
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Read both."])]).await.unwrap();
    let f = open(&model.url(), &[everything(ApprovalMode::Ask)]);
    wait_ready(&f.app, "everything").await;
    let values = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    };
    let complete = |target: CompletionTarget, argument: &'static str, value: &'static str, context| {
        let app = f.app.clone();
        async move { app.complete("everything", target, argument, value, context, CancellationToken::new()).await }
    };

    // server-everything's "completable-prompt": the department narrows the names offered.
    let prompt = f.app.list_prompts().unwrap().into_iter().find(|p| p.name == "completable-prompt").unwrap();
    let arguments: Vec<&str> = prompt.arguments.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(arguments, ["department", "name"]);
    let target = || CompletionTarget::Prompt { name: "completable-prompt".into() };
    let departments = complete(target(), "department", "S", BTreeMap::new()).await.unwrap();
    assert_eq!((departments.values, departments.has_more), (vec!["Sales".to_owned(), "Support".to_owned()], false));
    let names = complete(target(), "name", "", values(&[("department", "Sales"), ("name", "")])).await.unwrap();
    assert_eq!(names.values, ["David", "Eve", "Frank"]);
    let names = complete(target(), "name", "", values(&[("department", "Support")])).await.unwrap();
    assert_eq!(names.values, ["John", "Kim", "Lee"]);
    let args = json!({"department": "Sales", "name": "Eve"}).as_object().unwrap().clone();
    let text = f.app.get_prompt("everything", "completable-prompt", args, CancellationToken::new()).await.unwrap();
    assert_eq!(text, "Please promote Eve to the head of the Sales team.");

    // Its resource templates, their variables completed and filled in.
    let templates = f.app.list_resource_templates().unwrap();
    let text_template = "demo://resource/dynamic/text/{resourceId}";
    let blob_template = "demo://resource/dynamic/blob/{resourceId}";
    let listed = templates.iter().find(|t| t.uri_template == text_template).expect("the text template");
    assert_eq!((listed.server.as_str(), listed.variables.clone()), ("everything", vec!["resourceId".to_owned()]));
    let target = || CompletionTarget::ResourceTemplate { uri_template: text_template.into() };
    assert_eq!(complete(target(), "resourceId", "4", BTreeMap::new()).await.unwrap().values, ["4"]);
    assert!(complete(target(), "resourceId", "x", BTreeMap::new()).await.unwrap().values.is_empty());
    let text_uri = f.app.expand_resource_template(text_template, &values(&[("resourceId", "4")])).unwrap();
    assert_eq!(text_uri, "demo://resource/dynamic/text/4");
    let blob_uri = f.app.expand_resource_template(blob_template, &values(&[("resourceId", "5")])).unwrap();
    // The server's page shows it: the text blob as text.
    let shown = f.app.read_resource("everything", &blob_uri, CancellationToken::new()).await.unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!((shown[0].uri.as_str(), shown[0].mime_type.as_deref()), (blob_uri.as_str(), Some("text/plain")));
    assert!(shown[0].text.as_deref().is_some_and(|t| t.starts_with("Resource 5: This is a base64 blob")), "{shown:?}");
    assert!(!shown[0].truncated && shown[0].blob.is_none());
    let err = f.app.expand_resource_template("demo://{broken", &BTreeMap::new()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");

    // A resource made from a template is in no list: it is read from the server named with it.
    let link = |uri: &str, server: Option<&str>| AttachmentInput::ResourceLink {
        uri: uri.into(),
        name: None,
        server: server.map(str::to_owned),
    };
    let c = f.app.create_conversation(None).unwrap();
    let input = TurnInput::Send { text: "Read these".into(), attachments: vec![link(&text_uri, None)] };
    let error = f.app.run_turn(&c.id, input, |_| {}).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    let attachments = vec![link(&text_uri, Some("everything")), link(&blob_uri, Some("everything"))];
    let input = TurnInput::Send { text: "Read these".into(), attachments };
    f.app.run_turn(&c.id, input, |_| {}).await.unwrap();
    let sent = model.requests()[0].body.to_string();
    assert!(sent.contains("Resource 4: This is a plaintext resource"), "{sent}");
    assert!(sent.contains("Resource 5: This is a base64 blob"), "the text blob is decoded: {sent}");
    f.app.shutdown().await;
}

/// A model that only calls tools reaches the round limit: the window hears a
/// limit (not a provider failure), and so does the reopened conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_limit_reaches_the_window_as_a_limit_and_stays_one() {
    let replies =
        (0..25).map(|i| openai::tool_calls_reply(&[(&format!("call_{i}"), "current_time", &["{}"])])).collect();
    let model = ScriptedServer::start(Format::OpenAi, replies).await.unwrap();
    let f = open(&model.url(), &[]);
    let c = f.app.create_conversation(None).unwrap();
    let mut events = Vec::new();
    let input = TurnInput::Send { text: "Loop.".into(), attachments: vec![] };
    f.app.run_turn(&c.id, input, |e| events.push(e)).await.unwrap();
    let error = events.iter().find_map(|e| if let TurnEvent::Error { error } = e { Some(error) } else { None });
    let error = error.expect("an error event");
    assert_eq!(error.kind, ErrorKind::Limit, "{}", error.message);
    assert!(error.message.contains("after 25 model requests"), "{}", error.message);
    let detail = f.app.get_conversation(&c.id, None).unwrap();
    assert_eq!(detail.messages[1].error.as_ref().map(|e| e.kind), Some(ErrorKind::Limit));
}

/// A result larger than a model of unknown window gets (100,000 characters) is cut for it; the
/// window's card and the reloaded conversation say both sizes, and the inspector reads the whole
/// result a stretch at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_cut_for_the_model_is_kept_whole_for_the_inspector() {
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![openai::tool_calls_reply(&[("call_big", "big__poke", &["{}"])]), openai::text_reply(&["Lots of x."])],
    )
    .await
    .unwrap();
    let mut big = McpServerConfig::stdio(
        "big",
        patchbay_test_support::hostile::hostile_mcp().to_str().unwrap(),
        &["huge-result:1"],
    );
    big.approval = ApprovalMode::Allow;
    let f = open(&model.url(), &[big]);
    wait_ready(&f.app, "big").await;
    let c = f.app.create_conversation(None).unwrap();
    let mut events = Vec::new();
    let input = TurnInput::Send { text: "Poke it".into(), attachments: vec![] };
    f.app.run_turn(&c.id, input, |e| events.push(e)).await.unwrap();

    let Some(TurnEvent::ToolResult { result, .. }) = events.iter().find(|e| matches!(e, TurnEvent::ToolResult { .. }))
    else {
        panic!("{:?}", kinds(&events))
    };
    let kept = result.kept.expect("cut for the model");
    assert_eq!((kept.result, kept.chars, kept.sent_chars), (1, 1 << 20, 100_000));
    let sent = &model.requests()[1].body["messages"];
    let sent = sent.as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap()["content"].to_string();
    assert!(sent.len() < 101_000 && sent.contains("Result 1 was cut"), "{} bytes", sent.len());

    let detail = f.app.get_conversation(&c.id, None).unwrap();
    let stored = detail.messages.iter().flat_map(|m| &m.tool_calls).find(|t| t.call_id == "call_big").unwrap();
    assert_eq!(stored.result.as_ref().and_then(|r| r.kept), Some(kept));

    let page = f.app.read_kept_result(&c.id, 1, 1_000_000, 1_000_000).unwrap();
    assert_eq!((page.offset, page.text.len()), (1_000_000, (1 << 20) - 1_000_000));
    assert!(page.text.bytes().all(|b| b == b'x'));
    let capped = f.app.read_kept_result(&c.id, 1, 0, u64::MAX).unwrap();
    assert_eq!(capped.text.len(), 256 * 1024, "one read returns at most a page");
    assert_eq!(f.app.read_kept_result(&c.id, 2, 0, 10).unwrap_err().kind(), ErrorKind::NotFound);
    let past = f.app.read_kept_result(&c.id, 1, 1 << 20, 10).unwrap_err();
    assert_eq!(past.kind(), ErrorKind::InvalidInput);
    assert!(past.to_string().contains("offset 1048576 is past the end of result 1"), "{past}");
    let other = f.app.create_conversation(None).unwrap();
    assert_eq!(f.app.read_kept_result(&other.id, 1, 0, 10).unwrap_err().kind(), ErrorKind::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_chat_left_unused_is_discarded_and_one_in_use_is_kept() {
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Hi."])]).await.unwrap();
    let f = open(&model.url(), &[]);
    let ids = |f: &Fixture| f.app.list_conversations(None).unwrap().into_iter().map(|c| c.id).collect::<Vec<_>>();

    // A model chosen in the composer is not use; its choice goes with the conversation.
    let left = f.app.create_conversation(None).unwrap();
    let settings = f.app.get_conversation(&left.id, None).unwrap().settings;
    let chosen = ConversationSettings { model: Some("other-model".into()), ..settings };
    f.app.update_conversation_settings(&left.id, &chosen).unwrap();
    let db = rusqlite::Connection::open(DataDir::new(f.dir.path()).database()).unwrap();
    let settings_rows = |id: &str| -> i64 {
        let key = format!("conversation.{id}.settings");
        db.query_row("SELECT count(*) FROM settings WHERE key = ?1", [key], |r| r.get(0)).unwrap()
    };
    assert_eq!(settings_rows(&left.id), 1);
    assert!(f.app.discard_conversation_if_unused(&left.id).unwrap());
    assert!(ids(&f).is_empty());
    assert_eq!(settings_rows(&left.id), 0, "the discarded chat's settings stayed behind");
    let next = f.app.create_conversation(None).unwrap();
    assert_ne!(next.id, left.id, "an id is never given twice");

    // Sent to, renamed, pinned or given instructions: kept.
    send(&f.app, &next.id, "hello").await;
    let renamed = f.app.create_conversation(None).unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    f.app.rename_conversation(&renamed.id, "Mine").unwrap();
    let pinned = f.app.create_conversation(None).unwrap();
    f.app.pin_conversation(&pinned.id, true).unwrap();
    let instructed = f.app.create_conversation(None).unwrap();
    let own = ConversationSettings { system_prompt: Some("Be brief.".into()), ..chosen };
    f.app.update_conversation_settings(&instructed.id, &own).unwrap();
    for c in [&next, &renamed, &pinned, &instructed] {
        assert!(!f.app.discard_conversation_if_unused(&c.id).unwrap(), "{} was discarded", c.id);
    }
    assert_eq!(ids(&f).len(), 4);
    assert!(!f.app.discard_conversation_if_unused("999").unwrap());
    assert_eq!(f.app.discard_conversation_if_unused("x").unwrap_err().kind(), ErrorKind::InvalidInput);
    // The sweep at start takes only those older than a minute: none here.
    let fresh = f.app.create_conversation(None).unwrap();
    assert_eq!(f.app.discard_unused_conversations().unwrap(), 0);
    assert!(ids(&f).contains(&fresh.id));
}
