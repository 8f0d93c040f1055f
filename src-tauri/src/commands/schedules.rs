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
pub async fn remove_schedule(state: State<'_, AppState>, name: String) -> Result<(), IpcError> {
    let app = state.app()?;
    // Removing the last one disables the timer with systemctl: off the async threads.
    super::blocking(move || Ok(app.remove_schedule(&name)?)).await
}

#[tauri::command(rename_all = "snake_case")]
pub fn schedule_runs(state: State<'_, AppState>, name: String) -> Result<Vec<RunRecord>, IpcError> {
    Ok(state.app()?.schedule_runs(&name)?)
}

/// Runs the schedule now, in the CLI as the timer does; what it said when
/// done. The CLI says how it went as JSON (`run-now --json`): its summary is
/// the message either way, and a failure keeps its kind (a schedule running
/// already is `invalid_input`).
#[tauri::command(rename_all = "snake_case")]
pub async fn run_schedule_now(state: State<'_, AppState>, name: String) -> Result<String, IpcError> {
    let dir = state.core()?.dir.path().to_owned();
    let out = crate::schedules::run_cli(&dir, &["schedule", "run-now", "--json", &name])
        .await
        .map_err(|e| IpcError::new(IpcErrorKind::Internal, e))?;
    let said = String::from_utf8_lossy(&out.stdout);
    let ran = said.lines().last().and_then(|line| serde_json::from_str::<Ran>(line).ok());
    match ran {
        Some(Ran { ok: true, summary, .. }) => Ok(summary),
        Some(Ran { summary, kind, .. }) => Err(IpcError::new(kind.unwrap_or(IpcErrorKind::Internal), summary)),
        // No summary: the CLI itself failed (its data dir, its database); stderr says why.
        None => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let error = stderr.lines().last().unwrap_or("the run ended without a word");
            Err(IpcError::new(IpcErrorKind::Internal, error.strip_prefix("error: ").unwrap_or(error)))
        }
    }
}

/// What `patchbay schedule run-now --json` prints last.
#[derive(serde::Deserialize)]
struct Ran {
    ok: bool,
    summary: String,
    kind: Option<IpcErrorKind>,
}
