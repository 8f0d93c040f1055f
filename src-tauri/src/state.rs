//! What the app holds between commands: the data directory and the opened core.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use patchbay_core::app::views::{
    ConnectionBlocked, ConversationRenamed, KbProgress, ResourceUpdated, ServerLogLine, ServerStatusView,
};
use patchbay_core::app::{App, AppEvents, ServerRequestView};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::{KeyringStore, SecretStore};
use patchbay_core::store::Store;
use tauri::{AppHandle, Emitter};

use crate::error::IpcError;

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
    /// Where [`WindowEvents`] emits, once the window exists.
    pub handle: Arc<OnceLock<AppHandle>>,
    /// An MCP bundle the app was launched with (or a later launch handed
    /// over), until the window takes it to show its installer.
    pub opened_bundle: Mutex<Option<PathBuf>>,
}

/// Emits the core's own events (`server_status`, `server_log`, `connection_blocked`, …) to the window.
struct WindowEvents {
    handle: Arc<OnceLock<AppHandle>>,
}

impl WindowEvents {
    fn emit<T: serde::Serialize + Clone>(&self, event: &str, payload: T) {
        if let Some(handle) = self.handle.get()
            && let Err(e) = handle.emit(event, payload)
        {
            tracing::warn!("could not emit {event}: {e}");
        }
    }
}

impl AppEvents for WindowEvents {
    fn server_status(&self, status: ServerStatusView) {
        self.emit("server_status", status);
    }

    fn server_log(&self, line: ServerLogLine) {
        self.emit("server_log", line);
    }

    fn kb_progress(&self, progress: KbProgress) {
        self.emit("kb_progress", progress);
    }

    fn server_request(&self, request: ServerRequestView) {
        self.emit("server_request", request);
    }

    fn conversation_renamed(&self, renamed: ConversationRenamed) {
        self.emit("conversation_renamed", renamed);
    }

    fn resource_updated(&self, updated: ResourceUpdated) {
        self.emit("resource_updated", updated);
    }

    fn connection_blocked(&self, blocked: ConnectionBlocked) {
        self.emit("connection_blocked", blocked);
    }
}

impl AppState {
    /// Opens the core in the chosen (or default) data directory; `bundle` is
    /// a bundle file to offer to install.
    pub fn open(data_dir: Option<PathBuf>, bundle: Option<PathBuf>) -> Self {
        let handle = Arc::new(OnceLock::new());
        let events = Arc::new(WindowEvents { handle: handle.clone() });
        let resolved = DataDir::resolve(data_dir);
        let requested_dir = resolved.as_ref().ok().cloned();
        let core = resolved.map_err(IpcError::from).and_then(|dir| {
            let store = Store::open(&dir)?;
            let secrets: Arc<dyn SecretStore> = Arc::new(KeyringStore::for_data_dir(&dir));
            let app = App::open(dir.clone(), store.clone(), secrets.clone(), events)?;
            Ok(Core { dir, store, secrets, app })
        });
        Self { core, requested_dir, handle, opened_bundle: Mutex::new(bundle) }
    }

    /// The opened core, or the start-up error.
    pub fn core(&self) -> Result<&Core, IpcError> {
        self.core.as_ref().map_err(Clone::clone)
    }

    /// Hands over the bundle to install, once.
    pub fn take_opened_bundle(&self) -> Option<PathBuf> {
        self.opened_bundle.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }

    /// Remembers a bundle a later launch was given, for the window to take.
    pub fn open_bundle(&self, path: PathBuf) {
        *self.opened_bundle.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(path);
    }

    /// The app services, or the start-up error.
    pub fn app(&self) -> Result<App, IpcError> {
        Ok(self.core()?.app.clone())
    }
}
