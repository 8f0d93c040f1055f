//! `provider test`: a real request against small HTTP servers on 127.0.0.1, and a host that cannot resolve.

use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use patchbay_core::config::model::{ProviderKind, ProviderProfile};
use patchbay_core::config::providers::api_key_name;
use patchbay_core::llm::LlmError;
use patchbay_core::llm::probe::probe;
use patchbay_core::secrets::{MemoryStore, SecretStore};
use tokio_util::sync::CancellationToken;

async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn profile(kind: ProviderKind, base_url: String) -> ProviderProfile {
    ProviderProfile {
        name: "p".into(),
        kind,
        base_url,
        default_model: "m1".into(),
        models: vec![],
        headers: Default::default(),
        api_key: Some(api_key_name("p")),
        native_tools: true,
        context_window: None,
        listed_windows: Default::default(),
        thinking: Default::default(),
        prompt_tool_format: Default::default(),
    }
}

fn secrets(key: &str) -> MemoryStore {
    let s = MemoryStore::new();
    s.set(&api_key_name("p"), key).unwrap();
    s
}

fn openai_app() -> Router {
    Router::new().route(
        "/v1/models",
        get(|headers: HeaderMap| async move {
            if headers.get("authorization").and_then(|v| v.to_str().ok()) == Some("Bearer good") {
                (StatusCode::OK, r#"{"object":"list","data":[{"id":"m1","object":"model","created":0,"owned_by":"x"}]}"#)
            } else {
                (StatusCode::UNAUTHORIZED, r#"{"error":{"message":"bad key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#)
            }
        }),
    )
}

#[tokio::test]
async fn openai_compatible_lists_models_and_reports_401_and_404() {
    let base = serve(openai_app()).await;
    let cancel = CancellationToken::new();
    let ok =
        probe(&profile(ProviderKind::OpenAi, format!("{base}/v1")), &secrets("good"), Duration::from_secs(5), &cancel)
            .await
            .unwrap();
    assert_eq!(ok.models, ["m1"]);
    assert!(ok.default_model_listed);
    let err =
        probe(&profile(ProviderKind::OpenAi, format!("{base}/v1")), &secrets("bad"), Duration::from_secs(5), &cancel)
            .await
            .unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err}");
    let err = probe(
        &profile(ProviderKind::OpenAi, format!("{base}/nope")),
        &secrets("good"),
        Duration::from_secs(5),
        &cancel,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, LlmError::NotFound { .. }), "{err}");
}

#[tokio::test]
async fn anthropic_and_gemini_send_their_key_headers() {
    let app = Router::new()
        .route(
            "/v1/models",
            get(|h: HeaderMap| async move {
                let ok = h.get("x-api-key").is_some_and(|v| v == "k") && h.get("anthropic-version").is_some();
                if ok {
                    (StatusCode::OK, r#"{"data":[{"id":"m1"}]}"#)
                } else {
                    (StatusCode::UNAUTHORIZED, r#"{"error":{"message":"no"}}"#)
                }
            }),
        )
        .route(
            "/v1beta/models",
            get(|h: HeaderMap| async move {
                if h.get("x-goog-api-key").is_some_and(|v| v == "k") {
                    (StatusCode::OK, r#"{"models":[{"name":"models/m1","inputTokenLimit":1048576}]}"#)
                } else {
                    (StatusCode::FORBIDDEN, r#"{"error":{"message":"no"}}"#)
                }
            }),
        );
    let base = serve(app).await;
    let cancel = CancellationToken::new();
    for kind in [ProviderKind::Anthropic, ProviderKind::Gemini] {
        let ok = probe(&profile(kind, base.clone()), &secrets("k"), Duration::from_secs(5), &cancel).await.unwrap();
        assert_eq!(ok.models, ["m1"], "{kind:?}");
        // Gemini's list states each model's input window.
        let window = (kind == ProviderKind::Gemini).then_some(1_048_576);
        assert_eq!(ok.windows.get("m1").copied(), window, "{kind:?}");
        let err =
            probe(&profile(kind, base.clone()), &secrets("wrong"), Duration::from_secs(5), &cancel).await.unwrap_err();
        assert!(matches!(err, LlmError::Auth { .. }), "{kind:?}: {err}");
    }
}

#[tokio::test]
async fn a_silent_server_times_out_and_an_unknown_host_is_a_connect_error() {
    let app = Router::new().route(
        "/v1/models",
        get(|| async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            ""
        }),
    );
    let base = serve(app).await;
    let cancel = CancellationToken::new();
    let err =
        probe(&profile(ProviderKind::OpenAi, format!("{base}/v1")), &secrets("k"), Duration::from_millis(300), &cancel)
            .await
            .unwrap_err();
    assert!(matches!(err, LlmError::Timeout { .. }), "{err}");
    let err = probe(
        &profile(ProviderKind::Anthropic, "http://no-such-host.invalid".into()),
        &secrets("k"),
        Duration::from_secs(5),
        &cancel,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, LlmError::Connect { .. }), "{err}");
    assert!(err.to_string().contains("no-such-host.invalid"), "{err}");
}

/// Serves `body` as `/v1/models`, with `status`.
async fn serve_list(status: StatusCode, body: String) -> String {
    let app = Router::new().route("/v1/models", get(move || async move { (status, body) }));
    format!("{}/v1", serve(app).await)
}

/// The model lists real servers send (tests/data/model_lists): only the ids
/// are needed, whatever else an entry has or lacks.
#[tokio::test]
async fn model_lists_of_common_servers_are_read_leniently() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/model_lists");
    type Listed = (&'static str, &'static [&'static str], Option<(&'static str, u32)>);
    let expected: [Listed; 7] = [
        ("openai", &["gpt-4.1", "gpt-4o-mini"], None),
        ("ollama", &["qwen3:8b", "llama3.2:latest"], None),
        ("lmstudio", &["qwen2.5-7b-instruct", "text-embedding-nomic-embed-text-v1.5"], None),
        ("llamacpp", &["Qwen3-8B-Q4_K_M.gguf"], None),
        ("vllm", &["Qwen/Qwen3-8B"], Some(("Qwen/Qwen3-8B", 32_768))),
        ("deepseek", &["deepseek-chat", "deepseek-reasoner"], None),
        ("ark", &["doubao-seed-1-6-250615", "deepseek-v3-250324"], None),
    ];
    let cancel = CancellationToken::new();
    for (server, models, window) in expected {
        let body = std::fs::read_to_string(dir.join(format!("{server}.json"))).unwrap();
        let url = serve_list(StatusCode::OK, body).await;
        let report = probe(&profile(ProviderKind::OpenAi, url), &secrets("k"), Duration::from_secs(5), &cancel)
            .await
            .unwrap_or_else(|e| panic!("{server}: {e}"));
        assert_eq!(report.models, models, "{server}");
        assert_eq!(report.windows.iter().next().map(|(m, w)| (m.as_str(), *w)), window, "{server}");
    }
}

/// An answer that is not a model list says what it was, not "an invalid stream".
#[tokio::test]
async fn an_answer_that_is_not_a_model_list_says_what_was_read() {
    let cancel = CancellationToken::new();
    let cases = [
        ("<html><body>Welcome to nginx!</body></html>", "is not JSON", "Welcome to nginx"),
        (r#"{"status":"ok"}"#, "holds no list of models", r#"{"status":"ok"}"#),
        (r#"{"data":[{"object":"model","owned_by":"x"}]}"#, "no entry of its list has a model id", "owned_by"),
    ];
    for (body, why, quoted) in cases {
        let url = serve_list(StatusCode::OK, body.to_owned()).await;
        let err = probe(&profile(ProviderKind::OpenAi, url.clone()), &secrets("k"), Duration::from_secs(5), &cancel)
            .await
            .unwrap_err();
        assert!(matches!(err, LlmError::Unreadable { what: "a model list", .. }), "{err:?}");
        let text = err.to_string();
        for said in [&format!("{url}/models"), why, quoted, "ends in /v1"] {
            assert!(text.contains(said), "{said:?} is not in {text:?}");
        }
        assert!(!text.contains("invalid stream"), "{text}");
    }
    // An error status's own message is shown, with or without an object around it.
    let url = serve_list(StatusCode::SERVICE_UNAVAILABLE, r#"{"error":"Model is loading"}"#.to_owned()).await;
    let err =
        probe(&profile(ProviderKind::OpenAi, url), &secrets("k"), Duration::from_secs(5), &cancel).await.unwrap_err();
    assert!(matches!(&err, LlmError::Http { status: 503, message, .. } if message == "Model is loading"), "{err:?}");
}
