//! A redirect to another origin is not followed, so that a provider's key and
//! a server's own headers never reach a host they were not meant for: the
//! real provider clients (OpenAI, Anthropic, Gemini) and the real MCP clients
//! (streamable HTTP, SSE) ask a server that answers 307 with a second local
//! server on another port, which must see nothing. A redirect within the
//! origin is still followed.

use crate::common;
use crate::mcp_common as mcp;

use std::collections::BTreeMap;

use common::{hello, run, settings};
use patchbay_core::config::{McpServerConfig, TransportConfig, ValueSource};
use patchbay_core::llm::{AnthropicProvider, GeminiProvider, LlmError, OpenAiProvider, Provider};
use patchbay_core::mcp::ServerStatus;
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, openai};
use serde_json::json;

/// A server whose every answer is a 307 to `to`.
async fn redirecting_to(to: &str) -> ScriptedServer {
    let moved = || Reply::status(307, json!({})).with_header("location", to);
    ScriptedServer::start(Format::OpenAi, (0..10).map(|_| moved()).collect()).await.unwrap()
}

/// The second server: it answers like a model, and must never be asked.
async fn elsewhere() -> ScriptedServer {
    ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["leaked"])]).await.unwrap()
}

/// Runs a chat through `provider` and checks that it failed at the redirect
/// to `target`, which saw no request.
async fn refused(provider: &dyn Provider, target: &ScriptedServer) {
    let (summary, error) = run(provider, hello("m")).await;
    assert_eq!(summary.text, "", "the redirect was followed");
    assert!(target.requests().is_empty(), "the other origin was asked: {:?}", target.requests());
    let error = error.expect("the chat fails");
    assert!(matches!(error, LlmError::Connect { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains(&format!("redirected to {}", target.url())), "{message}");
    assert!(message.contains("another origin"), "{message}");
}

#[tokio::test]
async fn provider_keys_and_headers_do_not_follow_a_redirect_to_another_origin() {
    // OpenAI-compatible: reqwest itself drops `Authorization`, but not the profile's own headers.
    let target = elsewhere().await;
    let redirector = redirecting_to(&format!("{}/v1/chat/completions", target.url())).await;
    let openai = OpenAiProvider::new(settings(format!("{}/v1", redirector.url()))).unwrap();
    refused(&openai, &target).await;
    assert_eq!(redirector.requests()[0].headers["x-extra"], "extra-value", "the first server was asked");

    // Anthropic's `x-api-key`.
    let target = elsewhere().await;
    let redirector = redirecting_to(&format!("{}/v1/messages", target.url())).await;
    let anthropic = AnthropicProvider::new(settings(redirector.url())).unwrap();
    refused(&anthropic, &target).await;
    assert_eq!(redirector.requests()[0].headers["x-api-key"], "sk-test-123");

    // Gemini's `x-goog-api-key`.
    let target = elsewhere().await;
    let redirector = redirecting_to(&format!("{}/v1beta/models/m:streamGenerateContent?alt=sse", target.url())).await;
    let gemini = GeminiProvider::new(settings(redirector.url())).unwrap();
    refused(&gemini, &target).await;
    assert_eq!(redirector.requests()[0].headers["x-goog-api-key"], "sk-test-123");
}

#[tokio::test]
async fn a_redirect_within_the_origin_is_followed() {
    let moved = Reply::status(307, json!({})).with_header("location", "/v1/chat/completions/again");
    let server = ScriptedServer::start(Format::OpenAi, vec![moved, openai::text_reply(&["same ", "origin"])]);
    let server = server.await.unwrap();
    let provider = OpenAiProvider::new(settings(format!("{}/v1", server.url()))).unwrap();
    let (summary, error) = run(&provider, hello("m")).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(summary.text, "same origin");
    let again = &server.requests()[1];
    assert_eq!((again.path.as_str(), again.headers["x-extra"].as_str()), ("/v1/chat/completions/again", "extra-value"));
}

type Transport = fn(String, BTreeMap<String, ValueSource>) -> TransportConfig;

/// A remote server at `url` with a secret header.
fn remote(name: &str, transport: Transport, url: String) -> McpServerConfig {
    let headers = BTreeMap::from([("X-Mcp-Token".to_owned(), ValueSource::Plain("mcp-secret".into()))]);
    McpServerConfig::with_transport(name, transport(url, headers))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_headers_do_not_follow_a_redirect_to_another_origin() {
    let streamable = |url, headers| TransportConfig::StreamableHttp { url, headers };
    let sse = |url, headers| TransportConfig::Sse { url, headers };
    for (name, transport) in [("streamable", streamable as Transport), ("sse", sse)] {
        let target = elsewhere().await;
        let redirector = redirecting_to(&format!("{}/mcp", target.url())).await;
        let registry = mcp::registry();
        registry.configure([remote(name, transport, format!("{}/mcp", redirector.url()))]);
        let _ = registry.start(name).await;
        mcp::wait_for(&registry, name, ServerStatus::is_settled).await;
        let status = registry.status(name).unwrap();
        assert!(matches!(status, ServerStatus::Failed { .. }), "{name}: {status}");
        assert!(target.requests().is_empty(), "{name}: the other origin was asked: {:?}", target.requests());
        let first = &redirector.requests()[0];
        assert_eq!(first.headers["x-mcp-token"], "mcp-secret", "{name}: the first server was asked");
        registry.shutdown().await;
    }
}
