//! What the app holds between commands: the data directory and the opened core.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use patchbay_core::app::{App, AppEvent, AppEventStream, AppEvents};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::{KeyringStore, SecretStore};
use patchbay_core::store::Store;
use tauri::{AppHandle, Emitter};

use crate::error::IpcError;
use crate::opened::{Opened, Pending};

/// The core services, once opened.
pub struct Core {
    pub dir: DataDir,
    pub store: Store,
    pub secrets: Arc<dyn SecretStore>,
    pub app: App,
}

/// Managed Tauri state. `core` is an error when start-up failed; commands report it.
pub struct AppState {
    pub core: Result<Core, IpcError>,
    /// The data directory asked for (the default one when none was), also when
    /// the core could not open in it.
    pub requested_dir: Option<DataDir>,
    /// The core's own events, until the window exists to take them ([`forward_events`]).
    pub events: Mutex<Option<AppEventStream>>,
    /// A bundle or install link the app was opened with, until the window takes it.
    pub opened: Pending,
}

/// Emits the core's own events to the window as they come (`server_status`,
/// `server_log`, `connection_blocked`, …), from the window's setup on. An
/// event emitted before the page has registered its listeners reaches nobody,
/// so each is also state the page reads when it opens: statuses and logs
/// with the servers, progress with the knowledge base, and a server's request
/// with `waiting_server_requests` (one lost would leave the server waiting).
pub fn forward_events(handle: AppHandle, mut events: AppEventStream) {
    tauri::async_runtime::spawn(async move {
        while let Some(event) = events.recv().await {
            match event {
                AppEvent::ServerStatus(status) => {
                    emit(&handle, "server_status", status);
                    crate::tray::refresh(&handle);
                }
                AppEvent::ServerLog(line) => emit(&handle, "server_log", line),
                AppEvent::KbProgress(progress) => emit(&handle, "kb_progress", progress),
                AppEvent::KbModelProgress(progress) => emit(&handle, "kb_model_progress", progress),
                AppEvent::ServerRequest(request) => emit(&handle, "server_request", request),
                AppEvent::ServerRequestEnded(id) => emit(&handle, "server_request_ended", id),
                AppEvent::ConversationRenamed(renamed) => emit(&handle, "conversation_renamed", renamed),
                AppEvent::ResourceUpdated(updated) => emit(&handle, "resource_updated", updated),
                AppEvent::ConnectionBlocked(blocked) => emit(&handle, "connection_blocked", blocked),
                AppEvent::KbShareChanged => emit(&handle, "kb_share_changed", ()),
            }
        }
    });
}

fn emit<T: serde::Serialize + Clone>(handle: &AppHandle, event: &str, payload: T) {
    if let Err(e) = handle.emit(event, payload) {
        tracing::warn!("could not emit {event}: {e}");
    }
}

impl AppState {
    /// Opens the core in the chosen (or default) data directory; `opened` is
    /// a bundle or link to offer to install.
    pub fn open(data_dir: Option<PathBuf>, opened: Option<Opened>) -> Self {
        let (events, stream) = AppEvents::channel();
        let resolved = DataDir::resolve(data_dir);
        let requested_dir = resolved.as_ref().ok().cloned();
        let core = resolved.map_err(IpcError::from).and_then(|dir| {
            let store = Store::open(&dir)?;
            let secrets: Arc<dyn SecretStore> = Arc::new(KeyringStore::for_data_dir(&dir));
            let app = App::open(dir.clone(), store.clone(), secrets.clone(), events)?;
            Ok(Core { dir, store, secrets, app })
        });
        Self { core, requested_dir, events: Mutex::new(Some(stream)), opened: Pending::new(opened) }
    }

    /// The opened core, or the start-up error.
    pub fn core(&self) -> Result<&Core, IpcError> {
        self.core.as_ref().map_err(Clone::clone)
    }

    /// The app services, or the start-up error.
    pub fn app(&self) -> Result<App, IpcError> {
        Ok(self.core()?.app.clone())
    }
}
