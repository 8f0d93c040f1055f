//! Versioned schema migrations, tracked in SQLite's `user_version`.
//!
//! Each migration is an SQL file under `migrations/`, applied once, in order,
//! in its own transaction. Versions only grow; a database whose version is
//! above [`latest_version`] was written by a newer build and is refused.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use super::StoreError;

/// One schema step.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// The `user_version` after this step.
    pub version: i64,
    /// Short name, for error messages.
    pub name: &'static str,
    /// The SQL to run.
    pub sql: &'static str,
}

/// Every migration, oldest first. Append only: never edit a released step.
pub const MIGRATIONS: &[Migration] = &[
    Migration { version: 1, name: "foundation", sql: include_str!("migrations/0001_foundation.sql") },
    Migration { version: 2, name: "config", sql: include_str!("migrations/0002_config.sql") },
    Migration { version: 3, name: "conversations", sql: include_str!("migrations/0003_conversations.sql") },
    Migration { version: 4, name: "rag", sql: include_str!("migrations/0004_rag.sql") },
    Migration { version: 6, name: "chat", sql: include_str!("migrations/0006_chat.sql") },
    Migration { version: 7, name: "mcp traces", sql: include_str!("migrations/0007_mcp_traces.sql") },
    Migration { version: 8, name: "chat streaming", sql: include_str!("migrations/0008_chat_streaming.sql") },
    Migration { version: 9, name: "conversation tree", sql: include_str!("migrations/0009_conversation_tree.sql") },
    Migration { version: 10, name: "rag terms", sql: include_str!("migrations/0010_rag_terms.sql") },
    Migration {
        version: 11,
        name: "pinned conversations",
        sql: include_str!("migrations/0011_pinned_conversations.sql"),
    },
    Migration { version: 12, name: "pinned grants", sql: include_str!("migrations/0012_pinned_grants.sql") },
    Migration { version: 13, name: "message error kind", sql: include_str!("migrations/0013_message_error_kind.sql") },
    Migration { version: 14, name: "kept results", sql: include_str!("migrations/0014_kept_results.sql") },
    Migration { version: 15, name: "schedules", sql: include_str!("migrations/0015_schedules.sql") },
    Migration { version: 16, name: "conversation ids", sql: include_str!("migrations/0016_conversation_ids.sql") },
    Migration {
        version: 17,
        name: "unavailable knowledge sources",
        sql: include_str!("migrations/0017_unavailable_sources.sql"),
    },
    Migration { version: 18, name: "postings generation", sql: include_str!("migrations/0018_kb_postings_gen.sql") },
];

/// The schema version this build writes.
pub fn latest_version() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

pub(super) fn current_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Applies every step of `steps` above the database's current version.
pub(super) fn run(conn: &mut Connection, path: &Path, steps: &[Migration]) -> Result<(), StoreError> {
    let current = current_version(conn).map_err(|e| super::classify(path, e))?;
    // Foreign keys are off while steps run (SQLite's procedure for rebuilding a
    // table: dropping the old one must not cascade), and checked before each commit.
    let enforced: bool =
        conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0)).map_err(|e| super::classify(path, e))?;
    conn.pragma_update(None, "foreign_keys", false).map_err(|e| super::classify(path, e))?;
    let result = steps.iter().filter(|m| m.version > current).try_for_each(|step| apply(conn, path, step));
    conn.pragma_update(None, "foreign_keys", enforced).map_err(|e| super::classify(path, e))?;
    result
}

fn apply(conn: &mut Connection, path: &Path, step: &Migration) -> Result<(), StoreError> {
    let fail =
        |source| StoreError::Migration { path: path.to_path_buf(), version: step.version, name: step.name, source };
    let tx = conn.transaction().map_err(fail)?;
    tx.execute_batch(step.sql).map_err(fail)?;
    let broken: Option<String> = tx.query_row("PRAGMA foreign_key_check", [], |r| r.get(0)).optional().map_err(fail)?;
    if let Some(table) = broken {
        return Err(fail(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY),
            Some(format!("a row of {table} points to a missing row")),
        )));
    }
    tx.pragma_update(None, "user_version", step.version).map_err(fail)?;
    tx.commit().map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::DataDir;
    use crate::store::Store;

    #[test]
    fn versions_strictly_increase() {
        for pair in MIGRATIONS.windows(2) {
            assert!(pair[0].version < pair[1].version, "{} then {}", pair[0].name, pair[1].name);
        }
        assert!(latest_version() >= 1);
    }

    #[test]
    fn fresh_database_reaches_latest_version() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&DataDir::new(tmp.path())).unwrap();
        assert_eq!(store.schema_version().unwrap(), latest_version());
        let fk: i64 = store.read(|c| c.query_row("PRAGMA foreign_keys", [], |r| r.get(0))).unwrap();
        assert_eq!(fk, 1);
        let mode: String = store.read(|c| c.query_row("PRAGMA journal_mode", [], |r| r.get(0))).unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn upgrades_from_every_earlier_version() {
        for (i, step) in MIGRATIONS.iter().enumerate() {
            let tmp = tempfile::tempdir().unwrap();
            let dir = DataDir::new(tmp.path());
            {
                let mut conn = Connection::open(dir.database()).unwrap();
                run(&mut conn, &dir.database(), &MIGRATIONS[..=i]).unwrap();
                assert_eq!(current_version(&conn).unwrap(), step.version);
            }
            let store = Store::open(&dir).unwrap();
            assert_eq!(store.schema_version().unwrap(), latest_version(), "upgrading from {}", step.name);
        }
    }

    /// Version 16 rebuilds `conversations`: rows and the references to them survive, the
    /// settings of conversations deleted before go, and an id is never given twice: neither
    /// one deleted after the upgrade nor one deleted before it (known by its settings row).
    #[test]
    fn conversation_ids_are_not_reused_after_the_upgrade() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let before = MIGRATIONS.iter().position(|m| m.version == 16).unwrap();
        {
            let mut conn = Connection::open(dir.database()).unwrap();
            run(&mut conn, &dir.database(), &MIGRATIONS[..before]).unwrap();
            conn.execute_batch(
                "INSERT INTO conversations (id, title, created_at, updated_at, pinned) VALUES (1, 'Kept', 1, 1, 1), (2, 'Last', 2, 2, 0);
                 INSERT INTO messages (id, conversation_id, role, status, text, created_at, updated_at)
                     VALUES (10, 1, 'user', 'complete', 'hello', 1, 1);
                 INSERT INTO settings (key, value) VALUES ('conversation.1.settings', '{}'), ('conversation.7.settings', '{}'),
                     ('conversation.2.settings', '{}'), ('theme', '\"dark\"'),
                     ('conversation.99999999999999999999.settings', '{}'), ('conversation.9x.settings', '{}');",
            )
            .unwrap();
        }
        let store = Store::open(&dir).unwrap();
        let rows = |sql: &str| -> Vec<String> {
            store
                .read(|c| c.prepare(sql)?.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<Vec<String>>>())
                .unwrap()
        };
        assert_eq!(rows("SELECT title || ':' || pinned FROM conversations ORDER BY id"), ["Kept:1", "Last:0"]);
        assert_eq!(
            rows("SELECT key FROM settings WHERE key != 'app.version' ORDER BY key"),
            ["conversation.1.settings", "conversation.2.settings", "theme"],
            "the orphan's settings went"
        );
        let run = |sql: &str| store.write(|tx| tx.execute_batch(sql).map_err(|e| store.error(e))).unwrap();
        run("DELETE FROM conversations WHERE id = 2;
             INSERT INTO conversations (title, created_at, updated_at) VALUES ('New', 3, 3);");
        assert_eq!(rows("SELECT id || ':' || title FROM conversations ORDER BY id"), ["1:Kept", "8:New"]);
        assert_eq!(
            rows("SELECT key FROM settings WHERE key != 'app.version' ORDER BY key"),
            ["conversation.1.settings", "theme"]
        );
        // The message still belongs to its conversation, and deleting it cascades.
        run("DELETE FROM conversations WHERE id = 1");
        assert!(rows("SELECT text FROM messages").is_empty());
    }

    #[test]
    fn newer_database_is_refused_and_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        {
            let conn = Connection::open(dir.database()).unwrap();
            conn.execute_batch("CREATE TABLE future(x); PRAGMA user_version = 9999;").unwrap();
        }
        let before = std::fs::read(dir.database()).unwrap();
        let err = Store::open(&dir).unwrap_err();
        assert!(matches!(err, StoreError::NewerSchema { found: 9999, .. }), "{err}");
        assert!(err.to_string().contains("newer Patchbay"), "{err}");
        assert_eq!(std::fs::read(dir.database()).unwrap(), before);
    }

    #[test]
    fn garbage_file_is_refused_and_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let garbage = vec![0x5au8; 8192];
        std::fs::write(dir.database(), &garbage).unwrap();
        let err = Store::open(&dir).unwrap_err();
        assert!(matches!(err, StoreError::NotADatabase { .. }), "{err}");
        assert_eq!(std::fs::read(dir.database()).unwrap(), garbage);
    }

    #[test]
    fn failing_migration_leaves_previous_version() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        let mut conn = Connection::open(dir.database()).unwrap();
        let bad = [MIGRATIONS[0], Migration { version: 10_000, name: "broken", sql: "CREATE TABLE x(; " }];
        let err = run(&mut conn, &dir.database(), &bad).unwrap_err();
        assert!(matches!(err, StoreError::Migration { version: 10_000, name: "broken", .. }), "{err}");
        assert_eq!(current_version(&conn).unwrap(), 1);
    }
}
