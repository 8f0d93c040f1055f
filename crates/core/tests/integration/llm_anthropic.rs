//! The Anthropic provider against the scripted Anthropic server, which
//! validates every request body with the `anthropic` SDK's request types.

use crate::common;

use std::sync::Arc;

use common::{builtin_turn, hello, run, sample_request, schema_2020_12_tool, settings};
use futures::StreamExt;
use patchbay_core::agent::{Agent, AgentEvent, Sampling};
use patchbay_core::conversations::ConversationStore;
use patchbay_core::llm::{AnthropicProvider, ChatMessage, FinishReason, LlmError, ReasoningEffort, Usage};
use patchbay_core::paths::DataDir;
use patchbay_core::store::Store;
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, anthropic};
use serde_json::json;

async fn server(script: Vec<Reply>) -> (ScriptedServer, AnthropicProvider) {
    let server = ScriptedServer::start(Format::Anthropic, script).await.unwrap();
    let provider = AnthropicProvider::new(settings(server.url())).unwrap();
    (server, provider)
}

#[tokio::test]
async fn streams_text_and_usage_with_a_valid_body() {
    let (server, provider) = server(vec![anthropic::text_reply(&["Hel", "lo"]).split_frames(9)]).await;
    let (s, e) = run(&provider, hello("claude-test")).await;
    assert!(e.is_none(), "{e:?}");
    assert_eq!(s.text, "Hello");
    assert_eq!(s.usage, Some(Usage { input_tokens: 12, output_tokens: 2 }));
    assert_eq!(s.finish, Some(FinishReason::Stop));
    let req = &server.requests()[0];
    assert_eq!(req.invalid, None);
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.headers["x-api-key"], "sk-test-123");
    assert_eq!(req.headers["anthropic-version"], "2023-06-01");
    assert_eq!(req.headers["x-extra"], "extra-value");
}

#[tokio::test]
async fn thinking_and_tool_use_blocks_become_events() {
    let reply = anthropic::tool_reply(
        "I should fetch",
        &[("toolu_1", "fetch__fetch", &["{\"url\":", " \"http://a\"}"]), ("toolu_2", "files__write", &["{}"])],
    )
    .split_frames(13);
    let (_server, provider) = server(vec![reply]).await;
    let (s, e) = run(&provider, hello("claude-test")).await;
    assert!(e.is_none(), "{e:?}");
    assert_eq!(s.reasoning, "I should fetch");
    assert_eq!(s.reasoning_signature.as_deref(), Some("sig"));
    assert_eq!(
        s.calls,
        vec![
            ("toolu_1".into(), "fetch__fetch".into(), "{\"url\": \"http://a\"}".into()),
            ("toolu_2".into(), "files__write".into(), "{}".into()),
        ]
    );
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn a_reasoning_effort_turns_on_adaptive_thinking_and_signed_thinking_goes_back() {
    let (server, provider) = server(vec![anthropic::text_reply(&["ok"])]).await;
    let mut request = sample_request("claude-test");
    request.sampling.reasoning = Some(ReasoningEffort::High);
    // The turn's last round: its thinking, signed, goes back before the tool call.
    let Some(ChatMessage::Assistant { reasoning_signature, .. }) = request.messages.get_mut(2) else {
        panic!("the sample's third message is the assistant's")
    };
    *reasoning_signature = Some("c2lnbmVkLXRoaW5raW5n".into());
    let (_, e) = run(&provider, request).await;
    assert!(e.is_none(), "{e:?}");
    let req = &server.requests()[0];
    assert_eq!(req.invalid, None, "the SDK's request types accept it");
    assert_eq!(req.body["thinking"], json!({"type": "adaptive"}));
    assert_eq!(req.body["output_config"], json!({"effort": "high"}));
    let assistant = req.body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "need the page", "signature": "c2lnbmVkLXRoaW5raW5n"})
    );
    assert_eq!(assistant["content"][1]["type"], "text");
}

#[tokio::test]
async fn reasoning_off_disables_thinking() {
    let (server, provider) = server(vec![anthropic::text_reply(&["ok"])]).await;
    let mut request = hello("claude-test");
    request.sampling.reasoning = Some(ReasoningEffort::Off);
    let (_, e) = run(&provider, request).await;
    assert!(e.is_none(), "{e:?}");
    let req = &server.requests()[0];
    assert_eq!(req.invalid, None, "the SDK's request types accept it");
    assert_eq!(req.body["thinking"], json!({"type": "disabled"}));
    assert!(req.body.get("output_config").is_none(), "{}", req.body);
}

#[tokio::test]
async fn the_full_conversation_passes_sdk_validation() {
    let (server, provider) = server(vec![anthropic::text_reply(&["ok"])]).await;
    let (_, e) = run(&provider, sample_request("claude-test")).await;
    assert!(e.is_none(), "{e:?}");
    let req = &server.requests()[0];
    assert_eq!(req.invalid, None);
    let tool_result = &req.body["messages"][2]["content"][0];
    assert_eq!(tool_result["type"], "tool_result");
    assert_eq!(tool_result["content"][1]["type"], "image");
    insta::assert_json_snapshot!("anthropic_request_body", req.body);
}

#[tokio::test]
async fn errors_and_broken_streams_map_to_variants() {
    let (_server, provider) = server(vec![
        Reply::status(401, json!({"type": "error", "error": {"type": "authentication_error", "message": "bad key"}})),
        Reply::stream(vec![
            anthropic::message_start(1),
            anthropic::event(
                "error",
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
            ),
        ]),
        Reply::stream(vec![
            anthropic::message_start(1),
            anthropic::block_start(0, json!({"type": "text", "text": ""})),
        ]),
    ])
    .await;
    let (_, e) = run(&provider, hello("m")).await;
    assert!(matches!(e, Some(LlmError::Auth { status: 401, ref message, .. }) if message == "bad key"), "{e:?}");
    let (_, e) = run(&provider, hello("m")).await;
    assert!(matches!(e, Some(LlmError::Http { status: 529, .. })), "{e:?}");
    let (_, e) = run(&provider, hello("m")).await;
    assert!(matches!(e, Some(LlmError::InvalidStream { .. })), "{e:?}");
}

#[tokio::test]
async fn thinking_goes_back_signed_while_the_turn_calls_tools() {
    let (server, provider) = server(vec![
        anthropic::tool_reply("I should check the time", &[("toolu_1", "current_time", &["{}"])]),
        anthropic::text_reply(&["It is noon."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let conversations = ConversationStore::new(Store::open(&DataDir::new(dir.path())).unwrap());
    let conversation = conversations.create("thinking", None, None).unwrap().id;
    let sampling = Sampling { reasoning: Some(ReasoningEffort::Medium), ..Sampling::default() };
    let request = builtin_turn(Arc::new(provider), "claude-test", conversation, "time?", sampling).await;
    let events: Vec<AgentEvent> = Agent::new(conversations).start(request).unwrap().collect().await;
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolResult { is_error: false, .. })), "{events:?}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.invalid, None, "the SDK's request types accept it");
        assert_eq!(request.body["output_config"], json!({"effort": "medium"}));
    }
    let assistant = &requests[1].body["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "I should check the time", "signature": "sig"})
    );
    assert_eq!(assistant["content"][1]["type"], "tool_use");
}

#[tokio::test]
async fn a_json_schema_2020_12_tool_schema_is_sent_unchanged() {
    let (server, provider) = server(vec![anthropic::text_reply(&["ok"])]).await;
    let mut request = sample_request("claude-test");
    request.tools = vec![schema_2020_12_tool()];
    let (_, e) = run(&provider, request).await;
    assert!(e.is_none(), "{e:?}");
    let req = &server.requests()[0];
    assert_eq!(req.invalid, None);
    assert_eq!(req.body["tools"][0]["input_schema"], schema_2020_12_tool().input_schema);
}
