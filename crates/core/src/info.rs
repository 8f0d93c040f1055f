//! Facts about this installation, shown by `patchbay info` and the app's `app_info` command.

use std::path::PathBuf;

use serde::Serialize;

use crate::paths::DataDir;
use crate::secrets::{KeyringStatus, SecretStore};
use crate::store::{Store, StoreError};

/// Version, data location, schema and keyring status.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct AppInfo {
    /// Patchbay's version.
    pub version: String,
    /// The data directory in use.
    pub data_dir: PathBuf,
    /// The SQLite database file.
    pub database: PathBuf,
    /// The database's schema version.
    pub schema_version: i64,
    /// Whether secrets can be stored.
    pub keyring: KeyringStatus,
    /// The desktop app's log file (it exists once the app has run).
    pub log_file: PathBuf,
}

impl AppInfo {
    /// Gathers the facts; fails only when the database cannot be read.
    pub fn gather(dir: &DataDir, store: &Store, secrets: &dyn SecretStore) -> Result<Self, StoreError> {
        Ok(Self {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            data_dir: dir.path().to_path_buf(),
            database: store.path().to_path_buf(),
            schema_version: store.schema_version()?,
            keyring: secrets.status(),
            log_file: dir.log_file(),
        })
    }
}
