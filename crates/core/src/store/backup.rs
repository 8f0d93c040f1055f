//! Backups of the database, and restoring one.
//!
//! A backup is a consistent copy taken while Patchbay runs (`VACUUM INTO`):
//! conversations, settings, servers, providers, the knowledge base's index.
//! API keys and other secrets stay in the OS keyring and are not in it.
//!
//! A restore never replaces the database under a running store. It is staged:
//! the backup is checked (an SQLite file that passes `quick_check`, with a
//! Patchbay schema this build can open) and copied to `restore.db` in the data
//! directory. The next [`Store::open`](super::Store::open) that finds no other
//! process using the data directory moves the current database aside to
//! `patchbay.db.before-restore-<ms>` (nothing is deleted) and puts the backup
//! in its place.
//!
//! A version of Patchbay that opens a database another version used last
//! (after an update) first copies it to `backups/` beside it, so an update
//! that goes wrong, or a return to the older version, never costs data.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::migrate::{current_version, latest_version};
use super::session::someone_holds;
use super::{Store, StoreError, classify};
use crate::paths::DataDir;

/// The staged restore, inside the data directory.
const STAGED: &str = "restore.db";

/// What a backup wrote.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Backup {
    pub path: PathBuf,
    pub bytes: u64,
}

impl Store {
    /// Writes a consistent copy of the database to `to`. An existing file there
    /// is replaced only with `replace` (a save dialog asked), and only once the
    /// copy is complete, so a failed backup never costs an earlier one.
    pub fn backup(&self, to: &Path, replace: bool) -> Result<Backup, StoreError> {
        if to.exists() && !replace {
            return Err(StoreError::Backup { path: to.to_path_buf(), reason: "a file is already there".into() });
        }
        // A connection of its own: the copy reads a snapshot (WAL) and never holds
        // up the app's connection, however large the database.
        let path = &self.inner.path;
        let source =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                .map_err(|e| classify(path, e))?;
        copy(&source, to)?;
        let bytes = std::fs::metadata(to).map(|m| m.len()).unwrap_or(0);
        Ok(Backup { path: to.to_path_buf(), bytes })
    }
}

/// The setting that names the version of Patchbay that opened the database last.
const OPENED_BY: &str = "app.version";

/// This build's version.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The folder, beside the database, of the copies taken before a new version opened it.
pub const UPGRADE_BACKUPS: &str = "backups";

/// Before this version first opens a database another version (or one from
/// before versions were recorded) used: a copy in [`UPGRADE_BACKUPS`], named
/// after both versions. `schema` is the database's schema version (0: new).
/// A copy that cannot be written stops the open when the schema would change.
pub(super) fn before_new_version(conn: &Connection, path: &Path, schema: i64) -> Result<(), StoreError> {
    if schema == 0 {
        return Ok(());
    }
    let last: Option<String> = conn
        .query_row("SELECT value FROM settings WHERE key = ?1", [OPENED_BY], |r| r.get(0))
        .ok()
        .and_then(|v: String| serde_json::from_str(&v).ok());
    if last.as_deref() == Some(VERSION) {
        return Ok(());
    }
    // Only a version's characters in a file name, whatever the database holds.
    let from: String = last
        .unwrap_or_else(|| format!("schema{schema}"))
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
        .collect();
    let dir = path.parent().unwrap_or(Path::new(".")).join(UPGRADE_BACKUPS);
    let to = dir.join(format!("patchbay-{from}-before-{VERSION}.db"));
    let copied = std::fs::create_dir_all(&dir)
        .map_err(|e| StoreError::Backup { path: dir.clone(), reason: e.to_string() })
        .and_then(|()| copy(conn, &to));
    match copied {
        Ok(()) => {
            tracing::info!(from, to = VERSION, backup = %to.display(), "a new version opens the database: copied it first");
            Ok(())
        }
        Err(e) if schema < latest_version() => Err(StoreError::Backup {
            path: to,
            reason: format!(
                "Patchbay {VERSION} keeps a copy of the database before it updates the database's layout, and could not: {e}. Free some space or fix the folder's permissions, then start it again"
            ),
        }),
        Err(e) => {
            tracing::warn!("could not copy the database before this version opened it: {e}");
            Ok(())
        }
    }
}

/// Records that this version opened the database (written only when it changed).
pub(super) fn record_version(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let value = serde_json::to_string(VERSION).unwrap_or_default();
    conn.execute(
        "INSERT INTO settings(key, value) VALUES (?1, ?2) \
         ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE value IS NOT excluded.value",
        (OPENED_BY, value),
    )
    .map_err(|e| classify(path, e))
    .map(drop)
}

/// A consistent copy of the open database at `to`, written under a temporary
/// name and renamed, so `to` is never half written.
fn copy(conn: &Connection, to: &Path) -> Result<(), StoreError> {
    let part = with_suffix(to, ".part");
    let _ = std::fs::remove_file(&part);
    if let Err(e) = conn.execute("VACUUM INTO ?1", [part.to_string_lossy()]) {
        let _ = std::fs::remove_file(&part);
        return Err(classify(to, e));
    }
    std::fs::rename(&part, to).map_err(|e| StoreError::Backup { path: to.to_path_buf(), reason: e.to_string() })
}

/// Checks that `file` is a Patchbay backup this build can open and stages it
/// to replace the database at the next start; returns the schema version it has.
pub fn stage_restore(dir: &DataDir, file: &Path) -> Result<i64, StoreError> {
    let version = check_backup(file)?;
    dir.prepare()?;
    let staged = dir.path().join(STAGED);
    let part = with_suffix(&staged, ".part");
    std::fs::copy(file, &part)
        .and_then(|_| std::fs::rename(&part, &staged))
        .map_err(|e| StoreError::Backup { path: file.to_path_buf(), reason: format!("copying it failed: {e}") })?;
    Ok(version)
}

/// Whether a restore waits for the next start.
pub fn restore_staged(dir: &DataDir) -> bool {
    dir.path().join(STAGED).is_file()
}

fn check_backup(file: &Path) -> Result<i64, StoreError> {
    let refuse = |reason: String| StoreError::Backup { path: file.to_path_buf(), reason };
    if !file.is_file() {
        return Err(refuse("there is no such file".into()));
    }
    let conn = Connection::open_with_flags(file, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| classify(file, e))?;
    let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(|e| classify(file, e))?;
    if check != "ok" {
        return Err(refuse(format!("it is damaged ({check})")));
    }
    let version = current_version(&conn).map_err(|e| classify(file, e))?;
    let latest = latest_version();
    if version > latest {
        return Err(StoreError::NewerSchema { path: file.to_path_buf(), found: version, supported: latest });
    }
    let has_conversations: bool = conn
        .query_row("SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'conversations'", [], |r| {
            r.get(0)
        })
        .map_err(|e| classify(file, e))?;
    if version < 1 || !has_conversations {
        return Err(refuse("it is an SQLite database, but not one of Patchbay's".into()));
    }
    Ok(version)
}

/// Puts a staged restore in place, unless another process uses the data
/// directory (then it waits for a later start). Returns where the replaced
/// database was kept.
pub(super) fn apply_staged(dir: &DataDir) -> Result<Option<PathBuf>, StoreError> {
    let staged = dir.path().join(STAGED);
    if !staged.is_file() {
        return Ok(None);
    }
    if someone_holds(&dir.path().join("sessions")) {
        tracing::warn!(path = %staged.display(), "a restore waits: another Patchbay process uses this data folder");
        return Ok(None);
    }
    let database = dir.database();
    let kept = with_suffix(&database, &format!(".before-restore-{}", crate::clock::now_ms()));
    let fail =
        |e: std::io::Error| StoreError::Backup { path: staged.clone(), reason: format!("restoring it failed: {e}") };
    if database.exists() {
        std::fs::rename(&database, &kept).map_err(fail)?;
        // The write-ahead log belongs to the database it was written for.
        for suffix in ["-wal", "-shm"] {
            let side = with_suffix(&database, suffix);
            if side.exists() {
                std::fs::rename(&side, with_suffix(&kept, suffix)).map_err(fail)?;
            }
        }
    }
    std::fs::rename(&staged, &database).map_err(fail)?;
    Ok(database.exists().then_some(kept))
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conversations(store: &Store) -> i64 {
        store.read(|c| c.query_row("SELECT count(*) FROM conversations", [], |r| r.get(0))).unwrap()
    }

    fn add_conversation(store: &Store, title: &str) {
        store
            .write(|tx| {
                tx.execute("INSERT INTO conversations(title, created_at, updated_at) VALUES (?1, 0, 0)", [title])
                    .map_err(|e| store.error(e))
            })
            .unwrap();
    }

    #[test]
    fn a_backup_is_a_consistent_copy_and_never_overwrites() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&DataDir::new(tmp.path().join("data"))).unwrap();
        add_conversation(&store, "kept");
        let to = tmp.path().join("backup.db");
        let backup = store.backup(&to, false).unwrap();
        assert!(backup.bytes > 0 && !with_suffix(&to, ".part").exists());
        let copy = Connection::open(&to).unwrap();
        let title: String = copy.query_row("SELECT title FROM conversations", [], |r| r.get(0)).unwrap();
        assert_eq!(title, "kept");
        let again = store.backup(&to, false).unwrap_err();
        assert!(again.to_string().contains("a file is already there"), "{again}");
        add_conversation(&store, "added later");
        store.backup(&to, true).unwrap();
        let copy = Connection::open(&to).unwrap();
        let n: i64 = copy.query_row("SELECT count(*) FROM conversations", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 2, "replaced, when asked to, by the newer copy");
    }

    #[test]
    fn a_new_version_copies_the_database_before_it_first_opens_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("data"));
        let backups = || -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(dir.path().join(UPGRADE_BACKUPS))
                .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
                .unwrap_or_default();
            names.sort();
            names
        };
        {
            let store = Store::open(&dir).unwrap();
            add_conversation(&store, "made by 0.0.9");
            assert!(backups().is_empty(), "a new database has nothing to keep");
            // As if version 0.0.9 (and a hostile name) had opened it last.
            store.set_setting(OPENED_BY, &"0.0.9/../x").unwrap();
        }
        let store = Store::open(&dir).unwrap();
        let expected = format!("patchbay-0.0.9..x-before-{VERSION}.db");
        assert_eq!(backups(), std::slice::from_ref(&expected));
        let copy = Connection::open(dir.path().join(UPGRADE_BACKUPS).join(&expected)).unwrap();
        let title: String = copy.query_row("SELECT title FROM conversations", [], |r| r.get(0)).unwrap();
        assert_eq!(title, "made by 0.0.9");
        assert_eq!(store.setting::<String>(OPENED_BY).unwrap().as_deref(), Some(VERSION));
        drop(store);
        Store::open(&dir).unwrap();
        assert_eq!(backups().len(), 1, "the same version again copies nothing");
    }

    #[test]
    fn a_layout_change_waits_while_an_older_patchbay_has_the_database_open() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("data"));
        let running = Store::open(&dir).unwrap();
        add_conversation(&running, "kept");
        // As if this database were one step behind this build, open in the older app.
        let older = latest_version() - 1;
        Connection::open(dir.database()).unwrap().pragma_update(None, "user_version", older).unwrap();
        let Err(refused) = Store::open(&dir) else { panic!("the layout was changed under a running Patchbay") };
        assert!(matches!(refused, StoreError::OpenInOlder { .. }), "{refused}");
        assert!(refused.to_string().contains("close that one"), "{refused}");
        let version: i64 =
            Connection::open(dir.database()).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, older, "nothing was migrated");
        assert!(!dir.path().join(UPGRADE_BACKUPS).exists(), "nor copied");
        assert_eq!(conversations(&running), 1);
    }

    #[test]
    fn a_staged_restore_replaces_the_database_at_the_next_open_and_keeps_the_old_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("data"));
        let backup = tmp.path().join("backup.db");
        {
            let store = Store::open(&dir).unwrap();
            add_conversation(&store, "before the backup");
            store.backup(&backup, false).unwrap();
            add_conversation(&store, "after the backup");
            assert_eq!(stage_restore(&dir, &backup).unwrap(), store.schema_version().unwrap());
            assert!(restore_staged(&dir));
            // Not while this store is open: the restore waits.
            assert_eq!(apply_staged(&dir).unwrap(), None);
        }
        let store = Store::open(&dir).unwrap();
        assert_eq!(conversations(&store), 1, "the backup's one conversation");
        assert!(!restore_staged(&dir));
        let kept: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("patchbay.db.before-restore-") && !n.ends_with("-wal") && !n.ends_with("-shm"))
            .collect();
        assert_eq!(kept.len(), 1, "{kept:?}");
        let old = Connection::open(dir.path().join(&kept[0])).unwrap();
        let n: i64 = old.query_row("SELECT count(*) FROM conversations", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 2, "the replaced database is kept whole");
    }

    #[test]
    fn a_damaged_database_is_replaced_by_a_staged_backup_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let backup = tmp.path().join("backup.db");
        {
            let elsewhere = Store::open(&DataDir::new(tmp.path().join("elsewhere"))).unwrap();
            add_conversation(&elsewhere, "from the backup");
            elsewhere.backup(&backup, false).unwrap();
        }
        let dir = DataDir::new(tmp.path().join("data"));
        std::fs::create_dir_all(dir.path()).unwrap();
        let garbage = b"this was a database until the disk went bad, now it is only these words";
        std::fs::write(dir.database(), garbage).unwrap();
        assert!(matches!(Store::open(&dir), Err(StoreError::NotADatabase { .. })));

        stage_restore(&dir, &backup).unwrap();
        let store = Store::open(&dir).unwrap();
        assert_eq!(conversations(&store), 1);
        let kept = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.to_string_lossy().contains("patchbay.db.before-restore-"))
            .expect("the damaged file is kept");
        assert_eq!(std::fs::read(kept).unwrap(), garbage);
    }

    #[test]
    fn what_is_not_a_usable_backup_is_refused_and_nothing_is_staged() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("data"));
        let text = tmp.path().join("notes.txt");
        std::fs::write(&text, "not a database at all, just some text long enough to fill a header").unwrap();
        assert!(matches!(stage_restore(&dir, &text), Err(StoreError::NotADatabase { .. })));
        let other = tmp.path().join("other.db");
        Connection::open(&other).unwrap().execute_batch("CREATE TABLE t(x); PRAGMA user_version = 1;").unwrap();
        let err = stage_restore(&dir, &other).unwrap_err();
        assert!(err.to_string().contains("not one of Patchbay's"), "{err}");
        let newer = tmp.path().join("newer.db");
        Connection::open(&newer)
            .unwrap()
            .execute_batch("CREATE TABLE conversations(x); PRAGMA user_version = 9999;")
            .unwrap();
        assert!(matches!(stage_restore(&dir, &newer), Err(StoreError::NewerSchema { found: 9999, .. })));
        let missing = stage_restore(&dir, &tmp.path().join("nope.db")).unwrap_err();
        assert!(missing.to_string().contains("no such file"), "{missing}");
        assert!(!restore_staged(&dir));
    }
}
