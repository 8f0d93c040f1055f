//! Closing the window: tools' views hear it first (MCP Apps
//! `ui/resource-teardown`), as they do before any other change takes them
//! off the screen.
//!
//! The first close request is held: the window hears [`EVENT`], asks its
//! views to tear down (each answers within a second) and then calls
//! [`close_window`]. A window that does not call it within [`CLOSE_WAIT`]
//! (its page failed, or hangs) is closed anyway, and a second request (the
//! user clicks again) closes at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tauri::{Emitter, Manager, Runtime, Window, WindowEvent};

use crate::error::IpcError;

/// The event the window hears when it is asked to close.
pub const EVENT: &str = "window_closing";

/// How long a held close waits for the window before closing it anyway.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Whether a close request is being held.
#[derive(Debug, Default)]
pub struct Closing(AtomicBool);

impl Closing {
    /// Whether this close request is held for the window: the first is, a
    /// later one is not.
    fn hold(&self) -> bool {
        !self.0.swap(true, Ordering::SeqCst)
    }
}

/// Holds the window's first close request until its views are torn down.
pub fn on_window_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    let WindowEvent::CloseRequested { api, .. } = event else { return };
    let Some(closing) = window.try_state::<Closing>() else { return };
    if !closing.hold() {
        return;
    }
    if let Err(e) = window.emit(EVENT, ()) {
        tracing::warn!("the window could not be told it closes, so it closes now: {e}");
        return;
    }
    api.prevent_close();
    let window = window.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(CLOSE_WAIT).await;
        if window.app_handle().get_webview_window(window.label()).is_some() {
            tracing::warn!("the window did not close itself in time; closing it");
            let _ = window.destroy();
        }
    });
}

/// Closes the window: called by the window once its views are torn down.
#[tauri::command]
pub fn close_window(window: Window) -> Result<(), IpcError> {
    tracing::info!("the window closes, its views torn down");
    window.destroy().map_err(|e| IpcError::new(crate::IpcErrorKind::Internal, e))
}

#[cfg(test)]
mod tests {
    use super::Closing;

    #[test]
    fn only_the_first_close_request_is_held() {
        let closing = Closing::default();
        assert!(closing.hold());
        assert!(!closing.hold(), "a second request closes at once");
    }
}
