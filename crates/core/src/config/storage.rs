//! Configuration in SQLite: `providers` and `mcp_servers`, one JSON document per row.
//!
//! Lists keep the user's order (`position`). Every write is one transaction;
//! [`ConfigStore::replace_servers`] swaps the whole server list at once, so an
//! import either applies completely or not at all.

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, Transaction};
use serde::{Serialize, de::DeserializeOwned};

use super::ConfigError;
use super::model::{McpServerConfig, ProviderProfile};
use crate::clock::now_ms;
use crate::store::Store;

/// Reads and writes configuration through the shared [`Store`].
#[derive(Debug, Clone)]
pub struct ConfigStore {
    store: Store,
}

/// A table of named JSON documents.
#[derive(Clone, Copy)]
struct Table {
    sql_name: &'static str,
    kind: &'static str,
}

const PROVIDERS: Table = Table { sql_name: "providers", kind: "provider" };
const SERVERS: Table = Table { sql_name: "mcp_servers", kind: "MCP server" };

impl ConfigStore {
    /// Configuration kept in `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Every provider, in the user's order.
    pub fn providers(&self) -> Result<Vec<ProviderProfile>, ConfigError> {
        self.list(PROVIDERS)
    }

    /// One provider by name.
    pub fn provider(&self, name: &str) -> Result<ProviderProfile, ConfigError> {
        self.get(PROVIDERS, name)
    }

    /// Creates or replaces a provider (matched by name).
    pub fn save_provider(&self, profile: &ProviderProfile) -> Result<(), ConfigError> {
        self.store.write(|tx| self.upsert(tx, PROVIDERS, &profile.name, profile))
    }

    /// Keeps the context windows provider `name`'s model list states (what a test of it found),
    /// in place of those it stated before; the rest of the profile is left as it is now.
    pub fn keep_listed_windows(&self, name: &str, windows: BTreeMap<String, u32>) -> Result<(), ConfigError> {
        self.store.write(|tx| {
            let sql = format!("SELECT doc FROM {} WHERE name = ?1", PROVIDERS.sql_name);
            let doc: Option<String> =
                tx.query_row(&sql, [name], |r| r.get(0)).optional().map_err(|e| self.store.error(e))?;
            // Removed while it was being tested: nothing to keep.
            let Some(doc) = doc else { return Ok(()) };
            let mut profile: ProviderProfile = decode(PROVIDERS, name, &doc)?;
            if profile.listed_windows == windows {
                return Ok(());
            }
            profile.listed_windows = windows;
            self.upsert(tx, PROVIDERS, name, &profile)
        })
    }

    /// Deletes a provider.
    pub fn delete_provider(&self, name: &str) -> Result<(), ConfigError> {
        self.delete(PROVIDERS, name)
    }

    /// Every MCP server, in the user's order.
    pub fn servers(&self) -> Result<Vec<McpServerConfig>, ConfigError> {
        self.list(SERVERS)
    }

    /// One MCP server by name.
    pub fn server(&self, name: &str) -> Result<McpServerConfig, ConfigError> {
        self.get(SERVERS, name)
    }

    /// Every stored MCP server's identity, by name: made when the server is
    /// added, kept while it is edited in place, never given to a server added
    /// later under the same name (what grants for a conversation are pinned to).
    pub fn server_ids(&self) -> Result<BTreeMap<String, String>, ConfigError> {
        Ok(self.store.read(|c| {
            let mut stmt = c.prepare("SELECT name, id FROM mcp_servers")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })?)
    }

    /// Creates or replaces an MCP server (matched by name).
    pub fn save_server(&self, server: &McpServerConfig) -> Result<(), ConfigError> {
        self.store.write(|tx| self.upsert(tx, SERVERS, &server.name, server))
    }

    /// Creates or replaces several servers in one transaction.
    pub fn save_servers(&self, servers: &[McpServerConfig]) -> Result<(), ConfigError> {
        self.store.write(|tx| servers.iter().try_for_each(|s| self.upsert(tx, SERVERS, &s.name, s)))
    }

    /// Replaces the whole server list in one transaction.
    pub fn replace_servers(&self, servers: &[McpServerConfig]) -> Result<(), ConfigError> {
        self.write_import(true, &[], servers, &[])
    }

    /// Deletes the servers named in `deletes`, then creates or replaces `upserts`, in one transaction.
    pub fn merge_servers(&self, deletes: &[String], upserts: &[McpServerConfig]) -> Result<(), ConfigError> {
        self.write_import(false, deletes, upserts, &[])
    }

    /// One transaction: clears every server (`replace`) or deletes those in
    /// `deletes`, creates or replaces `upserts`, and creates or replaces `providers`.
    pub(crate) fn write_import(
        &self,
        replace: bool,
        deletes: &[String],
        upserts: &[McpServerConfig],
        providers: &[ProviderProfile],
    ) -> Result<(), ConfigError> {
        self.store.write(|tx| {
            if replace {
                tx.execute("DELETE FROM mcp_servers", []).map_err(|e| self.store.error(e))?;
            }
            for name in deletes {
                tx.execute("DELETE FROM mcp_servers WHERE name = ?1", [name]).map_err(|e| self.store.error(e))?;
            }
            upserts.iter().try_for_each(|s| self.upsert(tx, SERVERS, &s.name, s))?;
            providers.iter().try_for_each(|p| self.upsert(tx, PROVIDERS, &p.name, p))
        })
    }

    /// Deletes an MCP server.
    pub fn delete_server(&self, name: &str) -> Result<(), ConfigError> {
        self.delete(SERVERS, name)
    }

    fn list<T: DeserializeOwned>(&self, table: Table) -> Result<Vec<T>, ConfigError> {
        let rows: Vec<(String, String)> = self.store.read(|c| {
            let mut stmt = c.prepare(&format!("SELECT name, doc FROM {} ORDER BY position, name", table.sql_name))?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })?;
        rows.into_iter().map(|(name, doc)| decode(table, &name, &doc)).collect()
    }

    fn get<T: DeserializeOwned>(&self, table: Table, name: &str) -> Result<T, ConfigError> {
        let doc: Option<String> = self.store.read(|c| {
            c.query_row(&format!("SELECT doc FROM {} WHERE name = ?1", table.sql_name), [name], |r| r.get(0)).optional()
        })?;
        let doc = doc.ok_or_else(|| ConfigError::NotFound { kind: table.kind, name: name.to_owned() })?;
        decode(table, name, &doc)
    }

    fn upsert<T: Serialize>(
        &self,
        tx: &Transaction<'_>,
        table: Table,
        name: &str,
        value: &T,
    ) -> Result<(), ConfigError> {
        if name.trim().is_empty() {
            return Err(ConfigError::Invalid { path: "name".into(), reason: format!("a {} needs a name", table.kind) });
        }
        let doc = serde_json::to_string(value)
            .map_err(|source| ConfigError::Decode { what: format!("{} {name}", table.kind), source })?;
        let sql = format!(
            "INSERT INTO {t}(name, position, doc, updated_at)
             VALUES (?1, (SELECT COALESCE(MAX(position), -1) + 1 FROM {t}), ?2, ?3)
             ON CONFLICT(name) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at",
            t = table.sql_name
        );
        tx.execute(&sql, (name, &doc, now_ms())).map_err(|e| self.store.error(e))?;
        Ok(())
    }

    fn delete(&self, table: Table, name: &str) -> Result<(), ConfigError> {
        let n = self.store.write(|tx| {
            tx.execute(&format!("DELETE FROM {} WHERE name = ?1", table.sql_name), [name])
                .map_err(|e| ConfigError::from(self.store.error(e)))
        })?;
        if n == 0 {
            return Err(ConfigError::NotFound { kind: table.kind, name: name.to_owned() });
        }
        Ok(())
    }
}

fn decode<T: DeserializeOwned>(table: Table, name: &str, doc: &str) -> Result<T, ConfigError> {
    serde_json::from_str(doc).map_err(|source| ConfigError::Decode { what: format!("{} {name}", table.kind), source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::model::{ProviderKind, TransportConfig, ValueSource};

    fn store() -> ConfigStore {
        ConfigStore::new(Store::open_in_memory().unwrap())
    }

    fn provider(name: &str) -> ProviderProfile {
        ProviderProfile {
            name: name.into(),
            kind: ProviderKind::OpenAi,
            base_url: "http://127.0.0.1:1/v1".into(),
            default_model: "gpt-test".into(),
            models: vec!["gpt-test".into()],
            headers: Default::default(),
            api_key: Some(format!("provider/{name}/api_key")),
            native_tools: true,
            context_window: Some(128_000),
            listed_windows: Default::default(),
            thinking: Default::default(),
            prompt_tool_format: Default::default(),
        }
    }

    #[test]
    fn providers_keep_order_and_update_in_place() {
        let cfg = store();
        cfg.save_provider(&provider("b")).unwrap();
        cfg.save_provider(&provider("a")).unwrap();
        let mut changed = provider("b");
        changed.default_model = "other".into();
        cfg.save_provider(&changed).unwrap();
        let names: Vec<_> = cfg.providers().unwrap().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(cfg.provider("b").unwrap().default_model, "other");
        cfg.delete_provider("b").unwrap();
        assert!(matches!(cfg.provider("b"), Err(ConfigError::NotFound { .. })));
        assert!(matches!(cfg.delete_provider("b"), Err(ConfigError::NotFound { .. })));
    }

    #[test]
    fn servers_round_trip_with_unknown_fields() {
        let cfg = store();
        let mut s = McpServerConfig::stdio("files", "npx", &["-y", "server-filesystem", "/tmp"]);
        if let TransportConfig::Stdio { env, .. } = &mut s.transport {
            env.insert("TOKEN".into(), ValueSource::Secret("mcp/files/TOKEN".into()));
        }
        s.extra.insert("alwaysAllow".into(), serde_json::json!(["read_file"]));
        cfg.save_server(&s).unwrap();
        assert_eq!(cfg.servers().unwrap(), vec![s]);
    }

    #[test]
    fn replace_servers_is_all_or_nothing() {
        let cfg = store();
        cfg.save_server(&McpServerConfig::stdio("old", "echo", &[])).unwrap();
        let bad = [McpServerConfig::stdio("new", "echo", &[]), McpServerConfig::stdio("  ", "echo", &[])];
        assert!(cfg.replace_servers(&bad).is_err());
        let names: Vec<_> = cfg.servers().unwrap().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["old"]);
    }
}
