//! The one error type every command returns to the UI.
//!
//! Core errors are mapped here, once, by variant (never by message text),
//! into a kind the UI can branch on and the core's own message.

use patchbay_core::paths::PathsError;
use patchbay_core::secrets::SecretError;
use patchbay_core::store::StoreError;
use serde::Serialize;

/// What went wrong, for the UI to choose its action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IpcErrorKind {
    /// The data directory cannot be used.
    DataDir,
    /// The database cannot be opened or written.
    Database,
    /// The OS keyring is unavailable or refused access.
    Keyring,
    /// The request itself was wrong.
    InvalidInput,
    /// The thing asked for does not exist.
    NotFound,
    /// Anything else.
    Internal,
}

/// A serialisable error: `{ "kind": "...", "message": "..." }`.
#[derive(Debug, Clone, Serialize, thiserror::Error)]
#[error("{message}")]
pub struct IpcError {
    /// The error's kind.
    pub kind: IpcErrorKind,
    /// A readable sentence that says where and why.
    pub message: String,
}

impl IpcError {
    /// An error of `kind` with the message of `e`.
    pub fn new(kind: IpcErrorKind, e: impl std::fmt::Display) -> Self {
        Self { kind, message: e.to_string() }
    }
}

impl From<&StoreError> for IpcError {
    fn from(e: &StoreError) -> Self {
        let kind = match e {
            StoreError::DataDir(_) => IpcErrorKind::DataDir,
            _ => IpcErrorKind::Database,
        };
        Self::new(kind, e)
    }
}

impl From<StoreError> for IpcError {
    fn from(e: StoreError) -> Self {
        Self::from(&e)
    }
}

impl From<PathsError> for IpcError {
    fn from(e: PathsError) -> Self {
        Self::new(IpcErrorKind::DataDir, e)
    }
}

impl From<SecretError> for IpcError {
    fn from(e: SecretError) -> Self {
        let kind = match e {
            SecretError::InvalidName { .. } => IpcErrorKind::InvalidInput,
            _ => IpcErrorKind::Keyring,
        };
        Self::new(kind, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_with_kind_and_message() {
        let e = IpcError::from(SecretError::Unavailable { detail: "no bus".into() });
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["kind"], "keyring");
        assert!(json["message"].as_str().unwrap().contains("no bus"));
    }

    #[test]
    fn data_dir_failures_keep_their_kind() {
        let e = IpcError::from(StoreError::DataDir(PathsError::NoPlatformDir));
        assert_eq!(e.kind, IpcErrorKind::DataDir);
    }
}
