//! The servers' tools: listing them, switching them off, their approval,
//! calling one directly ("test a tool") or for a view (MCP Apps), and the
//! traces of those calls.

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::views::{ToolInfo, ToolResultView, TraceRecord};
use super::{App, AppError};
use crate::agent::budget;
use crate::config::{ApprovalMode, BUILTIN_SERVER};
use crate::downloads::{self, DownloadError, Requested, SavedFile};
use crate::llm::ToolSpec;
use crate::mcp::protocol::apps::AppPage;
use crate::mcp::protocol::content::{ResultLimits, for_model, for_ui};
use crate::mcp::traces::{TraceStore, traced_call};
use crate::mcp::{CallEvent, CallOptions, McpError};

impl App {
    /// Tools of one server (or all), with enable, approval, cost and statistics.
    pub fn list_tools(&self, server: Option<&str>) -> Result<Vec<ToolInfo>, AppError> {
        let configs = match server {
            Some(name) => vec![self.inner.config.server(name)?],
            None => self.inner.config.servers()?,
        };
        // Costs as the default model counts them (the first profile's, as a new chat uses).
        let counter = self
            .inner
            .config
            .providers()?
            .first()
            .map_or(&budget::Estimate as &dyn budget::TokenCounter, |p| budget::counter_for(&p.default_model));
        let mut out = Vec::new();
        for config in configs {
            let Ok(tools) = self.inner.registry.tools(&config.name) else { continue };
            let policy = self.inner.registry.approval_policy(&config);
            let place = Self::icon_place(&config);
            let stats = self.traces().stats(&config.name)?;
            for tool in tools {
                let name = tool.name.to_string();
                let description = tool.description.as_deref().unwrap_or_default().to_owned();
                let input_schema = serde_json::Value::Object((*tool.input_schema).clone());
                let spec = ToolSpec {
                    name: format!("{}__{name}", config.name),
                    description: description.clone(),
                    input_schema: input_schema.clone(),
                    origin: None,
                };
                out.push(ToolInfo {
                    server: config.name.clone(),
                    title: tool.title.clone().or_else(|| tool.annotations.as_ref()?.title.clone()),
                    icons: self.icon_views(&place, tool.icons.as_deref()),
                    hints: super::views::tool_hints(
                        tool.annotations.as_ref(),
                        self.inner.registry.runs_as_task(&config.name, &name),
                    ),
                    view: crate::mcp::protocol::apps::tool_view(&tool),
                    enabled: !config.disabled_tools.contains(&name),
                    pinned: config.name == BUILTIN_SERVER || config.pinned_tools.contains(&name),
                    approval: policy.decide(&tool).mode(),
                    schema_tokens: budget::count_tools(std::slice::from_ref(&spec), counter),
                    stats: stats.get(&name).cloned(),
                    name,
                    description,
                    input_schema,
                });
            }
        }
        Ok(out)
    }

    /// Shows or hides a tool from the model.
    pub fn set_tool_enabled(&self, server: &str, tool: &str, enabled: bool) -> Result<(), AppError> {
        let mut config = self.inner.config.server(server)?;
        if enabled {
            config.disabled_tools.remove(tool);
        } else {
            config.disabled_tools.insert(tool.to_owned());
        }
        self.inner.config.save_server(&config)?;
        self.inner.registry.configure([config]);
        Ok(())
    }

    /// Pins a tool: sent with every request, also when the others are found
    /// through tool search.
    pub fn set_tool_pinned(&self, server: &str, tool: &str, pinned: bool) -> Result<(), AppError> {
        let mut config = self.inner.config.server(server)?;
        if pinned {
            config.pinned_tools.insert(tool.to_owned());
        } else {
            config.pinned_tools.remove(tool);
        }
        self.inner.config.save_server(&config)?;
        self.inner.registry.configure([config]);
        Ok(())
    }

    /// Sets a tool's approval policy.
    pub fn set_tool_approval(&self, server: &str, tool: &str, approval: ApprovalMode) -> Result<(), AppError> {
        let mut config = self.inner.config.server(server)?;
        config.tool_approval.insert(tool.to_owned(), approval);
        self.inner.config.save_server(&config)?;
        self.inner.registry.configure([config]);
        Ok(())
    }

    /// Calls a tool directly ("test a tool", the inspector's re-run); its
    /// progress and log messages go to `events` as they come.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Value,
        events: Option<tokio::sync::mpsc::Sender<CallEvent>>,
        cancel: CancellationToken,
    ) -> Result<ToolResultView, AppError> {
        let arguments = match arguments {
            serde_json::Value::Object(map) => Some(map),
            serde_json::Value::Null => None,
            other => return Err(AppError::Invalid(format!("tool arguments must be a JSON object, not {other}"))),
        };
        let options = CallOptions { events, ..CallOptions::default() };
        let result = self.direct_call("test", server, tool, arguments, options, cancel).await?;
        let defaults = ResultLimits::default();
        let limits = ResultLimits { model_chars: defaults.ui_bytes, model_media_bytes: defaults.ui_bytes, ..defaults };
        let content = for_model(&result, &limits);
        Ok(ToolResultView {
            content: content.parts,
            structured_content: for_ui(&result, &limits).structured_content,
            is_error: content.is_error,
            kept: None,
        })
    }

    /// Calls a tool for a view of the same server (MCP Apps `tools/call`): the
    /// tool must exist, be callable from views (its visibility), be switched
    /// on, and its approval must not be deny; a tool whose approval is ask runs
    /// only once the window asked (`approved`). The answer is the server's
    /// result as MCP JSON, for the view to read.
    pub async fn call_tool_for_view(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        approved: bool,
        cancel: CancellationToken,
    ) -> Result<serde_json::Value, AppError> {
        let config = self.inner.config.server(server)?;
        let listed = self.inner.registry.tools(server)?.into_iter().find(|t| t.name == tool);
        let listed = listed.ok_or_else(|| AppError::NotFound(format!("MCP server {server:?} has no tool {tool:?}")))?;
        let refuse = |why: &str| Err(AppError::Invalid(format!("the view may not call {server}/{tool}: {why}")));
        if !crate::mcp::protocol::apps::tool_view(&listed).for_app {
            return refuse("the server made it for the model only");
        }
        if config.disabled_tools.contains(tool) {
            return refuse("it is switched off in Settings → MCP servers");
        }
        match self.inner.registry.approval_policy(&config).decide(&listed).mode() {
            ApprovalMode::Deny => return refuse("its approval is set to deny"),
            ApprovalMode::Ask if !approved => return refuse("it needs your approval"),
            _ => {}
        }
        let result = self.direct_call("view", server, tool, Some(arguments), CallOptions::default(), cancel).await?;
        serde_json::to_value(&result).map_err(|e| AppError::Invalid(format!("the result of {server}/{tool}: {e}")))
    }

    /// A call outside any conversation (`kind`-UUID as its id), stored as a trace.
    async fn direct_call(
        &self,
        kind: &str,
        server: &str,
        tool: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        options: CallOptions,
        cancel: CancellationToken,
    ) -> Result<rmcp::model::CallToolResult, AppError> {
        let call_id = format!("{kind}-{}", uuid::Uuid::new_v4());
        let registry = &self.inner.registry;
        let traced = traced_call(registry, &call_id, None, server, tool, arguments, options, cancel).await;
        self.traces().record(&traced.trace)?;
        Ok(traced.result?)
    }

    /// A tool's view (MCP Apps): the `ui://` page read from its server, checked,
    /// with the policy it is to be served with.
    pub async fn app_page(&self, server: &str, uri: &str, cancel: CancellationToken) -> Result<AppPage, AppError> {
        if !uri.starts_with("ui://") {
            let reason = "a view is a ui:// resource".to_owned();
            return Err(McpError::AppView { server: server.to_owned(), uri: uri.to_owned(), reason }.into());
        }
        let result = self.inner.registry.read_resource(server, uri, cancel).await?;
        let listed = self.inner.registry.resources(server).unwrap_or_default();
        Ok(AppPage::from_read(server, uri, &result, listed.iter().find(|r| r.uri == uri))?)
    }

    /// A resource of the view's own server (MCP Apps `resources/read`), as the
    /// server's MCP JSON.
    pub async fn read_resource_for_view(
        &self,
        server: &str,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<serde_json::Value, AppError> {
        let result = self.inner.registry.read_resource(server, uri, cancel).await?;
        serde_json::to_value(&result).map_err(|e| AppError::Invalid(format!("resource {uri} of {server}: {e}")))
    }

    /// The resources of the view's own server (MCP Apps `resources/list`), as
    /// MCP `ListResourcesResult` JSON: the inventory Patchbay keeps, whole.
    pub fn list_resources_for_view(&self, server: &str) -> Result<serde_json::Value, AppError> {
        let resources = self.inner.registry.resources(server)?;
        Ok(serde_json::json!({ "resources": resources }))
    }

    /// Saves MCP content into `dir` as files: embedded resources as they
    /// came, resource links read from `server` (a view's download, MCP Apps
    /// `ui/download-file`, or a resource the user saves). Nothing is written
    /// unless every file was read and fits; a failed write removes what this
    /// call wrote.
    pub async fn save_files(
        &self,
        server: Option<&str>,
        contents: &[serde_json::Value],
        dir: &Path,
        cancel: CancellationToken,
    ) -> Result<Vec<SavedFile>, AppError> {
        let mut files = Vec::new();
        for (index, asked) in downloads::parse_request(contents)?.into_iter().enumerate() {
            files.push(match asked {
                Requested::Embedded(file) => file,
                Requested::Link { uri, name, mime_type } => {
                    let invalid = |reason| DownloadError::Invalid { index, reason };
                    let server =
                        server.ok_or_else(|| invalid(format!("{uri}: no server was named to read it from")))?;
                    let read = self.read_resource_for_view(server, &uri, cancel.clone()).await?;
                    let contents = downloads::pick_contents(&uri, &read).map_err(invalid)?;
                    downloads::download(name.as_deref(), mime_type.as_deref(), &contents).map_err(invalid)?
                }
            });
            downloads::check_sizes(&files)?;
        }
        let dir = dir.to_owned();
        tokio::task::spawn_blocking(move || downloads::save_all(&dir, &files))
            .await
            .map_err(|e| AppError::Invalid(format!("saving the download stopped: {e}")))?
            .map_err(AppError::from)
    }

    /// The raw JSON-RPC of a recorded call, for the trace inspector.
    pub fn get_trace(&self, call_id: &str) -> Result<TraceRecord, AppError> {
        let trace = self.traces().get(call_id)?;
        let trace = trace.ok_or_else(|| AppError::NotFound(format!("no trace was recorded for call {call_id}")))?;
        // A trace cut at its size limit is no longer JSON: it is shown as text.
        let json =
            |text: &str| serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_owned()));
        Ok(TraceRecord {
            call_id: trace.call_id,
            server: trace.server,
            tool: trace.tool,
            request: json(&trace.request.text),
            response: trace.response.map(|r| json(&r.text)),
        })
    }

    fn traces(&self) -> TraceStore {
        TraceStore::new(self.inner.store.clone())
    }
}
