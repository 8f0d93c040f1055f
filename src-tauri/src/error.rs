//! The one error type every command returns to the UI.
//!
//! Core errors are classified once, in the core ([`AppError::kind`]), by
//! variant (never by message text); here they only become `{kind, message}`.

use patchbay_core::app::AppError;
use patchbay_core::paths::PathsError;
use patchbay_core::store::StoreError;
use serde::Serialize;

pub use patchbay_core::app::ErrorKind as IpcErrorKind;

/// A serialisable error: `{ "kind": "...", "message": "..." }`.
#[derive(Debug, Clone, Serialize, thiserror::Error, ts_rs::TS)]
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

impl From<AppError> for IpcError {
    fn from(e: AppError) -> Self {
        Self::new(e.kind(), e)
    }
}

impl From<StoreError> for IpcError {
    fn from(e: StoreError) -> Self {
        AppError::from(e).into()
    }
}

impl From<PathsError> for IpcError {
    fn from(e: PathsError) -> Self {
        AppError::from(e).into()
    }
}

#[cfg(test)]
mod tests {
    use patchbay_core::secrets::SecretError;

    use super::*;

    #[test]
    fn serialises_with_kind_and_message() {
        let e = IpcError::from(AppError::from(SecretError::Unavailable { detail: "no bus".into() }));
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
