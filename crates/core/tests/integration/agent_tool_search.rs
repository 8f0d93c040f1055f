//! Tool search in real turns: three real stdio servers offer 303 tools, far
//! more than a 32k-token model's tenth (and OpenAI's 128). A scripted
//! OpenAI-compatible model searches, calls what it found, and answers; no
//! request carries every definition, and the next turn of the conversation
//! starts with the tool it found.
#![cfg(target_os = "linux")]

use crate::common;

use std::sync::Arc;

use futures::StreamExt;
use patchbay_core::agent::{
    Agent, AgentEvent, ApprovalPolicy, ModelChoice, SEARCH_TOOL, Sampling, ToolSelection, TurnAction, TurnLimits,
    TurnRequest,
};
use patchbay_core::config::{ApprovalMode, McpServerConfig};
use patchbay_core::conversations::{ConversationId, ConversationStore, MessageStatus};
use patchbay_core::llm::OpenAiProvider;
use patchbay_core::mcp::{McpRegistry, RegistryOptions, RegistryTools};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::hostile::hostile_mcp;
use patchbay_test_support::scripted::{Format, ScriptedServer, openai};
use serde_json::Value;

const AREAS: [&str; 3] = ["billing", "crm", "warehouse"];

/// Three servers of 101 tools each (`hostile-mcp tools:AREA`), calls allowed.
async fn office() -> Arc<RegistryTools> {
    let configs: Vec<McpServerConfig> = AREAS
        .iter()
        .map(|area| {
            let mut config =
                McpServerConfig::stdio(*area, hostile_mcp().to_str().unwrap(), &[&format!("tools:{area}")]);
            config.approval = ApprovalMode::Allow;
            config
        })
        .collect();
    let registry = McpRegistry::new(Arc::new(MemoryStore::new()), RegistryOptions::default());
    registry.configure(configs.clone());
    for area in AREAS {
        registry.start(area).await.unwrap();
    }
    registry.wait_settled(std::time::Duration::from_secs(30)).await;
    for area in AREAS {
        assert_eq!(registry.status(area).unwrap().to_string(), "ready", "{:?}", registry.stderr_tail(area, 20));
    }
    Arc::new(RegistryTools::new(registry, configs))
}

async fn turn(
    server: &ScriptedServer,
    conversations: &ConversationStore,
    conversation: ConversationId,
    tools: Arc<RegistryTools>,
    text: &str,
) -> Vec<AgentEvent> {
    let provider = Arc::new(OpenAiProvider::new(common::settings(server.url())).unwrap());
    let request = TurnRequest {
        conversation,
        action: TurnAction::Send { text: text.into(), attachments: Vec::new() },
        model: ModelChoice {
            provider_name: "scripted".into(),
            provider,
            model: "gpt-test".into(),
            sampling: Sampling::default(),
            context_window: Some(32_000),
        },
        system_prompt: None,
        tools,
        selection: ToolSelection::All,
        approval: ApprovalPolicy::AutoApprove,
        retriever: None,
        tool_embedder: None,
        limits: TurnLimits::default(),
    };
    Agent::new(conversations.clone()).start(request).unwrap().collect().await
}

/// The tool names a recorded request offered.
fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn the_model_finds_one_tool_among_300_calls_it_and_the_conversation_keeps_it() {
    let tools = office().await;
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::tool_calls_reply(&[("s1", SEARCH_TOOL, &[r#"{"query": "archive an invoice in billing"}"#])]),
            openai::tool_calls_reply(&[("c1", "billing__archive_invoice", &[r#"{"id": "INV-7"}"#])]),
            openai::text_reply(&["Archived INV-7."]),
            openai::text_reply(&["It is archived."]),
        ],
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let conversations = ConversationStore::new(Store::open(&DataDir::new(dir.path())).unwrap());
    let conversation = conversations.create("office", None, None).unwrap().id;

    let events = turn(&model, &conversations, conversation, tools.clone(), "Archive invoice INV-7").await;
    assert!(
        events.iter().any(|e| matches!(e, AgentEvent::ToolSearch { searchable: 303, sent: 0 })),
        "the turn says it searches: {events:?}"
    );
    let results = common::tool_results(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    let found: Value = serde_json::from_str(&results[0].1).unwrap();
    assert_eq!(found["tools"][0]["name"], "billing__archive_invoice", "the best match first: {found}");
    assert_eq!(results[1], (false, r#"archive_invoice ran with {"id":"INV-7"}"#.to_owned()));
    assert!(matches!(events.last(), Some(AgentEvent::Done { status: MessageStatus::Complete, .. })));

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.invalid.is_none()), "every request is valid for the SDK");
    assert_eq!(offered(&requests[0].body), [SEARCH_TOOL], "only the search at first");
    let second = offered(&requests[1].body);
    assert!(second.contains(&"billing__archive_invoice".to_owned()), "{second:?}");
    assert!(second.len() <= 6, "the search tool and at most five matches: {second:?}");
    for request in &requests {
        assert!(offered(&request.body).len() < 20, "never all 303 definitions");
    }

    // The next turn of the conversation starts with the tool it found.
    let events = turn(&model, &conversations, conversation, tools, "Is it archived?").await;
    assert!(matches!(events.last(), Some(AgentEvent::Done { status: MessageStatus::Complete, .. })));
    let next = offered(&model.requests()[3].body);
    assert!(
        next.contains(&"billing__archive_invoice".to_owned()) && next.contains(&SEARCH_TOOL.to_owned()),
        "{next:?}"
    );
    assert!(next.len() <= 7, "{next:?}");
}

/// The labelled set (`tests/data/tool_search/`): 302 tools of 28 real servers (their published
/// names, descriptions and parameters) and 248 task phrasings written for this project, each
/// with its right tool.
fn labelled() -> (Vec<patchbay_core::agent::HostedTool>, Vec<Value>) {
    use patchbay_core::agent::HostedTool;
    use patchbay_core::conversations::ToolPin;
    use patchbay_core::llm::ToolSpec;

    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tool_search");
    let read = |name: &str| -> Vec<Value> {
        serde_json::from_str(&std::fs::read_to_string(data.join(name)).unwrap()).unwrap()
    };
    let tools: Vec<HostedTool> = read("tools.json")
        .iter()
        .map(|t| {
            let (server, name) = (t["server"].as_str().unwrap(), t["name"].as_str().unwrap());
            HostedTool {
                spec: ToolSpec {
                    name: format!("{server}__{name}"),
                    description: t["description"].as_str().unwrap().to_owned(),
                    input_schema: t["input_schema"].clone(),
                    origin: None,
                },
                server: server.to_owned(),
                tool: name.to_owned(),
                approval: ApprovalMode::Allow,
                strict: false,
                pinned: false,
                pin: ToolPin { server_id: server.to_owned(), tool: name.to_owned(), fingerprint: String::new() },
                timeout: None,
            }
        })
        .collect();
    let queries = read("queries.json");
    assert!(tools.len() >= 150 && queries.len() >= 100, "{} tools, {} phrasings", tools.len(), queries.len());
    for q in &queries {
        let wanted = format!("{}__{}", q["server"].as_str().unwrap(), q["tool"].as_str().unwrap());
        assert!(tools.iter().any(|t| t.spec.name == wanted), "{wanted} is labelled but not in tools.json");
    }
    (tools, queries)
}

/// Recall@1 and @5 of `rank` (phrasing number, phrasing → positions, best first) over the set,
/// and the phrasings whose tool was not in the first five.
fn recall(
    tools: &[patchbay_core::agent::HostedTool],
    queries: &[Value],
    mut rank: impl FnMut(usize, &str) -> Vec<usize>,
) -> (f64, f64, Vec<String>) {
    let (mut first, mut five, mut missed) = (0, 0, Vec::new());
    for (i, q) in queries.iter().enumerate() {
        let wanted = format!("{}__{}", q["server"].as_str().unwrap(), q["tool"].as_str().unwrap());
        let names: Vec<&str> =
            rank(i, q["query"].as_str().unwrap()).iter().map(|&t| tools[t].spec.name.as_str()).collect();
        first += usize::from(names.first() == Some(&wanted.as_str()));
        if names[..names.len().min(5)].contains(&wanted.as_str()) {
            five += 1;
        } else {
            missed.push(format!("{:?} → {names:?}, wanted {wanted}", q["query"]));
        }
    }
    let n = queries.len() as f64;
    (first as f64 / n, five as f64 / n, missed)
}

/// Retrieval by BM25 alone over the labelled set. The figures, and what a request saves, are
/// printed (docs/BENCHMARKS.md has them). BM25 alone reaches about 0.8 (phrasings in other
/// words than the tool's own); this holds that line.
#[test]
fn the_right_tool_is_in_the_first_five_for_four_phrasings_in_five() {
    use patchbay_core::agent::ToolIndex;
    use patchbay_core::agent::budget::{Estimate, count_tools};
    use patchbay_core::agent::tool_search::search_spec;
    use patchbay_core::llm::ToolSpec;

    let (tools, queries) = labelled();
    let index = ToolIndex::new(&tools);
    let mut searched_tokens = 0u64;
    let (at1, at5, missed) = recall(&tools, &queries, |_, query| {
        let found = index.search(query, 5);
        let specs: Vec<ToolSpec> = found.iter().map(|&i| tools[i].spec.clone()).collect();
        searched_tokens += u64::from(count_tools(&specs, &Estimate));
        found
    });
    let n = queries.len() as f64;
    let all: Vec<ToolSpec> = tools.iter().map(|t| t.spec.clone()).collect();
    let all_tokens = count_tools(&all, &Estimate);
    let search_tokens = f64::from(count_tools(&[search_spec(tools.len())], &Estimate)) + searched_tokens as f64 / n;
    println!(
        "tool search (BM25) over {} tools, {} phrasings: recall@1 {at1:.3}, recall@5 {at5:.3}; definitions sent: \
         all {all_tokens} tokens (estimate), search + five found {search_tokens:.0} ({:.1}% of all)",
        tools.len(),
        queries.len(),
        100.0 * search_tokens / f64::from(all_tokens)
    );
    for miss in &missed {
        println!("missed: {miss}");
    }
    assert!(at5 >= 0.78, "recall@5 {at5:.3} fell below 0.78; missed:\n{}", missed.join("\n"));
}

/// The same set with all-MiniLM-L6-v2 (the packaged model, run in-process as the knowledge base
/// runs it) fused with BM25, as a turn searches where the knowledge base has an embedding model.
/// The issue's goal is recall@5 >= 0.9; the figures are printed and docs/BENCHMARKS.md has them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_minilm_embeddings_fused_the_right_tool_is_in_the_first_five_more_often() {
    use patchbay_core::agent::ToolIndex;
    use patchbay_core::agent::tool_search::embedding_text;
    use patchbay_core::rag::embed::Embedder;
    use patchbay_core::rag::local::LocalEmbedder;
    use patchbay_test_support::peers;
    use tokio_util::sync::CancellationToken;

    let (tools, queries) = labelled();
    let model = LocalEmbedder::load(&peers::minilm_dir()).unwrap();
    let cancel = CancellationToken::new();
    let texts: Vec<String> = tools.iter().map(embedding_text).collect();
    let mut index = ToolIndex::new(&tools);
    index.set_vectors(model.embed(&texts, &cancel).await.unwrap());
    let phrasings: Vec<String> = queries.iter().map(|q| q["query"].as_str().unwrap().to_owned()).collect();
    let vectors = model.embed(&phrasings, &cancel).await.unwrap();

    let (bm1, bm5, _) = recall(&tools, &queries, |_, query| index.search(query, 5));
    let (at1, at5, missed) = recall(&tools, &queries, |i, query| index.search_by(query, Some(&vectors[i]), 5));
    println!(
        "tool search (BM25 + all-MiniLM-L6-v2, reciprocal rank fusion) over {} tools, {} phrasings: \
         recall@1 {at1:.3}, recall@5 {at5:.3} (BM25 alone {bm1:.3}, {bm5:.3})",
        tools.len(),
        queries.len()
    );
    for miss in &missed {
        println!("missed: {miss}");
    }
    assert!(at5 > bm5 && at5 >= 0.85, "recall@5 {at5:.3} (BM25 alone {bm5:.3}); missed:\n{}", missed.join("\n"));
}
