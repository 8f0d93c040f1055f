//! Key/value application settings stored as JSON (`settings` table).

use rusqlite::OptionalExtension;
use serde::{Serialize, de::DeserializeOwned};

use super::{Store, StoreError};

const SELECT: &str = "SELECT value FROM settings WHERE key = ?1";
const UPSERT: &str =
    "INSERT INTO settings(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value";

fn decode<T: DeserializeOwned>(key: &str, text: Option<String>) -> Result<Option<T>, StoreError> {
    text.map(|text| {
        serde_json::from_str(&text).map_err(|source| StoreError::Decode { what: format!("setting {key}"), source })
    })
    .transpose()
}

fn encode<T: Serialize>(key: &str, value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|source| StoreError::Decode { what: format!("setting {key}"), source })
}

impl Store {
    /// Reads a setting, `None` when it was never set.
    pub fn setting<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StoreError> {
        let raw: Option<String> = self.read(|c| c.query_row(SELECT, [key], |r| r.get(0)).optional())?;
        decode(key, raw)
    }

    /// Writes a setting.
    pub fn set_setting<T: Serialize>(&self, key: &str, value: &T) -> Result<(), StoreError> {
        let text = encode(key, value)?;
        self.write(|tx| tx.execute(UPSERT, (key, &text)).map_err(|e| self.error(e))).map(drop)
    }

    /// Reads a setting, lets `change` edit it and writes the result, in one
    /// transaction (so concurrent changes do not overwrite each other). When
    /// `change` fails, nothing is written.
    pub fn update_setting<T, R, E>(
        &self,
        key: &str,
        change: impl FnOnce(&mut Option<T>) -> Result<R, E>,
    ) -> Result<R, E>
    where
        T: Serialize + DeserializeOwned,
        E: From<StoreError>,
    {
        self.write(|tx| {
            let raw: Option<String> =
                tx.query_row(SELECT, [key], |r| r.get(0)).optional().map_err(|e| self.error(e))?;
            let mut value = decode(key, raw)?;
            let out = change(&mut value)?;
            if let Some(value) = &value {
                tx.execute(UPSERT, (key, &encode(key, value)?)).map_err(|e| self.error(e))?;
            }
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{Store, StoreError};

    #[test]
    fn settings_round_trip_and_overwrite() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(store.setting::<String>("ui.theme").unwrap(), None);
        store.set_setting("ui.theme", &"dark").unwrap();
        store.set_setting("ui.theme", &"light").unwrap();
        assert_eq!(store.setting::<String>("ui.theme").unwrap().as_deref(), Some("light"));
    }

    #[test]
    fn an_update_reads_and_writes_in_one_go_and_a_refused_one_writes_nothing() {
        let store = Store::open_in_memory().unwrap();
        let pushed = store.update_setting::<Vec<u32>, _, StoreError>("n", |v| {
            v.get_or_insert_with(Vec::new).push(1);
            Ok(v.as_ref().map_or(0, Vec::len))
        });
        assert_eq!(pushed.unwrap(), 1);
        let refused = store.update_setting::<Vec<u32>, (), StoreError>("n", |v| {
            v.get_or_insert_with(Vec::new).push(2);
            Err(StoreError::Busy { path: "refused".into() })
        });
        assert!(matches!(refused, Err(StoreError::Busy { .. })), "{refused:?}");
        assert_eq!(store.setting::<Vec<u32>>("n").unwrap(), Some(vec![1]));
    }

    #[test]
    fn a_value_of_the_wrong_shape_is_a_decode_error() {
        let store = Store::open_in_memory().unwrap();
        store.set_setting("n", &"text").unwrap();
        let err = store.setting::<u32>("n").unwrap_err();
        assert!(err.to_string().contains("setting n"), "{err}");
    }
}
