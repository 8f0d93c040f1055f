//! What the app holds between commands: the data directory and the opened core.

use std::path::PathBuf;
use std::sync::Arc;

use patchbay_core::paths::DataDir;
use patchbay_core::secrets::{KeyringStore, SecretStore};
use patchbay_core::store::Store;

use crate::error::IpcError;

/// The core services, once opened.
pub struct Core {
    pub dir: DataDir,
    pub store: Store,
    pub secrets: Arc<dyn SecretStore>,
}

/// Managed Tauri state. `core` is an error when start-up failed; commands report it.
pub struct AppState {
    pub core: Result<Core, IpcError>,
}

impl AppState {
    /// Opens the core in the chosen (or default) data directory.
    pub fn open(data_dir: Option<PathBuf>) -> Self {
        let core = DataDir::resolve(data_dir).map_err(IpcError::from).and_then(|dir| {
            let store = Store::open(&dir)?;
            let secrets: Arc<dyn SecretStore> = Arc::new(KeyringStore::for_data_dir(&dir));
            Ok(Core { dir, store, secrets })
        });
        Self { core }
    }

    /// The opened core, or the start-up error.
    pub fn core(&self) -> Result<&Core, IpcError> {
        self.core.as_ref().map_err(Clone::clone)
    }
}
