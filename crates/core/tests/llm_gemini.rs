//! The Gemini provider against the scripted Gemini server, which validates
//! every request body with the `google-genai` SDK's types; and the schema
//! conversion Gemini needs.

mod common;

use common::{fetch_tool, hello, run, sample_request, settings};
use patchbay_core::llm::gemini::gemini_schema;
use patchbay_core::llm::{FinishReason, GeminiProvider, LlmError, Usage};
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, gemini};
use serde_json::json;

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
