//! Secret storage: API keys and tokens live only in the OS keyring.
//!
//! [`SecretStore`] is the seam. [`KeyringStore`] talks to the platform store
//! (Secret Service on Linux, Keychain on macOS, Credential Manager on
//! Windows); [`MemoryStore`] is for unit tests. Secrets never touch SQLite,
//! logs or exports: other modules keep only a secret's *name*.
//!
//! Entries are scoped by data directory: the keyring service is
//! `patchbay/<hash of the data dir>`, so a test or second profile can never
//! read or overwrite the keys of the user's real data directory.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::paths::DataDir;

/// Errors from the secret store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// No keyring is reachable: Patchbay refuses to fall back to plaintext.
    #[error(
        "the OS keyring is unavailable ({detail}); Patchbay stores secrets only there. \
         On Linux, start a Secret Service provider such as gnome-keyring or KeePassXC and unlock it"
    )]
    Unavailable { detail: String },
    /// The keyring refused access (locked, or the user denied it).
    #[error("the OS keyring refused access to {name}: {detail}")]
    Denied { name: String, detail: String },
    /// The name is not a valid secret name.
    #[error("invalid secret name {name:?}: {reason}")]
    InvalidName { name: String, reason: &'static str },
    /// The stored value is not text.
    #[error("the keyring entry {name} does not hold text")]
    NotText { name: String },
}

/// A secret value in memory (an API key, a token, a password): its `Debug`
/// and `Display` print `[redacted]`, and it is never serialised, so a log line,
/// an error or a stored struct cannot carry it by accident. [`expose`] reads it
/// where it is used.
///
/// [`expose`]: SecretValue::expose
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct SecretValue(String);

impl SecretValue {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value itself, for the request or the secret store that needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Whether the OS keyring can be used, as shown by `patchbay info` and the app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct KeyringStatus {
    /// True when secrets can be read and written.
    pub available: bool,
    /// The backend's name, or why it is unavailable.
    pub detail: String,
}

/// A place to keep secrets by name, such as `provider/openai/api_key`.
pub trait SecretStore: Send + Sync {
    /// Reads a secret; `Ok(None)` when it is not set.
    fn get(&self, name: &str) -> Result<Option<String>, SecretError>;
    /// Creates or replaces a secret.
    fn set(&self, name: &str, value: &str) -> Result<(), SecretError>;
    /// Deletes a secret; `Ok(false)` when there was none.
    fn delete(&self, name: &str) -> Result<bool, SecretError>;
    /// Probes the backend.
    fn status(&self) -> KeyringStatus;
}

fn check_name(name: &str) -> Result<(), SecretError> {
    let invalid = |reason| Err(SecretError::InvalidName { name: name.to_owned(), reason });
    if name.is_empty() {
        return invalid("it is empty");
    }
    if name.len() > 200 {
        return invalid("it is longer than 200 bytes");
    }
    if name.chars().any(char::is_control) {
        return invalid("it contains control characters");
    }
    Ok(())
}

/// The OS keyring, scoped to one data directory.
#[derive(Debug, Clone)]
pub struct KeyringStore {
    service: String,
}

impl KeyringStore {
    /// A store whose entries belong to `dir` only.
    pub fn for_data_dir(dir: &DataDir) -> Self {
        Self { service: format!("patchbay/{}", dir.fingerprint()) }
    }

    /// The keyring service name the entries are filed under.
    pub fn service(&self) -> &str {
        &self.service
    }

    fn entry(&self, name: &str) -> Result<keyring::Entry, SecretError> {
        check_name(name)?;
        keyring::Entry::new(&self.service, name).map_err(|e| map_error(name, e))
    }
}

fn map_error(name: &str, e: keyring::Error) -> SecretError {
    match e {
        keyring::Error::PlatformFailure(inner) => SecretError::Unavailable { detail: inner.to_string() },
        keyring::Error::NoStorageAccess(inner) => {
            SecretError::Denied { name: name.to_owned(), detail: inner.to_string() }
        }
        keyring::Error::BadEncoding(_) => SecretError::NotText { name: name.to_owned() },
        other => SecretError::Unavailable { detail: other.to_string() },
    }
}

impl SecretStore for KeyringStore {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        match self.entry(name)?.get_password() {
            Ok(value) => Ok(Some(value)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(map_error(name, e)),
        }
    }

    fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        self.entry(name)?.set_password(value).map_err(|e| map_error(name, e))
    }

    fn delete(&self, name: &str) -> Result<bool, SecretError> {
        match self.entry(name)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(map_error(name, e)),
        }
    }

    fn status(&self) -> KeyringStatus {
        match self.get("patchbay-probe") {
            Ok(_) => KeyringStatus { available: true, detail: backend_name().to_owned() },
            Err(e) => KeyringStatus { available: false, detail: e.to_string() },
        }
    }
}

fn backend_name() -> &'static str {
    if cfg!(target_os = "linux") {
        "Secret Service"
    } else if cfg!(target_os = "macos") {
        "macOS Keychain"
    } else if cfg!(target_os = "windows") {
        "Windows Credential Manager"
    } else {
        "OS keyring"
    }
}

/// Secrets in memory, for unit tests only.
#[derive(Debug, Default)]
pub struct MemoryStore {
    values: Mutex<BTreeMap<String, String>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn values(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.values.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SecretStore for MemoryStore {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        check_name(name)?;
        Ok(self.values().get(name).cloned())
    }

    fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        check_name(name)?;
        self.values().insert(name.to_owned(), value.to_owned());
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<bool, SecretError> {
        check_name(name)?;
        Ok(self.values().remove(name).is_some())
    }

    fn status(&self) -> KeyringStatus {
        KeyringStatus { available: true, detail: "in-memory (tests only)".to_owned() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_store_round_trip() {
        let store = MemoryStore::new();
        assert_eq!(store.get("provider/openai/api_key").unwrap(), None);
        store.set("provider/openai/api_key", "sk-1").unwrap();
        assert_eq!(store.get("provider/openai/api_key").unwrap().as_deref(), Some("sk-1"));
        assert!(store.delete("provider/openai/api_key").unwrap());
        assert!(!store.delete("provider/openai/api_key").unwrap());
    }

    #[test]
    fn a_secret_value_never_prints_itself() {
        let key = SecretValue::new("sk-live-123");
        assert_eq!(format!("{key:?} {key} {:?}", Some(&key)), "[redacted] [redacted] Some([redacted])");
        assert_eq!(key.expose(), "sk-live-123");
    }

    #[test]
    fn bad_names_are_rejected() {
        let store = MemoryStore::new();
        assert!(matches!(store.set("", "x"), Err(SecretError::InvalidName { .. })));
        assert!(matches!(store.set("a\nb", "x"), Err(SecretError::InvalidName { .. })));
    }

    #[test]
    fn keyring_service_is_scoped_by_data_dir() {
        let a = KeyringStore::for_data_dir(&DataDir::new("/tmp/a"));
        let b = KeyringStore::for_data_dir(&DataDir::new("/tmp/b"));
        assert_ne!(a.service(), b.service());
        assert!(a.service().starts_with("patchbay/"));
        assert_eq!(a.service(), KeyringStore::for_data_dir(&DataDir::new("/tmp/a")).service());
    }
}
