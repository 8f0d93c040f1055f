//! Key/value application settings stored as JSON (`settings` table).

use rusqlite::OptionalExtension;
use serde::{Serialize, de::DeserializeOwned};

use super::{Store, StoreError};

impl Store {
    /// Reads a setting, `None` when it was never set.
    pub fn setting<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StoreError> {
        let raw: Option<String> =
            self.read(|c| c.query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| r.get(0)).optional())?;
        raw.map(|text| {
            serde_json::from_str(&text).map_err(|source| StoreError::Decode { what: format!("setting {key}"), source })
        })
        .transpose()
    }

    /// Writes a setting.
    pub fn set_setting<T: Serialize>(&self, key: &str, value: &T) -> Result<(), StoreError> {
        let text = serde_json::to_string(value)
            .map_err(|source| StoreError::Decode { what: format!("setting {key}"), source })?;
        self.write(|tx| {
            tx.execute(
                "INSERT INTO settings(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, &text),
            )
            .map_err(|e| self.error(e))
        })
        .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    #[test]
    fn settings_round_trip_and_overwrite() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(store.setting::<String>("ui.theme").unwrap(), None);
        store.set_setting("ui.theme", &"dark").unwrap();
        store.set_setting("ui.theme", &"light").unwrap();
        assert_eq!(store.setting::<String>("ui.theme").unwrap().as_deref(), Some("light"));
    }

    #[test]
    fn a_value_of_the_wrong_shape_is_a_decode_error() {
        let store = Store::open_in_memory().unwrap();
        store.set_setting("n", &"text").unwrap();
        let err = store.setting::<u32>("n").unwrap_err();
        assert!(err.to_string().contains("setting n"), "{err}");
    }
}
