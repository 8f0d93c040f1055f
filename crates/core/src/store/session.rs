//! Which process writes: one session lease per open [`Store`](super::Store).
//!
//! Opening a database file creates `sessions/<id>.lock` next to it and holds an
//! exclusive OS file lock on it for as long as the store is open. The kernel
//! drops the lock when the process exits in any way (`kill -9` included), so
//! another process can tell a live writer from a dead one: if it can take the
//! lock, the session is gone. Start-up recovery uses this to mark messages a
//! crashed process left half-written, without touching a turn that the desktop
//! app (or another `patchbay` command) is still streaming.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// The lease of this process's open store.
#[derive(Debug)]
pub(super) struct Session {
    id: String,
    /// The lock file and its open handle; `None` for in-memory stores.
    file: Option<(PathBuf, File)>,
}

impl Session {
    /// Takes a new lease in `dir` (created if missing).
    pub(super) fn acquire(dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let id = uuid::Uuid::new_v4().simple().to_string();
        let path = lock_path(dir, &id);
        let file = OpenOptions::new().create_new(true).write(true).open(&path)?;
        file.lock()?;
        Ok(Self { id, file: Some((path, file)) })
    }

    /// A lease for a database no other process can open.
    pub(super) fn in_memory() -> Self {
        Self { id: uuid::Uuid::new_v4().simple().to_string(), file: None }
    }

    pub(super) fn id(&self) -> &str {
        &self.id
    }

    /// Whether session `id` is still held by a running process.
    pub(super) fn is_alive(&self, id: &str) -> bool {
        if id == self.id {
            return true;
        }
        let Some((own, _)) = &self.file else { return false };
        let Some(dir) = own.parent() else { return false };
        if !is_session_id(id) {
            return false;
        }
        let path = lock_path(dir, id);
        let file = match File::options().write(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
            // Unknown state: assume alive, so a live turn is never marked interrupted.
            Err(_) => return true,
        };
        match file.try_lock() {
            Ok(()) => {
                // The owner is gone; clean up its file.
                let _ = std::fs::remove_file(&path);
                false
            }
            Err(TryLockError::WouldBlock) => true,
            Err(TryLockError::Error(_)) => true,
        }
    }
}

impl Session {
    /// Whether another open store (in this process or another) holds a session
    /// beside this one.
    pub(super) fn others_alive(&self) -> bool {
        let Some((own, _)) = &self.file else { return false };
        let Some(dir) = own.parent() else { return false };
        let Ok(entries) = std::fs::read_dir(dir) else { return false };
        entries.filter_map(Result::ok).any(|entry| {
            let name = entry.file_name();
            let id = Path::new(&name).file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
            entry.path() != *own && is_session_id(&id) && self.is_alive(&id)
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some((path, _file)) = &self.file {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Whether any open store, in this process or another, holds a session in `dir`.
pub(super) fn someone_holds(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.filter_map(Result::ok).any(|entry| {
        let path = entry.path();
        let is_lock = path.extension().is_some_and(|e| e == "lock");
        is_lock
            && File::options().write(true).open(&path).is_ok_and(|file| match file.try_lock() {
                Ok(()) => false,
                Err(TryLockError::WouldBlock | TryLockError::Error(_)) => true,
            })
    })
}

fn lock_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.lock"))
}

/// Session ids are hex uuids; anything else is never turned into a path.
fn is_session_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lease_is_alive_and_a_released_one_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let mine = Session::acquire(tmp.path()).unwrap();
        let other = Session::acquire(tmp.path()).unwrap();
        let other_id = other.id().to_owned();
        assert!(mine.is_alive(mine.id()));
        assert!(mine.is_alive(&other_id), "a lease held by another open store is alive");
        drop(other);
        assert!(!mine.is_alive(&other_id), "a dropped lease is gone");
        assert!(!mine.is_alive("../../etc/passwd"), "not a session id");
    }

    #[test]
    fn a_lock_file_left_by_a_dead_process_is_not_alive_and_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let mine = Session::acquire(tmp.path()).unwrap();
        // What a killed process leaves behind: the file, with no lock on it.
        let dead = "0123456789abcdef0123456789abcdef";
        std::fs::write(lock_path(tmp.path(), dead), b"").unwrap();
        assert!(!mine.is_alive(dead));
        assert!(!lock_path(tmp.path(), dead).exists());
    }
}
