//! The roots Patchbay shares with MCP servers (`roots/list`): every
//! knowledge-base folder and the folders the user chose to share.
//!
//! The shared folders are a setting ([`SHARED_FOLDERS_KEY`]), stored as
//! canonical paths and changed one transaction at a time. [`effective`] joins
//! them with the knowledge-base folders into the list the registry announces
//! ([`McpRegistry::set_roots`](crate::mcp::McpRegistry::set_roots)); a server
//! whose `share_roots` is off sees none of them.

use std::path::{Path, PathBuf};

use crate::folder::{self, FolderError};
use crate::mcp::McpRoot;
use crate::rag::{KnowledgeBase, RagError};
use crate::store::{Store, StoreError};

/// The setting holding the shared folders (a JSON list of paths).
pub const SHARED_FOLDERS_KEY: &str = "mcp.shared_folders";

/// Errors of the shared folders.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RootsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Rag(#[from] RagError),
    /// The folder to share does not exist or is not a folder.
    #[error(transparent)]
    Folder(#[from] FolderError),
    /// The folder is shared already.
    #[error("{} is shared already", path.display())]
    AlreadyShared { path: PathBuf },
    /// The folder to stop sharing is not shared.
    #[error("{} is not a shared folder", path.display())]
    NotShared { path: PathBuf },
}

/// The folders the user shares with MCP servers, in the order they were added.
#[derive(Debug, Clone)]
pub struct SharedFolders {
    store: Store,
}

impl SharedFolders {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// The shared folders.
    pub fn list(&self) -> Result<Vec<PathBuf>, RootsError> {
        Ok(self.store.setting::<Vec<PathBuf>>(SHARED_FOLDERS_KEY)?.unwrap_or_default())
    }

    /// Shares a folder (stored as its canonical path, which is returned).
    pub fn add(&self, path: &Path) -> Result<PathBuf, RootsError> {
        let canonical = folder::canonical(path)?;
        self.store.update_setting(SHARED_FOLDERS_KEY, |folders: &mut Option<Vec<PathBuf>>| {
            let folders = folders.get_or_insert_with(Vec::new);
            if folders.contains(&canonical) {
                return Err(RootsError::AlreadyShared { path: canonical.clone() });
            }
            folders.push(canonical.clone());
            Ok(())
        })?;
        Ok(canonical)
    }

    /// Stops sharing a folder, named as stored or by any path to it.
    pub fn remove(&self, path: &Path) -> Result<(), RootsError> {
        let canonical = std::fs::canonicalize(path).ok();
        self.store.update_setting(SHARED_FOLDERS_KEY, |folders: &mut Option<Vec<PathBuf>>| {
            let folders = folders.get_or_insert_with(Vec::new);
            let at = folders
                .iter()
                .position(|f| f == path || Some(f) == canonical.as_ref())
                .ok_or_else(|| RootsError::NotShared { path: path.to_path_buf() })?;
            folders.remove(at);
            Ok(())
        })
    }
}

/// The folders servers see: the knowledge-base folders, then the shared
/// folders, each once.
pub fn folders(kb: &KnowledgeBase, shared: &SharedFolders) -> Result<Vec<PathBuf>, RootsError> {
    let mut folders = kb.folders()?;
    for folder in shared.list()? {
        if !folders.contains(&folder) {
            folders.push(folder);
        }
    }
    Ok(folders)
}

/// [`folders`] as the roots the registry announces.
pub fn effective(kb: &KnowledgeBase, shared: &SharedFolders) -> Result<Vec<McpRoot>, RootsError> {
    Ok(folders(kb, shared)?.iter().map(|f| McpRoot::from_path(f)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> SharedFolders {
        SharedFolders::new(Store::open_in_memory().unwrap())
    }

    #[test]
    fn folders_are_shared_once_by_canonical_path_and_removed_by_any_path() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("notes");
        std::fs::create_dir(&folder).unwrap();
        let shared = shared();
        let stored = shared.add(&folder.join("..").join("notes")).unwrap();
        assert_eq!(stored, std::fs::canonicalize(&folder).unwrap());
        assert!(matches!(shared.add(&folder), Err(RootsError::AlreadyShared { .. })));
        assert_eq!(shared.list().unwrap(), vec![stored.clone()]);
        shared.remove(&folder.join(".")).unwrap();
        assert!(shared.list().unwrap().is_empty());
        assert!(matches!(shared.remove(&stored), Err(RootsError::NotShared { .. })));
    }

    #[test]
    fn missing_folders_and_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x").unwrap();
        let shared = shared();
        assert!(matches!(shared.add(&dir.path().join("nope")), Err(RootsError::Folder(FolderError::NotFound { .. }))));
        assert!(matches!(shared.add(&file), Err(RootsError::Folder(FolderError::NotAFolder { .. }))));
        assert!(shared.list().unwrap().is_empty());
    }
}
