//! Tool-call traces: the raw JSON-RPC of every `tools/call` (bounded), kept in
//! SQLite for the trace inspector, and per-tool statistics drawn from them.
//!
//! [`traced_call`] is the one way a call is made with a trace: it builds the
//! request exactly as rmcp sends it (a `tools/call` JSON-RPC message, with its
//! `task` field for a tool that runs as a task), times the call, and captures
//! the result or the error as the JSON-RPC response (a task's: what
//! `tasks/result` answered).
//! [`TraceStore`] keeps the traces; the chat loop's calls are recorded with
//! their conversation, direct calls ("test a tool") without one.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use rmcp::model::{CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, JsonObject};
use rusqlite::OptionalExtension;
use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::error::McpError;
use super::protocol::content::{BoundedJson, ResultLimits};
use super::registry::{CallOptions, McpRegistry, WireIds};
use crate::conversations::ConversationId;
use crate::store::{Store, StoreError};

/// One recorded call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredTrace {
    pub call_id: String,
    pub conversation_id: Option<ConversationId>,
    pub server: String,
    pub tool: String,
    /// The JSON-RPC request (cut to the trace limit, then stored as text).
    pub request: BoundedJson,
    /// The JSON-RPC response, or an error object when the call failed.
    pub response: Option<BoundedJson>,
    pub is_error: bool,
    /// Milliseconds since the Unix epoch.
    pub started_at: i64,
    pub duration_ms: i64,
}

/// Statistics of one tool's recorded calls.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct CallStats {
    pub calls: u64,
    /// Share of calls that returned without `isError` or a failure, 0 to 1.
    pub success_rate: f64,
    pub median_ms: f64,
}

/// Traces kept in the shared [`Store`].
#[derive(Debug, Clone)]
pub struct TraceStore {
    store: Store,
}

impl TraceStore {
    /// Traces kept in `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Stores a trace (a repeated call id replaces the earlier trace).
    pub fn record(&self, trace: &StoredTrace) -> Result<(), StoreError> {
        self.store.write(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO mcp_traces(call_id, conversation_id, server, tool, request, response,
                                                   is_error, started_at, duration_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                (
                    &trace.call_id,
                    trace.conversation_id,
                    &trace.server,
                    &trace.tool,
                    &trace.request.text,
                    trace.response.as_ref().map(|r| &r.text),
                    trace.is_error,
                    trace.started_at,
                    trace.duration_ms,
                ),
            )
            .map_err(|e| self.store.error(e))
            .map(drop)
        })
    }

    /// The trace of `call_id`, if it was recorded.
    pub fn get(&self, call_id: &str) -> Result<Option<StoredTrace>, StoreError> {
        self.store.read(|c| {
            c.query_row(
                "SELECT call_id, conversation_id, server, tool, request, response, is_error, started_at, duration_ms
                 FROM mcp_traces WHERE call_id = ?1",
                [call_id],
                |r| {
                    let bounded = |text: String| BoundedJson { total_bytes: text.len(), truncated: false, text };
                    Ok(StoredTrace {
                        call_id: r.get(0)?,
                        conversation_id: r.get(1)?,
                        server: r.get(2)?,
                        tool: r.get(3)?,
                        request: bounded(r.get(4)?),
                        response: r.get::<_, Option<String>>(5)?.map(bounded),
                        is_error: r.get(6)?,
                        started_at: r.get(7)?,
                        duration_ms: r.get(8)?,
                    })
                },
            )
            .optional()
        })
    }

    /// Statistics of every tool of `server` that has recorded calls.
    pub fn stats(&self, server: &str) -> Result<BTreeMap<String, CallStats>, StoreError> {
        let rows: Vec<(String, i64, bool)> = self.store.read(|c| {
            let mut stmt = c.prepare("SELECT tool, duration_ms, is_error FROM mcp_traces WHERE server = ?1")?;
            let rows = stmt.query_map([server], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect()
        })?;
        let mut by_tool: BTreeMap<String, (Vec<i64>, u64)> = BTreeMap::new();
        for (tool, ms, is_error) in rows {
            let entry = by_tool.entry(tool).or_default();
            entry.0.push(ms);
            entry.1 += u64::from(!is_error);
        }
        Ok(by_tool
            .into_iter()
            .map(|(tool, (mut durations, ok))| {
                durations.sort_unstable();
                let n = durations.len();
                let median = if n % 2 == 1 {
                    durations[n / 2] as f64
                } else {
                    (durations[n / 2 - 1] + durations[n / 2]) as f64 / 2.0
                };
                let stats = CallStats { calls: n as u64, success_rate: ok as f64 / n as f64, median_ms: median };
                (tool, stats)
            })
            .collect())
    }
}

/// What a traced call returned, with its trace (not yet stored).
pub struct TracedCall {
    pub result: Result<CallToolResult, McpError>,
    pub trace: StoredTrace,
}

/// Calls a tool and captures the exchange as JSON-RPC: the request as it went
/// out (its id and progress token as the server saw them), the result or the
/// error as the response.
#[allow(clippy::too_many_arguments)]
pub async fn traced_call(
    registry: &McpRegistry,
    call_id: &str,
    conversation_id: Option<ConversationId>,
    server: &str,
    tool: &str,
    arguments: Option<JsonObject>,
    options: CallOptions,
    cancel: CancellationToken,
) -> TracedCall {
    let limits = ResultLimits::default();
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Some(args) = arguments.clone() {
        params = params.with_arguments(args);
    }
    let mut request = serde_json::to_value(ClientRequest::CallToolRequest(CallToolRequest::new(params)))
        .unwrap_or_else(|e| json!({"error": e.to_string()}));
    // A tool that runs as a task is asked for one; its result is the task's (`tasks/result`).
    if registry.runs_as_task(server, tool)
        && let Some(params) = request.get_mut("params").and_then(Value::as_object_mut)
    {
        params.insert("task".into(), super::protocol::tasks::task_field());
    }
    let started_at = crate::clock::now_ms();
    let started = Instant::now();
    let sent_as = Arc::new(OnceLock::new());
    let options = CallOptions { sent_as: Some(sent_as.clone()), ..options };
    let result = registry.call_tool(server, tool, arguments, options, cancel).await;
    let duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    // The id and progress token the request went out with; the call's own id
    // when it never went out (the server was not ready).
    let id = match sent_as.get() {
        Some(WireIds { id, progress_token }) => {
            if let Some(params) = request.get_mut("params").and_then(Value::as_object_mut) {
                params.insert("_meta".into(), json!({"progressToken": progress_token}));
            }
            json!(id)
        }
        None => json!(call_id),
    };
    if let Value::Object(map) = &mut request {
        map.insert("jsonrpc".into(), json!("2.0"));
        map.insert("id".into(), id.clone());
    }
    let (response, is_error) = match &result {
        Ok(r) => (json!({"jsonrpc": "2.0", "id": id, "result": r}), r.is_error == Some(true)),
        Err(McpError::Server { code, message, data, .. }) => {
            (json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": data}}), true)
        }
        // No answer arrived (timeout, cancellation, a closed connection): what happened instead.
        Err(e) => (json!({"jsonrpc": "2.0", "id": id, "error": {"message": e.to_string()}}), true),
    };
    let trace = StoredTrace {
        call_id: call_id.to_owned(),
        conversation_id,
        server: server.to_owned(),
        tool: tool.to_owned(),
        request: BoundedJson::capture(&request, limits.trace_bytes),
        response: Some(BoundedJson::capture(&response, limits.trace_bytes)),
        is_error,
        started_at,
        duration_ms,
    };
    TracedCall { result, trace }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(call: &str, tool: &str, ms: i64, is_error: bool) -> StoredTrace {
        let text = |v: Value| BoundedJson::capture(&v, 1000);
        StoredTrace {
            call_id: call.into(),
            conversation_id: None,
            server: "s".into(),
            tool: tool.into(),
            request: text(json!({"method": "tools/call", "params": {"name": tool}})),
            response: Some(text(json!({"result": {"content": []}}))),
            is_error,
            started_at: 1,
            duration_ms: ms,
        }
    }

    #[test]
    fn traces_are_kept_and_summed_up_per_tool() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&crate::paths::DataDir::new(dir.path())).unwrap();
        let traces = TraceStore::new(store);
        for (i, (ms, err)) in [(10, false), (30, true), (20, false), (40, false)].into_iter().enumerate() {
            traces.record(&trace(&format!("c{i}"), "echo", ms, err)).unwrap();
        }
        traces.record(&trace("x", "other", 5, false)).unwrap();
        let stats = traces.stats("s").unwrap();
        assert_eq!(stats["echo"], CallStats { calls: 4, success_rate: 0.75, median_ms: 25.0 });
        assert_eq!(stats["other"].calls, 1);
        assert!(traces.stats("nobody").unwrap().is_empty());
        let got = traces.get("c1").unwrap().unwrap();
        assert!(got.is_error && got.request.text.contains("tools/call"));
        assert_eq!(traces.get("missing").unwrap(), None);
    }
}
