//! Providers, import/export, assistants and the general settings.

use std::collections::{BTreeMap, BTreeSet};

use patchbay_core::app::restore_backup;
use patchbay_core::app::views::{
    AssistantView, GeneralSettings, ImportPreviewView, ImportReport, PolicySettings, ProviderView,
};
use patchbay_core::config::{ExportFormat, PolicyDefaults, ProviderPreset, ProviderProfile};
use tauri::{AppHandle, Manager, State};
use tauri_plugin_dialog::DialogExt;

use super::blocking;
use super::chat::save_with_dialog;
use super::knowledge::pick_folder;
use crate::cancellable::Request;
use crate::error::{IpcError, IpcErrorKind};
use crate::state::AppState;

#[tauri::command(rename_all = "snake_case")]
pub async fn list_providers(state: State<'_, AppState>) -> Result<Vec<ProviderView>, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.list_providers()?)).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn save_provider(
    state: State<'_, AppState>,
    profile: ProviderProfile,
    api_key: Option<String>,
) -> Result<(), IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.save_provider(profile, api_key.as_deref())?)).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn delete_provider(state: State<'_, AppState>, name: String) -> Result<(), IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.delete_provider(&name)?)).await
}

#[tauri::command(rename_all = "snake_case")]
pub fn provider_presets(state: State<'_, AppState>) -> Result<Vec<ProviderPreset>, IpcError> {
    Ok(state.app()?.provider_presets().to_vec())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn test_provider(
    state: State<'_, AppState>,
    name: String,
    request: Request,
) -> Result<Vec<String>, IpcError> {
    Ok(state.app()?.test_provider(&name, request.token()).await?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn import_preview(state: State<'_, AppState>, text: String) -> Result<ImportPreviewView, IpcError> {
    let app = state.app()?;
    blocking(move || Ok(app.import_preview(&text)?)).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn import_apply(
    state: State<'_, AppState>,
    text: String,
    accept: Vec<String>,
    replace: bool,
    answers: BTreeMap<String, String>,
    secret_fields: BTreeMap<String, BTreeSet<String>>,
) -> Result<ImportReport, IpcError> {
    Ok(state.app()?.import_apply(&text, &accept, replace, answers, secret_fields).await?)
}

/// Asks where to save and writes the configuration, secrets as placeholders unless
/// `include_secrets` (the window warns first).
#[tauri::command(rename_all = "snake_case")]
pub async fn export_config(
    handle: AppHandle,
    state: State<'_, AppState>,
    format: String,
    include_secrets: bool,
) -> Result<Option<String>, IpcError> {
    let (format, name) = match format.as_str() {
        "claude_desktop" => (ExportFormat::Claude, "claude_desktop_config.json"),
        "cursor" => (ExportFormat::Claude, "mcp.json"),
        "vscode" => (ExportFormat::Vscode, "mcp.json"),
        "zed" => (ExportFormat::Zed, "settings.json"),
        "opencode" => (ExportFormat::Opencode, "opencode.json"),
        "ragflow" => (ExportFormat::Ragflow, "ragflow_mcp.json"),
        "patchbay" => (ExportFormat::Patchbay, "patchbay.json"),
        other => {
            let message = format!(
                "export format {other:?} is not claude_desktop, vscode, cursor, zed, opencode, ragflow or patchbay"
            );
            return Err(IpcError::new(crate::IpcErrorKind::InvalidInput, message));
        }
    };
    let app = state.app()?;
    let text = blocking(move || Ok(app.export_config(format, include_secrets)?)).await?;
    save_with_dialog(handle, name.to_owned(), "json", text).await
}

/// Puts `text` on the system clipboard: WebKitGTK gives pages no clipboard of their own.
#[tauri::command(rename_all = "snake_case")]
pub fn write_clipboard(handle: AppHandle, text: String) -> Result<(), IpcError> {
    use tauri_plugin_clipboard_manager::ClipboardExt;
    handle
        .clipboard()
        .write_text(text)
        .map_err(|e| IpcError::new(crate::IpcErrorKind::Internal, format!("cannot copy to the clipboard: {e}")))
}

/// Opens a link from the window (an answer, a tool result, a server's website)
/// in the user's browser or mail program; only `http`, `https` and `mailto`
/// links ([`patchbay_core::net::browsable`]).
#[tauri::command(rename_all = "snake_case")]
pub fn open_link(handle: AppHandle, url: String) -> Result<(), IpcError> {
    use tauri_plugin_opener::OpenerExt;
    let url = patchbay_core::net::browsable(&url)
        .map_err(|e| IpcError::new(crate::IpcErrorKind::InvalidInput, e.to_string()))?;
    handle
        .opener()
        .open_url(url.as_str(), None::<&str>)
        .map_err(|e| IpcError::new(crate::IpcErrorKind::Internal, format!("cannot open {url}: {e}")))
}

/// Opens the folder of the app's log file in the file manager.
#[tauri::command(rename_all = "snake_case")]
pub fn open_log_folder(handle: AppHandle, state: State<'_, AppState>) -> Result<(), IpcError> {
    use tauri_plugin_opener::OpenerExt;
    let file = state.core()?.dir.log_file();
    let folder = file.parent().expect("the log file is in a folder");
    std::fs::create_dir_all(folder)
        .map_err(|e| IpcError::new(crate::IpcErrorKind::DataDir, format!("cannot create {}: {e}", folder.display())))?;
    handle
        .opener()
        .open_path(folder.display().to_string(), None::<&str>)
        .map_err(|e| IpcError::new(crate::IpcErrorKind::Internal, format!("cannot open {}: {e}", folder.display())))
}

#[tauri::command(rename_all = "snake_case")]
pub fn list_assistants(state: State<'_, AppState>) -> Result<Vec<AssistantView>, IpcError> {
    Ok(state.app()?.list_assistants()?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn save_assistant(state: State<'_, AppState>, assistant: AssistantView) -> Result<AssistantView, IpcError> {
    Ok(state.app()?.save_assistant(&assistant)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn delete_assistant(state: State<'_, AppState>, id: String) -> Result<(), IpcError> {
    Ok(state.app()?.delete_assistant(&id)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn get_settings(state: State<'_, AppState>) -> Result<GeneralSettings, IpcError> {
    Ok(state.app()?.get_settings()?)
}

/// Saves the settings, then applies the desktop's own: "keep in the tray" and
/// the quick-ask shortcut (a shortcut that cannot be read is refused before
/// anything is saved; one the desktop refuses is saved, and the error says so).
#[tauri::command(rename_all = "snake_case")]
pub fn save_settings(app: AppHandle, state: State<'_, AppState>, settings: GeneralSettings) -> Result<(), IpcError> {
    crate::quick_ask::parse_shortcut(&settings.quick_ask_shortcut)?;
    let core = state.app()?;
    let before = core.get_settings()?.quick_ask_shortcut;
    core.save_settings(&settings)?;
    app.state::<crate::tray::KeepInTray>().set(settings.keep_in_tray);
    // One saved now replaces one still waiting from the start.
    let waiting = app.state::<crate::quick_ask::AtStart>().take();
    // Only a changed shortcut is taken again (and can be refused): other changes save quietly.
    if settings.quick_ask_shortcut.trim() == before && waiting.is_none() {
        return Ok(());
    }
    crate::quick_ask::register(&app, &settings.quick_ask_shortcut)
}

/// Keeps the window's language, and speaks it in the tray from now on.
#[tauri::command(rename_all = "snake_case")]
pub fn set_language(app: AppHandle, state: State<'_, AppState>, language: String) -> Result<(), IpcError> {
    state.app()?.set_ui_language(&language)?;
    crate::tray::relabel(&app);
    Ok(())
}

/// The default security level and tool calls per turn, and the levels this system offers.
#[tauri::command(rename_all = "snake_case")]
pub fn policy_settings(state: State<'_, AppState>) -> Result<PolicySettings, IpcError> {
    Ok(state.app()?.policy_settings())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn set_policy_defaults(state: State<'_, AppState>, defaults: PolicyDefaults) -> Result<(), IpcError> {
    Ok(state.app()?.set_policy_defaults(defaults).await?)
}

/// Zooms the window's page as a browser does (Ctrl/Cmd with = - 0, Settings → General).
#[tauri::command]
pub fn set_zoom(webview: tauri::Webview, zoom: f64) -> Result<(), IpcError> {
    if !(0.25..=5.0).contains(&zoom) {
        return Err(IpcError::new(IpcErrorKind::InvalidInput, format!("zoom {zoom} is not between 0.25 and 5")));
    }
    webview.set_zoom(zoom).map_err(|e| IpcError::new(IpcErrorKind::Internal, e))
}

/// Saves a backup of the database where the user chooses; its path, or `None` when cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn backup_data(state: State<'_, AppState>, handle: AppHandle) -> Result<Option<String>, IpcError> {
    let app = state.app()?;
    blocking(move || {
        let dialog = handle.dialog().file().set_file_name("patchbay-backup.db").add_filter("Patchbay backup", &["db"]);
        let Some(path) = dialog.blocking_save_file() else { return Ok(None) };
        let path = path.into_path().map_err(|e| IpcError::new(IpcErrorKind::InvalidInput, e))?;
        // The save dialog has asked whether to replace a file of that name.
        Ok(Some(app.backup(&path, true)?.path.display().to_string()))
    })
    .await
}

/// Stages a backup the user picks to be restored at the next start; its path, or `None` when cancelled.
/// Works without the core, so a window whose database is damaged can restore.
#[tauri::command(rename_all = "snake_case")]
pub async fn restore_data(state: State<'_, AppState>, handle: AppHandle) -> Result<Option<String>, IpcError> {
    let dir = match (&state.requested_dir, state.core()) {
        (Some(dir), _) => dir.clone(),
        (None, Err(e)) => return Err(e),
        (None, Ok(core)) => core.dir.clone(),
    };
    blocking(move || {
        let Some(path) = handle.dialog().file().add_filter("Patchbay backup", &["db"]).blocking_pick_file() else {
            return Ok(None);
        };
        let path = path.into_path().map_err(|e| IpcError::new(IpcErrorKind::InvalidInput, e))?;
        restore_backup(&dir, &path)?;
        Ok(Some(path.display().to_string()))
    })
    .await
}

/// The folder dialog for the data folder; `None` when cancelled.
#[tauri::command(rename_all = "snake_case")]
pub async fn pick_data_dir(handle: AppHandle) -> Result<Option<String>, IpcError> {
    pick_folder(handle).await
}
