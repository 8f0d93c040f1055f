//! The folders shared with MCP servers as roots: every knowledge-base folder
//! and the folders the user chose ([`SharedFolders`]).
//!
//! Whenever either list changes, the registry gets the new roots
//! ([`Host::share_roots`](crate::host::Host::share_roots), which tells the
//! servers).

use std::path::Path;

use super::views::RootsView;
use super::{App, AppError};
use crate::roots::SharedFolders;

impl App {
    fn shared_folders(&self) -> SharedFolders {
        SharedFolders::new(self.inner.store.clone())
    }

    /// The shared folders and the knowledge-base folders.
    pub fn list_roots(&self) -> Result<RootsView, AppError> {
        let text = |paths: Vec<std::path::PathBuf>| paths.iter().map(|p| p.display().to_string()).collect();
        Ok(RootsView { shared: text(self.shared_folders().list()?), knowledge: text(self.kb().folders()?) })
    }

    /// Shares a folder with every server whose `share_roots` is on.
    pub async fn add_shared_folder(&self, path: &str) -> Result<RootsView, AppError> {
        self.shared_folders().add(Path::new(path.trim()))?;
        self.sync_roots().await?;
        self.list_roots()
    }

    /// Stops sharing a folder (a knowledge-base folder stays shared).
    pub async fn remove_shared_folder(&self, path: &str) -> Result<RootsView, AppError> {
        self.shared_folders().remove(Path::new(path.trim()))?;
        self.sync_roots().await?;
        self.list_roots()
    }

    /// Gives the registry the roots as stored now.
    pub(crate) async fn sync_roots(&self) -> Result<(), AppError> {
        Ok(self.inner.host.share_roots().await?)
    }

    /// [`Self::sync_roots`] in the background (after a knowledge-base folder changed).
    pub(crate) fn spawn_sync_roots(&self) -> Result<(), AppError> {
        let app = self.clone();
        self.spawn(async move {
            if let Err(e) = app.sync_roots().await {
                tracing::warn!("the roots shared with MCP servers were not updated: {e}");
            }
        })
    }
}
