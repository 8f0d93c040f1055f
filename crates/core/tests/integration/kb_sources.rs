//! A knowledge source is asked through the registry as the user set its server up: a tool switched
//! off, set to deny, or on a server at the strict level (where every call is asked) is not called
//! for a chat, and says why; otherwise its RAGFlow-shaped answer (tests/peers/ragflow_retrieval.py)
//! becomes passages naming the source.

use std::time::Duration;

use patchbay_core::config::{ApprovalMode, McpServerConfig, SecurityLevel};
use patchbay_core::mcp::{McpRegistry, RegistryOptions, ServerStatus};
use patchbay_core::rag::sources::{self, KnowledgeSource, SourceShape};
use patchbay_core::secrets::MemoryStore;
use patchbay_test_support::peers;
use tokio_util::sync::CancellationToken;

const RAGFLOW: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/peers/ragflow_retrieval.py");
const LIMIT: Duration = Duration::from_secs(20);

async fn ready(config: McpServerConfig) -> McpRegistry {
    let registry = McpRegistry::new(std::sync::Arc::new(MemoryStore::default()), RegistryOptions::default());
    let name = config.name.clone();
    registry.configure([config]);
    registry.start_all().await;
    registry.wait_settled(LIMIT).await;
    assert_eq!(registry.status(&name).unwrap(), ServerStatus::Ready, "{:?}", registry.stderr_tail(&name, 20));
    registry
}

/// The source the tests ask: the peer's RAGFlow tool, not yet pinned.
fn fleet() -> KnowledgeSource {
    KnowledgeSource {
        name: "Fleet".into(),
        server: "ragflow".into(),
        tool: "ragflow_retrieval".into(),
        shape: SourceShape::Ragflow,
        server_id: None,
        tool_fingerprint: None,
    }
}

/// [`ask_pinned`] with the source pinned to the tool as the server offers it now (where it
/// offers none, the call is refused before any pin is compared).
async fn ask(registry: &McpRegistry) -> Result<Vec<patchbay_core::rag::Excerpt>, String> {
    let now = sources::pin(registry, fleet()).ok().and_then(|s| s.tool_fingerprint);
    ask_pinned(registry, Some(now.unwrap_or_else(|| "none offered".into()))).await
}

/// [`ask`] with the source pinned to a tool definition's fingerprint.
async fn ask_pinned(
    registry: &McpRegistry,
    pinned: Option<String>,
) -> Result<Vec<patchbay_core::rag::Excerpt>, String> {
    let source = KnowledgeSource { tool_fingerprint: pinned, ..fleet() };
    sources::ask(registry, &source, "delivery van brakes", 5, LIMIT, CancellationToken::new())
        .await
        .map_err(|e| e.to_string())
}

fn ragflow() -> McpServerConfig {
    McpServerConfig::stdio("ragflow", peers::python().to_str().unwrap(), &[RAGFLOW])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_is_asked_only_as_its_server_is_set_up() {
    // A server switched off, or one that is not running, is not asked.
    let mut off = ragflow();
    off.enabled = false;
    let registry = McpRegistry::new(std::sync::Arc::new(MemoryStore::default()), RegistryOptions::default());
    registry.configure([off]);
    assert_eq!(ask(&registry).await.unwrap_err(), "ragflow is switched off on its page");
    let broken = McpServerConfig::stdio("ragflow", "patchbay-no-such-command", &[]);
    registry.configure([broken]);
    registry.start_all().await;
    registry.wait_settled(LIMIT).await;
    let refused = ask(&registry).await.unwrap_err();
    assert!(refused.starts_with("ragflow is not running"), "{refused}");
    registry.shutdown().await;

    // "ask" (the default of an imported server): adding the source is the user's word.
    let mut asks = ragflow();
    asks.approval = ApprovalMode::Ask;
    let registry = ready(asks).await;
    let found = ask(&registry).await.unwrap();
    assert_eq!(found[0].path.to_str(), Some("fleet-maintenance.pdf"));
    assert_eq!(found[0].origin.as_deref(), Some("Fleet"));
    assert!(found[0].text.contains("Oakridge depot"));
    assert_eq!(found[0].similarity, Some(1.0), "RAGFlow's similarity: the peer's share of the words asked");
    // Pinned to the tool as it is, it is asked; pinned to another definition, it is not.
    let pinned = sources::pin(&registry, fleet()).unwrap().tool_fingerprint;
    assert!(ask_pinned(&registry, pinned).await.is_ok());
    let changed = ask_pinned(&registry, Some("an older definition".into())).await.unwrap_err();
    assert!(changed.contains("changed (its description or arguments) since this source was added"), "{changed}");
    // Stored without a pin (by an older Patchbay): not asked, and the user is told to add it again.
    let unpinned = ask_pinned(&registry, None).await.unwrap_err();
    assert!(unpinned.contains("add the source again"), "{unpinned}");
    registry.shutdown().await;

    let mut off = ragflow();
    off.disabled_tools.insert("ragflow_retrieval".into());
    let registry = ready(off).await;
    assert_eq!(
        ask(&registry).await.unwrap_err(),
        "ragflow's tool ragflow_retrieval is switched off on the server's page"
    );
    registry.shutdown().await;

    let mut denied = ragflow();
    denied.tool_approval.insert("ragflow_retrieval".into(), ApprovalMode::Deny);
    let registry = ready(denied).await;
    assert_eq!(
        ask(&registry).await.unwrap_err(),
        "ragflow's tool ragflow_retrieval is set to deny on the server's page"
    );
    registry.shutdown().await;

    // A tool the user set to ask before each call is not called unasked.
    let mut asked = ragflow();
    asked.approval = ApprovalMode::Allow;
    asked.tool_approval.insert("ragflow_retrieval".into(), ApprovalMode::Ask);
    let registry = ready(asked).await;
    assert!(ask(&registry).await.unwrap_err().contains("is set to ask before each call"));
    registry.shutdown().await;

    // At strict, with the server's default "ask" as with "allow".
    let mut strict = ragflow();
    strict.policy.level = Some(SecurityLevel::Strict);
    strict.policy.read = vec![std::path::PathBuf::from(RAGFLOW).parent().unwrap().canonicalize().unwrap()];
    let registry = ready(strict).await;
    let refused = ask(&registry).await.unwrap_err();
    assert!(refused.starts_with("ragflow runs at the strict level"), "{refused}");
    registry.shutdown().await;
}
