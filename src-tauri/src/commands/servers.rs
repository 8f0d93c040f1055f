//! MCP servers, their tools, prompts and resources, and the trace inspector.

use std::collections::BTreeMap;
use std::path::PathBuf;

use patchbay_core::app::views::{
    CompletionTarget, CompletionView, DoctorReport, PolicyPreview, PromptInfo, RegistryFill, ResourceInfo,
    ResourceTemplateInfo, ServerView, ToolInfo, ToolResultView, TraceRecord,
};
use patchbay_core::app::{AppError, ServerRequestResponse, ServerRequestView};
use patchbay_core::bundle::{BundleInfo, BundleValues};
use patchbay_core::config::{ApprovalMode, ExportFormat, McpServerConfig, ServerPreset};
use patchbay_core::discover::{BundleSource, RegistryEntry, RegistryPage};
use patchbay_core::downloads::{self, SavedFile};
use patchbay_core::mcp::HealthCheck;
use patchbay_core::mcp::oauth::AuthorizationUi;
use patchbay_core::mcp::protocol::content::ResourcePreview;
use patchbay_core::mcp::{CallEvent, LogLevel};
use tauri::ipc::Channel;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_opener::OpenerExt;

use super::blocking;
use super::knowledge::pick_folder;
use crate::cancellable::Request;
use crate::error::{IpcError, IpcErrorKind};
use crate::mcp_apps::{AppViewInfo, ViewPages};
use crate::opened::Opened;
use crate::state::AppState;

/// Opens the authorization page in the user's browser.
struct Browser(AppHandle);

#[async_trait::async_trait]
impl AuthorizationUi for Browser {
    async fn open(&self, _server: &str, url: &str) -> Result<(), String> {
        self.0.opener().open_url(url, None::<&str>).map_err(|e| e.to_string())
    }
}

/// Signs in to a remote server with OAuth in the browser; answers once the
/// tokens are stored and the server restarted.
#[tauri::command(rename_all = "snake_case")]
pub async fn authorize_server(
    handle: AppHandle,
    state: State<'_, AppState>,
    name: String,
    request: Request,
) -> Result<(), IpcError> {
    Ok(state.app()?.authorize_server(&name, &Browser(handle), request.token()).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn list_servers(state: State<'_, AppState>) -> Result<Vec<ServerView>, IpcError> {
    Ok(state.app()?.list_servers()?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn server_presets(state: State<'_, AppState>) -> Result<Vec<ServerPreset>, IpcError> {
    Ok(state.app()?.server_presets())
}

/// One page of the MCP Registry's servers whose name contains `query`.
#[tauri::command(rename_all = "snake_case")]
pub async fn registry_search(
    state: State<'_, AppState>,
    query: String,
    cursor: Option<String>,
    request: Request,
) -> Result<RegistryPage, IpcError> {
    Ok(state.app()?.registry_search(&query, cursor.as_deref(), &request.token()).await?)
}

/// A registry entry with its placeholders filled in, for the server editor.
#[tauri::command(rename_all = "snake_case")]
pub fn registry_fill(
    state: State<'_, AppState>,
    entry: RegistryEntry,
    values: BTreeMap<String, String>,
) -> Result<RegistryFill, IpcError> {
    Ok(state.app()?.registry_fill(&entry, &values)?)
}

/// Downloads the bundle of an MCP Registry entry; its path, for `bundle_preview`.
#[tauri::command(rename_all = "snake_case")]
pub async fn registry_bundle(
    state: State<'_, AppState>,
    source: BundleSource,
    request: Request,
) -> Result<String, IpcError> {
    let path = state.app()?.registry_bundle(&source, &request.token()).await?;
    Ok(path.display().to_string())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn save_server(
    state: State<'_, AppState>,
    config: McpServerConfig,
    secrets: BTreeMap<String, String>,
) -> Result<(), IpcError> {
    Ok(state.app()?.save_server(config, &secrets).await?)
}

/// The policy line of a server as edited, and what saving it would refuse.
#[tauri::command(rename_all = "snake_case")]
pub fn policy_preview(state: State<'_, AppState>, config: McpServerConfig) -> Result<PolicyPreview, IpcError> {
    Ok(state.app()?.policy_preview(&config))
}

/// Lets a server reach a host its filtering proxy refused; the server restarts.
#[tauri::command(rename_all = "snake_case")]
pub async fn allow_domain(state: State<'_, AppState>, server: String, host: String) -> Result<(), IpcError> {
    Ok(state.app()?.allow_domain(&server, &host).await?)
}

/// The file dialog for an MCP bundle; its path, or `None` when cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn pick_bundle(handle: AppHandle) -> Result<Option<String>, IpcError> {
    pick_file(handle, Some(("MCP bundle", &["mcpb", "dxt"]))).await
}

/// The file dialog for a bundle setting that names a file.
#[tauri::command(rename_all = "snake_case")]
pub async fn pick_setting_file(handle: AppHandle) -> Result<Option<String>, IpcError> {
    pick_file(handle, None).await
}

async fn pick_file(
    handle: AppHandle,
    filter: Option<(&'static str, &'static [&'static str])>,
) -> Result<Option<String>, IpcError> {
    blocking(move || {
        let mut dialog = handle.dialog().file();
        if let Some((name, extensions)) = filter {
            dialog = dialog.add_filter(name, extensions);
        }
        let Some(path) = dialog.blocking_pick_file() else { return Ok(None) };
        let path = path.into_path().map_err(|e| IpcError::new(IpcErrorKind::InvalidInput, e))?;
        Ok(Some(path.display().to_string()))
    })
    .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn bundle_preview(state: State<'_, AppState>, path: String, locale: String) -> Result<BundleInfo, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.bundle_preview(&PathBuf::from(path), &locale)?)).await
}

/// Installs the bundle previewed as `preview_id`, shown as signed by
/// `signer` (a certificate's fingerprint), with the user's settings; the
/// server's name.
#[tauri::command(rename_all = "snake_case")]
pub async fn install_bundle(
    state: State<'_, AppState>,
    preview_id: String,
    signer: Option<String>,
    values: BundleValues,
) -> Result<String, IpcError> {
    Ok(state.app()?.install_bundle(&preview_id, signer.as_deref(), &values).await?)
}

/// The settings form of the bundle server `name` was installed from, with its values now.
#[tauri::command(rename_all = "snake_case")]
pub async fn bundle_settings(state: State<'_, AppState>, name: String, locale: String) -> Result<BundleInfo, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.bundle_settings(&name, &locale)?)).await
}

/// Changes an installed bundle's settings; its server restarts with them.
#[tauri::command(rename_all = "snake_case")]
pub async fn configure_bundle(state: State<'_, AppState>, name: String, values: BundleValues) -> Result<(), IpcError> {
    Ok(state.app()?.configure_bundle(&name, &values).await?)
}

/// The bundle or install link Patchbay was opened with, once (then `None`).
#[tauri::command(rename_all = "snake_case")]
pub fn take_opened(state: State<'_, AppState>) -> Option<Opened> {
    state.opened.take()
}

#[tauri::command(rename_all = "snake_case")]
pub async fn delete_server(state: State<'_, AppState>, name: String) -> Result<(), IpcError> {
    Ok(state.app()?.delete_server(&name).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn set_server_enabled(state: State<'_, AppState>, name: String, enabled: bool) -> Result<(), IpcError> {
    Ok(state.app()?.set_server_enabled(&name, enabled).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn restart_server(state: State<'_, AppState>, name: String) -> Result<(), IpcError> {
    Ok(state.app()?.restart_server(&name).await?)
}

/// One server's entry in the Claude Desktop shape (`mcpServers`), secrets as placeholders, to copy.
#[tauri::command(rename_all = "snake_case")]
pub fn export_server(state: State<'_, AppState>, name: String) -> Result<String, IpcError> {
    Ok(state.app()?.export_server(&name, ExportFormat::Claude)?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn set_server_log_level(state: State<'_, AppState>, name: String, level: LogLevel) -> Result<(), IpcError> {
    Ok(state.app()?.set_server_log_level(&name, level).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn server_logs(state: State<'_, AppState>, name: String) -> Result<Vec<String>, IpcError> {
    Ok(state.app()?.server_logs(&name)?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn check_server_health(state: State<'_, AppState>, name: String) -> Result<HealthCheck, IpcError> {
    Ok(state.app()?.check_server_health(&name).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn server_doctor(state: State<'_, AppState>, name: String) -> Result<DoctorReport, IpcError> {
    Ok(state.app()?.server_doctor(&name).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn list_tools(state: State<'_, AppState>, server: Option<String>) -> Result<Vec<ToolInfo>, IpcError> {
    Ok(state.app()?.list_tools(server.as_deref())?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn set_tool_enabled(
    state: State<'_, AppState>,
    server: String,
    tool: String,
    enabled: bool,
) -> Result<(), IpcError> {
    Ok(state.app()?.set_tool_enabled(&server, &tool, enabled)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn set_tool_pinned(state: State<'_, AppState>, server: String, tool: String, pinned: bool) -> Result<(), IpcError> {
    Ok(state.app()?.set_tool_pinned(&server, &tool, pinned)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn set_tool_approval(
    state: State<'_, AppState>,
    server: String,
    tool: String,
    approval: ApprovalMode,
) -> Result<(), IpcError> {
    Ok(state.app()?.set_tool_approval(&server, &tool, approval)?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn call_tool(
    state: State<'_, AppState>,
    server: String,
    tool: String,
    arguments: serde_json::Value,
    on_event: Channel<CallEvent>,
    request: Request,
) -> Result<ToolResultView, IpcError> {
    // Forwarded until the call's route closes, shortly after its answer.
    let (events, mut received) = tokio::sync::mpsc::channel(64);
    tauri::async_runtime::spawn(async move {
        while let Some(event) = received.recv().await {
            let _ = on_event.send(event);
        }
    });
    Ok(state.app()?.call_tool(&server, &tool, arguments, Some(events), request.token()).await?)
}

/// Reads a tool's view (MCP Apps) and keeps its page for the view's frame.
#[tauri::command(rename_all = "snake_case")]
pub async fn open_app_view(
    state: State<'_, AppState>,
    pages: State<'_, ViewPages>,
    server: String,
    uri: String,
    request: Request,
) -> Result<AppViewInfo, IpcError> {
    let page = state.app()?.app_page(&server, &uri, request.token()).await?;
    Ok(pages.keep(&server, page))
}

/// A view's `tools/call` to its own server; `approved` once the window asked.
#[tauri::command(rename_all = "snake_case")]
pub async fn call_tool_for_view(
    state: State<'_, AppState>,
    server: String,
    tool: String,
    arguments: serde_json::Map<String, serde_json::Value>,
    approved: bool,
    request: Request,
) -> Result<serde_json::Value, IpcError> {
    Ok(state.app()?.call_tool_for_view(&server, &tool, arguments, approved, request.token()).await?)
}

/// A view's `resources/read` of its own server.
#[tauri::command(rename_all = "snake_case")]
pub async fn read_resource_for_view(
    state: State<'_, AppState>,
    server: String,
    uri: String,
    request: Request,
) -> Result<serde_json::Value, IpcError> {
    Ok(state.app()?.read_resource_for_view(&server, &uri, request.token()).await?)
}

/// A view's `resources/list` of its own server.
#[tauri::command(rename_all = "snake_case")]
pub fn list_resources_for_view(state: State<'_, AppState>, server: String) -> Result<serde_json::Value, IpcError> {
    Ok(state.app()?.list_resources_for_view(&server)?)
}

/// A view's `sampling/createMessage`: reviewed by the user as a server's
/// sampling request, then run; MCP `CreateMessageResult` JSON.
#[tauri::command(rename_all = "snake_case")]
pub async fn sample_for_view(
    state: State<'_, AppState>,
    server: String,
    params: serde_json::Value,
    request: Request,
) -> Result<serde_json::Value, IpcError> {
    Ok(state.app()?.sample_for_view(&server, params, request.token()).await?)
}

/// The names a view's download is saved under, for the user to see before saving.
#[tauri::command(rename_all = "snake_case")]
pub fn download_names(contents: Vec<serde_json::Value>) -> Result<Vec<String>, IpcError> {
    Ok(downloads::offered_names(&contents).map_err(AppError::from)?)
}

/// Saves MCP content as files (a view's download, a picture, a resource):
/// into the downloads folder, or one the user picks (`choose`; `None` when the
/// dialog was cancelled). Links are read from `server`.
#[tauri::command(rename_all = "snake_case")]
pub async fn save_files(
    handle: AppHandle,
    state: State<'_, AppState>,
    server: Option<String>,
    contents: Vec<serde_json::Value>,
    choose: bool,
    request: Request,
) -> Result<Option<Vec<SavedFile>>, IpcError> {
    let dir = match choose {
        true => match pick_folder(handle).await? {
            Some(dir) => PathBuf::from(dir),
            None => return Ok(None),
        },
        false => downloads::default_folder().map_err(AppError::from)?,
    };
    Ok(Some(state.app()?.save_files(server.as_deref(), &contents, &dir, request.token()).await?))
}

/// Shows a saved file in the file manager (its folder, where none answers).
#[tauri::command(rename_all = "snake_case")]
pub async fn show_in_folder(handle: AppHandle, path: PathBuf) -> Result<(), IpcError> {
    blocking(move || {
        if tauri_plugin_opener::reveal_item_in_dir(&path).is_ok() {
            return Ok(());
        }
        let folder = path.parent().unwrap_or(&path);
        handle
            .opener()
            .open_path(folder.display().to_string(), None::<&str>)
            .map_err(|e| IpcError::new(IpcErrorKind::Internal, format!("cannot open {}: {e}", folder.display())))
    })
    .await
}

/// Without a core (it failed to open, and the window says why) no server
/// runs, so none waits: an empty list, not a second report of that failure.
#[tauri::command(rename_all = "snake_case")]
pub fn waiting_server_requests(state: State<'_, AppState>) -> Vec<ServerRequestView> {
    state.app().map(|app| app.waiting_server_requests()).unwrap_or_default()
}

#[tauri::command(rename_all = "snake_case")]
pub fn respond_server_request(
    state: State<'_, AppState>,
    id: String,
    response: ServerRequestResponse,
) -> Result<(), IpcError> {
    Ok(state.app()?.respond_server_request(&id, response)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn get_trace(state: State<'_, AppState>, call_id: String) -> Result<TraceRecord, IpcError> {
    Ok(state.app()?.get_trace(&call_id)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn list_prompts(state: State<'_, AppState>) -> Result<Vec<PromptInfo>, IpcError> {
    Ok(state.app()?.list_prompts()?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn get_prompt(
    state: State<'_, AppState>,
    server: String,
    name: String,
    arguments: serde_json::Map<String, serde_json::Value>,
    request: Request,
) -> Result<String, IpcError> {
    Ok(state.app()?.get_prompt(&server, &name, arguments, request.token()).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn list_resources(state: State<'_, AppState>) -> Result<Vec<ResourceInfo>, IpcError> {
    Ok(state.app()?.list_resources()?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn read_resource(
    state: State<'_, AppState>,
    server: String,
    uri: String,
    request: Request,
) -> Result<Vec<ResourcePreview>, IpcError> {
    Ok(state.app()?.read_resource(&server, &uri, request.token()).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn watch_resource(
    state: State<'_, AppState>,
    server: String,
    uri: String,
    watch: bool,
    request: Request,
) -> Result<(), IpcError> {
    Ok(state.app()?.watch_resource(&server, &uri, watch, request.token()).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn list_resource_templates(state: State<'_, AppState>) -> Result<Vec<ResourceTemplateInfo>, IpcError> {
    Ok(state.app()?.list_resource_templates()?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn expand_resource_template(
    state: State<'_, AppState>,
    uri_template: String,
    values: BTreeMap<String, String>,
) -> Result<String, IpcError> {
    Ok(state.app()?.expand_resource_template(&uri_template, &values)?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn complete_argument(
    state: State<'_, AppState>,
    server: String,
    target: CompletionTarget,
    argument: String,
    value: String,
    context: BTreeMap<String, String>,
    request: Request,
) -> Result<CompletionView, IpcError> {
    Ok(state.app()?.complete(&server, target, &argument, &value, context, request.token()).await?)
}
