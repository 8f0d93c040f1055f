//! Closing the window: tools' views hear it first (MCP Apps
//! `ui/resource-teardown`), as they do before any other change takes them
//! off the screen.
//!
//! The first close request is held: the window hears [`EVENT`], asks its
//! views to tear down (each answers within a second) and then calls
//! [`close_window`]. A window that does not call it within [`CLOSE_WAIT`]
//! (its page failed, or hangs) is closed anyway, and a second request (the
//! user clicks again) closes at once. Kept in the tray, closing only hides the
//! window; the tray's Quit then ends the app without this round.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tauri::{Emitter, Manager, Runtime, Window, WindowEvent};

use crate::error::IpcError;
use crate::tray::KeepInTray;

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

/// What a close request does to a window.
#[derive(Debug, PartialEq, Eq)]
enum OnClose {
    /// Hidden, the app runs on: the quick-ask window, or the main window kept in the tray.
    Hide,
    /// Held until the window's views are torn down (the main window's first request).
    Hold,
    /// Closed at once (a second request).
    Close,
}

fn on_close(label: &str, kept_in_tray: bool, closing: &Closing) -> OnClose {
    if label == crate::quick_ask::LABEL || kept_in_tray {
        OnClose::Hide
    } else if closing.hold() {
        OnClose::Hold
    } else {
        OnClose::Close
    }
}

/// Holds the main window's first close request until its views are torn
/// down; hides it instead when Patchbay stays in the tray. The quick-ask
/// window only hides. The main window gone, Patchbay ends (the hidden
/// quick-ask window does not keep it running).
pub fn on_window_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    if let WindowEvent::Destroyed = event
        && window.label() != crate::quick_ask::LABEL
    {
        return window.app_handle().exit(0);
    }
    let WindowEvent::CloseRequested { api, .. } = event else { return };
    let Some(closing) = window.try_state::<Closing>() else { return };
    let kept = window.try_state::<KeepInTray>().is_some_and(|keep| keep.hides(window.app_handle()));
    match on_close(window.label(), kept, &closing) {
        OnClose::Hide => {
            api.prevent_close();
            if window.label() != crate::quick_ask::LABEL {
                tracing::info!("the window is hidden: Patchbay stays in the tray");
            }
            return hide(window);
        }
        OnClose::Close => return,
        OnClose::Hold => {}
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

fn hide<R: Runtime>(window: &Window<R>) {
    if let Err(e) = window.hide() {
        tracing::warn!("could not hide the {} window: {e}", window.label());
    }
}

/// Closes the window: called by the window once its views are torn down.
#[tauri::command]
pub fn close_window(window: Window) -> Result<(), IpcError> {
    tracing::info!("the window closes, its views torn down");
    window.destroy().map_err(|e| IpcError::new(crate::IpcErrorKind::Internal, e))
}

#[cfg(test)]
mod tests {
    use super::{Closing, OnClose, on_close};

    #[test]
    fn only_the_first_close_request_is_held() {
        let closing = Closing::default();
        assert_eq!(on_close("main", false, &closing), OnClose::Hold);
        assert_eq!(on_close("main", false, &closing), OnClose::Close, "a second request closes at once");
    }

    #[test]
    fn quick_ask_and_a_window_kept_in_the_tray_only_hide() {
        let closing = Closing::default();
        assert_eq!(on_close("quick-ask", false, &closing), OnClose::Hide);
        assert_eq!(on_close("main", true, &closing), OnClose::Hide);
        assert_eq!(on_close("main", true, &closing), OnClose::Hide, "every time");
        assert_eq!(on_close("main", false, &closing), OnClose::Hold, "hiding held nothing");
    }
}
