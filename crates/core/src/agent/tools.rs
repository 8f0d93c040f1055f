//! The seam between the turn loop and whatever runs tools.
//!
//! [`ToolHost`] lists tools (as the model sees them, with the real server and
//! tool behind each, its approval mode and time limit) and calls them. The MCP
//! registry implements it for every connected server, Patchbay's own
//! in-process server of built-in tools included. Failures are results with
//! `is_error`, never errors of the loop: the model reads them and carries on.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::AgentEvent;
use crate::config::ApprovalMode;
pub use crate::config::BUILTIN_SERVER;
use crate::conversations::{ConversationId, ToolPin};
use crate::llm::{ContentPart, ToolSpec};

/// A tool as a host offers it.
#[derive(Debug, Clone, PartialEq)]
pub struct HostedTool {
    /// What the model sees (name unique across hosts, description, schema).
    pub spec: ToolSpec,
    /// The MCP server that serves it (`builtin` for in-process tools).
    pub server: String,
    /// The server's own name for the tool.
    pub tool: String,
    /// Whether a call needs the user's approval.
    pub approval: ApprovalMode,
    /// Its server runs at the strict level: every call is asked, and no
    /// answer is remembered ("allow for this conversation" is not honoured).
    pub strict: bool,
    /// Sent with every request, also when tool search finds the others
    /// ([`super::tool_search`]): the user's pins and Patchbay's own tools.
    pub pinned: bool,
    /// What "allow for this conversation" is pinned to.
    pub pin: ToolPin,
    /// How long a call may run; the loop's default when `None`.
    pub timeout: Option<Duration>,
}

/// One call to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInvocation {
    /// The provider's id of this call (also the trace's id).
    pub call_id: String,
    /// The conversation the call belongs to.
    pub conversation: ConversationId,
    /// The model-facing name.
    pub name: String,
    pub server: String,
    pub tool: String,
    /// Parsed arguments (always a JSON object).
    pub arguments: serde_json::Map<String, serde_json::Value>,
    /// The tool as it was listed, offered and approved: a host refuses the
    /// call when the tool's definition has changed since.
    pub pin: ToolPin,
}

/// What a call returned.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: Vec<ContentPart>,
    /// The tool failed; the content says why, for the model to read.
    pub is_error: bool,
}

impl ToolOutput {
    /// A text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![ContentPart::text(text)], is_error: false }
    }

    /// A failure the model reads.
    pub fn error(text: impl Into<String>) -> Self {
        Self { content: vec![ContentPart::text(text)], is_error: true }
    }
}

/// Where a running call reports progress and log lines.
#[derive(Debug, Clone)]
pub struct ToolEvents {
    call_id: String,
    tx: UnboundedSender<AgentEvent>,
}

impl ToolEvents {
    pub(crate) fn new(call_id: String, tx: UnboundedSender<AgentEvent>) -> Self {
        Self { call_id, tx }
    }

    /// Reports progress (`total` when known).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let call_id = self.call_id.clone();
        // A closed receiver means nobody watches the turn any more; nothing to do.
        let _ = self.tx.send(AgentEvent::ToolProgress { call_id, progress, total, message });
    }

    /// Reports a log line from the server.
    pub fn log(&self, level: impl Into<String>, message: impl Into<String>) {
        let call_id = self.call_id.clone();
        let _ = self.tx.send(AgentEvent::ToolLog { call_id, level: level.into(), message: message.into() });
    }
}

/// Something that offers tools and runs them.
#[async_trait::async_trait]
pub trait ToolHost: Send + Sync {
    /// The tools it offers now.
    async fn list_tools(&self, cancel: CancellationToken) -> Vec<HostedTool>;

    /// Runs one call, unless the tool is no longer the one in `call.pin`
    /// (then an error output says so). Must stop promptly (and tell the server, for MCP:
    /// `notifications/cancelled`) when `cancel` fires. Failures are outputs
    /// with `is_error`.
    async fn call_tool(&self, call: ToolInvocation, events: ToolEvents, cancel: CancellationToken) -> ToolOutput;

    /// What the named servers say about using their tools (MCP's
    /// `instructions`), by server, for the system prompt. None by default.
    fn instructions(&self, _servers: &BTreeSet<String>) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// Which tools a turn offers the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum ToolSelection {
    /// Every tool the host offers.
    #[default]
    All,
    /// No tools at all.
    None,
    /// Every tool of the named servers, and the named `server/tool`s.
    Only {
        #[serde(default)]
        servers: BTreeSet<String>,
        #[serde(default)]
        tools: BTreeSet<String>,
    },
}

impl ToolSelection {
    /// Whether `tool` is offered.
    pub fn allows(&self, tool: &HostedTool) -> bool {
        match self {
            Self::All => true,
            Self::None => false,
            Self::Only { servers, tools } => {
                servers.contains(&tool.server) || tools.contains(&format!("{}/{}", tool.server, tool.tool))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_by_server_and_tool() {
        let tool = |server: &str, name: &str| HostedTool {
            spec: ToolSpec {
                name: format!("{server}__{name}"),
                description: String::new(),
                input_schema: serde_json::json!({}),
                origin: None,
            },
            server: server.into(),
            tool: name.into(),
            approval: ApprovalMode::Ask,
            strict: false,
            pinned: false,
            pin: ToolPin { server_id: server.into(), tool: name.into(), fingerprint: String::new() },
            timeout: None,
        };
        let only = ToolSelection::Only { servers: ["fs".to_owned()].into(), tools: ["web/fetch".to_owned()].into() };
        assert!(only.allows(&tool("fs", "read")));
        assert!(only.allows(&tool("web", "fetch")));
        assert!(!only.allows(&tool("web", "search")));
        assert!(!ToolSelection::None.allows(&tool("fs", "read")));
        assert!(ToolSelection::All.allows(&tool("fs", "read")));
    }
}
