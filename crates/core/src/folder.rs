//! A folder the user picks (for the knowledge base, or to share with MCP
//! servers): checked to exist and to be a folder, and kept as its canonical
//! path so the same folder is never added twice under two spellings.

use std::path::{Path, PathBuf};

/// Why a picked folder cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FolderError {
    /// Nothing exists at the path.
    #[error("folder {} does not exist", path.display())]
    NotFound { path: PathBuf },
    /// The path is a file, not a folder.
    #[error("{} is not a folder", path.display())]
    NotAFolder { path: PathBuf },
    /// The path could not be resolved.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The canonical path of the folder at `path`.
pub fn canonical(path: &Path) -> Result<PathBuf, FolderError> {
    let canonical = std::fs::canonicalize(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            FolderError::NotFound { path: path.to_path_buf() }
        } else {
            FolderError::Io { path: path.to_path_buf(), source }
        }
    })?;
    if !canonical.is_dir() {
        return Err(FolderError::NotAFolder { path: canonical });
    }
    Ok(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_made_canonical_and_anything_else_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        let file = dir.path().join("file.txt");
        std::fs::write(&file, "x").unwrap();
        let dotted = dir.path().join("inner/../inner");
        assert_eq!(canonical(&dotted).unwrap(), inner.canonicalize().unwrap());
        assert!(matches!(canonical(&dir.path().join("nope")), Err(FolderError::NotFound { .. })));
        assert!(matches!(canonical(&file), Err(FolderError::NotAFolder { .. })));
    }
}
