//! Tauri commands: deserialise, one core call, map the error.

use patchbay_core::AppInfo;
use tauri::State;

use crate::error::IpcError;
use crate::state::AppState;

/// Round-trip check for the UI.
#[tauri::command]
pub fn ping() -> &'static str {
    "pong"
}

/// Version, data directory, schema and keyring status.
#[tauri::command]
pub async fn app_info(state: State<'_, AppState>) -> Result<AppInfo, IpcError> {
    let core = state.core()?;
    // The keyring probe talks D-Bus: keep it off the async runtime's threads.
    let (dir, store, secrets) = (core.dir.clone(), core.store.clone(), core.secrets.clone());
    let info = tauri::async_runtime::spawn_blocking(move || AppInfo::gather(&dir, &store, secrets.as_ref()))
        .await
        .map_err(|e| IpcError::new(crate::IpcErrorKind::Internal, e))?
        .map_err(IpcError::from)?;
    crate::startup::answered();
    Ok(info)
}
