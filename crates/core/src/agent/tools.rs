//! The seam between the turn loop and whatever runs tools.
//!
//! [`ToolHost`] lists tools (as the model sees them, with the real server and
//! tool behind each, its approval mode and time limit) and calls them. The MCP
//! registry implements it for every connected server; [`BuiltinTools`] serves
//! Patchbay's own in-process tools (`current_time`). Failures are results with
//! `is_error`, never errors of the loop: the model reads them and carries on.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::AgentEvent;
use crate::config::ApprovalMode;
use crate::conversations::ConversationId;
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

    /// Runs one call. Must stop promptly (and tell the server, for MCP:
    /// `notifications/cancelled`) when `cancel` fires. Failures are outputs
    /// with `is_error`.
    async fn call_tool(&self, call: ToolInvocation, events: ToolEvents, cancel: CancellationToken) -> ToolOutput;
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

/// Several hosts offered as one. Each call goes to the host that lists its
/// server and tool; model-facing names must not collide across hosts (MCP
/// tools carry a server prefix, built-in ones do not).
#[derive(Clone, Default)]
pub struct CombinedTools {
    hosts: Vec<std::sync::Arc<dyn ToolHost>>,
}

impl CombinedTools {
    /// Offers the tools of every host in `hosts`, in that order.
    pub fn new(hosts: Vec<std::sync::Arc<dyn ToolHost>>) -> Self {
        Self { hosts }
    }
}

#[async_trait::async_trait]
impl ToolHost for CombinedTools {
    async fn list_tools(&self, cancel: CancellationToken) -> Vec<HostedTool> {
        let mut all = Vec::new();
        for host in &self.hosts {
            all.extend(host.list_tools(cancel.clone()).await);
        }
        all
    }

    async fn call_tool(&self, call: ToolInvocation, events: ToolEvents, cancel: CancellationToken) -> ToolOutput {
        for host in &self.hosts {
            let tools = host.list_tools(cancel.clone()).await;
            if tools.iter().any(|t| t.server == call.server && t.tool == call.tool) {
                return host.call_tool(call, events, cancel).await;
            }
        }
        ToolOutput::error(format!("no connected server offers {}/{} any more", call.server, call.tool))
    }
}

/// Patchbay's own tools, served in process: `current_time`.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinTools;

/// The server name of built-in tools.
pub const BUILTIN_SERVER: &str = "builtin";

#[async_trait::async_trait]
impl ToolHost for BuiltinTools {
    async fn list_tools(&self, _cancel: CancellationToken) -> Vec<HostedTool> {
        vec![HostedTool {
            spec: ToolSpec {
                name: "current_time".into(),
                description: "The current date and time in UTC (RFC 3339) and as Unix seconds.".into(),
                input_schema: serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
            },
            server: BUILTIN_SERVER.into(),
            tool: "current_time".into(),
            approval: ApprovalMode::Allow,
            timeout: Some(Duration::from_secs(5)),
        }]
    }

    async fn call_tool(&self, call: ToolInvocation, _events: ToolEvents, _cancel: CancellationToken) -> ToolOutput {
        match call.tool.as_str() {
            "current_time" => {
                let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
                ToolOutput::text(format!("{} (unix {secs})", rfc3339_utc(secs)))
            }
            other => ToolOutput::error(format!("the built-in server has no tool named {other:?}")),
        }
    }
}

/// Formats Unix seconds as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian calendar).
pub(crate) fn rfc3339_utc(unix_secs: u64) -> String {
    let days = unix_secs / 86_400;
    let rem = unix_secs % 86_400;
    // Howard Hinnant's civil_from_days, for days since 1970-01-01.
    let z = i64::try_from(days).unwrap_or(0) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339_utc(4_102_444_799), "2099-12-31T23:59:59Z");
    }

    #[test]
    fn selection_by_server_and_tool() {
        let tool = |server: &str, name: &str| HostedTool {
            spec: ToolSpec {
                name: format!("{server}__{name}"),
                description: String::new(),
                input_schema: serde_json::json!({}),
            },
            server: server.into(),
            tool: name.into(),
            approval: ApprovalMode::Ask,
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
