//! Patchbay's own tools, served by an in-process MCP server.
//!
//! [`BuiltinServer`] is an rmcp server offering `current_time` and, when it
//! has a knowledge base, `knowledge_search` (the same tool and answer as
//! `patchbay kb serve`). Front ends attach it to their registry with
//! [`attach`], so built-in calls pass through the same inventory, approval
//! policy, time limits, cancellation and stored trace as every other MCP tool.
//! The model sees these tools under their bare names (`current_time`), not
//! `builtin__current_time`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ErrorData, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use tokio::io::DuplexStream;
use tokio_util::sync::CancellationToken;

use crate::agent::BUILTIN_SERVER;
use crate::clock::{now_secs, rfc3339_utc};
use crate::config::{ApprovalMode, McpServerConfig, Timeouts, TransportConfig};
use crate::mcp::{InProcessServer, McpError, McpRegistry, RegistryOptions, RegistryTools, ServerStatus, serve_on};
use crate::rag::KnowledgeBase;
use crate::rag::chat::TOOL_NAME as KNOWLEDGE_SEARCH;
use crate::rag::serve::{self, SearchArgs};
use crate::secrets::SecretStore;

/// Where `knowledge_search` finds the knowledge base at the time of a call
/// (the app swaps its knowledge base when the embedding settings change).
pub trait KnowledgeSource: Send + Sync {
    /// The knowledge base to search now, if there is one.
    fn knowledge(&self) -> Option<KnowledgeBase>;
}

impl KnowledgeSource for KnowledgeBase {
    fn knowledge(&self) -> Option<KnowledgeBase> {
        Some(self.clone())
    }
}

/// The in-process server of Patchbay's own tools.
#[derive(Clone)]
pub struct BuiltinServer {
    knowledge: Option<Arc<dyn KnowledgeSource>>,
    tool_router: ToolRouter<Self>,
}

impl std::fmt::Debug for BuiltinServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinServer").field("knowledge", &self.knowledge.is_some()).finish_non_exhaustive()
    }
}

#[tool_router]
impl BuiltinServer {
    /// A server with `knowledge_search` over `knowledge` when given.
    pub fn new(knowledge: Option<Arc<dyn KnowledgeSource>>) -> Self {
        let mut tool_router = Self::tool_router();
        if knowledge.is_none() {
            tool_router.remove_route(KNOWLEDGE_SEARCH);
        }
        Self { knowledge, tool_router }
    }

    #[tool(description = "The current date and time in UTC (RFC 3339) and as Unix seconds.")]
    async fn current_time(&self) -> CallToolResult {
        let secs = now_secs();
        CallToolResult::success(vec![ContentBlock::text(format!("{} (unix {secs})", rfc3339_utc(secs)))])
    }

    #[tool(description = serve::TOOL_DESCRIPTION)]
    async fn knowledge_search(&self, Parameters(args): Parameters<SearchArgs>) -> Result<CallToolResult, ErrorData> {
        match self.knowledge.as_ref().and_then(|k| k.knowledge()) {
            Some(kb) => serve::search_result(&kb, args).await,
            None => Ok(CallToolResult::error(vec![ContentBlock::text("the knowledge base is not available")])),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for BuiltinServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions("Patchbay's built-in tools.")
    }
}

impl InProcessServer for BuiltinServer {
    fn spawn(&self, io: DuplexStream, cancel: CancellationToken) {
        serve_on(self.clone(), io, cancel);
    }
}

/// The built-in server's settings: its tools run without asking (they read
/// the clock and the user's own index), and `knowledge_search` is hidden
/// from the model unless `knowledge_tool`.
pub fn config(knowledge_tool: bool) -> McpServerConfig {
    let mut config = McpServerConfig::with_transport(BUILTIN_SERVER, TransportConfig::InProcess);
    config.approval = ApprovalMode::Allow;
    config.timeouts = Timeouts { startup_secs: 10, call_secs: 30 };
    if !knowledge_tool {
        config.disabled_tools.insert(KNOWLEDGE_SEARCH.to_owned());
    }
    config
}

/// Attaches the built-in server to `registry` (start it with the others).
pub fn attach(registry: &McpRegistry, knowledge: Option<Arc<dyn KnowledgeSource>>) {
    registry.attach_in_process(config(true), Arc::new(BuiltinServer::new(knowledge)));
}

/// A registry with only the built-in server, started, and its tools
/// (`knowledge_search` only with `knowledge`): what a turn offers when no MCP
/// server is configured (benchmarks and tests drive the loop with it).
pub async fn standalone_tools(
    secrets: Arc<dyn SecretStore>,
    knowledge: Option<Arc<dyn KnowledgeSource>>,
) -> Result<RegistryTools, McpError> {
    let knowledge_tool = knowledge.is_some();
    let registry = McpRegistry::new(secrets, RegistryOptions::default());
    attach(&registry, knowledge);
    registry.start_all().await;
    let startup = Duration::from_secs(config(knowledge_tool).timeouts.startup_secs);
    registry.wait_settled(startup).await;
    match registry.status(BUILTIN_SERVER)? {
        ServerStatus::Ready => Ok(RegistryTools::new(registry, [config(knowledge_tool)])),
        status => Err(McpError::NotReady { server: BUILTIN_SERVER.to_owned(), status }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{ToolEvents, ToolHost, ToolInvocation};
    use crate::conversations::ConversationStore;
    use crate::llm::ContentPart;
    use crate::mcp::TransportKind;
    use crate::mcp::traces::TraceStore;
    use crate::paths::DataDir;
    use crate::secrets::MemoryStore;
    use crate::store::Store;

    fn text(output: &crate::agent::ToolOutput) -> String {
        output
            .content
            .iter()
            .filter_map(|p| if let ContentPart::Text { text } = p { Some(text.as_str()) } else { None })
            .collect()
    }

    /// The built-in server is a real MCP server in process: the registry starts
    /// it, lists its tools under bare names, runs them and stores their traces.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn built_in_tools_run_through_the_registry_with_traces() {
        let temp = tempfile::tempdir().unwrap();
        let data = DataDir::new(temp.path().join("data"));
        let store = Store::open(&data).unwrap();
        let docs = temp.path().join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("kakapo.md"), "# Kakapo\n\nThe kakapo is a flightless nocturnal parrot.\n").unwrap();
        let kb = KnowledgeBase::open(&data, store.clone()).unwrap();
        kb.add_folder(&docs).unwrap();
        kb.index(Arc::new(|_| {}), &CancellationToken::new()).await.unwrap();

        let registry = McpRegistry::new(Arc::new(MemoryStore::new()), RegistryOptions::default());
        attach(&registry, Some(Arc::new(kb)));
        registry.start_all().await;
        registry.wait_settled(Duration::from_secs(20)).await;
        assert_eq!(registry.status(BUILTIN_SERVER).unwrap(), ServerStatus::Ready);
        let snapshot = registry.snapshot();
        assert_eq!(snapshot[0].transport, Some(TransportKind::InProcess));
        assert_eq!(snapshot[0].pid, None, "no process is started");

        let traces = TraceStore::new(store.clone());
        let without_kb = RegistryTools::new(registry.clone(), [config(false)]);
        let names: Vec<String> =
            without_kb.list_tools(CancellationToken::new()).await.into_iter().map(|t| t.spec.name).collect();
        assert_eq!(names, ["current_time"]);
        let host = RegistryTools::new(registry.clone(), [config(true)]).with_traces(traces.clone());
        let tools = host.list_tools(CancellationToken::new()).await;
        let mut names: Vec<&str> = tools.iter().map(|t| t.spec.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["current_time", "knowledge_search"]);
        assert!(tools.iter().all(|t| t.approval == ApprovalMode::Allow && t.server == BUILTIN_SERVER));

        let conversation = ConversationStore::new(store.clone()).create("t", None, None).unwrap().id;
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let invocation = |id: &str, tool: &str, arguments: serde_json::Value| ToolInvocation {
            call_id: id.into(),
            conversation,
            name: tool.into(),
            server: BUILTIN_SERVER.into(),
            tool: tool.into(),
            arguments: arguments.as_object().cloned().unwrap_or_default(),
            pin: tools.iter().find(|t| t.tool == tool).expect("listed").pin.clone(),
        };
        let events = |id: &str| ToolEvents::new(id.into(), tx.clone());
        let before = now_secs();
        let now = host
            .call_tool(invocation("t1", "current_time", serde_json::json!({})), events("t1"), CancellationToken::new())
            .await;
        assert!(!now.is_error, "{now:?}");
        let unix: u64 = text(&now).rsplit("unix ").next().unwrap().trim_end_matches(')').parse().unwrap();
        assert!(unix >= before && unix <= before + 60, "{}", text(&now));
        assert!(text(&now).starts_with(&rfc3339_utc(unix)[..4]), "{}", text(&now));

        let found = host
            .call_tool(
                invocation("t2", "knowledge_search", serde_json::json!({"query": "flightless parrot"})),
                events("t2"),
                CancellationToken::new(),
            )
            .await;
        assert!(!found.is_error, "{found:?}");
        assert!(text(&found).contains("kakapo.md"), "{}", text(&found));

        let bad = host
            .call_tool(
                invocation("t3", "knowledge_search", serde_json::json!({"top_k": 3})),
                events("t3"),
                CancellationToken::new(),
            )
            .await;
        assert!(bad.is_error, "a missing query is the model's error to read: {bad:?}");

        let trace = traces.get("t1").unwrap().expect("the built-in call was traced");
        assert_eq!(
            (trace.server.as_str(), trace.tool.as_str(), trace.conversation_id),
            ("builtin", "current_time", Some(conversation))
        );
        assert!(trace.response.is_some() && !trace.is_error);
        assert!(traces.get("t3").unwrap().expect("the failed call too").is_error);
        registry.shutdown().await;
    }
}
