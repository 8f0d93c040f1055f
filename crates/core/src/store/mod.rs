//! SQLite storage: one database file per data directory.
//!
//! [`Store`] owns the connection, turns on WAL and foreign keys, and runs the
//! versioned migrations in [`migrate`] when it opens. It is cheap to clone and
//! safe to share between tasks; every call holds the connection only briefly.
//! Other modules keep their own tables (added as migrations here) and reach
//! them through [`Store::read`] and [`Store::write`], which runs in one
//! transaction. A run of many small transactions (knowledge-base indexing)
//! holds a [`BulkWrites`] guard: WAL checkpoints, each with its `fsync`s, then
//! happen once, on a background thread after the run, instead of every
//! thousand pages inside it.

pub mod backup;
mod migrate;
mod session;
mod settings;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, ErrorCode, OpenFlags, Transaction};

use crate::paths::{DataDir, PathsError};

use session::Session;

pub use backup::{Backup, restore_staged, stage_restore};
pub use migrate::{MIGRATIONS, Migration, latest_version};

/// Errors from opening or using the database.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The data directory could not be prepared.
    #[error(transparent)]
    DataDir(#[from] PathsError),
    /// The file is not an SQLite database, or it is damaged. It is left untouched.
    #[error("{path} is not a usable Patchbay database ({detail}); it was left untouched, move it away to start fresh")]
    NotADatabase { path: PathBuf, detail: String },
    /// The database was written by a newer Patchbay.
    #[error(
        "{path} was written by a newer Patchbay (schema version {found}, this build knows up to {supported}); \
         it was left untouched, upgrade Patchbay to open it"
    )]
    NewerSchema { path: PathBuf, found: i64, supported: i64 },
    /// A migration failed; the database stays at its previous version.
    #[error("migrating {path} to schema version {version} ({name}) failed: {source}")]
    Migration {
        path: PathBuf,
        version: i64,
        name: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    /// The disk is full: the write was rolled back, and nothing earlier was lost.
    #[error("the disk holding {path} is full: the last change was not saved")]
    DiskFull { path: PathBuf },
    /// Another process holds a lock for too long.
    #[error("{path} is locked by another process")]
    Busy { path: PathBuf },
    /// An older Patchbay, still running, has the database open, and this
    /// version must change its layout first.
    #[error(
        "{path} is open in another Patchbay (an older version, still running), and this version must update the database's layout first: close that one (or restart it after an update), then try again"
    )]
    OpenInOlder { path: PathBuf },
    /// A stored value could not be decoded.
    #[error("stored value {what} is invalid: {source}")]
    Decode {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// The session lease (see [`Store::session_id`]) could not be taken.
    #[error("cannot create the session lock in {dir}: {source}")]
    Session {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A backup could not be written, or a file cannot be restored from.
    #[error("{path}: {reason}")]
    Backup { path: PathBuf, reason: String },
    /// Any other SQLite failure.
    #[error("database error in {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
}

/// Shared handle to the database.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    conn: Mutex<Connection>,
    session: Session,
    /// Live [`BulkWrites`] guards.
    bulk: AtomicUsize,
}

/// SQLite's default: a checkpoint once the WAL holds this many pages.
const CHECKPOINT_PAGES: i64 = 1000;

/// During bulk writes: about 40 MB of WAL (4 KiB pages) between checkpoints.
const BULK_CHECKPOINT_PAGES: i64 = 10_000;

/// Defers WAL checkpoints while it lives (see [`Store::bulk_writes`]).
pub struct BulkWrites {
    store: Store,
}

impl Drop for BulkWrites {
    fn drop(&mut self) {
        if self.store.inner.bulk.fetch_sub(1, Ordering::SeqCst) != 1 {
            return;
        }
        // Every transaction is committed to the WAL already, as after any
        // commit (synchronous = NORMAL): moving the pages into the database
        // file is housekeeping, done off the writer's path. TRUNCATE also shrinks the WAL file back; with a reader
        // in another process it checkpoints what it can, and the WAL is reused.
        let store = self.store.clone();
        std::thread::spawn(move || {
            let conn = store.lock();
            if store.inner.bulk.load(Ordering::SeqCst) > 0 {
                return; // a new run began meanwhile; its last guard checkpoints
            }
            let restored = conn.pragma_update(None, "wal_autocheckpoint", CHECKPOINT_PAGES);
            let checkpoint = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
            if let Err(e) = restored.and(checkpoint) {
                tracing::warn!(path = %store.inner.path.display(), "checkpoint after bulk writes: {e}");
            }
        });
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.inner.path).finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (creating if needed) the database in `dir` and migrates it to the latest schema.
    ///
    /// A file that is not a database, or one from a newer Patchbay, is reported and never modified.
    pub fn open(dir: &DataDir) -> Result<Self, StoreError> {
        dir.prepare()?;
        if let Some(kept) = backup::apply_staged(dir)? {
            tracing::info!(kept = %kept.display(), "restored the staged backup; the database it replaced is kept");
        }
        let path = dir.database();
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| classify(&path, e))?;
        let session = Session::acquire(&dir.path().join("sessions"))
            .map_err(|source| StoreError::Session { dir: dir.path().join("sessions"), source })?;
        Self::init(conn, path, session)
    }

    /// An in-memory database with the full schema, for tests.
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|e| classify(&path, e))?;
        Self::init(conn, path, Session::in_memory())
    }

    fn init(mut conn: Connection, path: PathBuf, session: Session) -> Result<Self, StoreError> {
        // Reading the schema first surfaces "file is not a database" before anything is written.
        let version = migrate::current_version(&conn).map_err(|e| classify(&path, e))?;
        if version > latest_version() {
            return Err(StoreError::NewerSchema { path, found: version, supported: latest_version() });
        }
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(|e| classify(&path, e))?;
        conn.pragma_update(None, "foreign_keys", true).map_err(|e| classify(&path, e))?;
        if path != Path::new(":memory:") {
            let mode: String =
                conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(|e| classify(&path, e))?;
            debug_assert_eq!(mode.to_ascii_lowercase(), "wal");
            conn.pragma_update(None, "synchronous", "NORMAL").map_err(|e| classify(&path, e))?;
        }
        // Up to 32 MiB of page cache (the default is 2 MiB): knowledge-base
        // indexing writes many chunk rows per transaction.
        conn.pragma_update(None, "cache_size", -32_768).map_err(|e| classify(&path, e))?;
        if path != Path::new(":memory:") {
            // A layout change under a running older Patchbay would leave it on tables it does not know.
            if version > 0 && version < latest_version() && session.others_alive() {
                return Err(StoreError::OpenInOlder { path });
            }
            backup::before_new_version(&conn, &path, version)?;
        }
        migrate::run(&mut conn, &path, MIGRATIONS)?;
        if path != Path::new(":memory:") {
            backup::record_version(&conn, &path)?;
        }
        Ok(Self { inner: Arc::new(Inner { path, conn: Mutex::new(conn), session, bulk: AtomicUsize::new(0) }) })
    }

    /// Path of the database file (`:memory:` for in-memory stores).
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// This open store's session id: recorded on rows it is still writing
    /// (a streaming message), so other processes leave them alone.
    pub fn session_id(&self) -> &str {
        self.inner.session.id()
    }

    /// Whether the store that recorded `session` is still open in a running
    /// process (this one included). A process that died, however it died, is not.
    pub fn session_alive(&self, session: &str) -> bool {
        self.inner.session.is_alive(session)
    }

    /// The schema version the database is at.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.read(migrate::current_version)
    }

    /// Runs read-only work on the connection.
    pub fn read<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
        let conn = self.lock();
        f(&conn).map_err(|e| classify(&self.inner.path, e))
    }

    /// Runs `f` in one transaction, committed only if it returns `Ok`.
    ///
    /// `f` returns its own error type so that modules can fail with their own
    /// variants; SQLite errors convert into it through `From<StoreError>`.
    pub fn write<T, E>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| E::from(classify(&self.inner.path, e)))?;
        let value = f(&tx)?;
        tx.commit().map_err(|e| E::from(classify(&self.inner.path, e)))?;
        Ok(value)
    }

    /// Defers WAL checkpoints until the returned guard (and every other live
    /// one) is dropped, then checkpoints once. Each [`Store::write`] still
    /// commits on its own: only when the committed pages reach the database
    /// file changes. For runs of many small transactions, where the periodic
    /// checkpoints' `fsync`s would cost more than the writes.
    pub fn bulk_writes(&self) -> Result<BulkWrites, StoreError> {
        let conn = self.lock();
        if self.inner.bulk.fetch_add(1, Ordering::SeqCst) == 0
            && let Err(e) = conn.pragma_update(None, "wal_autocheckpoint", BULK_CHECKPOINT_PAGES)
        {
            self.inner.bulk.fetch_sub(1, Ordering::SeqCst);
            return Err(classify(&self.inner.path, e));
        }
        Ok(BulkWrites { store: self.clone() })
    }

    /// Maps an SQLite error met by a caller of [`Store::read`] or [`Store::write`].
    pub fn error(&self, e: rusqlite::Error) -> StoreError {
        classify(&self.inner.path, e)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-written (the
        // transaction rolls back on drop), so a poisoned lock is safe to reuse.
        self.inner.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Turns an SQLite error into the variant a caller can act on, by error code.
fn classify(path: &Path, e: rusqlite::Error) -> StoreError {
    let path = path.to_path_buf();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            StoreError::NotADatabase { path, detail: e.to_string() }
        }
        Some(ErrorCode::DiskFull) => StoreError::DiskFull { path },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Busy { path },
        _ => StoreError::Sqlite { path, source: e },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn autocheckpoint(store: &Store) -> i64 {
        store.read(|c| c.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))).unwrap()
    }

    #[test]
    fn bulk_writes_defer_checkpoints_until_the_last_guard_then_truncate_the_wal() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let store = Store::open(&dir).unwrap();
        let wal = PathBuf::from(format!("{}-wal", store.path().display()));
        assert_eq!(autocheckpoint(&store), CHECKPOINT_PAGES);
        let outer = store.bulk_writes().unwrap();
        let inner = store.bulk_writes().unwrap();
        assert_eq!(autocheckpoint(&store), BULK_CHECKPOINT_PAGES);
        // Each write still commits on its own; the pages stay in the WAL.
        for i in 0..2000 {
            store
                .write(|tx| {
                    tx.execute(r#"INSERT INTO settings (key, value) VALUES (?1, '"x"')"#, [format!("k{i}")])
                        .map_err(|e| store.error(e))
                })
                .unwrap();
        }
        let pages = std::fs::metadata(&wal).unwrap().len() / 4096;
        assert!(pages > CHECKPOINT_PAGES as u64, "{pages} pages: a checkpoint ran during the bulk writes");
        drop(inner);
        assert_eq!(autocheckpoint(&store), BULK_CHECKPOINT_PAGES, "another guard still lives");
        drop(outer);
        // The checkpoint runs on its own thread: wait for it, bounded.
        let truncated = (0..500).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            std::fs::metadata(&wal).unwrap().len() == 0
        });
        assert!(truncated, "the WAL was not checkpointed and truncated");
        assert_eq!(autocheckpoint(&store), CHECKPOINT_PAGES);
        let count: i64 = store.read(|c| c.query_row("SELECT count(*) FROM settings", [], |r| r.get(0))).unwrap();
        assert!(count >= 2000);
    }
}
