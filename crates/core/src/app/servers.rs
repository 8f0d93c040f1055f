//! MCP servers, their tools, prompts and resources; providers; import and export.
//!
//! Every change is written to the [`ConfigStore`](crate::config::ConfigStore)
//! first and then applied to the running registry, so what the settings page
//! shows after a restart is what it showed before.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::{ArgumentInfo, Reference};
use tokio_util::sync::CancellationToken;

use super::diff::line_diff;
use super::views::{
    CompletionTarget, CompletionView, DoctorCheck, DoctorReport, ImportEntry, ImportInput, ImportPreviewView,
    ImportReport, PromptArgument, PromptInfo, ProviderView, RegistryFill, ResourceInfo, ResourceTemplateInfo,
    SecretValues, ServerStatusView, ServerView, ToolInfo, ToolResultView, TraceRecord,
};
use super::{App, AppError};
use crate::agent::budget;
use crate::catalog::{BundleSource, HttpRegistry, Registry, RegistryEntry, RegistryPage, download_bundle};
use crate::config::import::{
    EntryStatus, ImportChoice, ImportMode, ImportOptions, SecretState, SourceFormat, is_reserved_name, secret_name,
};
use crate::config::presets::{self, ProviderPreset};
use crate::config::providers::{api_key_name, validate_provider};
use crate::config::server_presets::{ServerPreset, server_presets};
use crate::config::{
    ApprovalMode, ExportFormat, ExportOptions, McpServerConfig, ProviderProfile, TransportConfig, ValueSource,
};
use crate::downloads::{self, DownloadError, Requested, SavedFile};
use crate::llm::ToolSpec;
use crate::llm::probe::{PROBE_TIMEOUT, probe};
use crate::mcp::oauth::{self, AuthorizationUi, AuthorizeOptions};
use crate::mcp::protocol::apps::AppPage;
use crate::mcp::protocol::content::{
    ResourcePreview, ResultLimits, for_model, for_ui, prompt_text, resource_preview, resource_text,
};
use crate::mcp::protocol::uri_template;
use crate::mcp::traces::{TraceStore, traced_call};
use crate::mcp::{CallEvent, CallOptions, LaunchReport, LogLevel, McpError};
use crate::secrets::SecretValue;

/// How long a server may take to stop before it is restarted or removed.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// Where a server's log level is kept.
fn log_level_key(server: &str) -> String {
    format!("mcp.log_level.{server}")
}

/// Where the resources watched on a server are kept.
fn watched_key(server: &str) -> String {
    format!("mcp.watched.{server}")
}

impl App {
    /// A server's live status, or `None` when the registry does not know it.
    pub(crate) fn server_status(&self, name: &str) -> Option<ServerStatusView> {
        let status = self.inner.registry.status(name).ok()?;
        let tools = self.inner.registry.tools(name).map(|t| t.len()).unwrap_or(0);
        Some(ServerStatusView::new(name, &status, tools))
    }

    /// Every configured server with its status.
    pub fn list_servers(&self) -> Result<Vec<ServerView>, AppError> {
        Ok(self
            .inner
            .config
            .servers()?
            .into_iter()
            .map(|config| {
                let status = self
                    .server_status(&config.name)
                    .unwrap_or_else(|| ServerStatusView::new(&config.name, &crate::mcp::ServerStatus::Stopped, 0));
                let instructions = self.inner.registry.instructions(&config.name).ok().flatten();
                let log_level = self.inner.registry.log_level(&config.name);
                let offered = self.inner.registry.server_icons(&config.name).unwrap_or_default();
                let icons = self.icon_views(&Self::icon_place(&config), Some(&offered));
                let about = self.inner.registry.about(&config.name).ok().flatten();
                let bundle = crate::bundle::installed_in(&config, &self.bundle_dir(&config.name));
                let policy = self.inner.registry.policy_outline(&config);
                let blocked = self.blocked_hosts(&config.name);
                ServerView { config, status, about, bundle, instructions, log_level, icons, policy, blocked }
            })
            .collect())
    }

    /// The level a server sends log messages at (`logging/setLevel`): kept,
    /// sent now if the server is ready and at each start.
    pub async fn set_server_log_level(&self, server: &str, level: LogLevel) -> Result<(), AppError> {
        self.inner.config.server(server)?;
        self.inner.store.set_setting(&log_level_key(server), &level)?;
        match self.inner.registry.set_log_level(server, level, CancellationToken::new()).await {
            Ok(()) | Err(McpError::NotReady { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Gives each server, before servers start, the log level and the
    /// watched resources kept for it; they are sent when it starts.
    pub(crate) async fn restore_server_choices(&self) -> Result<(), AppError> {
        let (store, registry) = (&self.inner.store, &self.inner.registry);
        for config in self.inner.config.servers()? {
            if let Some(level) = store.setting::<Option<LogLevel>>(&log_level_key(&config.name))?.flatten() {
                // Not started yet: the level is kept and sent when it is.
                let _ = registry.set_log_level(&config.name, level, CancellationToken::new()).await;
            }
            if let Some(watched) = store.setting::<BTreeSet<String>>(&watched_key(&config.name))? {
                registry.resubscribe_on_start(&config.name, watched)?;
            }
        }
        Ok(())
    }

    /// The servers the settings page offers to add in one pick.
    pub fn server_presets(&self) -> Vec<ServerPreset> {
        server_presets()
    }

    /// One page of the MCP Registry's servers whose name contains `query`
    /// (`PATCHBAY_MCP_REGISTRY`, else the official registry), as entries the
    /// server editor starts from.
    pub async fn registry_search(
        &self,
        query: &str,
        cursor: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<RegistryPage, AppError> {
        Ok(HttpRegistry::configured().search(query, cursor, cancel).await?)
    }

    /// Downloads the bundle of a registry entry into `<data dir>/downloads`
    /// and checks its SHA-256; returns its path, for the bundle installer.
    pub async fn registry_bundle(
        &self,
        source: &BundleSource,
        cancel: &CancellationToken,
    ) -> Result<PathBuf, AppError> {
        Ok(download_bundle(source, &self.inner.dir.path().join("downloads"), cancel).await?)
    }

    /// A registry entry with its placeholders filled in from `values` (see
    /// [`crate::catalog::fill`]), named as the entry suggests, for the editor;
    /// and the secrets to save with it.
    pub fn registry_fill(
        &self,
        entry: &RegistryEntry,
        values: &BTreeMap<String, String>,
    ) -> Result<RegistryFill, AppError> {
        let (config, secrets) = crate::catalog::fill(entry, &entry.id, values)?;
        Ok(RegistryFill { config, secrets })
    }

    /// Saves a server: its secrets go to the secret store first, then the
    /// configuration (holding only their names); an enabled server restarts.
    pub async fn save_server(&self, config: McpServerConfig, secrets: &SecretValues) -> Result<(), AppError> {
        let (config, secrets) = under_own_name(config, secrets);
        if config.name.trim().is_empty() {
            return Err(AppError::Invalid("a server needs a name".into()));
        }
        if is_reserved_name(config.name.trim()) {
            return Err(AppError::Invalid(format!(
                "the name {:?} is taken by Patchbay's built-in tools; choose another",
                config.name.trim()
            )));
        }
        if let Some(problem) = crate::config::import::server_name_problem(&config.name) {
            return Err(AppError::Invalid(problem));
        }
        if let Some((field, _)) =
            config.secret_fields().into_iter().find(|(_, v)| **v == ValueSource::Secret(String::new()))
        {
            return Err(AppError::Invalid(format!("{}.{field}: type the secret's value; it is not set", config.name)));
        }
        if let Some((field, reason)) = config.client_credential_problems().into_iter().next() {
            return Err(AppError::Invalid(format!("{}.{field}: {reason}", config.name)));
        }
        if let Some((field, reason)) = config.policy.problems().into_iter().next() {
            return Err(AppError::Invalid(format!("{}.{field}: {reason}", config.name)));
        }
        if let Some((field, ValueSource::Plain(_))) = config.client_credentials.as_ref().map(|c| c.key.material()) {
            return Err(AppError::Invalid(format!(
                "{}.client_credentials.key.{field} must name a keyring entry, not hold the value",
                config.name
            )));
        }
        for (name, value) in &secrets {
            self.inner.secrets.set(name, value)?;
        }
        self.inner.config.save_server(&config)?;
        self.apply_server(config).await
    }

    pub(super) async fn apply_server(&self, config: McpServerConfig) -> Result<(), AppError> {
        let registry = &self.inner.registry;
        let (name, enabled) = (config.name.clone(), config.enabled);
        registry.configure([config]);
        if enabled {
            registry.restart(&name).await?;
        } else {
            tokio::time::timeout(STOP_WAIT, registry.stop(&name)).await.ok().transpose()?;
        }
        Ok(())
    }

    /// Deletes a server (stopping it first).
    /// A server installed from a bundle loses its folder too.
    pub async fn delete_server(&self, name: &str) -> Result<(), AppError> {
        // An entry that no longer reads is still deleted; only a readable one can name a bundle.
        let config = self.inner.config.server(name).ok();
        self.inner.config.delete_server(name)?;
        // A server added later under this name starts without them.
        self.inner.store.set_setting(&log_level_key(name), &None::<LogLevel>)?;
        self.inner.store.set_setting(&watched_key(name), &BTreeSet::<String>::new())?;
        self.clear_blocked(name);
        self.forget_server(name).await?;
        if let Some(config) = config {
            self.remove_bundle_files(&config);
        }
        Ok(())
    }

    /// Stops a server and takes it out of the registry; one that never started is fine.
    async fn forget_server(&self, name: &str) -> Result<(), AppError> {
        match self.inner.registry.remove(name).await {
            Ok(()) | Err(crate::mcp::McpError::UnknownServer { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Enables (and starts) or disables (and stops) a server.
    pub async fn set_server_enabled(&self, name: &str, enabled: bool) -> Result<(), AppError> {
        let mut config = self.inner.config.server(name)?;
        config.enabled = enabled;
        self.inner.config.save_server(&config)?;
        self.apply_server(config).await
    }

    /// Restarts a server now.
    pub async fn restart_server(&self, name: &str) -> Result<(), AppError> {
        self.inner.config.server(name)?;
        Ok(self.inner.registry.restart(name).await?)
    }

    /// The last lines the server wrote to stderr, oldest first.
    pub fn server_logs(&self, name: &str) -> Result<Vec<String>, AppError> {
        self.inner.config.server(name)?;
        Ok(self.inner.registry.stderr_tail(name, 500).unwrap_or_default())
    }

    /// The launch doctor's findings for a server.
    pub async fn server_doctor(&self, name: &str) -> Result<DoctorReport, AppError> {
        self.inner.config.server(name)?;
        let report = self.inner.registry.doctor(name).await?;
        let status = self.server_status(name);
        Ok(doctor_view(name, report.as_ref(), status.as_ref()))
    }

    /// Signs in to a remote server with OAuth (the page opens through `ui`),
    /// keeps the tokens in the secret store and restarts the server with them.
    pub async fn authorize_server(
        &self,
        name: &str,
        ui: &dyn AuthorizationUi,
        cancel: CancellationToken,
    ) -> Result<(), AppError> {
        let config = self.inner.config.server(name)?;
        let url = match &config.transport {
            TransportConfig::StreamableHttp { url, .. }
            | TransportConfig::Sse { url, .. }
            | TransportConfig::Auto { url, .. } => url,
            TransportConfig::Stdio { .. } | TransportConfig::InProcess => {
                return Err(AppError::Invalid(format!("{name} runs on this computer; only remote servers sign in")));
            }
        };
        let secrets = self.inner.secrets.clone();
        oauth::authorize(name, url, secrets, ui, AuthorizeOptions::default(), &cancel).await?;
        if config.enabled {
            self.inner.registry.restart(name).await?;
        }
        Ok(())
    }

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
    /// MCP `ListResourcesResult` JSON: the catalogue Patchbay keeps, whole.
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

    /// Prompts of every ready server.
    pub fn list_prompts(&self) -> Result<Vec<PromptInfo>, AppError> {
        let mut out = Vec::new();
        for name in self.ready_servers()? {
            let place = self.icon_place_of(&name);
            for prompt in self.inner.registry.prompts(&name).unwrap_or_default() {
                out.push(PromptInfo {
                    server: name.clone(),
                    icons: self.icon_views(&place, prompt.icons.as_deref()),
                    name: prompt.name.clone(),
                    title: prompt.title.clone(),
                    description: prompt.description.clone(),
                    arguments: prompt
                        .arguments
                        .unwrap_or_default()
                        .into_iter()
                        .map(|a| PromptArgument {
                            name: a.name,
                            title: a.title,
                            description: a.description,
                            required: a.required.unwrap_or(false),
                        })
                        .collect(),
                });
            }
        }
        Ok(out)
    }

    /// A prompt's messages as text for the composer.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        cancel: CancellationToken,
    ) -> Result<String, AppError> {
        let result = self.inner.registry.get_prompt(server, name, Some(arguments), cancel).await?;
        Ok(prompt_text(&result))
    }

    /// Resources of every ready server.
    pub fn list_resources(&self) -> Result<Vec<ResourceInfo>, AppError> {
        let registry = &self.inner.registry;
        let mut out = Vec::new();
        for name in self.ready_servers()? {
            let watchable = registry.can_subscribe(&name);
            let watched = registry.subscriptions(&name).unwrap_or_default();
            let place = self.icon_place_of(&name);
            for r in registry.resources(&name).unwrap_or_default() {
                out.push(ResourceInfo {
                    server: name.clone(),
                    icons: self.icon_views(&place, r.icons.as_deref()),
                    uri: r.uri.clone(),
                    name: r.name.clone(),
                    title: r.title.clone(),
                    mime_type: r.mime_type.clone(),
                    watchable,
                    watched: watched.contains(&r.uri),
                });
            }
        }
        Ok(out)
    }

    /// Watches a resource (`resources/subscribe`, renewed when the server
    /// restarts and kept for Patchbay's next start) or stops watching it; its changes arrive as
    /// [`AppEvents::resource_updated`](super::AppEvents::resource_updated).
    pub async fn watch_resource(
        &self,
        server: &str,
        uri: &str,
        watch: bool,
        cancel: CancellationToken,
    ) -> Result<(), AppError> {
        let registry = &self.inner.registry;
        if watch && !registry.can_subscribe(server) {
            return Err(AppError::Invalid(format!("MCP server {server:?} does not report changes to its resources")));
        }
        match watch {
            true => registry.subscribe_resource(server, uri, cancel).await?,
            false => registry.unsubscribe_resource(server, uri, cancel).await?,
        }
        // Kept for the next start of Patchbay.
        let watched: BTreeSet<String> = registry.subscriptions(server)?.into_iter().collect();
        Ok(self.inner.store.set_setting(&watched_key(server), &watched)?)
    }

    /// Resource templates of every ready server, each with its variables; a
    /// template whose URI template cannot be read is left out (and logged).
    pub fn list_resource_templates(&self) -> Result<Vec<ResourceTemplateInfo>, AppError> {
        let mut out = Vec::new();
        for name in self.ready_servers()? {
            let place = self.icon_place_of(&name);
            for t in self.inner.registry.resource_templates(&name).unwrap_or_default() {
                match uri_template::variables(&t.uri_template) {
                    Ok(variables) => out.push(ResourceTemplateInfo {
                        server: name.clone(),
                        icons: self.icon_views(&place, t.icons.as_deref()),
                        uri_template: t.uri_template.clone(),
                        name: t.title.clone().unwrap_or_else(|| t.name.clone()),
                        description: t.description.clone(),
                        mime_type: t.mime_type.clone(),
                        variables,
                    }),
                    Err(e) => tracing::warn!(server = %name, error = %e, "a resource template was left out"),
                }
            }
        }
        Ok(out)
    }

    /// The URI a server's resource template makes with `values`.
    pub fn expand_resource_template(
        &self,
        uri_template: &str,
        values: &BTreeMap<String, String>,
    ) -> Result<String, AppError> {
        Ok(uri_template::expand(uri_template, values)?)
    }

    /// What a server suggests for one argument of a prompt or a resource
    /// template, given the text typed so far and the other arguments' values.
    pub async fn complete(
        &self,
        server: &str,
        target: CompletionTarget,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
        cancel: CancellationToken,
    ) -> Result<CompletionView, AppError> {
        let reference = match target {
            CompletionTarget::Prompt { name } => Reference::for_prompt(name),
            CompletionTarget::ResourceTemplate { uri_template } => Reference::for_resource(uri_template),
        };
        let context = context.into_iter().filter(|(k, v)| k != argument && !v.is_empty()).collect();
        let info = self
            .inner
            .registry
            .complete(server, reference, ArgumentInfo::new(argument, value), context, cancel)
            .await?;
        Ok(CompletionView { values: info.values, total: info.total, has_more: info.has_more.unwrap_or(false) })
    }

    /// A resource as the server's page shows it: each part's text, or its
    /// picture or sound, within the UI's limit (10 MB).
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<Vec<ResourcePreview>, AppError> {
        let result = self.inner.registry.read_resource(server, uri, cancel).await?;
        Ok(resource_preview(&result, &ResultLimits::default()))
    }

    /// The text of a resource: read from `server` when given (a template's
    /// URI is in no list), else from the first ready server that lists it.
    pub(crate) async fn read_resource_text(&self, uri: &str, server: Option<String>) -> Result<String, AppError> {
        let server = match server {
            Some(server) => server,
            None => self
                .list_resources()?
                .into_iter()
                .find(|r| r.uri == uri)
                .map(|r| r.server)
                .ok_or_else(|| AppError::NotFound(format!("no ready MCP server offers the resource {uri}")))?,
        };
        let result = self.inner.registry.read_resource(&server, uri, CancellationToken::new()).await?;
        resource_text(&result).ok_or_else(|| AppError::Invalid(format!("resource {uri} has no text to attach")))
    }

    fn ready_servers(&self) -> Result<Vec<String>, AppError> {
        Ok(self
            .inner
            .config
            .servers()?
            .into_iter()
            .filter(|s| self.server_status(&s.name).is_some_and(|st| st.state == "ready"))
            .map(|s| s.name)
            .collect())
    }

    /// Provider profiles, each with whether its API key is set.
    pub fn list_providers(&self) -> Result<Vec<ProviderView>, AppError> {
        self.inner
            .config
            .providers()?
            .into_iter()
            .map(|profile| {
                let api_key_set = match &profile.api_key {
                    Some(name) => self.inner.secrets.get(name)?.is_some(),
                    None => false,
                };
                Ok(ProviderView { profile, api_key_set })
            })
            .collect()
    }

    /// Saves a provider; a given key goes to the secret store, `None` keeps the stored one.
    pub fn save_provider(&self, mut profile: ProviderProfile, api_key: Option<&str>) -> Result<(), AppError> {
        validate_provider(&profile)?;
        if let Some(key) = api_key.filter(|k| !k.is_empty()) {
            let name = profile.api_key.clone().unwrap_or_else(|| api_key_name(&profile.name));
            self.inner.secrets.set(&name, key)?;
            profile.api_key = Some(name);
        } else if profile.api_key.is_none() {
            // Keep a key stored earlier under the conventional name.
            let name = api_key_name(&profile.name);
            if self.inner.secrets.get(&name)?.is_some() {
                profile.api_key = Some(name);
            }
        }
        Ok(self.inner.config.save_provider(&profile)?)
    }

    /// Deletes a provider and its stored key.
    pub fn delete_provider(&self, name: &str) -> Result<(), AppError> {
        Ok(self.inner.config.remove_provider(name, self.inner.secrets.as_ref())?)
    }

    /// The providers the settings page offers to set up in one pick.
    pub fn provider_presets(&self) -> &'static [ProviderPreset] {
        presets::presets()
    }

    /// Lists the provider's models with one real request; fails with its error.
    pub async fn test_provider(&self, name: &str, cancel: CancellationToken) -> Result<Vec<String>, AppError> {
        let profile = self.inner.config.provider(name)?;
        Ok(probe(&profile, self.inner.secrets.as_ref(), PROBE_TIMEOUT, &cancel).await?.models)
    }

    /// What importing `text` would do.
    pub fn import_preview(&self, text: &str) -> Result<ImportPreviewView, AppError> {
        let preview = self.inner.config.preview_import(self.inner.secrets.as_ref(), text, &ImportOptions::default())?;
        let current = self.inner.config.servers()?;
        let warnings = preview.all_issues().iter().map(ToString::to_string).collect();
        let mut inputs: Vec<ImportInput> = Vec::new();
        for entry in &preview.entries {
            for note in &entry.secrets {
                if let SecretState::Prompt { input, description, set } = &note.state {
                    match inputs.iter_mut().find(|i| &i.id == input) {
                        Some(known) => known.servers.push(entry.name.clone()),
                        None => inputs.push(ImportInput {
                            id: input.clone(),
                            description: description.clone(),
                            servers: vec![entry.name.clone()],
                            set: *set,
                        }),
                    }
                }
            }
        }
        let entries = preview
            .entries
            .into_iter()
            .filter_map(|e| {
                let incoming = e.server?;
                let (status, detail, existing) = match &e.status {
                    EntryStatus::New => ("new", None, None),
                    EntryStatus::Unchanged => ("unchanged", None, Some(e.name.as_str())),
                    EntryStatus::Changed { .. } => ("changed", None, Some(e.name.as_str())),
                    EntryStatus::Conflict { existing } => (
                        "conflict",
                        Some(format!("a server named {existing:?} exists; importing replaces it")),
                        Some(existing.as_str()),
                    ),
                    _ => return None,
                };
                let before = existing.and_then(|n| current.iter().find(|c| c.name == n));
                let diff = match (status, before) {
                    ("changed" | "conflict", Some(before)) => line_diff(&pretty(before), &pretty(&incoming)),
                    _ => Vec::new(),
                };
                Some(ImportEntry { name: e.name, status, incoming, diff, detail, secrets: e.secrets })
            })
            .collect();
        let format = match preview.format {
            Some(SourceFormat::McpServers) => "claude_desktop",
            Some(SourceFormat::VsCode) => "vscode",
            Some(SourceFormat::Zed) => "zed",
            Some(SourceFormat::OpenCode) => "opencode",
            Some(SourceFormat::Codex) => "codex",
            Some(SourceFormat::Patchbay) => "patchbay",
            Some(SourceFormat::BareMap) => "server_map",
            Some(SourceFormat::SingleServer) => "single_server",
            None => "unknown",
        };
        Ok(ImportPreviewView {
            format: format.into(),
            entries,
            warnings,
            inputs,
            removed_on_replace: preview.removed_on_replace,
            providers: preview.providers,
        })
    }

    /// Imports the accepted servers in one transaction and starts the enabled ones. With
    /// `replace`, the stored servers the text does not name are deleted (and stopped).
    /// `answers` holds the values typed for VS Code `${input:…}` prompts, by input id; the
    /// values go to the secret store, inputs left unanswered stay "not set". `secret_fields`
    /// marks more env/header fields as secrets, by server name (as previewed) and field name.
    pub async fn import_apply(
        &self,
        text: &str,
        accept: &[String],
        replace: bool,
        answers: BTreeMap<String, String>,
        secret_fields: BTreeMap<String, BTreeSet<String>>,
    ) -> Result<ImportReport, AppError> {
        let options = ImportOptions { secret_fields };
        let preview = self.inner.config.preview_import(self.inner.secrets.as_ref(), text, &options)?;
        let skipped: Vec<String> =
            preview.entries.iter().filter(|e| !accept.contains(&e.name)).map(|e| e.name.clone()).collect();
        let choice = ImportChoice {
            mode: if replace { ImportMode::ReplaceAll } else { ImportMode::Merge },
            skip: skipped.iter().cloned().collect(),
            answers: answers
                .into_iter()
                .filter(|(_, value)| !value.is_empty())
                .map(|(id, value)| (id, SecretValue::new(value)))
                .collect(),
        };
        let outcome = self.inner.config.apply_import(self.inner.secrets.as_ref(), text, &options, &choice)?;
        for name in &outcome.removed {
            self.forget_server(name).await?;
        }
        for name in outcome.added.iter().chain(&outcome.updated) {
            self.apply_server(self.inner.config.server(name)?).await?;
        }
        Ok(ImportReport {
            added: outcome.added,
            updated: outcome.updated,
            skipped,
            removed: outcome.removed,
            secrets_not_set: outcome.secrets_not_set,
        })
    }

    /// The servers (and in Patchbay's form, providers) as JSON text, secrets as placeholders
    /// unless `include_secrets` (the user asked for the values, after a warning).
    pub fn export_config(&self, format: ExportFormat, include_secrets: bool) -> Result<String, AppError> {
        let options = ExportOptions { format, include_secrets };
        Ok(self.inner.config.export(options, self.inner.secrets.as_ref())?)
    }

    /// One server's entry in `format`, secrets as placeholders: to copy and share.
    pub fn export_server(&self, name: &str, format: ExportFormat) -> Result<String, AppError> {
        let options = ExportOptions { format, include_secrets: false };
        Ok(self.inner.config.export_servers(&[name.to_owned()], options, self.inner.secrets.as_ref())?)
    }
}

/// `config` with the secrets saved along with it filed under its own name
/// (`mcp/<server>/KEY`): a registry entry names them after its suggested name,
/// which the user may change before saving, and an import takes only a
/// server's own secrets, so its export would not import again.
fn under_own_name(mut config: McpServerConfig, secrets: &SecretValues) -> (McpServerConfig, SecretValues) {
    let own = secret_name(&config.name, "");
    let server = config.name.clone();
    let mut filed = secrets.clone();
    for (_, value) in config.secret_fields_mut() {
        if let ValueSource::Secret(name) = value
            && !name.starts_with(&own)
            && let Some(text) = filed.remove(name.as_str())
        {
            let moved = secret_name(&server, name.rsplit('/').next().unwrap_or(name));
            filed.insert(moved.clone(), text);
            *name = moved;
        }
    }
    (config, filed)
}

fn pretty(config: &McpServerConfig) -> String {
    serde_json::to_string_pretty(config).unwrap_or_default()
}

/// The doctor's checks, each reason said once: the status names the failure only
/// when no check of the launch below explains it, and a command that was not
/// found is not reported again as the start's error.
fn doctor_view(name: &str, report: Option<&LaunchReport>, status: Option<&ServerStatusView>) -> DoctorReport {
    let mut checks = Vec::new();
    if let Some(status) = status {
        let explained_below = report.is_some_and(|r| r.error.is_some());
        checks.push(DoctorCheck {
            name: "status".into(),
            ok: status.state == "ready",
            detail: match &status.error {
                Some(e) if !explained_below => format!("{}: {e}", status.state),
                _ => status.state.to_owned(),
            },
            hint: (status.state == "failed").then(|| "fix the cause below, then restart the server".to_owned()),
        });
    }
    let Some(r) = report else {
        return DoctorReport { server: name.to_owned(), checks, policy: None };
    };
    checks.push(match &r.resolved {
        Some(path) => DoctorCheck {
            name: "command".into(),
            ok: true,
            detail: format!("{} → {}", r.command, path.display()),
            hint: None,
        },
        None => DoctorCheck {
            name: "command".into(),
            ok: false,
            detail: format!(
                "{} not found on PATH; looked in {}",
                r.command,
                r.searched.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(":")
            ),
            hint: Some("install it, or give its absolute path as the command".into()),
        },
    });
    if !r.env_added.is_empty() {
        checks.push(DoctorCheck {
            name: "environment".into(),
            ok: true,
            detail: format!("added to the login environment: {}", r.env_added.join(", ")),
            hint: None,
        });
    }
    let exit = match (r.exit_code, r.signal) {
        (Some(code), _) => Some(format!("exited with code {code}")),
        (None, Some(signal)) => Some(format!("killed by signal {signal}")),
        (None, None) => None,
    };
    if let Some(detail) = exit {
        checks.push(DoctorCheck { name: "exit".into(), ok: false, detail, hint: None });
    }
    if let Some(error) = r.error.as_ref().filter(|_| r.resolved.is_some()) {
        checks.push(DoctorCheck { name: "start".into(), ok: false, detail: error.clone(), hint: None });
    }
    if !r.stderr_tail.is_empty() {
        checks.push(DoctorCheck {
            name: "stderr".into(),
            ok: r.error.is_none(),
            detail: r.stderr_tail.join("\n"),
            hint: Some("the server's own words: read the last lines first".into()),
        });
    }
    DoctorReport { server: name.to_owned(), checks, policy: r.policy.clone() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The window shows the doctor's hints from its catalogues (translated);
    /// the English catalogue must say what the core says.
    #[test]
    fn the_windows_english_doctor_hints_are_the_cores() {
        let catalogue: serde_json::Value =
            serde_json::from_str(include_str!("../../../../ui/src/locales/en.json")).expect("en.json");
        let report = LaunchReport {
            server: "s".into(),
            command: "nowhere".into(),
            stderr_tail: vec!["boom".into()],
            error: Some("exited".into()),
            ..LaunchReport::default()
        };
        let status =
            ServerStatusView { server: "s".into(), state: "failed", tool_count: 0, error: Some("exited".into()) };
        let checks = doctor_view("s", Some(&report), Some(&status)).checks;
        let hinted: Vec<_> = checks.iter().filter(|c| c.hint.is_some()).collect();
        assert_eq!(hinted.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["status", "command", "stderr"]);
        for check in hinted {
            let key = format!("doctor.hint.{}", check.name);
            assert_eq!(catalogue[&key].as_str(), check.hint.as_deref(), "{key}");
        }
    }
}
