//! Ending the app: every MCP server is stopped (with its process group)
//! before the process ends, while the event loop runs on.
//!
//! The first exit request is held (`prevent_exit`) while the servers stop on
//! the async runtime, and let through once they have. Stopping them inside the
//! exit handler instead blocked the main thread, and tasks that were waiting
//! on it (the window's geometry being saved, the tray's menu) held both
//! runtime workers of a 2-core machine: the stop never ran, and Patchbay hung
//! on Quit with its window gone. Whatever happens to the stop, the process
//! ends within [`STOP_LIMIT`] and a few seconds more.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tauri::{AppHandle, ExitRequestApi, Manager, Runtime};

use crate::state::AppState;

/// How long the servers get to stop before Patchbay ends anyway.
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// How much longer than [`STOP_LIMIT`] a held exit may take before the
/// process ends by itself (the runtime itself stuck, say).
const GRACE: Duration = Duration::from_secs(5);

/// Where ending the app stands.
#[derive(Debug, Default)]
pub struct Ending {
    /// The servers are being stopped (an exit or a restart was asked for).
    started: AtomicBool,
    /// The servers are stopped: the app may end.
    done: AtomicBool,
}

/// Holds an exit request until the servers are stopped, then asks again; the
/// request after the stop goes through. The windows go at once.
pub fn on_exit_requested<R: Runtime>(app: &AppHandle<R>, code: Option<i32>, api: &ExitRequestApi) {
    let ending = app.state::<Ending>();
    if ending.done.load(Ordering::SeqCst) {
        return;
    }
    api.prevent_exit();
    if ending.started.swap(true, Ordering::SeqCst) {
        return;
    }
    for window in app.webview_windows().values() {
        let _ = window.hide();
    }
    let code = code.unwrap_or(0);
    watchdog(app, code);
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        stop_servers(&app).await;
        app.exit(code);
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

/// The last event, when no exit request came before it (macOS's Quit menu, a
/// log-out): the servers are stopped on the runtime, the main thread waiting
/// for them at most [`STOP_LIMIT`] and [`GRACE`] (it cannot drive the stop
/// itself: tasks waiting on it may hold the runtime's workers).
pub fn on_exit<R: Runtime>(app: &AppHandle<R>) {
    let ending = app.state::<Ending>();
    if ending.done.load(Ordering::SeqCst) || ending.started.swap(true, Ordering::SeqCst) {
        return;
    }
    let (stopped, wait) = std::sync::mpsc::channel();
    let handle = app.clone();
    tauri::async_runtime::spawn(async move {
        stop_servers(&handle).await;
        let _ = stopped.send(());
    });
    if wait.recv_timeout(STOP_LIMIT + GRACE).is_err() {
        tracing::warn!("the MCP servers were not stopped in time; Patchbay ends anyway");
    }
}

/// Ends the process with `code` if the held exit has not ended it within
/// [`STOP_LIMIT`] and [`GRACE`] (a stop that panicked, or a runtime stuck).
fn watchdog<R: Runtime>(app: &AppHandle<R>, code: i32) {
    let app = app.clone();
    std::thread::spawn(move || {
        std::thread::sleep(STOP_LIMIT + GRACE);
        if !app.state::<Ending>().done.load(Ordering::SeqCst) {
            tracing::warn!("the MCP servers were not stopped in time; Patchbay ends anyway");
        }
        std::process::exit(code);
    });
}

/// Gives up the single-instance lock first (a launch meanwhile opens its own
/// window), then stops every server, within [`STOP_LIMIT`]; done even if the
/// stop failed.
async fn stop_servers<R: Runtime>(app: &AppHandle<R>) {
    crate::instance::release(app);
    if let Ok(services) = app.state::<AppState>().app() {
        let stop = tauri::async_runtime::spawn(async move { services.shutdown().await });
        match tokio::time::timeout(STOP_LIMIT, stop).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("stopping the MCP servers failed: {e}"),
            Err(_) => tracing::warn!(
                "the MCP servers did not all stop within {} s; Patchbay ends anyway",
                STOP_LIMIT.as_secs()
            ),
        }
    }
    app.state::<Ending>().done.store(true, Ordering::SeqCst);
}
