//! `patchbay info` against real data directories: fresh, tampered, newer, unusable.

use std::process::Command;

use crate::common::{BIN, command, patchbay, stderr};

#[test]
fn info_on_a_fresh_data_dir_creates_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let out = patchbay(&dir, &["info", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(info["data_dir"], dir.to_str().unwrap());
    assert!(info["schema_version"].as_i64().unwrap() >= 1);
    assert!(info["keyring"]["available"].is_boolean());
    assert!(dir.join("patchbay.db").is_file());
    assert_eq!(info["log_file"], dir.join("logs/patchbay.log").to_str().unwrap(), "the desktop app's log");
}

#[test]
fn data_dir_comes_from_the_environment_too() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(BIN).env("PATCHBAY_DATA_DIR", tmp.path()).args(["info", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["data_dir"], tmp.path().to_str().unwrap());
}

#[test]
fn a_tampered_database_is_reported_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("patchbay.db");
    std::fs::write(&db, b"this is not sqlite, but it is the user's file").unwrap();
    let out = patchbay(tmp.path(), &["info"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("not a usable Patchbay database"), "{err}");
    assert!(err.contains("patchbay.db"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), b"this is not sqlite, but it is the user's file");
}

#[test]
fn a_database_from_a_newer_version_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(patchbay(tmp.path(), &["info"]).status.success());
    let db = tmp.path().join("patchbay.db");
    // Bump user_version the way a future build would, through SQLite's own header:
    // bytes 60..64 hold user_version, big-endian.
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[60..64].copy_from_slice(&4242u32.to_be_bytes());
    std::fs::write(&db, &bytes).unwrap();
    let out = patchbay(tmp.path(), &["info"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("newer Patchbay") && err.contains("4242"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), bytes);
}

#[test]
fn a_data_dir_that_is_a_file_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("not-a-dir");
    std::fs::write(&file, b"keep me").unwrap();
    let out = patchbay(&file, &["info"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("not-a-dir") && err.contains("not a directory"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
}

#[test]
fn info_works_without_a_keyring_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    // No session bus: the Secret Service cannot be reached.
    let out = command(tmp.path())
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/patchbay-test-bus")
        .arg("info")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("keyring:   unavailable"), "{text}");
    assert!(text.contains("keyring is unavailable"), "{text}");
}
