//! Results sized to the model: the real filesystem server (npm) reads a 2 MB
//! file for a scripted OpenAI-compatible model with a 16k-token window. The
//! result is cut to what is left of the window, with a note; the model reads on
//! with `read_result` as each answer's last line says, then jumps to the last
//! lines by number. No request is larger than the window, and the whole file is
//! kept with the conversation.
#![cfg(target_os = "linux")]

use crate::common;

use std::sync::Arc;

use futures::StreamExt;
use patchbay_core::agent::budget::{Estimate, TokenCounter};
use patchbay_core::agent::{
    Agent, AgentEvent, ApprovalPolicy, ModelChoice, READ_TOOL, Sampling, ToolSelection, TurnAction, TurnLimits,
    TurnRequest,
};
use patchbay_core::config::{ApprovalMode, McpServerConfig};
use patchbay_core::conversations::ConversationStore;
use patchbay_core::conversations::MessageStatus;
use patchbay_core::llm::OpenAiProvider;
use patchbay_core::mcp::{McpRegistry, RegistryOptions, RegistryTools};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::peers;
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, openai};
use serde_json::{Value, json};

const WINDOW: u32 = 16_000;
const LINES: usize = 40_000;

/// The text of the last tool message of a chat-completions request.
fn last_tool_text(body: &Value) -> String {
    let Some(message) = body["messages"].as_array().and_then(|m| m.iter().rev().find(|m| m["role"] == "tool")) else {
        return String::new();
    };
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// The arguments a note or a page says to read on with.
fn read_on(text: &str) -> Option<String> {
    let start = text.rfind(&format!("{READ_TOOL} {{"))? + READ_TOOL.len() + 1;
    let end = start + text[start..].find('}')? + 1;
    Some(text[start..end].to_owned())
}

/// The numbers of the `line NNNNNN` lines in `text`, in order.
fn line_numbers(text: &str) -> Vec<usize> {
    text.lines().filter_map(|l| l.strip_prefix("line ")?.get(..6)?.parse().ok()).collect()
}

/// A model that reads on three times as the answers say, then asks for the last two lines,
/// then answers with the last line it read.
fn reader() -> Reply {
    Reply::respond(|body| {
        let text = last_tool_text(body);
        let reads = body["messages"].as_array().map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count());
        let id = format!("r{reads}");
        if let Some(last) = line_numbers(&text).last().filter(|&&n| n == LINES) {
            return openai::text_reply(&[&format!("The log ends at line {last}.")]);
        }
        let arguments = match read_on(&text) {
            Some(next) if reads <= 3 => next,
            _ => json!({"result": 1, "line": LINES - 1, "lines": 2}).to_string(),
        };
        openai::tool_calls_reply(&[(&id, READ_TOOL, &[&arguments])])
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2_mb_result_is_cut_to_a_small_window_and_the_model_pages_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let files = files.canonicalize().unwrap();
    let log: String = (1..=LINES).map(|i| format!("line {i:06} of the big log: the quick brown fox jumps\n")).collect();
    assert!(log.len() >= 2 << 20, "{} bytes", log.len());
    std::fs::write(files.join("big.log"), &log).unwrap();

    let mut fs = McpServerConfig::stdio(
        "fs",
        peers::npm_bin("mcp-server-filesystem").to_str().unwrap(),
        &[files.to_str().unwrap()],
    );
    fs.approval = ApprovalMode::Allow;
    let registry = McpRegistry::new(Arc::new(MemoryStore::new()), RegistryOptions::default());
    registry.configure([fs.clone()]);
    registry.start("fs").await.unwrap();
    registry.wait_settled(std::time::Duration::from_secs(60)).await;
    assert_eq!(registry.status("fs").unwrap().to_string(), "ready", "{:?}", registry.stderr_tail("fs", 20));
    let tools = Arc::new(RegistryTools::new(registry, [fs]));

    let path = files.join("big.log");
    let first = json!({"path": path.to_str().unwrap()}).to_string();
    let mut script = vec![openai::tool_calls_reply(&[("c1", "fs__read_text_file", &[&first])])];
    script.extend((0..8).map(|_| reader()));
    let model = ScriptedServer::start(Format::OpenAi, script).await.unwrap();

    let conversations = ConversationStore::new(Store::open(&DataDir::new(dir.path().join("data"))).unwrap());
    let conversation = conversations.create("log", None, None).unwrap().id;
    let provider = Arc::new(OpenAiProvider::new(common::settings(model.url())).unwrap());
    let agent = Agent::new(conversations.clone());
    let request = |text: &str, selection: ToolSelection| TurnRequest {
        conversation,
        action: TurnAction::Send { text: text.into(), attachments: Vec::new() },
        model: ModelChoice {
            provider_name: "scripted".into(),
            provider: provider.clone(),
            model: "gpt-test".into(),
            sampling: Sampling::default(),
            context_window: Some(WINDOW),
        },
        system_prompt: None,
        tools: tools.clone(),
        selection,
        approval: ApprovalPolicy::AutoApprove,
        retriever: None,
        tool_embedder: None,
        limits: TurnLimits::default(),
    };
    let events: Vec<AgentEvent> =
        agent.start(request("How far does the log go?", ToolSelection::All)).unwrap().collect().await;
    assert!(
        matches!(events.last(), Some(AgentEvent::Done { status: MessageStatus::Complete, .. })),
        "{:?}",
        events.iter().rev().take(3).collect::<Vec<_>>()
    );

    // The file is cut for the model and kept whole.
    let kept: Vec<_> = events
        .iter()
        .filter_map(|e| if let AgentEvent::ToolResult { kept, .. } = e { Some(*kept) } else { None })
        .collect();
    let cut = kept[0].expect("the 2 MB result is cut");
    assert_eq!((cut.result, cut.chars, cut.lines), (1, log.len() as u64, LINES as u64));
    assert!(cut.sent_chars > 1_000 && cut.sent_chars < 24_000, "{cut:?}");
    assert!(kept[1..].iter().all(Option::is_none), "pages are not kept again: {kept:?}");
    assert_eq!(conversations.kept_result(conversation, 1).unwrap().text, log);

    // Each page starts where the one before ended; the last read ends the log.
    let results = common::tool_results(&events);
    assert_eq!(results.len(), 5, "the file, three pages on, the last lines: {results:?}");
    assert!(results.iter().all(|(error, _)| !error), "{results:?}");
    let mut next = 1;
    for (_, text) in &results[..4] {
        let lines = line_numbers(text);
        assert_eq!(lines.first(), Some(&next), "a page starts where the last ended");
        assert!(lines.windows(2).all(|w| w[1] == w[0] + 1), "whole lines, in order");
        next = lines.last().unwrap() + 1;
    }
    assert_eq!(line_numbers(&results[4].1), [LINES - 1, LINES]);
    assert!(results[0].1.contains("Result 1 was cut to fit the context window"), "{}", results[0].1);

    // No request is larger than the window, counted over its whole body as sent (conservatively).
    let requests = model.requests();
    assert_eq!(requests.len(), 6);
    for (i, request) in requests.iter().enumerate() {
        let tokens = Estimate.count(&request.body.to_string());
        assert!(tokens <= WINDOW, "request {i} takes {tokens} tokens of {WINDOW}");
        let offered: Vec<&str> =
            request.body["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
        assert_eq!(offered.contains(&READ_TOOL), i > 0, "{READ_TOOL} is offered once a result is kept: {offered:?}");
    }
    let last = requests.last().unwrap();
    assert!(last_tool_text(&last.body).contains(&format!("line {LINES:06}")));

    // A turn of the same conversation without tools is offered no read tool either.
    let events: Vec<AgentEvent> = agent.start(request("Thanks.", ToolSelection::None)).unwrap().collect().await;
    assert!(matches!(events.last(), Some(AgentEvent::Done { status: MessageStatus::Complete, .. })));
    let after = &model.requests()[6].body;
    assert!(after["tools"].as_array().is_none_or(Vec::is_empty), "{}", after["tools"]);
}
