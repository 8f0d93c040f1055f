//! Ending the app: every MCP server is stopped (with its process group)
//! before the process ends, while the event loop runs on.
//!
//! The first exit request is held (`prevent_exit`) while the servers stop on
//! the async runtime, and let through once they have. Stopping them inside the
//! exit handler instead blocked the main thread, and tasks that were waiting
//! on it (the window's geometry being saved, the tray's menu) held both
//! runtime workers of a 2-core machine: the stop never ran, and Patchbay hung
//! on Quit with its window gone.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tauri::{AppHandle, ExitRequestApi, Manager, Runtime};

use crate::state::AppState;

/// How long the servers get to stop before Patchbay ends anyway.
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// Where ending the app stands.
#[derive(Debug, Default)]
pub struct Ending {
    /// The servers are being stopped (an exit or a restart was asked for).
    started: AtomicBool,
    /// The servers are stopped: the app may end.
    done: AtomicBool,
}

/// Holds an exit request until the servers are stopped, then asks again; the
/// request after the stop goes through.
pub fn on_exit_requested<R: Runtime>(app: &AppHandle<R>, code: Option<i32>, api: &ExitRequestApi) {
    let ending = app.state::<Ending>();
    if ending.done.load(Ordering::SeqCst) {
        return;
    }
    api.prevent_exit();
    if ending.started.swap(true, Ordering::SeqCst) {
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        stop_servers(&app).await;
        app.exit(code.unwrap_or(0));
    });
}

/// Restarts Patchbay once its servers are stopped (a restart cannot be held
/// like an exit). Nothing to do while the app is already ending.
pub fn restart<R: Runtime>(app: &AppHandle<R>) {
    if app.state::<Ending>().started.swap(true, Ordering::SeqCst) {
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        stop_servers(&app).await;
        app.request_restart();
    });
}

/// The last event: servers that are still running (an exit that nothing
/// could hold) are stopped here, holding the main thread as a last resort.
pub fn on_exit<R: Runtime>(app: &AppHandle<R>) {
    if !app.state::<Ending>().done.load(Ordering::SeqCst) {
        tauri::async_runtime::block_on(stop_servers(app));
    }
}

/// Gives up the single-instance lock first (a launch meanwhile opens its own
/// window), then stops every server, within [`STOP_LIMIT`].
async fn stop_servers<R: Runtime>(app: &AppHandle<R>) {
    crate::instance::release(app);
    if let Ok(services) = app.state::<AppState>().app()
        && tokio::time::timeout(STOP_LIMIT, services.shutdown()).await.is_err()
    {
        tracing::warn!("the MCP servers did not all stop within {} s; Patchbay ends anyway", STOP_LIMIT.as_secs());
    }
    app.state::<Ending>().done.store(true, Ordering::SeqCst);
}
