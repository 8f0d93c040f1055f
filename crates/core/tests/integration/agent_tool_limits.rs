//! The policy's call limits in a real turn: a scripted OpenAI-compatible
//! model calls a real stdio server's tool in a loop. Over the server's rate
//! limit a call is not made and the model reads which limit and when it
//! resets; past the per-turn cap the calls are refused, the next round offers
//! no tools, and the turn ends with the model's answer.
#![cfg(target_os = "linux")]

use crate::common;

use std::sync::Arc;

use futures::StreamExt;
use patchbay_core::agent::{
    Agent, AgentEvent, ApprovalPolicy, ModelChoice, Sampling, ToolSelection, TurnAction, TurnLimits, TurnRequest,
};
use patchbay_core::config::{ApprovalMode, McpServerConfig};
use patchbay_core::conversations::{ConversationStore, MessageStatus};
use patchbay_core::llm::OpenAiProvider;
use patchbay_core::mcp::{McpRegistry, RegistryOptions, RegistryTools};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::hostile::hostile_mcp;
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, openai};

const POKE: &str = "poker__poke";

/// hostile-mcp in a mode that answers each `poke` at once, at the default (normal) level.
async fn poker(rate_per_tool: Option<u32>) -> Arc<RegistryTools> {
    let mut config = McpServerConfig::stdio("poker", hostile_mcp().to_str().unwrap(), &["flood:0"]);
    config.approval = ApprovalMode::Allow;
    config.policy.rate.per_tool_per_min = rate_per_tool;
    let registry = McpRegistry::new(Arc::new(MemoryStore::new()), RegistryOptions::default());
    registry.configure([config.clone()]);
    registry.start("poker").await.unwrap();
    registry.wait_settled(std::time::Duration::from_secs(30)).await;
    assert_eq!(registry.status("poker").unwrap().to_string(), "ready", "{:?}", registry.stderr_tail("poker", 20));
    Arc::new(RegistryTools::new(registry, [config]))
}

fn pokes(ids: &[&str]) -> Reply {
    let calls: Vec<(&str, &str, &[&str])> = ids.iter().map(|id| (*id, POKE, &["{}"][..])).collect();
    openai::tool_calls_reply(&calls)
}

async fn turn(server: &ScriptedServer, tools: Arc<RegistryTools>, limits: TurnLimits) -> Vec<AgentEvent> {
    let dir = tempfile::tempdir().unwrap();
    let conversations = ConversationStore::new(Store::open(&DataDir::new(dir.path())).unwrap());
    let conversation = conversations.create("limits", None, None).unwrap().id;
    let provider = Arc::new(OpenAiProvider::new(common::settings(server.url())).unwrap());
    let request = TurnRequest {
        conversation,
        action: TurnAction::Send { text: "poke it".into(), attachments: Vec::new() },
        model: ModelChoice {
            provider_name: "scripted".into(),
            provider,
            model: "gpt-test".into(),
            sampling: Sampling::default(),
            context_window: None,
        },
        system_prompt: None,
        tools,
        selection: ToolSelection::All,
        approval: ApprovalPolicy::AutoApprove,
        retriever: None,
        tool_embedder: None,
        limits,
    };
    Agent::new(conversations).start(request).unwrap().collect().await
}

fn assert_done(events: &[AgentEvent]) {
    assert!(
        matches!(events.last(), Some(AgentEvent::Done { status: MessageStatus::Complete, .. })),
        "the turn ends cleanly: {:?}",
        events.last()
    );
}

#[tokio::test]
async fn a_call_over_the_rate_limit_is_not_made_and_the_model_reads_why() {
    let tools = poker(Some(2)).await;
    let server = ScriptedServer::start(
        Format::OpenAi,
        vec![pokes(&["c1", "c2"]), pokes(&["c3"]), openai::text_reply(&["Poked twice."])],
    )
    .await
    .unwrap();
    let events = turn(&server, tools, TurnLimits::default()).await;
    let results = common::tool_results(&events);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[..2].iter().all(|(error, text)| !error && text == "flooded 0"), "{results:?}");
    let (error, text) = &results[2];
    assert!(*error, "{text}");
    assert!(text.contains("tool \"poke\"") && text.contains("allows 2 calls per minute"), "{text}");
    assert!(text.contains("resets in"), "{text}");
    assert_done(&events);
    assert_eq!(server.remaining(), 0);
}

#[tokio::test]
async fn past_the_per_turn_cap_calls_are_refused_and_the_model_must_answer() {
    let tools = poker(None).await;
    let server = ScriptedServer::start(
        Format::OpenAi,
        vec![pokes(&["c1", "c2"]), pokes(&["c3", "c4"]), openai::text_reply(&["That is all I may do."])],
    )
    .await
    .unwrap();
    let limits = TurnLimits { max_tool_calls: 3, ..TurnLimits::default() };
    let events = turn(&server, tools, limits).await;
    let results = common::tool_results(&events);
    assert_eq!(results.len(), 4, "{results:?}");
    assert_eq!(results.iter().filter(|(error, _)| !error).count(), 3, "{results:?}");
    let refused: Vec<&String> = results.iter().filter(|(error, _)| *error).map(|(_, t)| t).collect();
    assert_eq!(refused.len(), 1);
    assert!(refused[0].contains("made 3 tool calls") && refused[0].contains("per-turn cap"), "{}", refused[0]);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].body.get("tools").is_some(), "tools are offered before the cap");
    assert!(requests[2].body.get("tools").is_none(), "no tools after the cap: {}", requests[2].body);
    assert_done(&events);
}
