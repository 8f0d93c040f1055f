//! Conversations and turns. A turn's events stream through the `on_event`
//! channel; the command answers when the turn has ended.

use patchbay_core::app::views::{
    ConversationDetail, ConversationSettings, ConversationSummary, KeptPage, MessagePage, MessageView, TurnEvent,
};
use patchbay_core::app::{ApprovalAnswer, AttachmentInput, TurnInput};
use patchbay_core::conversations::ExportFormat;
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;

use super::blocking;
use crate::error::IpcError;
use crate::state::AppState;

/// What `send_message`, `regenerate` and `edit_message` answer.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct TurnOutcome {
    assistant_message_id: String,
}

#[tauri::command(rename_all = "snake_case")]
pub fn list_conversations(
    state: State<'_, AppState>,
    query: Option<String>,
) -> Result<Vec<ConversationSummary>, IpcError> {
    Ok(state.app()?.list_conversations(query.as_deref())?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn create_conversation(
    state: State<'_, AppState>,
    assistant_id: Option<String>,
) -> Result<ConversationSummary, IpcError> {
    Ok(state.app()?.create_conversation(assistant_id.as_deref())?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn rename_conversation(state: State<'_, AppState>, id: String, title: String) -> Result<(), IpcError> {
    Ok(state.app()?.rename_conversation(&id, &title)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn pin_conversation(state: State<'_, AppState>, id: String, pinned: bool) -> Result<(), IpcError> {
    Ok(state.app()?.pin_conversation(&id, pinned)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn delete_conversation(state: State<'_, AppState>, id: String) -> Result<(), IpcError> {
    Ok(state.app()?.delete_conversation(&id)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn discard_conversation_if_unused(state: State<'_, AppState>, id: String) -> Result<bool, IpcError> {
    Ok(state.app()?.discard_conversation_if_unused(&id)?)
}

/// The end of a conversation's active branch. Async and on a blocking thread, like every
/// command that reads messages: a sync command runs on the main thread, which also presents
/// the window's frames, so a long read there would hold up the page's next paint.
#[tauri::command(rename_all = "snake_case")]
pub async fn get_conversation(
    state: State<'_, AppState>,
    id: String,
    tail: Option<usize>,
) -> Result<ConversationDetail, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.get_conversation(&id, tail)?)).await
}

/// Older messages of the active branch, for scrolling back through a long conversation.
#[tauri::command(rename_all = "snake_case")]
pub async fn earlier_messages(
    state: State<'_, AppState>,
    conversation_id: String,
    before: String,
    limit: usize,
) -> Result<MessagePage, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.earlier_messages(&conversation_id, &before, limit)?)).await
}

#[tauri::command(rename_all = "snake_case")]
pub fn update_conversation_settings(
    state: State<'_, AppState>,
    id: String,
    settings: ConversationSettings,
) -> Result<(), IpcError> {
    Ok(state.app()?.update_conversation_settings(&id, &settings)?)
}

/// Asks where to save, then writes the conversation; `None` when the user cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn export_conversation(
    handle: AppHandle,
    state: State<'_, AppState>,
    id: String,
    format: ExportFormat,
) -> Result<Option<String>, IpcError> {
    let file = state.app()?.export_conversation(&id, format)?;
    save_with_dialog(handle, file.name, format.extension(), file.text).await
}

/// Shows the save dialog and writes `text` to the chosen file.
pub(crate) async fn save_with_dialog(
    handle: AppHandle,
    name: String,
    ext: &'static str,
    text: String,
) -> Result<Option<String>, IpcError> {
    blocking(move || {
        let Some(path) = handle.dialog().file().set_file_name(&name).add_filter(ext, &[ext]).blocking_save_file()
        else {
            return Ok(None);
        };
        let path = path.into_path().map_err(|e| IpcError::new(crate::IpcErrorKind::InvalidInput, e))?;
        std::fs::write(&path, text).map_err(|e| {
            IpcError::new(crate::IpcErrorKind::InvalidInput, format!("could not write {}: {e}", path.display()))
        })?;
        Ok(Some(path.display().to_string()))
    })
    .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn switch_branch(
    state: State<'_, AppState>,
    conversation_id: String,
    message_id: String,
) -> Result<Vec<MessageView>, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.switch_branch(&conversation_id, &message_id)?)).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn read_kept_result(
    state: State<'_, AppState>,
    conversation_id: String,
    result: u32,
    offset: u64,
    length: u64,
) -> Result<KeptPage, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.read_kept_result(&conversation_id, result, offset, length)?)).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn fork_conversation(
    state: State<'_, AppState>,
    conversation_id: String,
    message_id: String,
) -> Result<ConversationSummary, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.fork_conversation(&conversation_id, &message_id)?)).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn delete_message(
    state: State<'_, AppState>,
    conversation_id: String,
    message_id: String,
) -> Result<Vec<MessageView>, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.delete_message(&conversation_id, &message_id)?)).await
}

async fn turn(
    state: State<'_, AppState>,
    conversation_id: String,
    input: TurnInput,
    on_event: Channel<TurnEvent>,
) -> Result<TurnOutcome, IpcError> {
    let app = state.app()?;
    let send = move |event: TurnEvent| {
        if let Err(e) = on_event.send(event) {
            tracing::warn!("a turn event did not reach the window: {e}");
        }
    };
    let assistant_message_id = app.run_turn(&conversation_id, input, send).await?;
    Ok(TurnOutcome { assistant_message_id })
}

#[tauri::command(rename_all = "snake_case")]
pub async fn send_message(
    state: State<'_, AppState>,
    conversation_id: String,
    text: String,
    attachments: Vec<AttachmentInput>,
    on_event: Channel<TurnEvent>,
) -> Result<TurnOutcome, IpcError> {
    turn(state, conversation_id, TurnInput::Send { text, attachments }, on_event).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn regenerate(
    state: State<'_, AppState>,
    conversation_id: String,
    message_id: String,
    on_event: Channel<TurnEvent>,
) -> Result<TurnOutcome, IpcError> {
    turn(state, conversation_id, TurnInput::Regenerate { message: message_id }, on_event).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn edit_message(
    state: State<'_, AppState>,
    conversation_id: String,
    message_id: String,
    text: String,
    on_event: Channel<TurnEvent>,
) -> Result<TurnOutcome, IpcError> {
    turn(state, conversation_id, TurnInput::Edit { message: message_id, text }, on_event).await
}

#[tauri::command(rename_all = "snake_case")]
pub fn cancel_turn(state: State<'_, AppState>, conversation_id: String) -> Result<(), IpcError> {
    Ok(state.app()?.cancel_turn(&conversation_id)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn respond_approval(state: State<'_, AppState>, call_id: String, decision: ApprovalAnswer) -> Result<(), IpcError> {
    Ok(state.app()?.respond_approval(&call_id, decision)?)
}
