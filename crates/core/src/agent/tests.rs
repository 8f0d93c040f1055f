//! Unit tests of the turn loop with an in-memory scripted provider and tool host.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::config::ApprovalMode;
use crate::conversations::{
    ConversationStore, FailureKind, MessageId, MessageStatus, Part, Passage, ToolCallStatus, ToolPin, Unavailable,
};
use crate::llm::{ChatMessage, ChatRequest, ContentPart, FinishReason, Provider, StreamEvent, ToolSpec, Usage};
use crate::store::Store;

/// One step of a scripted response.
enum Step {
    Event(StreamEvent),
    Fail(LlmError),
    Sleep(Duration),
    /// Never finishes (until cancelled).
    Hang,
}

fn text(t: &str) -> Step {
    Step::Event(StreamEvent::TextDelta { text: t.into() })
}

fn call(index: usize, id: &str, name: &str, args: &str) -> Vec<Step> {
    vec![
        Step::Event(StreamEvent::ToolCallStart { index, id: id.into(), name: name.into() }),
        Step::Event(StreamEvent::ToolCallDelta { index, arguments: args.into() }),
    ]
}

fn finish(reason: FinishReason) -> Step {
    Step::Event(StreamEvent::Finish { reason })
}

/// Plays one scripted response per request and records the requests.
#[derive(Default)]
struct Scripted {
    rounds: Mutex<VecDeque<Vec<Step>>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    fn new(rounds: Vec<Vec<Step>>) -> Arc<Self> {
        Arc::new(Self { rounds: Mutex::new(rounds.into()), requests: Mutex::default() })
    }

    fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    async fn stream(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Result<BoxStream<'static, Result<StreamEvent, LlmError>>, LlmError> {
        self.requests.lock().unwrap().push(request);
        let steps = self.rounds.lock().unwrap().pop_front().ok_or_else(|| LlmError::Request {
            provider: "scripted".into(),
            message: "the script has no more responses".into(),
        })?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            for step in steps {
                let item = match step {
                    Step::Event(e) => Ok(e),
                    Step::Fail(e) => Err(e),
                    Step::Sleep(d) => {
                        tokio::time::sleep(d).await;
                        continue;
                    }
                    Step::Hang => {
                        cancel.cancelled().await;
                        return;
                    }
                };
                if tx.send(item).is_err() {
                    return;
                }
            }
        });
        Ok(tokio_stream::wrappers::UnboundedReceiverStream::new(rx).boxed())
    }
}

/// Tools for the tests: `echo`, `fail`, `slow` (counts concurrency),
/// `wait_cancel` (waits for its token), plus `current_time` on the built-in
/// server (a fixed instant; the real one is served in process, see `crate::builtin`).
#[derive(Default)]
struct TestTools {
    ask: bool,
    /// The test server is at the strict level.
    strict: bool,
    running: AtomicUsize,
    max_running: AtomicUsize,
    saw_cancel: AtomicBool,
    calls: AtomicUsize,
    /// The version of the tools' definitions (their fingerprints).
    version: AtomicUsize,
}

fn spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("test tool {name}"),
        input_schema: serde_json::json!({"type": "object"}),
        origin: None,
    }
}

fn pin(server: &str, tool: &str, version: usize) -> ToolPin {
    ToolPin { server_id: server.into(), tool: tool.into(), fingerprint: format!("{server}/{tool} v{version}") }
}

#[async_trait::async_trait]
impl ToolHost for TestTools {
    async fn list_tools(&self, _cancel: CancellationToken) -> Vec<HostedTool> {
        let approval = if self.ask { ApprovalMode::Ask } else { ApprovalMode::Allow };
        let version = self.version.load(Ordering::SeqCst);
        let mut tools: Vec<HostedTool> = ["echo", "fail", "slow", "wait_cancel", "forbidden", "late_log"]
            .iter()
            .map(|name| HostedTool {
                spec: spec(&format!("test__{name}")),
                server: "test".into(),
                tool: (*name).into(),
                approval: if *name == "forbidden" { ApprovalMode::Deny } else { approval },
                strict: self.strict,
                pinned: false,
                pin: pin("test", name, version),
                timeout: (*name == "slow").then(|| Duration::from_secs(1)),
            })
            .collect();
        tools.push(HostedTool {
            spec: spec("current_time"),
            server: BUILTIN_SERVER.into(),
            tool: "current_time".into(),
            approval: ApprovalMode::Allow,
            strict: false,
            pinned: true,
            pin: pin(BUILTIN_SERVER, "current_time", version),
            timeout: None,
        });
        tools
    }

    fn instructions(&self, servers: &std::collections::BTreeSet<String>) -> Vec<(String, String)> {
        servers.iter().filter(|s| *s == "test").map(|s| (s.clone(), "Call echo before slow.".to_owned())).collect()
    }

    async fn call_tool(&self, call: ToolInvocation, events: ToolEvents, cancel: CancellationToken) -> ToolOutput {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match call.tool.as_str() {
            "echo" => {
                events.progress(1.0, Some(2.0), Some("half way".into()));
                events.log("info", "echoing");
                ToolOutput::text(serde_json::Value::Object(call.arguments).to_string())
            }
            "fail" => ToolOutput::error("disk on fire"),
            "late_log" => {
                // A server's notification that arrives after the answer (and the turn's end).
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    events.log("info", "too late");
                });
                ToolOutput::text("done")
            }
            "slow" => {
                let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
                self.max_running.fetch_max(now, Ordering::SeqCst);
                let ms = call.arguments.get("ms").and_then(serde_json::Value::as_u64).unwrap_or(50);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                self.running.fetch_sub(1, Ordering::SeqCst);
                ToolOutput::text("slept")
            }
            "wait_cancel" => {
                cancel.cancelled().await;
                self.saw_cancel.store(true, Ordering::SeqCst);
                ToolOutput::error("cancelled by the host")
            }
            "current_time" => ToolOutput::text("2026-01-01T00:00:00Z (unix 1767225600)"),
            other => ToolOutput::error(format!("no tool {other}")),
        }
    }
}

struct Fixture {
    agent: Agent,
    conversation: i64,
}

fn fixture() -> Fixture {
    let conversations = ConversationStore::new(Store::open_in_memory().unwrap());
    let c = conversations.create("test", None, None).unwrap();
    Fixture { agent: Agent::new(conversations), conversation: c.id }
}

impl Fixture {
    fn request(&self, provider: Arc<Scripted>, tools: Arc<TestTools>, action: TurnAction) -> TurnRequest {
        TurnRequest {
            conversation: self.conversation,
            action,
            model: ModelChoice {
                provider,
                provider_name: "scripted".into(),
                model: "m-1".into(),
                sampling: Sampling { temperature: Some(0.2), ..Sampling::default() },
                context_window: None,
            },
            system_prompt: Some("You are a test.".into()),
            tools,
            selection: ToolSelection::All,
            approval: ApprovalPolicy::Ask,
            retriever: None,
            tool_embedder: None,
            limits: TurnLimits::default(),
        }
    }

    fn send(&self, provider: Arc<Scripted>, tools: Arc<TestTools>, message: &str) -> TurnRequest {
        self.request(provider, tools, TurnAction::Send { text: message.into(), attachments: Vec::new() })
    }

    fn conversations(&self) -> &ConversationStore {
        self.agent.conversations()
    }

    /// Records an earlier turn whose tool call returned `result`; its answer's id.
    fn earlier_turn_with_tool_result(&self, result: &str) -> MessageId {
        let conv = self.conversations();
        let user = conv.add_user_message(self.conversation, None, "read the file", &[]).unwrap();
        let mut w = crate::conversations::AssistantWriter::start(conv, self.conversation, user, "p", "m").unwrap();
        let row = w.start_tool_call(0, "old", "test__echo", Some(("test", "echo"))).unwrap();
        w.finish_tool_call(row, ToolCallStatus::Done, &[ContentPart::text(result)], false, 1).unwrap();
        w.push_text(1, "It is long.");
        w.finish(MessageStatus::Complete, None).unwrap();
        w.message_id()
    }
}

async fn collect(turn: Turn) -> Vec<AgentEvent> {
    tokio::time::timeout(Duration::from_secs(20), turn.collect()).await.expect("the turn ended")
}

fn done(events: &[AgentEvent]) -> MessageStatus {
    match events.last() {
        Some(AgentEvent::Done { status, .. }) => *status,
        other => panic!("last event is not Done: {other:?}"),
    }
}

fn outcomes(events: &[AgentEvent]) -> Vec<(String, ToolOutcome)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult { call_id, outcome, .. } => Some((call_id.clone(), *outcome)),
            _ => None,
        })
        .collect()
}

fn tool_results(events: &[AgentEvent]) -> Vec<(String, String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult { call_id, content, is_error, .. } => {
                let text = match content.first() {
                    Some(ContentPart::Text { text }) => text.clone(),
                    other => format!("{other:?}"),
                };
                Some((call_id.clone(), text, *is_error))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn streams_text_and_records_the_answer() {
    let f = fixture();
    let provider = Scripted::new(vec![vec![
        text("Hel"),
        text("lo!"),
        Step::Event(StreamEvent::Usage { usage: Usage { input_tokens: 12, output_tokens: 3 } }),
        finish(FinishReason::Stop),
    ]]);
    let turn = f.agent.start(f.send(provider.clone(), Arc::default(), "Hi")).unwrap();
    let answer = turn.assistant_message_id();
    let events = collect(turn).await;
    assert!(matches!(events[0], AgentEvent::Started { assistant_message_id, .. } if assistant_message_id == answer));
    let deltas: String = events
        .iter()
        .filter_map(|e| if let AgentEvent::TextDelta { text } = e { Some(text.as_str()) } else { None })
        .collect();
    assert_eq!(deltas, "Hello!");
    assert_eq!(done(&events), MessageStatus::Complete);

    let m = f.conversations().message(answer).unwrap();
    assert_eq!((m.text.as_str(), m.status), ("Hello!", MessageStatus::Complete));
    assert_eq!(m.usage, Some(Usage { input_tokens: 12, output_tokens: 3 }));
    assert_eq!((m.provider.as_deref(), m.model.as_deref()), (Some("scripted"), Some("m-1")));

    let request = &provider.requests()[0];
    assert_eq!(request.model, "m-1");
    assert_eq!(request.sampling.temperature, Some(0.2));
    let ChatMessage::System { text: system } = &request.messages[0] else { panic!("{:?}", request.messages[0]) };
    assert!(
        system.starts_with("You are a test.\n\n# MCP servers\n"),
        "the prompt, then the servers' instructions: {system}"
    );
    assert_eq!(request.messages[1], ChatMessage::User { parts: vec![ContentPart::text("Hi")] });
    assert!(request.tools.iter().any(|t| t.name == "current_time"));
}

#[tokio::test]
async fn tool_results_feed_the_next_round() {
    let f = fixture();
    let mut round1 = vec![text("Checking.")];
    round1.extend(call(0, "c1", "current_time", ""));
    round1.extend(call(1, "c2", "test__echo", "{\"say\":"));
    round1.push(Step::Event(StreamEvent::ToolCallDelta { index: 1, arguments: "\"hi\"}".into() }));
    round1.push(finish(FinishReason::ToolCalls));
    let provider = Scripted::new(vec![round1, vec![text("It is now."), finish(FinishReason::Stop)]]);
    let turn = f.agent.start(f.send(provider.clone(), Arc::default(), "time?")).unwrap();
    let answer = turn.assistant_message_id();
    let events = collect(turn).await;
    assert_eq!(done(&events), MessageStatus::Complete);
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::ToolCallStarted { call_id, server: Some(s), tool: Some(t), .. }
            if call_id == "c1" && s == BUILTIN_SERVER && t == "current_time")));
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolProgress { call_id, .. } if call_id == "c2")));
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolLog { message, .. } if message == "echoing")));
    let results = tool_results(&events);
    assert_eq!(results.len(), 2);
    let time = results.iter().find(|r| r.0 == "c1").unwrap();
    assert!(time.1.ends_with('Z') || time.1.contains("Z (unix "), "{time:?}");
    assert!(results.contains(&("c2".into(), "{\"say\":\"hi\"}".into(), false)));

    let second = &provider.requests()[1];
    let n = second.messages.len();
    assert!(matches!(&second.messages[n - 3], ChatMessage::Assistant { text, tool_calls, .. }
        if text == "Checking." && tool_calls.len() == 2 && tool_calls[1].arguments == "{\"say\":\"hi\"}"));
    assert!(matches!(&second.messages[n - 1], ChatMessage::Tool { call_id, is_error: false, .. } if call_id == "c2"));

    let m = f.conversations().message(answer).unwrap();
    assert_eq!(m.text, "Checking.\n\nIt is now.");
    let calls: Vec<_> =
        m.parts.iter().filter_map(|p| if let Part::ToolCall { call, .. } = p { Some(call) } else { None }).collect();
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|c| c.status == ToolCallStatus::Done && c.duration_ms.is_some()));
    // The stored turn replays exactly as the model saw it.
    let history = f.conversations().history(f.conversation, Some(answer)).unwrap();
    assert_eq!(history[1..4], second.messages[2..5]);
}

#[tokio::test]
async fn failing_missing_and_malformed_calls_become_error_results() {
    let f = fixture();
    let mut round1 = call(0, "a", "test__fail", "{}");
    round1.extend(call(1, "b", "no_such_tool", "{}"));
    round1.extend(call(2, "c", "test__echo", "{\"broken\": "));
    round1.extend(call(3, "d", "test__echo", "[1, 2]"));
    round1.extend(call(4, "e", "test__forbidden", "{}"));
    round1.push(finish(FinishReason::ToolCalls));
    let provider = Scripted::new(vec![round1, vec![text("Sorry."), finish(FinishReason::Stop)]]);
    let tools = Arc::new(TestTools::default());
    let events = collect(f.agent.start(f.send(provider.clone(), tools.clone(), "go")).unwrap()).await;
    assert_eq!(done(&events), MessageStatus::Complete);
    let results = tool_results(&events);
    assert_eq!(results.len(), 5);
    assert!(results.iter().all(|r| r.2), "{results:?}");
    let text_of = |id: &str| results.iter().find(|r| r.0 == id).unwrap().1.clone();
    assert_eq!(text_of("a"), "disk on fire");
    assert!(text_of("b").contains("no tool named \"no_such_tool\"") && text_of("b").contains("test__echo"));
    assert!(text_of("c").contains("not valid JSON"), "{}", text_of("c"));
    assert!(text_of("d").contains("not an array"), "{}", text_of("d"));
    assert!(text_of("e").contains("do not allow test/forbidden"), "{}", text_of("e"));
    assert_eq!(tools.calls.load(Ordering::SeqCst), 1, "only the failing tool ran");
    let outcome_of = |id: &str| outcomes(&events).into_iter().find(|o| o.0 == id).unwrap().1;
    assert_eq!(outcome_of("a"), ToolOutcome::Ran);
    for refused in ["b", "c", "d", "e"] {
        assert_eq!(outcome_of(refused), ToolOutcome::Refused, "{refused}");
    }
    let running: Vec<&str> = events
        .iter()
        .filter_map(|e| if let AgentEvent::ToolRunning { call_id } = e { Some(call_id.as_str()) } else { None })
        .collect();
    assert_eq!(running, ["a"], "only a call that runs is reported running");
    let second = &provider.requests()[1];
    let errors = second.messages.iter().filter(|m| matches!(m, ChatMessage::Tool { is_error: true, .. })).count();
    assert_eq!(errors, 5, "the model sees every failure");
}

#[tokio::test]
async fn done_is_always_the_last_event_even_when_a_tool_reports_late() {
    let f = fixture();
    let mut round1 = call(0, "l", "test__late_log", "{}");
    round1.push(finish(FinishReason::ToolCalls));
    let provider = Scripted::new(vec![round1, vec![text("ok"), finish(FinishReason::Stop)]]);
    let turn = f.agent.start(f.send(provider, Arc::default(), "go")).unwrap();
    let events = collect(turn).await;
    assert_eq!(done(&events), MessageStatus::Complete);
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::ToolLog { .. })), "{events:?}");
}

// On tokio's paused clock: the tools' sleeps and the time limit pass without waiting.
#[tokio::test(start_paused = true)]
async fn parallel_calls_run_concurrently_under_the_cap() {
    let f = fixture();
    let mut round1 = Vec::new();
    for i in 0..5 {
        round1.extend(call(i, &format!("s{i}"), "test__slow", "{\"ms\": 100}"));
    }
    round1.push(finish(FinishReason::ToolCalls));
    let provider = Scripted::new(vec![round1, vec![text("done"), finish(FinishReason::Stop)]]);
    let tools = Arc::new(TestTools::default());
    let mut request = f.send(provider, tools.clone(), "go");
    request.limits.max_parallel_tools = 2;
    let events = collect(f.agent.start(request).unwrap()).await;
    assert_eq!(done(&events), MessageStatus::Complete);
    assert_eq!(tool_results(&events).len(), 5);
    assert_eq!(tools.max_running.load(Ordering::SeqCst), 2);
}

// On tokio's paused clock: the tools' sleeps and the time limit pass without waiting.
#[tokio::test(start_paused = true)]
async fn a_tool_past_its_time_limit_is_an_error_result() {
    let f = fixture();
    let mut round1 = call(0, "s", "test__slow", "{\"ms\": 5000}");
    round1.push(finish(FinishReason::ToolCalls));
    let provider = Scripted::new(vec![round1, vec![text("ok"), finish(FinishReason::Stop)]]);
    let started = std::time::Instant::now();
    let events = collect(f.agent.start(f.send(provider, Arc::default(), "go")).unwrap()).await;
    assert!(started.elapsed() < Duration::from_secs(4));
    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    assert!(results[0].2 && results[0].1.contains("within 1 seconds"), "{results:?}");
    assert_eq!(outcomes(&events), [("s".to_owned(), ToolOutcome::TimedOut)]);
    assert_eq!(done(&events), MessageStatus::Complete);
}

#[tokio::test]
async fn the_round_limit_ends_with_a_clear_message() {
    let f = fixture();
    let rounds = (0..3)
        .map(|i| {
            let mut r = call(0, &format!("c{i}"), "current_time", "{}");
            r.push(finish(FinishReason::ToolCalls));
            r
        })
        .collect();
    let provider = Scripted::new(rounds);
    let mut request = f.send(provider.clone(), Arc::default(), "loop forever");
    request.limits.max_rounds = 3;
    let turn = f.agent.start(request).unwrap();
    let answer = turn.assistant_message_id();
    let events = collect(turn).await;
    assert_eq!(done(&events), MessageStatus::RoundLimit);
    assert_eq!(provider.requests().len(), 3);
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::Error { kind: FailureKind::Limit, message, fatal: true } if message.contains("after 3 model requests"))
    ));
    let m = f.conversations().message(answer).unwrap();
    assert_eq!((m.status, m.error_kind), (MessageStatus::RoundLimit, Some(FailureKind::Limit)));
    assert!(m.error.unwrap().contains("after 3 model requests"));
}

fn ask_round() -> Vec<Step> {
    let mut r = call(0, "x", "test__echo", "{\"n\": 1}");
    r.push(finish(FinishReason::ToolCalls));
    r
}

#[tokio::test]
async fn approval_for_the_conversation_is_remembered_and_deny_tells_the_model() {
    let f = fixture();
    let tools = Arc::new(TestTools { ask: true, ..TestTools::default() });
    let provider = Scripted::new(vec![
        ask_round(),
        vec![text("ran"), finish(FinishReason::Stop)],
        ask_round(),
        vec![text("ran again"), finish(FinishReason::Stop)],
    ]);
    let mut turn = f.agent.start(f.send(provider.clone(), tools.clone(), "go")).unwrap();
    let control = turn.control();
    let mut events = Vec::new();
    while let Some(e) = turn.next().await {
        if let AgentEvent::ApprovalNeeded { approval_id, server, tool, arguments, .. } = &e {
            assert_eq!((server.as_str(), tool.as_str()), ("test", "echo"));
            assert_eq!(arguments, &serde_json::json!({"n": 1}));
            control.answer(*approval_id, ApprovalDecision::AllowForConversation).unwrap();
            assert!(matches!(
                control.answer(*approval_id, ApprovalDecision::Deny),
                Err(AgentError::NoSuchApproval { .. })
            ));
        }
        events.push(e);
    }
    assert!(!tool_results(&events)[0].2);
    // Same conversation: no question this time.
    let events = collect(f.agent.start(f.send(provider, tools.clone(), "again")).unwrap()).await;
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::ApprovalNeeded { .. })));
    assert_eq!(tools.calls.load(Ordering::SeqCst), 2);

    // Another conversation asks again; denying tells the model.
    let g = fixture();
    let provider = Scripted::new(vec![ask_round(), vec![text("ok"), finish(FinishReason::Stop)]]);
    let mut turn = g.agent.start(g.send(provider.clone(), tools.clone(), "go")).unwrap();
    let control = turn.control();
    let mut events = Vec::new();
    while let Some(e) = turn.next().await {
        if let AgentEvent::ApprovalNeeded { approval_id, .. } = &e {
            control.answer(*approval_id, ApprovalDecision::Deny).unwrap();
        }
        events.push(e);
    }
    assert_eq!(tool_results(&events), [("x".into(), "The user declined this call.".into(), true)]);
    assert_eq!(outcomes(&events), [("x".to_owned(), ToolOutcome::Declined)]);
    assert_eq!(tools.calls.load(Ordering::SeqCst), 2, "a denied call does not run");
    assert!(provider.requests()[1].messages.iter().any(|m| matches!(m, ChatMessage::Tool { is_error: true, .. })));
}

#[tokio::test]
async fn a_grant_for_the_conversation_ends_when_the_tools_definition_changes() {
    let f = fixture();
    let tools = Arc::new(TestTools { ask: true, ..TestTools::default() });
    let rounds = (0..3).flat_map(|_| [ask_round(), vec![text("ran"), finish(FinishReason::Stop)]]).collect();
    let provider = Scripted::new(rounds);
    let asked = |events: &[AgentEvent]| events.iter().any(|e| matches!(e, AgentEvent::ApprovalNeeded { .. }));
    let run = |text: &'static str| {
        let mut turn = f.agent.start(f.send(provider.clone(), tools.clone(), text)).unwrap();
        let control = turn.control();
        async move {
            let mut events = Vec::new();
            while let Some(e) = turn.next().await {
                if let AgentEvent::ApprovalNeeded { approval_id, .. } = &e {
                    control.answer(*approval_id, ApprovalDecision::AllowForConversation).unwrap();
                }
                events.push(e);
            }
            events
        }
    };
    assert!(asked(&run("first").await));
    assert!(!asked(&run("granted").await));
    tools.version.fetch_add(1, Ordering::SeqCst);
    assert!(asked(&run("changed").await), "the grant was for the old definition");
    assert_eq!(tools.calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn without_anyone_to_ask_calls_are_denied_with_the_reason() {
    let f = fixture();
    let tools = Arc::new(TestTools { ask: true, ..TestTools::default() });
    let provider = Scripted::new(vec![ask_round(), vec![text("ok"), finish(FinishReason::Stop)]]);
    let mut request = f.send(provider, tools.clone(), "go");
    request.approval = ApprovalPolicy::Deny { reason: "no terminal to ask the user".into() };
    let events = collect(f.agent.start(request).unwrap()).await;
    let results = tool_results(&events);
    assert!(results[0].2 && results[0].1.contains("no terminal to ask the user"), "{results:?}");
    assert_eq!(tools.calls.load(Ordering::SeqCst), 0);

    let provider = Scripted::new(vec![ask_round(), vec![text("ok"), finish(FinishReason::Stop)]]);
    let mut request = f.send(provider, tools.clone(), "go");
    request.approval = ApprovalPolicy::AutoApprove;
    let events = collect(f.agent.start(request).unwrap()).await;
    assert!(!tool_results(&events)[0].2);
    assert_eq!(tools.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unattended_run_makes_only_the_calls_its_schedule_allows() {
    let f = fixture();
    let unattended =
        |allowed: &[&str]| ApprovalPolicy::Unattended { allowed: allowed.iter().map(|s| (*s).to_owned()).collect() };
    let run = |tools: Arc<TestTools>, policy: ApprovalPolicy| {
        let provider = Scripted::new(vec![ask_round(), vec![text("ok"), finish(FinishReason::Stop)]]);
        let mut request = f.send(provider, tools, "go");
        request.approval = policy;
        let turn = f.agent.start(request).unwrap();
        async move { collect(turn).await }
    };
    let tools = Arc::new(TestTools { ask: true, ..TestTools::default() });
    let events = run(tools.clone(), unattended(&["test/other"])).await;
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::ApprovalNeeded { .. })), "nobody is asked");
    let results = tool_results(&events);
    assert!(results[0].2 && results[0].1.contains("scheduled run with nobody to approve test/echo"), "{results:?}");
    assert!(results[0].1.contains("the schedule does not allow it"), "{results:?}");
    assert_eq!(tools.calls.load(Ordering::SeqCst), 0);

    let events = run(tools.clone(), unattended(&["test/echo"])).await;
    assert!(!tool_results(&events)[0].2, "an allowed tool runs");
    assert_eq!(tools.calls.load(Ordering::SeqCst), 1);

    let strict = Arc::new(TestTools { ask: true, strict: true, ..TestTools::default() });
    let events = run(strict.clone(), unattended(&["test/echo"])).await;
    assert!(tool_results(&events)[0].1.contains("its server is strict"), "{:?}", tool_results(&events));
    assert_eq!(strict.calls.load(Ordering::SeqCst), 0, "a strict server's calls are never unattended");
}

#[tokio::test]
async fn approving_everything_still_asks_before_a_strict_servers_calls() {
    let f = fixture();
    let tools = Arc::new(TestTools { ask: true, strict: true, ..TestTools::default() });
    let provider = Scripted::new(vec![ask_round(), vec![text("ok"), finish(FinishReason::Stop)]]);
    let mut request = f.send(provider, tools.clone(), "go");
    request.approval = ApprovalPolicy::AutoApprove;
    let mut turn = f.agent.start(request).unwrap();
    let control = turn.control();
    let mut events = Vec::new();
    while let Some(e) = turn.next().await {
        if let AgentEvent::ApprovalNeeded { approval_id, strict, .. } = &e {
            assert!(strict);
            control.answer(*approval_id, ApprovalDecision::Deny).unwrap();
        }
        events.push(e);
    }
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ApprovalNeeded { .. })), "{events:?}");
    assert!(tool_results(&events)[0].2, "the call was declined");
    assert_eq!(tools.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn stopping_mid_stream_keeps_the_partial_answer() {
    let f = fixture();
    let provider = Scripted::new(vec![vec![text("The first half"), Step::Hang]]);
    let mut turn = f.agent.start(f.send(provider, Arc::default(), "go")).unwrap();
    let answer = turn.assistant_message_id();
    let control = turn.control();
    let mut events = Vec::new();
    while let Some(e) = turn.next().await {
        if matches!(e, AgentEvent::TextDelta { .. }) {
            control.stop();
        }
        events.push(e);
    }
    assert_eq!(done(&events), MessageStatus::Stopped);
    let m = f.conversations().message(answer).unwrap();
    assert_eq!((m.text.as_str(), m.status), ("The first half", MessageStatus::Stopped));
}

#[tokio::test]
async fn stopping_cancels_running_tool_calls() {
    let f = fixture();
    let mut round1 = call(0, "w", "test__wait_cancel", "{}");
    round1.push(finish(FinishReason::ToolCalls));
    let provider = Scripted::new(vec![round1]);
    let tools = Arc::new(TestTools::default());
    let mut turn = f.agent.start(f.send(provider.clone(), tools.clone(), "go")).unwrap();
    let answer = turn.assistant_message_id();
    let control = turn.control();
    let mut events = Vec::new();
    while let Some(e) = turn.next().await {
        if matches!(e, AgentEvent::ToolCallStarted { .. }) {
            // Give the call time to start, then press stop.
            let control = control.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                control.stop();
            });
        }
        events.push(e);
    }
    assert_eq!(done(&events), MessageStatus::Stopped);
    assert!(tools.saw_cancel.load(Ordering::SeqCst), "the tool's token was cancelled");
    assert_eq!(provider.requests().len(), 1, "no further round after stop");
    let m = f.conversations().message(answer).unwrap();
    let Part::ToolCall { call, .. } = &m.parts[0] else { panic!("{:?}", m.parts) };
    assert_eq!(call.status, ToolCallStatus::Cancelled);
    assert_eq!(m.status, MessageStatus::Stopped);
}

#[tokio::test]
async fn dropping_the_turn_stops_it() {
    let f = fixture();
    let provider = Scripted::new(vec![vec![text("partial"), Step::Hang]]);
    let mut turn = f.agent.start(f.send(provider, Arc::default(), "go")).unwrap();
    let answer = turn.assistant_message_id();
    while let Some(e) = turn.next().await {
        if matches!(e, AgentEvent::TextDelta { .. }) {
            break;
        }
    }
    drop(turn);
    let conv = f.conversations().clone();
    let status = tokio::time::timeout(Duration::from_secs(5), async move {
        loop {
            let m = conv.message(answer).unwrap();
            if m.status != MessageStatus::Streaming {
                return m;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
    assert_eq!((status.text.as_str(), status.status), ("partial", MessageStatus::Stopped));
}

#[tokio::test]
async fn streamed_text_reaches_the_database_within_the_flush_interval() {
    let f = fixture();
    let provider = Scripted::new(vec![vec![
        text("early words"),
        Step::Sleep(Duration::from_secs(3)),
        text("!"),
        finish(FinishReason::Stop),
    ]]);
    let mut turn = f.agent.start(f.send(provider, Arc::default(), "go")).unwrap();
    let answer = turn.assistant_message_id();
    while let Some(e) = turn.next().await {
        if matches!(e, AgentEvent::TextDelta { .. }) {
            break;
        }
    }
    // Nothing else arrives for three seconds; the timer alone must write the text.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let m = f.conversations().message(answer).unwrap();
    assert_eq!((m.text.as_str(), m.status), ("early words", MessageStatus::Streaming));
    turn.control().stop();
}

#[tokio::test]
async fn provider_errors_end_the_turn_and_keep_the_text() {
    let f = fixture();
    let provider = Scripted::new(vec![vec![
        text("Some text"),
        Step::Fail(LlmError::Http { provider: "scripted".into(), status: 500, message: "boom".into() }),
    ]]);
    let turn = f.agent.start(f.send(provider, Arc::default(), "go")).unwrap();
    let answer = turn.assistant_message_id();
    let events = collect(turn).await;
    assert_eq!(done(&events), MessageStatus::Error);
    assert!(
        events.iter().any(|e| matches!(e, AgentEvent::Error { kind: FailureKind::Provider, message, fatal: true } if message.contains("HTTP 500")))
    );
    let m = f.conversations().message(answer).unwrap();
    assert_eq!((m.text.as_str(), m.error_kind), ("Some text", Some(FailureKind::Provider)));
    assert!(m.error.unwrap().contains("boom"));

    // A stream that ends without Finish is an error too, not a silent success.
    let provider = Scripted::new(vec![vec![text("cut")]]);
    let events = collect(f.agent.start(f.send(provider, Arc::default(), "go")).unwrap()).await;
    assert_eq!(done(&events), MessageStatus::Error);
    assert!(
        events.iter().any(|e| matches!(e, AgentEvent::Error { kind: FailureKind::Provider, message, .. } if message.contains("without finishing")))
    );
}

#[tokio::test]
async fn regenerate_and_edit_create_siblings_with_the_right_history() {
    let f = fixture();
    let provider = Scripted::new(vec![
        vec![text("first answer"), finish(FinishReason::Stop)],
        vec![text("second answer"), finish(FinishReason::Stop)],
        vec![text("answer to the edit"), finish(FinishReason::Stop)],
    ]);
    let turn = f.agent.start(f.send(provider.clone(), Arc::default(), "question")).unwrap();
    let (question, first) = (turn.user_message_id(), turn.assistant_message_id());
    collect(turn).await;
    let turn =
        f.agent.start(f.request(provider.clone(), Arc::default(), TurnAction::Regenerate { message: first })).unwrap();
    assert_eq!(turn.user_message_id(), question);
    let second = turn.assistant_message_id();
    collect(turn).await;
    let branch = f.conversations().branch(f.conversation).unwrap();
    assert_eq!(branch[1].siblings, [first, second]);
    assert_eq!(provider.requests()[1].messages.len(), 2, "system + the question, not the old answer");

    let edit = TurnAction::Edit { message: question, text: "better question".into(), attachments: Vec::new() };
    let turn = f.agent.start(f.request(provider.clone(), Arc::default(), edit)).unwrap();
    let edited = turn.user_message_id();
    collect(turn).await;
    let branch = f.conversations().branch(f.conversation).unwrap();
    assert_eq!(branch[0].siblings, [question, edited]);
    assert_eq!(branch[1].message.text, "answer to the edit");
    assert_eq!(
        provider.requests()[2].messages[1],
        ChatMessage::User { parts: vec![ContentPart::text("better question")] }
    );

    // Regenerating a user message is refused with a reason.
    let bad = f.request(provider, Arc::default(), TurnAction::Regenerate { message: edited });
    assert!(matches!(
        f.agent.start(bad),
        Err(AgentError::Conversation(crate::conversations::ConversationError::WrongRole { .. }))
    ));
}

struct FixedRetriever;

#[async_trait::async_trait]
impl Retriever for FixedRetriever {
    async fn retrieve(&self, query: &str, _cancel: CancellationToken) -> Result<Retrieved, RetrievalError> {
        let local = Passage {
            text: format!("Patchbay answers {query}."),
            source: "docs/guide.md".into(),
            heading: Some("Intro".into()),
            lines: Some((3, 5)),
            relevance: Some(0.9),
            marks: Vec::new(),
            origin: None,
        };
        let remote = Passage {
            text: "The team's wiki agrees.".into(),
            source: "wiki.pdf".into(),
            heading: None,
            lines: None,
            relevance: Some(0.5),
            marks: Vec::new(),
            origin: Some("Team".into()),
        };
        let unavailable = vec![Unavailable { name: "Archive".into(), why: "no answer within 8s".into() }];
        Ok(Retrieved { passages: vec![local, remote], unavailable })
    }
}

struct BrokenRetriever;

#[async_trait::async_trait]
impl Retriever for BrokenRetriever {
    async fn retrieve(&self, _query: &str, _cancel: CancellationToken) -> Result<Retrieved, RetrievalError> {
        Err(RetrievalError { message: "the index is locked".into() })
    }
}

#[tokio::test]
async fn a_failed_knowledge_search_is_said_as_such_and_the_turn_goes_on() {
    let f = fixture();
    let provider = Scripted::new(vec![vec![text("Anyway."), finish(FinishReason::Stop)]]);
    let mut request = f.send(provider, Arc::default(), "what is it");
    request.retriever = Some(Arc::new(BrokenRetriever));
    let events = collect(f.agent.start(request).unwrap()).await;
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::Error { kind: FailureKind::Knowledge, fatal: false, message } if message.contains("the index is locked")
    )));
    assert_eq!(done(&events), MessageStatus::Complete);
}

#[tokio::test]
async fn retrieved_passages_become_cited_context() {
    let f = fixture();
    let provider = Scripted::new(vec![vec![text("See [1]."), finish(FinishReason::Stop)]]);
    let mut request = f.send(provider.clone(), Arc::default(), "what is it");
    request.retriever = Some(Arc::new(FixedRetriever));
    let turn = f.agent.start(request).unwrap();
    let answer = turn.assistant_message_id();
    let events = collect(turn).await;
    assert!(matches!(&events[1], AgentEvent::Citations { passages, unavailable }
        if passages[0].source == "docs/guide.md" && unavailable[0].name == "Archive"));
    let ChatMessage::System { text } = &provider.requests()[0].messages[0] else { panic!() };
    assert!(text.starts_with("You are a test."), "{text}");
    assert!(text.contains("[1] docs/guide.md › Intro (lines 3-5)\nPatchbay answers what is it."), "{text}");
    // A remote source's passage is named with its source, and quoted.
    assert!(text.contains("[2] Team: wiki.pdf\n> The team's wiki agrees."), "{text}");
    let stored = f.conversations().message(answer).unwrap();
    assert_eq!(stored.citations[0].heading.as_deref(), Some("Intro"));
    assert_eq!(stored.citations[1].origin.as_deref(), Some("Team"));
    assert_eq!(stored.unavailable, [Unavailable { name: "Archive".into(), why: "no answer within 8s".into() }]);
}

#[tokio::test]
async fn an_overflowing_history_is_trimmed_and_the_user_told() {
    let f = fixture();
    let conv = f.conversations();
    let earlier = f.earlier_turn_with_tool_result(&"x".repeat(30_000));

    let provider = Scripted::new(vec![vec![text("ok"), finish(FinishReason::Stop)]]);
    let mut request = f.send(provider.clone(), Arc::default(), "and now?");
    request.model.context_window = Some(8_000);
    let events = collect(f.agent.start(request).unwrap()).await;
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::ContextTrimmed { elided_tool_results: 1, dropped_messages: 0, context_window: 8_000, .. }
    )));
    let sent = &provider.requests()[0].messages;
    assert!(
        sent.iter()
            .any(|m| matches!(m, ChatMessage::Tool { parts, .. } if parts == &[ContentPart::text(budget::ELIDED)]))
    );
    assert!(matches!(sent.last(), Some(ChatMessage::User { .. })));
    // The stored result is untouched: only the request was shortened.
    let stored = conv.history(f.conversation, Some(earlier)).unwrap();
    assert!(matches!(&stored[2], ChatMessage::Tool { parts, .. } if parts != &[ContentPart::text(budget::ELIDED)]));
}

#[tokio::test]
async fn openai_models_are_trimmed_by_their_real_token_count() {
    // 36,000 ASCII bytes: 12,000 tokens by the estimate, 6,001 by gpt-4o's o200k_base.
    let f = fixture();
    f.earlier_turn_with_tool_result(&"hello world ".repeat(3_000));

    // A 12,000-token window leaves 9,000 for the request after the answer's reserve.
    let f = &f;
    let trimmed = |model: &'static str| async move {
        let provider = Scripted::new(vec![vec![text("ok"), finish(FinishReason::Stop)]]);
        let mut request = f.send(provider, Arc::default(), "and now?");
        request.model.model = model.into();
        request.model.context_window = Some(12_000);
        let events = collect(f.agent.start(request).unwrap()).await;
        events.iter().any(|e| matches!(e, AgentEvent::ContextTrimmed { .. }))
    };
    assert!(!trimmed("gpt-4o").await, "fits by the real count");
    assert!(trimmed("some-local-model").await, "over by the estimate");
}

#[tokio::test]
async fn no_tools_means_none_offered() {
    let f = fixture();
    let provider = Scripted::new(vec![vec![text("plain"), finish(FinishReason::Stop)]]);
    let mut request = f.send(provider.clone(), Arc::default(), "hi");
    request.selection = ToolSelection::None;
    collect(f.agent.start(request).unwrap()).await;
    assert!(provider.requests()[0].tools.is_empty());
}

#[tokio::test]
async fn the_offered_servers_instructions_follow_the_system_prompt() {
    let f = fixture();
    let system_of = |selection: ToolSelection| {
        let provider = Scripted::new(vec![vec![text("ok"), finish(FinishReason::Stop)]]);
        let mut request = f.send(provider.clone(), Arc::default(), "hi");
        request.selection = selection;
        let agent = f.agent.clone();
        async move {
            collect(agent.start(request).unwrap()).await;
            match &provider.requests()[0].messages[0] {
                ChatMessage::System { text } => text.clone(),
                other => panic!("{other:?}"),
            }
        }
    };
    let all = system_of(ToolSelection::All).await;
    assert!(all.starts_with("You are a test."), "{all}");
    assert!(all.ends_with("# MCP servers\nSome tools come from MCP servers. What each server says about using it:\n\n## test\nCall echo before slow.\n"), "{all}");
    let only_builtin = ToolSelection::Only { servers: [BUILTIN_SERVER.to_owned()].into(), tools: Default::default() };
    assert_eq!(system_of(only_builtin).await, "You are a test.", "a server whose tools are not offered says nothing");
    assert_eq!(system_of(ToolSelection::None).await, "You are a test.");
}

/// Vectors by meaning for the tests: "echo" and "repeat" point one way, everything else another.
#[derive(Default)]
struct AxisEmbedder {
    texts: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl ToolEmbedder for AxisEmbedder {
    async fn embed(&self, texts: &[String], _cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RetrievalError> {
        self.texts.lock().unwrap().extend(texts.iter().cloned());
        let about_echo = |t: &String| t.contains("echo") || t.contains("repeat");
        Ok(texts.iter().map(|t| if about_echo(t) { vec![1.0, 0.0] } else { vec![0.0, 1.0] }).collect())
    }
}

#[tokio::test]
async fn a_turns_tool_search_ranks_by_meaning_with_an_embedder() {
    let f = fixture();
    let mut search = call(0, "s1", SEARCH_TOOL, r#"{"query": "repeat what I say", "limit": 1}"#);
    search.push(finish(FinishReason::ToolCalls));
    let provider = Scripted::new(vec![search, vec![text("found it"), finish(FinishReason::Stop)]]);
    let embedder = Arc::new(AxisEmbedder::default());
    let mut request = f.send(provider.clone(), Arc::default(), "say it back");
    // A window so small that the tools are found through search.
    request.model.context_window = Some(200);
    request.tool_embedder = Some(embedder.clone());
    let events = collect(f.agent.start(request).unwrap()).await;
    let results = tool_results(&events);
    assert!(results[0].1.contains("test__echo"), "no word in common, found by meaning: {results:?}");
    let texts = embedder.texts.lock().unwrap().clone();
    assert!(texts.contains(&"test echo: test tool test__echo".to_owned()), "every tool is embedded: {texts:?}");
    assert_eq!(texts.last().map(String::as_str), Some("repeat what I say"), "then the query");
}

/// An embedder that never answers (a stalled endpoint).
struct StalledEmbedder;

#[async_trait::async_trait]
impl ToolEmbedder for StalledEmbedder {
    async fn embed(&self, _texts: &[String], _cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RetrievalError> {
        std::future::pending().await
    }
}

#[tokio::test(start_paused = true)]
async fn a_stalled_embedder_holds_a_turn_up_only_briefly_and_search_goes_on_by_words() {
    let f = fixture();
    let mut search = call(0, "s1", SEARCH_TOOL, r#"{"query": "echo", "limit": 1}"#);
    search.push(finish(FinishReason::ToolCalls));
    let provider = Scripted::new(vec![search, vec![text("found it"), finish(FinishReason::Stop)]]);
    let mut request = f.send(provider, Arc::default(), "say it back");
    request.model.context_window = Some(200);
    request.tool_embedder = Some(Arc::new(StalledEmbedder));
    let started = tokio::time::Instant::now();
    let events = tokio::time::timeout(Duration::from_secs(60), f.agent.start(request).unwrap().collect::<Vec<_>>())
        .await
        .expect("the turn ended");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(15) && waited < Duration::from_secs(20), "{waited:?}");
    assert_eq!(done(&events), MessageStatus::Complete);
    assert!(tool_results(&events)[0].1.contains("test__echo"), "{:?}", tool_results(&events));
}
