//! The real OS keyring (Secret Service on Linux): store, read, replace and delete a secret.
//!
//! Runs under the test command's `dbus-run-session` with an unlocked
//! gnome-keyring. Entries are scoped to a temporary data directory, so the
//! test can never touch a user's real keys.

use patchbay_core::paths::DataDir;
use patchbay_core::secrets::{KeyringStore, SecretStore};

#[test]
fn stores_reads_and_deletes_through_the_real_keyring() {
    let tmp = tempfile::tempdir().unwrap();
    let store = KeyringStore::for_data_dir(&DataDir::new(tmp.path()));
    let status = store.status();
    assert!(status.available, "the Secret Service must be reachable for this test: {}", status.detail);

    let name = "provider/test/api_key";
    assert_eq!(store.get(name).unwrap(), None);
    store.set(name, "sk-test-Ω-1").unwrap();
    assert_eq!(store.get(name).unwrap().as_deref(), Some("sk-test-Ω-1"));
    store.set(name, "sk-test-2").unwrap();
    assert_eq!(store.get(name).unwrap().as_deref(), Some("sk-test-2"));

    // Another data directory sees none of it.
    let other = tempfile::tempdir().unwrap();
    assert_eq!(KeyringStore::for_data_dir(&DataDir::new(other.path())).get(name).unwrap(), None);

    assert!(store.delete(name).unwrap());
    assert_eq!(store.get(name).unwrap(), None);
    assert!(!store.delete(name).unwrap());
}
