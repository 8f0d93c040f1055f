//! Prompt-based tool calling through the real OpenAI client: tools go into
//! the system prompt, calls come back as `<function_call>` blocks split
//! across chunks; and `from_profile` builds it from a profile.

use crate::common;

use std::collections::BTreeMap;

use common::{run, sample_request, schema_2020_12_tool};
use patchbay_core::config::{ProviderKind, ProviderProfile, ValueSource};
use patchbay_core::llm::{self, FinishReason, LlmError};
use patchbay_core::secrets::{MemoryStore, SecretStore};
use patchbay_test_support::scripted::{Format, ScriptedServer, openai};

fn profile(url: String, native_tools: bool) -> ProviderProfile {
    ProviderProfile {
        name: "local".into(),
        kind: ProviderKind::OpenAi,
        base_url: url,
        default_model: "m".into(),
        models: Vec::new(),
        headers: BTreeMap::from([("x-team".into(), ValueSource::Secret("provider/local/team".into()))]),
        api_key: Some("provider/local/api_key".into()),
        native_tools,
        context_window: None,
        listed_windows: Default::default(),
        thinking: Default::default(),
        prompt_tool_format: Default::default(),
    }
}

fn secrets() -> MemoryStore {
    let store = MemoryStore::new();
    store.set("provider/local/api_key", "sk-local").unwrap();
    store.set("provider/local/team", "blue").unwrap();
    store
}

#[tokio::test]
async fn calls_in_text_become_tool_call_events() {
    let reply = openai::text_reply(&[
        "I'll fetch it. <function",
        "_call>{\"name\": \"fetch__fetch\", \"argu",
        "ments\": {\"url\": \"http://a\",}}</function_call> Done.",
    ]);
    let server = ScriptedServer::start(Format::OpenAi, vec![reply]).await.unwrap();
    let provider = llm::from_profile(&profile(format!("{}/v1", server.url()), false), &secrets()).unwrap();
    let (s, e) = run(provider.as_ref(), sample_request("m")).await;
    assert!(e.is_none(), "{e:?}");
    assert_eq!(s.text, "I'll fetch it.  Done.");
    assert_eq!(s.calls.len(), 1);
    assert_eq!(s.calls[0].1, "fetch__fetch");
    assert_eq!(s.calls[0].2, r#"{"url":"http://a"}"#, "the trailing comma was repaired");
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));

    let req = &server.requests()[0];
    assert_eq!(req.headers["authorization"], "Bearer sk-local");
    assert_eq!(req.headers["x-team"], "blue");
    assert!(req.body.get("tools").is_none(), "no native tools are sent");
    let system = req.body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("<function_call>") && system.contains("fetch__fetch"));
    insta::assert_json_snapshot!("prompt_tools_request_body", req.body);
}

#[tokio::test]
async fn a_json_schema_2020_12_tool_schema_is_written_into_the_prompt_unchanged() {
    let server = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["ok"])]).await.unwrap();
    let provider = llm::from_profile(&profile(format!("{}/v1", server.url()), false), &secrets()).unwrap();
    let mut request = sample_request("m");
    request.tools = vec![schema_2020_12_tool()];
    let (_, e) = run(provider.as_ref(), request).await;
    assert!(e.is_none(), "{e:?}");
    let system = server.requests()[0].body["messages"][0]["content"].as_str().unwrap().to_owned();
    let schema = schema_2020_12_tool().input_schema.to_string();
    assert!(system.contains(&format!("Parameters (JSON Schema): {schema}")), "{system}");
}

#[test]
fn a_missing_secret_is_a_request_error() {
    let err = llm::from_profile(&profile("http://127.0.0.1:1/v1".into(), true), &MemoryStore::new()).err();
    assert!(matches!(err, Some(LlmError::Request { .. })), "{err:?}");
}
