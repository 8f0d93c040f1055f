//! A tool call's time limit, kept by the registry: it restarts with each
//! progress notification and stands still while a sampling or elicitation
//! request of the same server waits for the user (server-everything over stdio).

use crate::mcp_common as common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use patchbay_core::mcp::{
    CallOptions, ElicitationAnswer, ElicitationRequest, HookSupport, McpError, McpRegistry, Refusal, SamplingReply,
    SamplingRequest, ServerRequests,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The user: takes `delay` to answer anything.
struct SlowUser {
    delay: Duration,
}

#[async_trait::async_trait]
impl ServerRequests for SlowUser {
    fn supports(&self) -> HookSupport {
        HookSupport::ALL
    }

    async fn sample(&self, _request: SamplingRequest, _ct: CancellationToken) -> Result<SamplingReply, Refusal> {
        tokio::time::sleep(self.delay).await;
        Ok(SamplingReply { model: "m".into(), text: "answered slowly".into(), stop_reason: Some("endTurn".into()) })
    }

    async fn elicit(&self, _request: ElicitationRequest, _ct: CancellationToken) -> ElicitationAnswer {
        tokio::time::sleep(self.delay).await;
        let content = json!({"name": "Ada"}).as_object().cloned();
        ElicitationAnswer::Accept { content }
    }
}

async fn everything_with(hooks: Arc<dyn ServerRequests>) -> McpRegistry {
    let registry = registry();
    registry.set_server_requests(hooks);
    registry.configure([everything_stdio("everything")]);
    start_ready(&registry, "everything").await;
    for _ in 0..100 {
        if registry.tools("everything").unwrap().iter().any(|t| t.name == "trigger-elicitation-request") {
            return registry;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("server-everything never offered its sampling and elicitation tools");
}

async fn call_within(
    registry: &McpRegistry,
    tool: &str,
    args: serde_json::Value,
    timeout: Duration,
) -> Result<rmcp::model::CallToolResult, McpError> {
    let options = CallOptions { timeout: Some(timeout), ..CallOptions::default() };
    registry.call_tool("everything", tool, args.as_object().cloned(), options, CancellationToken::new()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waits_while_the_user_answers_the_servers_request() {
    let registry = everything_with(Arc::new(SlowUser { delay: Duration::from_secs(3) })).await;
    let limit = Duration::from_secs(1);

    let started = Instant::now();
    let sampled = call_within(&registry, "trigger-sampling-request", json!({"prompt": "hi"}), limit).await;
    let sampled = sampled.expect("the 1 s limit stands still while the sampling dialog is open");
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert!(text(&sampled).contains("answered slowly"), "{}", text(&sampled));

    let elicited = call_within(&registry, "trigger-elicitation-request", json!({}), limit).await;
    let elicited = elicited.expect("the 1 s limit stands still while the form is open");
    assert!(text(&elicited).contains("Name: Ada"), "{}", text(&elicited));
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_pending_request_the_limit_fires_unless_progress_arrives() {
    let registry = everything_with(Arc::new(SlowUser { delay: Duration::from_secs(3) })).await;
    let limit = Duration::from_secs(1);

    // Three silent seconds: the limit fires after one.
    let started = Instant::now();
    let silent = json!({"duration": 3, "steps": 1});
    let err = call_within(&registry, "trigger-long-running-operation", silent, limit).await.unwrap_err();
    assert!(matches!(err, McpError::Timeout { after, .. } if after == limit), "{err:?}");
    assert!(started.elapsed() < Duration::from_millis(2500), "{:?}", started.elapsed());

    // The same three seconds with progress every half second: each one restarts the limit.
    let chatty = json!({"duration": 3, "steps": 6});
    let done = call_within(&registry, "trigger-long-running-operation", chatty, limit).await.unwrap();
    assert!(text(&done).contains("completed"), "{}", text(&done));
    registry.shutdown().await;
}
