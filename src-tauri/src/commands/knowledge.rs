//! The knowledge-base page, and the folders shared with MCP servers as roots.

use patchbay_core::app::views::{
    KbDocument, KbEmbeddings, KbEmbeddingsChoice, KbFolder, KbHit, KbModels, KbShare, KbShareClient, KbShareSettings,
    KbSourceCandidate, KbSourcePreview, RootsView,
};
use patchbay_core::rag::sources::KnowledgeSource;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;

use super::blocking;
use crate::cancellable::Request;
use crate::error::IpcError;
use crate::state::AppState;

#[tauri::command(rename_all = "snake_case")]
pub fn kb_status(state: State<'_, AppState>) -> Result<Vec<KbFolder>, IpcError> {
    Ok(state.app()?.kb_status()?)
}

/// The folder dialog; `None` when cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn kb_pick_folder(handle: AppHandle) -> Result<Option<String>, IpcError> {
    pick_folder(handle).await
}

/// Shows a folder dialog.
pub(crate) async fn pick_folder(handle: AppHandle) -> Result<Option<String>, IpcError> {
    blocking(move || {
        let Some(path) = handle.dialog().file().blocking_pick_folder() else { return Ok(None) };
        let path = path.into_path().map_err(|e| IpcError::new(crate::IpcErrorKind::InvalidInput, e))?;
        Ok(Some(path.display().to_string()))
    })
    .await
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_add_folder(state: State<'_, AppState>, path: String) -> Result<(), IpcError> {
    Ok(state.app()?.kb_add_folder(&path)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_remove_folder(state: State<'_, AppState>, path: String) -> Result<(), IpcError> {
    Ok(state.app()?.kb_remove_folder(&path)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_reindex(state: State<'_, AppState>, path: Option<String>) -> Result<(), IpcError> {
    Ok(state.app()?.kb_reindex(path.as_deref())?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_documents(state: State<'_, AppState>, folder: String) -> Result<Vec<KbDocument>, IpcError> {
    Ok(state.app()?.kb_documents(&folder)?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn kb_search(state: State<'_, AppState>, query: String, limit: usize) -> Result<Vec<KbHit>, IpcError> {
    Ok(state.app()?.kb_search(&query, limit).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_embeddings(state: State<'_, AppState>) -> Result<KbEmbeddings, IpcError> {
    Ok(state.app()?.kb_embeddings()?)
}

/// Loading a local model takes a moment: off the IPC thread.
#[tauri::command(rename_all = "snake_case")]
pub async fn kb_set_embeddings(
    state: State<'_, AppState>,
    choice: KbEmbeddingsChoice,
) -> Result<KbEmbeddings, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.kb_set_embeddings(choice)?)).await
}

/// The local models offered for embeddings, and the hub they come from (it reads the
/// knowledge base's text to suggest one: off the IPC thread).
#[tauri::command(rename_all = "snake_case")]
pub async fn kb_models(state: State<'_, AppState>) -> Result<KbModels, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.kb_models()?)).await
}

/// Starts a model's download; progress comes as `kb_model_progress` events.
#[tauri::command(rename_all = "snake_case")]
pub fn kb_get_model(state: State<'_, AppState>, name: String) -> Result<(), IpcError> {
    Ok(state.app()?.kb_get_model(&name)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_cancel_model(state: State<'_, AppState>, name: String) -> Result<(), IpcError> {
    Ok(state.app()?.kb_cancel_model(&name)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_set_model_hub(state: State<'_, AppState>, url: Option<String>) -> Result<KbModels, IpcError> {
    Ok(state.app()?.kb_set_model_hub(url.as_deref())?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_share(state: State<'_, AppState>) -> Result<KbShare, IpcError> {
    Ok(state.app()?.kb_share()?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn kb_set_share(state: State<'_, AppState>, settings: KbShareSettings) -> Result<KbShare, IpcError> {
    Ok(state.app()?.kb_set_share(settings).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn kb_share_new_token(state: State<'_, AppState>) -> Result<KbShare, IpcError> {
    Ok(state.app()?.kb_share_new_token().await?)
}

/// The `mcpServers` entry for `client`, with the token: the window copies it.
#[tauri::command(rename_all = "snake_case")]
pub fn kb_share_config(state: State<'_, AppState>, client: KbShareClient) -> Result<String, IpcError> {
    Ok(state.app()?.kb_share_config(client)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_sources(state: State<'_, AppState>) -> Result<Vec<KnowledgeSource>, IpcError> {
    Ok(state.app()?.kb_sources()?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_source_candidates(state: State<'_, AppState>) -> Result<Vec<KbSourceCandidate>, IpcError> {
    Ok(state.app()?.kb_source_candidates())
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_put_source(state: State<'_, AppState>, source: KnowledgeSource) -> Result<Vec<KnowledgeSource>, IpcError> {
    Ok(state.app()?.kb_put_source(source)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn kb_remove_source(state: State<'_, AppState>, name: String) -> Result<Vec<KnowledgeSource>, IpcError> {
    Ok(state.app()?.kb_remove_source(&name)?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn kb_preview_source(
    state: State<'_, AppState>,
    server: String,
    tool: String,
    query_arg: String,
    query: String,
    request: Request,
) -> Result<KbSourcePreview, IpcError> {
    Ok(state.app()?.kb_preview_source(&server, &tool, &query_arg, &query, request.token()).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn kb_try_source(
    state: State<'_, AppState>,
    source: KnowledgeSource,
    query: String,
    request: Request,
) -> Result<Vec<KbHit>, IpcError> {
    Ok(state.app()?.kb_try_source(source, &query, request.token()).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn list_roots(state: State<'_, AppState>) -> Result<RootsView, IpcError> {
    Ok(state.app()?.list_roots()?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn add_shared_folder(state: State<'_, AppState>, path: String) -> Result<RootsView, IpcError> {
    Ok(state.app()?.add_shared_folder(&path).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn remove_shared_folder(state: State<'_, AppState>, path: String) -> Result<RootsView, IpcError> {
    Ok(state.app()?.remove_shared_folder(&path).await?)
}
