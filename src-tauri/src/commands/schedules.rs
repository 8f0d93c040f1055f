//! Scheduled runs: list, add (with the system timer), remove, their runs, and
//! "run now", which runs the CLI's `schedule run-now` as the timer would.

use patchbay_core::app::views::{ScheduleAdded, ScheduleInput, ScheduleView};
use patchbay_core::schedules::RunRecord;
use tauri::State;

use crate::IpcErrorKind;
use crate::error::IpcError;
use crate::state::AppState;

#[tauri::command(rename_all = "snake_case")]
pub fn list_schedules(state: State<'_, AppState>) -> Result<Vec<ScheduleView>, IpcError> {
    Ok(state.app()?.schedules()?)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn add_schedule(state: State<'_, AppState>, schedule: ScheduleInput) -> Result<ScheduleAdded, IpcError> {
    let app = state.app()?;
    // Enabling the timer runs systemctl: off the async threads.
    super::blocking(move || Ok(app.add_schedule(schedule, &crate::schedules::cli())?)).await
}

#[tauri::command(rename_all = "snake_case")]
pub fn remove_schedule(state: State<'_, AppState>, name: String) -> Result<(), IpcError> {
    Ok(state.app()?.remove_schedule(&name)?)
}

#[tauri::command(rename_all = "snake_case")]
pub fn schedule_runs(state: State<'_, AppState>, name: String) -> Result<Vec<RunRecord>, IpcError> {
    Ok(state.app()?.schedule_runs(&name)?)
}

/// Runs the schedule now, in the CLI as the timer does; what it said when
/// done. The CLI's summary line is the message either way; its exit status 3
/// means the schedule was running already (`invalid_input`), any other failure
/// is the run's (`internal`: its kind stays in the CLI, the run's record says why).
#[tauri::command(rename_all = "snake_case")]
pub async fn run_schedule_now(state: State<'_, AppState>, name: String) -> Result<String, IpcError> {
    let dir = state.core()?.dir.path().to_owned();
    let out = crate::schedules::run_cli(&dir, &["schedule", "run-now", &name])
        .await
        .map_err(|e| IpcError::new(IpcErrorKind::Internal, e))?;
    let last = |bytes: &[u8]| String::from_utf8_lossy(bytes).lines().last().unwrap_or_default().to_owned();
    let said = last(&out.stdout);
    match out.status.code() {
        Some(0) => Ok(said),
        Some(3) => {
            let error = last(&out.stderr);
            Err(IpcError::new(IpcErrorKind::InvalidInput, error.strip_prefix("error: ").unwrap_or(&error)))
        }
        _ if said.is_empty() => Err(IpcError::new(IpcErrorKind::Internal, last(&out.stderr))),
        _ => Err(IpcError::new(IpcErrorKind::Internal, said)),
    }
}
