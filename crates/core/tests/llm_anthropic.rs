//! The Anthropic provider against the scripted Anthropic server, which
//! validates every request body with the `anthropic` SDK's request types.

mod common;

use common::{hello, run, sample_request, settings};
use patchbay_core::llm::{AnthropicProvider, FinishReason, LlmError, Usage};
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
