//! Tauri commands: deserialise, one core call, map the error.
//!
//! One module per area of `ui/IPC.md`; argument names are snake_case
//! (`rename_all`), results are the core's views.

pub mod chat;
pub mod knowledge;
pub mod schedules;
pub mod servers;
pub mod settings;

use patchbay_core::AppInfo;
use tauri::State;

use crate::error::IpcError;
use crate::state::AppState;

/// Round-trip check for the UI.
#[tauri::command]
pub fn ping() -> &'static str {
    "pong"
}

/// Cancels the cancellable command the window started under `request`.
#[tauri::command]
pub fn cancel_request(requests: tauri::State<'_, crate::cancellable::Requests>, request: String) {
    requests.cancel(&request);
}

/// Version, data directory, schema and keyring status.
#[tauri::command]
pub async fn app_info(state: State<'_, AppState>) -> Result<AppInfo, IpcError> {
    let core = state.core()?;
    // The keyring probe talks D-Bus: keep it off the async runtime's threads.
    let (dir, store, secrets) = (core.dir.clone(), core.store.clone(), core.secrets.clone());
    let info = blocking(move || AppInfo::gather(&dir, &store, secrets.as_ref()).map_err(IpcError::from)).await?;
    crate::startup::answered();
    Ok(info)
}

/// Runs blocking work (keyring, dialogs, SQLite-heavy calls) off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, IpcError> + Send + 'static,
) -> Result<T, IpcError> {
    tauri::async_runtime::spawn_blocking(f).await.map_err(|e| IpcError::new(crate::IpcErrorKind::Internal, e))?
}
