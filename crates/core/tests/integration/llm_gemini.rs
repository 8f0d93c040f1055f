//! The Gemini provider against the scripted Gemini server, which validates
//! every request body with the `google-genai` SDK's types; and the schema
//! conversion Gemini needs.

use crate::common;

use std::sync::Arc;

use common::{builtin_turn, fetch_tool, hello, run, sample_request, schema_2020_12_tool, settings};
use futures::StreamExt;
use patchbay_core::agent::{Agent, AgentEvent, Sampling, TurnRequest};
use patchbay_core::conversations::{ConversationStore, Part};
use patchbay_core::llm::gemini::gemini_schema;
use patchbay_core::llm::{FinishReason, GeminiProvider, LlmError, ReasoningEffort, Usage};
use patchbay_core::paths::DataDir;
use patchbay_core::store::Store;
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, gemini};
use serde_json::{Value, json};

async fn server(script: Vec<Reply>) -> (ScriptedServer, GeminiProvider) {
    let server = ScriptedServer::start(Format::Gemini, script).await.unwrap();
    let provider = GeminiProvider::new(settings(server.url())).unwrap();
    (server, provider)
}

#[tokio::test]
async fn streams_text_and_usage_with_a_valid_body() {
    let (server, provider) = server(vec![gemini::text_reply(&["Hel", "lo"]).split_frames(10)]).await;
    let (s, e) = run(&provider, hello("gemini-test")).await;
    assert!(e.is_none(), "{e:?}");
    assert_eq!(s.text, "Hello");
    assert_eq!(s.usage, Some(Usage { input_tokens: 11, output_tokens: 5 }));
    assert_eq!(s.finish, Some(FinishReason::Stop));
    let req = &server.requests()[0];
    assert_eq!(req.invalid, None);
    assert_eq!(req.path, "/v1beta/models/gemini-test:streamGenerateContent?alt=sse");
    assert_eq!(req.headers["x-goog-api-key"], "sk-test-123");
}

#[tokio::test]
async fn function_calls_and_thoughts_become_events() {
    let reply = gemini::function_calls_reply(
        "thinking",
        &[("fetch__fetch", json!({"url": "http://a"})), ("files__write", json!({"path": "s.md"}))],
    );
    let (_server, provider) = server(vec![reply]).await;
    let (s, e) = run(&provider, hello("gemini-test")).await;
    assert!(e.is_none(), "{e:?}");
    assert_eq!(s.reasoning, "thinking");
    assert_eq!(s.calls.len(), 2);
    assert_eq!(s.calls[0].1, "fetch__fetch");
    assert_eq!(s.calls[0].2, r#"{"url":"http://a"}"#);
    assert_ne!(s.calls[0].0, s.calls[1].0, "generated ids are distinct");
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn a_thought_signature_arrives_with_its_call() {
    let reply = gemini::signed_function_call_reply("current_time", json!({}), "c2lnbmF0dXJlLTE=");
    let (_server, provider) = server(vec![reply]).await;
    let (s, e) = run(&provider, hello("gemini-test")).await;
    assert!(e.is_none(), "{e:?}");
    assert_eq!(s.calls.len(), 1);
    assert_eq!(s.signatures, vec![(0, "c2lnbmF0dXJlLTE=".to_owned())]);
}

/// A turn through the agent with the real Gemini client, the built-in tools
/// (`current_time`) served in process.
async fn gemini_turn(url: String, conversation: i64, text: &str) -> TurnRequest {
    let provider = Arc::new(GeminiProvider::new(settings(url)).unwrap());
    builtin_turn(provider, "gemini-3-test", conversation, text, Sampling::default()).await
}

/// The `functionCall` parts of a recorded request body, in order.
fn function_call_parts(body: &Value) -> Vec<Value> {
    body["contents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["parts"].as_array().unwrap().iter())
        .filter(|p| p.get("functionCall").is_some())
        .cloned()
        .collect()
}

#[tokio::test]
async fn thought_signatures_go_back_on_their_call_also_after_reloading() {
    const SIGNATURE: &str = "c2lnbmF0dXJlLTE=";
    let (server, _) = server(vec![
        gemini::signed_function_call_reply("current_time", json!({}), SIGNATURE),
        gemini::text_reply(&["It is noon."]),
        gemini::text_reply(&["Still noon."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::new(dir.path());
    let store = Store::open(&data).unwrap();
    let conversations = ConversationStore::new(store.clone());
    let conversation = conversations.create("signatures", None, None).unwrap().id;
    let turn = Agent::new(conversations).start(gemini_turn(server.url(), conversation, "time?").await).unwrap();
    let answer = turn.assistant_message_id();
    let events: Vec<AgentEvent> = turn.collect().await;
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolResult { is_error: false, .. })), "{events:?}");

    // Round 2 of the same turn: the call goes back with its signature.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].invalid, None);
    let calls = function_call_parts(&requests[1].body);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["functionCall"]["name"], "current_time");
    assert_eq!(calls[0]["thoughtSignature"], SIGNATURE);

    // Reopened from SQLite: the stored call keeps it, and the next turn sends it.
    drop(store);
    let store = Store::open(&data).unwrap();
    let conversations = ConversationStore::new(store);
    let m = conversations.message(answer).unwrap();
    let stored: Vec<_> =
        m.parts.iter().filter_map(|p| if let Part::ToolCall { call, .. } = p { Some(call) } else { None }).collect();
    assert_eq!(stored[0].signature.as_deref(), Some(SIGNATURE));
    let turn = Agent::new(conversations).start(gemini_turn(server.url(), conversation, "and now?").await).unwrap();
    let _: Vec<AgentEvent> = turn.collect().await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].invalid, None);
    let calls = function_call_parts(&requests[2].body);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["thoughtSignature"], SIGNATURE);
}

#[tokio::test]
async fn the_full_conversation_passes_sdk_validation() {
    let (server, provider) = server(vec![gemini::text_reply(&["ok"])]).await;
    let (_, e) = run(&provider, sample_request("gemini-test")).await;
    assert!(e.is_none(), "{e:?}");
    let req = &server.requests()[0];
    assert_eq!(req.invalid, None);
    insta::assert_json_snapshot!("gemini_request_body", req.body);
}

#[tokio::test]
async fn errors_and_truncation_map_to_variants() {
    let (_server, provider) = server(vec![
        Reply::status(429, json!([{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}])),
        Reply::stream(vec![gemini::chunk(json!([{"text": "partial"}]), None)]),
    ])
    .await;
    let (_, e) = run(&provider, hello("m")).await;
    assert!(matches!(e, Some(LlmError::RateLimited { ref message, .. }) if message == "quota"), "{e:?}");
    let (s, e) = run(&provider, hello("m")).await;
    assert_eq!(s.text, "partial");
    assert!(matches!(e, Some(LlmError::InvalidStream { .. })), "{e:?}");
}

#[test]
fn schema_conversion_strips_what_gemini_rejects() {
    let converted = gemini_schema(&fetch_tool().input_schema);
    let text = converted.to_string();
    for rejected in ["$schema", "additionalProperties", "$ref", "$defs", "exclusiveMinimum", "default", "\"uri\""] {
        assert!(!text.contains(rejected), "{rejected} left in {text}");
    }
    assert_eq!(converted["properties"]["max_length"]["nullable"], true);
    assert_eq!(converted["properties"]["headers"]["properties"]["accept"]["type"], "STRING");
    assert_eq!(converted["required"], json!(["url"]));
    insta::assert_json_snapshot!("gemini_tool_schema", converted);
}

#[test]
fn a_json_schema_2020_12_schema_is_converted_with_its_references_resolved() {
    let converted = gemini_schema(&schema_2020_12_tool().input_schema);
    let text = converted.to_string();
    for rejected in ["$schema", "$defs", "$ref", "$anchor", "additionalProperties", "\"if\"", "\"then\""] {
        assert!(!text.contains(rejected), "{rejected} left in {text}");
    }
    // The reference is inlined, so the model still sees what an address is.
    assert_eq!(converted["properties"]["home"]["properties"]["city"]["type"], "STRING");
    assert_eq!(converted["properties"]["home"]["required"], json!(["city"]));
    assert_eq!(converted["required"], json!(["name"]), "allOf's requirements are merged");
}

#[tokio::test]
async fn a_reasoning_effort_sets_the_thinking_level_and_off_a_budget_of_zero() {
    let cases = [
        // The thoughts are asked for, shown as reasoning.
        (ReasoningEffort::High, json!({"thinkingLevel": "HIGH", "includeThoughts": true})),
        (ReasoningEffort::Off, json!({"thinkingBudget": 0})),
    ];
    for (effort, expected) in cases {
        let (server, provider) = server(vec![gemini::text_reply(&["ok"])]).await;
        let mut request = hello("gemini-test");
        request.sampling.reasoning = Some(effort);
        let (_, e) = run(&provider, request).await;
        assert!(e.is_none(), "{e:?}");
        let req = &server.requests()[0];
        assert_eq!(req.invalid, None, "google-genai's types accept it");
        assert_eq!(req.body["generationConfig"]["thinkingConfig"], expected, "{effort:?}");
    }
}
