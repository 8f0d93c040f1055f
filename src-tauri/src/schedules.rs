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

/// The CLI beside this executable (the `.deb` installs both in `/usr/bin`, a
/// build puts both in its target folder), else the one on the `PATH`.
fn cli() -> PathBuf {
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join("patchbay")));
    beside.filter(|p| p.is_file()).unwrap_or_else(|| PathBuf::from("patchbay"))
}

/// Looks for due schedules every minute while the app runs.
pub fn run_due_while_open(dir: DataDir, store: Store) {
    tauri::async_runtime::spawn(async move {
        let schedules = ScheduleStore::new(store);
        let cli = cli();
        loop {
            tokio::time::sleep(EVERY).await;
            match schedules.list() {
                Ok(list) if list.is_empty() => continue,
                Ok(_) => run_due(&cli, dir.path()).await,
                Err(e) => tracing::warn!("could not read the schedules: {e}"),
            }
        }
    });
}

async fn run_due(cli: &Path, dir: &Path) {
    let ran = tokio::process::Command::new(cli)
        .arg("--data-dir")
        .arg(dir)
        .args(["schedule", "run-due"])
        .stdin(std::process::Stdio::null())
        .output()
        .await;
    match ran {
        Ok(out) if out.status.success() => {}
        Ok(out) => tracing::warn!(
            "a scheduled run failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default()
        ),
        Err(e) => tracing::warn!("could not run {} for the scheduled runs: {e}", cli.display()),
    }
}
