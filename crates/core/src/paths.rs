//! Where Patchbay keeps its data.
//!
//! The data directory is chosen once per process, in this order: an explicit
//! path (`--data-dir`), the `PATCHBAY_DATA_DIR` environment variable, a folder
//! the user chose in Settings (named by [`LOCATION_FILE`] in the platform's
//! data directory), then the platform's data directory itself
//! (`~/.local/share/patchbay` on Linux). Nothing else in the core reads the
//! environment for paths; callers pass a [`DataDir`].

use std::path::{Path, PathBuf};

/// Environment variable that overrides the data directory.
pub const DATA_DIR_ENV: &str = "PATCHBAY_DATA_DIR";

/// The file in the platform's data directory that names the folder chosen in Settings.
pub const LOCATION_FILE: &str = "data-dir-location";

/// Errors from resolving or preparing the data directory.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathsError {
    /// The platform reports no data directory and none was given.
    #[error("no data directory: the platform reports none; pass --data-dir or set {DATA_DIR_ENV}")]
    NoPlatformDir,
    /// The path exists but is not a directory.
    #[error("data directory {path} is not usable: it exists and is not a directory")]
    NotADirectory { path: PathBuf },
    /// The directory could not be created or written.
    #[error("data directory {path} is not usable: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn platform_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("patchbay"))
}

/// The folder chosen in Settings, as recorded under `root`.
fn chosen_location(root: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(root.join(LOCATION_FILE)).ok()?;
    Some(PathBuf::from(text.trim())).filter(|p| p.is_absolute())
}

/// Records `path` under `root` (or clears the record when `path` is `root`).
fn choose_location(root: &Path, path: &Path) -> Result<(), PathsError> {
    let io = |source| PathsError::Io { path: root.to_owned(), source };
    let file = root.join(LOCATION_FILE);
    let path = DataDir::new(path);
    if path.path() == root {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(e)),
            _ => Ok(()),
        };
    }
    path.prepare()?;
    std::fs::create_dir_all(root).map_err(io)?;
    std::fs::write(&file, path.path().to_string_lossy().as_bytes()).map_err(io)
}

/// A resolved, absolute data directory. It may not exist yet; [`DataDir::prepare`] creates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir(PathBuf);

impl DataDir {
    /// Resolves the data directory from an explicit choice, the environment, or the platform default.
    pub fn resolve(explicit: Option<PathBuf>) -> Result<Self, PathsError> {
        let chosen = explicit
            .or_else(|| std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()).map(PathBuf::from))
            .or_else(|| platform_dir().map(|d| chosen_location(&d).unwrap_or(d)))
            .ok_or(PathsError::NoPlatformDir)?;
        Ok(Self::new(chosen))
    }

    /// Makes `path` the data directory of the next start (unless `--data-dir`
    /// or the environment choose another). Choosing the platform default
    /// removes the choice.
    pub fn choose_for_next_start(path: &Path) -> Result<(), PathsError> {
        let root = platform_dir().ok_or(PathsError::NoPlatformDir)?;
        choose_location(&root, path)
    }

    /// Wraps a path, made absolute against the current directory when relative.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let path =
            if path.is_relative() { std::env::current_dir().map(|cwd| cwd.join(&path)).unwrap_or(path) } else { path };
        Self(path)
    }

    /// The directory itself.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A short, stable fingerprint of the path (12 hex digits of its SHA-256): what keys
    /// per-data-dir resources outside it, such as keyring entries and the desktop app's
    /// single-instance lock.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(self.0.as_os_str().as_encoded_bytes());
        hex::encode(digest)[..12].to_owned()
    }

    /// The SQLite database inside it.
    pub fn database(&self) -> PathBuf {
        self.0.join("patchbay.db")
    }

    /// The desktop app's log file inside it (`logs/patchbay.log`, see [`crate::logfile`]).
    pub fn log_file(&self) -> PathBuf {
        self.0.join("logs").join("patchbay.log")
    }

    /// Creates the directory if needed and checks that it is a writable directory.
    pub fn prepare(&self) -> Result<(), PathsError> {
        let path = &self.0;
        if path.exists() && !path.is_dir() {
            return Err(PathsError::NotADirectory { path: path.clone() });
        }
        std::fs::create_dir_all(path).map_err(|source| PathsError::Io { path: path.clone(), source })?;
        // A probe write catches read-only mounts, which `metadata` cannot tell us about. Its name
        // is this call's own: another process (the CLI beside the window) or thread probing at
        // the same moment would otherwise remove it first, and the folder would be said unusable.
        static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let probe = path.join(format!(".write-probe-{}-{n}", std::process::id()));
        std::fs::write(&probe, b"ok")
            .and_then(|()| std::fs::remove_file(&probe))
            .map_err(|source| PathsError::Io { path: path.clone(), source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_processes_and_threads_may_prepare_one_folder_at_once() {
        let root = tempfile::tempdir().unwrap();
        let dir = DataDir::new(root.path().join("data"));
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..200 {
                        dir.prepare().unwrap();
                    }
                });
            }
        });
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "no probe is left behind: {left:?}");
    }

    #[test]
    fn a_folder_chosen_in_settings_is_used_until_the_default_is_chosen_again() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let chosen = elsewhere.path().join("patchbay-data");
        assert_eq!(chosen_location(root.path()), None);
        choose_location(root.path(), &chosen).unwrap();
        assert_eq!(chosen_location(root.path()), Some(chosen.clone()));
        assert!(chosen.is_dir(), "the chosen folder is created and checked when chosen");
        choose_location(root.path(), root.path()).unwrap();
        assert_eq!(chosen_location(root.path()), None);
        assert!(!root.path().join(LOCATION_FILE).exists());
    }

    #[test]
    fn an_unusable_chosen_folder_is_refused_and_not_recorded() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        let err = choose_location(root.path(), &file).unwrap_err();
        assert!(matches!(err, PathsError::NotADirectory { .. }), "{err}");
        assert_eq!(chosen_location(root.path()), None);
    }

    #[test]
    fn explicit_path_wins_and_is_made_absolute() {
        let dir = DataDir::resolve(Some(PathBuf::from("relative/dir"))).unwrap();
        assert!(dir.path().is_absolute());
        assert!(dir.path().ends_with("relative/dir"));
        assert_eq!(dir.database(), dir.path().join("patchbay.db"));
    }

    #[test]
    fn fingerprints_differ_by_path_and_are_stable() {
        let a = DataDir::new("/data/a");
        assert_eq!(a.fingerprint(), DataDir::new("/data/a").fingerprint());
        assert_ne!(a.fingerprint(), DataDir::new("/data/b").fingerprint());
        assert_eq!(a.fingerprint().len(), 12);
        assert!(a.fingerprint().chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn prepare_creates_missing_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("a/b/c"));
        dir.prepare().unwrap();
        assert!(dir.path().is_dir());
    }

    #[test]
    fn a_file_in_the_way_is_reported_not_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("taken");
        std::fs::write(&file, b"precious").unwrap();
        let err = DataDir::new(&file).prepare().unwrap_err();
        assert!(matches!(err, PathsError::NotADirectory { .. }), "{err}");
        assert!(err.to_string().contains("taken"));
        assert_eq!(std::fs::read(&file).unwrap(), b"precious");
    }
}
