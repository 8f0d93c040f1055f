//! What servers report: [`McpEvent`] to everyone watching the registry,
//! [`CallEvent`] to the call that caused it. Below the client handler that
//! sends them and the tasks that wait on them.

#![expect(deprecated, reason = "rmcp marks logging deprecated (SEP-2577); servers still send it")]

use rmcp::model::LoggingMessageNotificationParam;
use serde::Serialize;

use crate::mcp::status::ServerStatus;

/// What the registry reports as it happens.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum McpEvent {
    /// A server's status changed.
    Status { server: String, status: ServerStatus },
    /// A server's tools, resources or prompts changed.
    InventoryChanged { server: String },
    /// A server sent `notifications/message`.
    Log { server: String, message: LogMessage },
    /// A subscribed resource changed (`notifications/resources/updated`).
    ResourceUpdated { server: String, uri: String },
    /// A stdio server wrote a line to stderr.
    Stderr { server: String, line: String },
    /// A sandboxed server's filtering proxy refused a host outside its allowed domains.
    ConnectionBlocked { server: String, host: String },
}

/// Something a server reported while a tool call ran.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallEvent {
    /// `notifications/progress` for this call.
    Progress { progress: f64, total: Option<f64>, message: Option<String> },
    /// `notifications/message` attributed to this call.
    Log(LogMessage),
}

/// A `notifications/message` from a server.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct LogMessage {
    /// `debug` … `emergency`.
    pub level: String,
    pub logger: Option<String>,
    pub data: serde_json::Value,
}

impl From<LoggingMessageNotificationParam> for LogMessage {
    fn from(p: LoggingMessageNotificationParam) -> Self {
        let level = serde_json::to_value(p.level).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        Self { level, logger: p.logger, data: p.data }
    }
}
