//! `patchbay provider add|list|remove|test` through the real binary, against a
//! scripted OpenAI-compatible server: the key comes from stdin and lives in
//! the keyring only, `test` makes a real model-list request (with the key)
//! and reports the server's own 401 message, and `remove` deletes the key.
//! Needs a Secret Service (the test command runs under a private unlocked keyring).

use patchbay_core::paths::DataDir;
use patchbay_core::secrets::{KeyringStore, SecretStore};
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, openai};
use serde_json::json;

use crate::common::{command, env_model, ok, patchbay_stdin, stderr};

const KEY: &str = "sk-provider-test-7f3a9c";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_list_test_and_remove_a_provider() {
    let models = json!({"object": "list", "data": [
        {"id": "scripted-1", "object": "model", "created": 0, "owned_by": "test"},
        {"id": "scripted-2", "object": "model", "created": 0, "owned_by": "test"}
    ]});
    let rejected = json!({"error": {
        "message": "Incorrect API key provided: sk-prov***9c.", "type": "invalid_request_error", "code": "invalid_api_key"
    }});
    // LM Studio's list: no `created`, which a strict reader refuses.
    let lm_studio = json!({"data": [{"id": "qwen2.5-7b-instruct", "object": "model", "owned_by": "organization_owner"}],
                           "object": "list"});
    let server = ScriptedServer::start(
        Format::OpenAi,
        vec![Reply::status(200, models), Reply::status(200, lm_studio), Reply::status(401, rejected)],
    )
    .await
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.url());

    let added = patchbay_stdin(
        data.path(),
        &[
            "provider",
            "add",
            "local",
            "--kind",
            "openai",
            "--base-url",
            &base,
            "--model",
            "scripted-1",
            "--api-key-stdin",
        ],
        &format!("{KEY}\n"),
    );
    assert!(ok(&added).contains("saved provider local"));

    let listed = ok(&patchbay_stdin(data.path(), &["provider", "list"], ""));
    assert!(listed.contains("local") && listed.contains(&base) && listed.contains("key in keyring"), "{listed}");
    let json = ok(&patchbay_stdin(data.path(), &["provider", "list", "--json"], ""));
    assert!(!json.contains(KEY), "the key is never printed: {json}");

    let tested = ok(&patchbay_stdin(data.path(), &["provider", "test", "local"], ""));
    assert!(tested.contains("local: OK, 2 models"), "{tested}");
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/models");
    assert_eq!(requests[0].headers.get("authorization").map(String::as_str), Some(&*format!("Bearer {KEY}")));

    let tested = ok(&patchbay_stdin(data.path(), &["provider", "test", "local"], ""));
    assert!(tested.contains("local: OK, 1 model\n"), "{tested}");

    let failed = patchbay_stdin(data.path(), &["provider", "test", "local"], "");
    assert!(!failed.status.success());
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(err.contains("401") && err.contains("Incorrect API key provided"), "the server's own message: {err}");
    assert!(err.starts_with("error: ") && err.lines().count() == 1, "only the CLI's own words: {err}");

    let keyring = KeyringStore::for_data_dir(&DataDir::new(data.path()));
    assert_eq!(keyring.get("provider/local/api_key").unwrap().as_deref(), Some(KEY), "the key is in the keyring");
    ok(&patchbay_stdin(data.path(), &["provider", "remove", "local"], ""));
    assert_eq!(keyring.get("provider/local/api_key").unwrap(), None, "remove deletes the key");
    let listed = ok(&patchbay_stdin(data.path(), &["provider", "list"], ""));
    assert!(!listed.contains("local"), "{listed}");
    let missing = patchbay_stdin(data.path(), &["provider", "test", "local"], "");
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no provider named \"local\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preset_fills_in_a_provider_and_the_options_given_override_it() {
    let data = tempfile::tempdir().unwrap();
    let presets = ok(&patchbay_stdin(data.path(), &["provider", "presets"], ""));
    assert!(presets.contains("deepseek\tDeepSeek\thttps://api.deepseek.com/v1\tdeepseek-chat\tAPI key"), "{presets}");
    assert!(presets.contains("ollama\t") && presets.contains("no key"), "{presets}");

    ok(&patchbay_stdin(data.path(), &["provider", "add", "ds", "--preset", "deepseek"], ""));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&patchbay_stdin(data.path(), &["provider", "list", "--json"], ""))).unwrap();
    assert_eq!(json[0]["base_url"], "https://api.deepseek.com/v1");
    assert_eq!(json[0]["default_model"], "deepseek-chat");
    assert_eq!(json[0]["models"], json!(["deepseek-chat", "deepseek-reasoner"]));
    assert_eq!(json[0]["thinking"], "thinking_type", "DeepSeek reads `thinking.type`");

    ok(&patchbay_stdin(data.path(), &["provider", "add", "qwen", "--preset", "dashscope"], ""));
    ok(&patchbay_stdin(
        data.path(),
        &["provider", "add", "qwen-vllm", "--preset", "dashscope", "--thinking", "chat-template"],
        "",
    ));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&patchbay_stdin(data.path(), &["provider", "list", "--json"], ""))).unwrap();
    let thinking =
        |name: &str| json.as_array().unwrap().iter().find(|p| p["name"] == name).unwrap()["thinking"].clone();
    assert_eq!((thinking("qwen"), thinking("qwen-vllm")), (json!("enable_thinking"), json!("chat_template")));

    let unknown = patchbay_stdin(data.path(), &["provider", "add", "x", "--preset", "nope"], "");
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no preset named \"nope\""));
    let no_model = patchbay_stdin(data.path(), &["provider", "add", "local", "--preset", "ollama"], "");
    assert!(!no_model.status.success());
    assert!(String::from_utf8_lossy(&no_model.stderr).contains("give one with --model"));
    let neither = patchbay_stdin(data.path(), &["provider", "add", "bare", "--model", "m"], "");
    assert!(!neither.status.success(), "without a preset, --kind and --base-url are required");

    // A local server needs no key: the preset's profile reaches it without one.
    let models =
        json!({"object": "list", "data": [{"id": "qwen3", "object": "model", "created": 0, "owned_by": "me"}]});
    let server = ScriptedServer::start(Format::OpenAi, vec![Reply::status(200, models)]).await.unwrap();
    let base = format!("{}/v1", server.url());
    ok(&patchbay_stdin(
        data.path(),
        &["provider", "add", "local", "--preset", "ollama", "--base-url", &base, "--model", "qwen3"],
        "",
    ));
    let tested = ok(&patchbay_stdin(data.path(), &["provider", "test", "local"], ""));
    assert!(tested.contains("local: OK, 1 model"), "{tested}");
    assert_eq!(server.requests()[0].path, "/v1/models");
}

/// A library's log lines (async-openai logs a chunk it cannot read at ERROR,
/// with colour codes) reach the terminal only when asked for with PATCHBAY_LOG.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_speaks_in_its_own_words_unless_logs_are_asked_for() {
    let broken = || Reply::stream(vec!["data: {not json}\n\n".into(), openai::done()]);
    let model = ScriptedServer::start(Format::OpenAi, vec![broken(), broken()]).await.unwrap();
    let data = tempfile::tempdir().unwrap();
    let ask = |log: Option<&str>| {
        let mut cmd = command(data.path());
        cmd.args(["ask", "--no-tools", "--model", "m", "Hello"]);
        if let Some(log) = log {
            cmd.env("PATCHBAY_LOG", log);
        }
        let out = env_model(&mut cmd, &model).output().unwrap();
        assert!(!out.status.success());
        stderr(&out)
    };
    let quiet = ask(None);
    assert!(quiet.contains("error: ") && quiet.contains("invalid stream"), "{quiet}");
    assert!(!quiet.contains("async_openai") && !quiet.contains('\u{1b}'), "a library's log line: {quiet}");
    let logged = ask(Some("error"));
    assert!(logged.contains("async_openai") && logged.contains("failed deserialization"), "{logged}");
}
