//! Scheduled runs while the window is open: once a minute, when any schedule
//! exists, the app runs `patchbay schedule run-due` on its data directory,
//! the same command the operating system's timer runs while it is closed. The
//! runs happen in that process (a turn there cannot stall the window), and the
//! database's claim keeps the two from running a schedule twice.

use std::path::{Path, PathBuf};
use std::time::Duration;

use patchbay_core::paths::DataDir;
use patchbay_core::schedules::ScheduleStore;
use patchbay_core::store::Store;

/// How often due schedules are looked for.
const EVERY: Duration = Duration::from_secs(60);

/// The CLI that belongs with this executable ([`timer::cli_beside`]: the one beside it, or on
/// macOS itself, run by [`run_cli`] under the name `patchbay`), else the one on the `PATH`.
///
/// [`timer::cli_beside`]: patchbay_core::schedules::timer::cli_beside
pub fn cli() -> PathBuf {
    let exe = std::env::current_exe().ok();
    exe.and_then(|exe| patchbay_core::schedules::timer::cli_beside(&exe)).unwrap_or_else(|| PathBuf::from("patchbay"))
}

/// Looks for due schedules every minute while the app runs.
pub fn run_due_while_open(dir: DataDir, store: Store) {
    tauri::async_runtime::spawn(async move {
        let schedules = ScheduleStore::new(store);
        loop {
            tokio::time::sleep(EVERY).await;
            match schedules.list() {
                Ok(list) if list.is_empty() => continue,
                Ok(_) => run_due(dir.path()).await,
                Err(e) => tracing::warn!("could not read the schedules: {e}"),
            }
        }
    });
}

/// Runs the CLI on `dir` with `args`, stdin closed (a scheduled run asks
/// nobody), stopped after the time limit the system timer gives it too.
pub async fn run_cli(dir: &Path, args: &[&str]) -> std::io::Result<std::process::Output> {
    let mut command = tokio::process::Command::new(cli());
    // Named so, this app's own binary is the CLI (macOS, see `cli`).
    #[cfg(unix)]
    command.arg0("patchbay");
    let run =
        command.arg("--data-dir").arg(dir).args(args).stdin(std::process::Stdio::null()).kill_on_drop(true).output();
    let limit = Duration::from_secs(patchbay_core::schedules::timer::BATCH_LIMIT_SECS);
    tokio::time::timeout(limit, run)
        .await
        .unwrap_or_else(|_| Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "the run took over its time limit")))
}

async fn run_due(dir: &Path) {
    let ran = run_cli(dir, &["schedule", "run-due"]).await;
    match ran {
        Ok(out) if out.status.success() => {}
        Ok(out) => tracing::warn!(
            "a scheduled run failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default()
        ),
        Err(e) => tracing::warn!("could not run {} for the scheduled runs: {e}", cli().display()),
    }
}
