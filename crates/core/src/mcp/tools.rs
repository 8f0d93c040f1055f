//! The registry as the turn loop's [`ToolHost`]: every ready server's enabled
//! tools under collision-free model-facing names (bare names for Patchbay's
//! built-in server), the approval mode from the
//! server's policy, results converted for the model (text up to the 10 MB the
//! turn keeps; the turn cuts it to the window), progress
//! and log notifications forwarded to the call's events, and each server's
//! `instructions` for the system prompt. Each tool is pinned (server
//! identity, tool, fingerprint of its definition) for grants, and a call runs
//! only while the tool is still defined as it was listed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::protocol::approval::{ToolFingerprint, check_unchanged};
use super::protocol::content::{ResultLimits, for_model};
use super::protocol::events::CallEvent;
use super::protocol::naming::ToolNames;
use super::registry::{CallOptions, McpRegistry};
use super::traces::{TraceStore, TracedCall, traced_call};
use crate::agent::{BUILTIN_SERVER, HostedTool, ToolEvents, ToolHost, ToolInvocation, ToolOutput};
use crate::config::McpServerConfig;
use crate::conversations::ToolPin;
use crate::llm::{ToolOrigin, ToolSpec};

/// Serves the tools of a registry's ready servers to the chat engine.
#[derive(Clone)]
pub struct RegistryTools {
    registry: McpRegistry,
    configs: Arc<BTreeMap<String, McpServerConfig>>,
    /// Stored servers' identities by name, for pinning grants.
    server_ids: Arc<BTreeMap<String, String>>,
    limits: ResultLimits,
    traces: Option<TraceStore>,
}

impl RegistryTools {
    /// Tools of `registry`, with each server's approval policy, hidden tools
    /// and time limits taken from `configs`.
    pub fn new(registry: McpRegistry, configs: impl IntoIterator<Item = McpServerConfig>) -> Self {
        let configs = configs.into_iter().map(|c| (c.name.clone(), c)).collect();
        Self {
            registry,
            configs: Arc::new(configs),
            server_ids: Arc::default(),
            // The turn sizes text to the model's window and keeps the whole of it (up to the UI's cap).
            limits: ResultLimits { model_chars: ResultLimits::default().ui_bytes, ..ResultLimits::default() },
            traces: None,
        }
    }

    /// Pins grants to the stored servers' identities (`ConfigStore::server_ids`);
    /// a server without one (the built-in server) is known by its name.
    pub fn with_server_ids(mut self, ids: BTreeMap<String, String>) -> Self {
        self.server_ids = Arc::new(ids);
        self
    }

    /// Records every call's JSON-RPC exchange in `traces` (a failure to record is logged).
    pub fn with_traces(mut self, traces: TraceStore) -> Self {
        self.traces = Some(traces);
        self
    }
}

#[async_trait::async_trait]
impl ToolHost for RegistryTools {
    fn instructions(&self, servers: &BTreeSet<String>) -> Vec<(String, String)> {
        servers
            .iter()
            .filter(|s| s.as_str() != BUILTIN_SERVER)
            .filter_map(|s| Some((s.clone(), self.registry.instructions(s).ok()??)))
            .collect()
    }

    async fn list_tools(&self, _cancel: CancellationToken) -> Vec<HostedTool> {
        let inventory: Vec<_> = self
            .registry
            .all_tools()
            .into_iter()
            .filter_map(|(server, tools)| self.configs.get(&server).map(|config| (config, tools)))
            .flat_map(|(config, tools)| {
                // A tool for its view only (MCP Apps visibility) is not the model's.
                tools
                    .into_iter()
                    .filter(|t| {
                        !config.disabled_tools.contains(t.name.as_ref())
                            && super::protocol::apps::tool_view(t).for_model
                    })
                    .map(move |t| (config, t))
            })
            .collect();
        // Built-in tools keep their bare names (`current_time`); those never
        // clash with the others, which always hold the `__` separator.
        let prefixed = inventory.iter().filter(|(c, _)| c.name != BUILTIN_SERVER);
        let names = ToolNames::build(prefixed.map(|(c, t)| (c.name.as_str(), t.name.as_ref())));
        inventory
            .iter()
            .filter_map(|(config, tool)| {
                let name = if config.name == BUILTIN_SERVER {
                    tool.name.to_string()
                } else {
                    names.model_name(&config.name, &tool.name)?.to_owned()
                };
                let server_id = self.server_ids.get(&config.name).unwrap_or(&config.name);
                let policy = self.registry.approval_policy(config);
                Some(HostedTool {
                    spec: ToolSpec {
                        name,
                        description: tool.description.as_deref().unwrap_or_default().to_owned(),
                        input_schema: serde_json::Value::Object((*tool.input_schema).clone()),
                        origin: Some(ToolOrigin { server: config.name.clone(), tool: tool.name.to_string() }),
                    },
                    server: config.name.clone(),
                    tool: tool.name.to_string(),
                    approval: policy.decide(tool).mode(),
                    strict: policy.strict,
                    pinned: config.name == BUILTIN_SERVER || config.pinned_tools.contains(tool.name.as_ref()),
                    pin: ToolPin {
                        server_id: server_id.clone(),
                        tool: tool.name.to_string(),
                        fingerprint: ToolFingerprint::of(tool).as_str().to_owned(),
                    },
                    timeout: Some(Duration::from_secs(config.timeouts.call_secs)),
                })
            })
            .collect()
    }

    async fn call_tool(&self, call: ToolInvocation, events: ToolEvents, cancel: CancellationToken) -> ToolOutput {
        let current = self.registry.tools(&call.server).ok().and_then(|t| t.into_iter().find(|t| t.name == call.tool));
        if let Err(e) = check_unchanged(&call.server, &call.tool, &call.pin.fingerprint, current.as_ref()) {
            return ToolOutput::error(e.to_string());
        }
        let (tx, mut rx) = tokio::sync::mpsc::channel(64);
        // Ends when the registry drops the call's route (shortly after the
        // answer, so late notifications still arrive).
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                match event {
                    CallEvent::Progress { progress, total, message } => events.progress(progress, total, message),
                    CallEvent::Log(log) => {
                        let text = log.data.as_str().map_or_else(|| log.data.to_string(), str::to_owned);
                        events.log(log.level, text);
                    }
                }
            }
        });
        let options = CallOptions { timeout: None, events: Some(tx), ..CallOptions::default() };
        let TracedCall { result, trace } = traced_call(
            &self.registry,
            &call.call_id,
            Some(call.conversation),
            &call.server,
            &call.tool,
            Some(call.arguments),
            options,
            cancel,
        )
        .await;
        if let Some(traces) = &self.traces
            && let Err(e) = traces.record(&trace)
        {
            tracing::warn!(server = %call.server, tool = %call.tool, "the call's trace was not stored: {e}");
        }
        match result {
            Ok(result) => {
                let converted = for_model(&result, &self.limits);
                ToolOutput { content: converted.parts, is_error: converted.is_error }
            }
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}
