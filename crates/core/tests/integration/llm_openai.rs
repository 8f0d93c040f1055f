//! The OpenAI-compatible provider against the scripted OpenAI server: text,
//! reasoning, parallel tool calls split across chunks, usage, errors,
//! truncated and silent streams, and the request body it sends.

use crate::common;

use std::time::Duration;

use common::{hello, run, sample_request, schema_2020_12_tool, settings};
use patchbay_core::llm::{FinishReason, LlmError, OpenAiProvider, ReasoningEffort, ThinkingParam, Usage};
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, openai};
use serde_json::{Value, json};

async fn server(script: Vec<Reply>) -> (ScriptedServer, OpenAiProvider) {
    let server = ScriptedServer::start(Format::OpenAi, script).await.unwrap();
    let provider = OpenAiProvider::new(settings(format!("{}/v1", server.url()))).unwrap();
    (server, provider)
}

#[tokio::test]
async fn streams_text_reasoning_and_usage() {
    let reply = Reply::stream(vec![
        openai::delta(json!({"role": "assistant", "reasoning_content": "think "})),
        openai::delta(json!({"reasoning_content": "hard"})),
        openai::delta(json!({"content": "Hel"})),
        openai::delta(json!({"content": "lo"})),
        openai::finish("stop"),
        openai::usage(10, 2),
        openai::done(),
    ])
    .split_frames(7);
    let (server, provider) = server(vec![reply]).await;
    let (s, err) = run(&provider, hello("gpt-test")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(s.text, "Hello");
    assert_eq!(s.reasoning, "think hard");
    assert_eq!(s.usage, Some(Usage { input_tokens: 10, output_tokens: 2 }));
    assert_eq!(s.finish, Some(FinishReason::Stop));
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.headers["authorization"], "Bearer sk-test-123");
    assert_eq!(req.headers["x-extra"], "extra-value");
    assert_eq!(req.body["stream"], true);
    assert_eq!(req.body["stream_options"]["include_usage"], true);
}

#[tokio::test]
async fn parallel_tool_calls_interleaved_across_chunks() {
    let reply = openai::tool_calls_reply(&[
        ("call_a", "fetch__fetch", &["{\"url\":", "\"http://a\"", "}"]),
        ("call_b", "files__write", &["{\"path\"", ":\"s.md\"}"]),
    ])
    .split_frames(11);
    let (_server, provider) = server(vec![reply]).await;
    let (s, err) = run(&provider, hello("gpt-test")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        s.calls,
        vec![
            ("call_a".into(), "fetch__fetch".into(), "{\"url\":\"http://a\"}".into()),
            ("call_b".into(), "files__write".into(), "{\"path\":\"s.md\"}".into()),
        ]
    );
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn invalid_json_arguments_are_passed_through_for_the_loop_to_report() {
    let reply = openai::tool_calls_reply(&[("call_x", "fetch__fetch", &["{\"url\": http://a", "}}"])]);
    let (_server, provider) = server(vec![reply]).await;
    let (s, err) = run(&provider, hello("m")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(s.calls[0].2, "{\"url\": http://a}}");
}

#[tokio::test]
async fn http_errors_map_to_variants() {
    let err_body = |m: &str| json!({"error": {"message": m, "type": "x", "code": null, "param": null}});
    // async-openai retries some statuses itself (429): each case repeats its answer.
    type Check = fn(&LlmError) -> bool;
    let cases: Vec<(Reply, Check)> = vec![
        (
            Reply::status(401, err_body("bad key")),
            |e| matches!(e, LlmError::Auth { status: 401, message, .. } if message == "bad key"),
        ),
        (Reply::status(403, err_body("forbidden")), |e| matches!(e, LlmError::Auth { status: 403, .. })),
        (Reply::status(404, err_body("no such model")), |e| matches!(e, LlmError::NotFound { .. })),
        (
            Reply::status(429, err_body("slow down")),
            |e| matches!(e, LlmError::RateLimited { message, .. } if message == "slow down"),
        ),
        (Reply::status(500, json!("boom")), |e| matches!(e, LlmError::Http { status: 500, .. })),
    ];
    for (reply, expected) in cases {
        let (_server, provider) = server(vec![reply; 8]).await;
        let (_, e) = run(&provider, hello("m")).await;
        let e = e.expect("an error");
        assert!(expected(&e), "{e:?}");
    }
}

#[tokio::test]
async fn a_truncated_stream_is_an_invalid_stream() {
    let reply = Reply::stream(vec![openai::delta(json!({"content": "Hel"})), "data: {\"choi".into()]);
    let (_server, provider) = server(vec![reply]).await;
    let (s, e) = run(&provider, hello("m")).await;
    assert_eq!(s.text, "Hel");
    assert!(matches!(e, Some(LlmError::InvalidStream { .. })), "{e:?}");
}

#[tokio::test]
async fn a_stream_without_finish_is_an_invalid_stream() {
    let reply = Reply::stream(vec![openai::delta(json!({"content": "Hel"}))]);
    let (_server, provider) = server(vec![reply]).await;
    let (_, e) = run(&provider, hello("m")).await;
    assert!(matches!(e, Some(LlmError::InvalidStream { .. })), "{e:?}");
}

#[tokio::test]
async fn invalid_stream_data_is_an_invalid_stream() {
    let reply = Reply::stream(vec!["data: {not json}\n\n".into(), openai::done()]);
    let (_server, provider) = server(vec![reply]).await;
    let (_, e) = run(&provider, hello("m")).await;
    assert!(matches!(e, Some(LlmError::InvalidStream { .. })), "{e:?}");
}

#[tokio::test]
async fn a_silent_stream_times_out() {
    let server =
        ScriptedServer::start(Format::OpenAi, vec![Reply::hanging(vec![openai::delta(json!({"content": "Hi"}))])])
            .await
            .unwrap();
    let mut s = settings(format!("{}/v1", server.url()));
    s.idle_timeout = Duration::from_millis(300);
    let provider = OpenAiProvider::new(s).unwrap();
    let (summary, e) = run(&provider, hello("m")).await;
    assert_eq!(summary.text, "Hi");
    assert!(matches!(e, Some(LlmError::Timeout { after, .. }) if after == Duration::from_millis(300)), "{e:?}");
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let provider = OpenAiProvider::new(settings(url)).unwrap();
    let (_, e) = run(&provider, hello("m")).await;
    assert!(matches!(e, Some(LlmError::Connect { .. })), "{e:?}");
}

#[tokio::test]
async fn request_body_carries_tools_and_tool_images_as_a_user_message() {
    let (server, provider) = server(vec![openai::text_reply(&["ok"])]).await;
    let (_, e) = run(&provider, sample_request("gpt-test")).await;
    assert!(e.is_none(), "{e:?}");
    let body = server.requests()[0].body.clone();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[4]["role"], "user", "the tool's image follows the tool messages");
    assert_eq!(messages[4]["content"][1]["type"], "image_url");
    insta::assert_json_snapshot!("openai_request_body", body);
}

#[tokio::test]
async fn a_reasoning_effort_is_sent_as_reasoning_effort() {
    let (server, provider) = server(vec![openai::text_reply(&["ok"]), openai::text_reply(&["ok"])]).await;
    let mut request = hello("o-test");
    request.sampling.reasoning = Some(ReasoningEffort::Low);
    let (_, err) = run(&provider, request).await;
    assert!(err.is_none(), "{err:?}");
    let (_, err) = run(&provider, hello("o-test")).await;
    assert!(err.is_none(), "{err:?}");
    let requests = server.requests();
    assert_eq!(requests[0].body["reasoning_effort"], "low");
    assert!(requests[1].body.get("reasoning_effort").is_none(), "the model's default: nothing is sent");
}

/// The reasoning fields of the body sent for `effort`, asked as `thinking` says.
async fn reasoning_fields(thinking: ThinkingParam, effort: ReasoningEffort) -> Value {
    let (server, provider) = server(vec![openai::text_reply(&["ok"])]).await;
    let provider = provider.with_thinking(thinking);
    let mut request = hello("m");
    request.sampling.reasoning = Some(effort);
    let (_, err) = run(&provider, request).await;
    assert!(err.is_none(), "{err:?}");
    let body = server.requests()[0].body.clone();
    let fields = ["reasoning_effort", "thinking", "enable_thinking", "thinking_budget", "chat_template_kwargs"];
    Value::Object(fields.iter().filter_map(|f| body.get(*f).map(|v| ((*f).to_owned(), v.clone()))).collect())
}

#[tokio::test]
async fn each_server_family_is_asked_to_think_in_its_own_field() {
    use ReasoningEffort::{High, Low, Medium, Off};
    use ThinkingParam::{Auto, ChatTemplate, EnableThinking, ReasoningEffort as Effort, ThinkingType};
    let cases = [
        (Effort, Off, json!({"reasoning_effort": "none"})),
        (Effort, Medium, json!({"reasoning_effort": "medium"})),
        (ThinkingType, Off, json!({"thinking": {"type": "disabled"}})),
        (ThinkingType, High, json!({"thinking": {"type": "enabled"}, "reasoning_effort": "high"})),
        (EnableThinking, Off, json!({"enable_thinking": false})),
        (EnableThinking, Low, json!({"enable_thinking": true, "thinking_budget": 2048})),
        (EnableThinking, Medium, json!({"enable_thinking": true, "thinking_budget": 8192})),
        (EnableThinking, High, json!({"enable_thinking": true})),
        (ChatTemplate, Off, json!({"chat_template_kwargs": {"enable_thinking": false}})),
        (ChatTemplate, Low, json!({"chat_template_kwargs": {"enable_thinking": true}, "reasoning_effort": "low"})),
        // Auto, at 127.0.0.1 (no known server): `reasoning_effort`.
        (Auto, Off, json!({"reasoning_effort": "none"})),
    ];
    for (thinking, effort, expected) in cases {
        assert_eq!(reasoning_fields(thinking, effort).await, expected, "{thinking:?} {effort:?}");
    }
}

#[test]
fn auto_is_chosen_from_the_base_url() {
    let auto = |url: &str| ThinkingParam::Auto.resolve(url);
    assert_eq!(auto("https://api.deepseek.com/v1"), ThinkingParam::ThinkingType);
    assert_eq!(auto("https://ark.cn-beijing.volces.com/api/v3"), ThinkingParam::ThinkingType);
    assert_eq!(auto("https://open.bigmodel.cn/api/paas/v4"), ThinkingParam::ThinkingType);
    assert_eq!(auto("https://dashscope.aliyuncs.com/compatible-mode/v1"), ThinkingParam::EnableThinking);
    assert_eq!(auto("https://api.siliconflow.cn/v1"), ThinkingParam::EnableThinking);
    assert_eq!(auto("https://api.openai.com/v1"), ThinkingParam::ReasoningEffort);
    assert_eq!(auto("http://127.0.0.1:11434/v1"), ThinkingParam::ReasoningEffort);
    // Only the host counts, not a path or a look-alike domain.
    assert_eq!(auto("https://proxy.example/api.deepseek.com/v1"), ThinkingParam::ReasoningEffort);
    assert_eq!(auto("https://notdeepseek.com/v1"), ThinkingParam::ReasoningEffort);
    assert_eq!(ThinkingParam::ChatTemplate.resolve("https://api.deepseek.com"), ThinkingParam::ChatTemplate);
}

#[tokio::test]
async fn a_tool_schema_without_a_type_is_sent_as_an_object() {
    let (server, provider) = server(vec![openai::text_reply(&["ok"])]).await;
    let mut request = sample_request("gpt-test");
    let typed = request.tools[0].clone();
    let mut bare = typed.clone();
    bare.name = "bare".into();
    bare.input_schema = json!({});
    let mut untyped = typed.clone();
    untyped.name = "untyped".into();
    untyped.input_schema = json!({"type": "", "properties": {"q": {"type": "string"}}});
    request.tools = vec![typed.clone(), bare, untyped];
    let (_, e) = run(&provider, request).await;
    assert!(e.is_none(), "{e:?}");
    let tools = server.requests()[0].body["tools"].clone();
    assert_eq!(tools[0]["function"]["parameters"], typed.input_schema, "a typed schema is sent as it is");
    assert_eq!(tools[1]["function"]["parameters"], json!({"type": "object"}));
    assert_eq!(tools[2]["function"]["parameters"], json!({"type": "object", "properties": {"q": {"type": "string"}}}));
}

#[tokio::test]
async fn a_json_schema_2020_12_tool_schema_is_sent_unchanged() {
    let (server, provider) = server(vec![openai::text_reply(&["ok"])]).await;
    let mut request = sample_request("gpt-test");
    request.tools = vec![schema_2020_12_tool()];
    let (_, e) = run(&provider, request).await;
    assert!(e.is_none(), "{e:?}");
    let sent = &server.requests()[0].body["tools"][0]["function"];
    assert_eq!(sent["parameters"], schema_2020_12_tool().input_schema);
    assert!(sent.get("strict").is_none_or(Value::is_null), "strict mode would reject $ref and if/then: {sent}");
}
