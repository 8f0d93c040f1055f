//! The network proxy the user saved, applied when a host opens.
//!
//! A custom proxy's login (`user:password@` in its URL) is a secret: it goes
//! to the keyring, and SQLite (so every backup) keeps the URL without it and a
//! flag. A URL saved with its login by an older version is moved at the next
//! start. The settings page reads and saves it through `app`.

use super::HostError;
use crate::net::{self, ProxyChoice};
use crate::secrets::{SecretStore, SecretValue};
use crate::store::Store;

/// The proxy outgoing requests use (`net::ProxyChoice`; the environment's when unset).
const PROXY_KEY: &str = "net.proxy";
/// True when the custom proxy's login is in the keyring, under [`PROXY_LOGIN_SECRET`].
const PROXY_LOGIN_KEY: &str = "net.proxy_login";
/// The keyring entry of the custom proxy's login (`user:password`, as in the URL).
const PROXY_LOGIN_SECRET: &str = "net/proxy/login";

/// Installs the proxy saved in `store` (its login read from `secrets`) for
/// this process's outgoing requests ([`Host::open`](super::Host::open) does;
/// the CLI's commands that open no host do before they make requests).
pub fn apply_saved_proxy(store: &Store, secrets: &dyn SecretStore) -> Result<(), HostError> {
    if store.setting::<ProxyChoice>(PROXY_KEY)?.is_some() {
        net::set_proxy(saved_proxy(store, secrets)?)?;
    }
    Ok(())
}

/// Saves `choice`: a custom proxy's login in the keyring, the rest in SQLite.
pub(crate) fn save_proxy(store: &Store, secrets: &dyn SecretStore, choice: &ProxyChoice) -> Result<(), HostError> {
    let (without_login, login) = choice.split_login();
    match &login {
        Some(login) => secrets.set(PROXY_LOGIN_SECRET, login.expose())?,
        None if store.setting::<bool>(PROXY_LOGIN_KEY)? == Some(true) => drop(secrets.delete(PROXY_LOGIN_SECRET)?),
        None => {}
    }
    store.set_setting(PROXY_KEY, &without_login)?;
    store.set_setting(PROXY_LOGIN_KEY, &login.is_some())?;
    Ok(())
}

/// The saved proxy with its login from the keyring (the environment's when
/// none is saved). A login still in SQLite moves to the keyring first, and
/// the database is rewritten so that its old bytes are gone from the file.
pub(crate) fn saved_proxy(store: &Store, secrets: &dyn SecretStore) -> Result<ProxyChoice, HostError> {
    let Some(saved) = store.setting::<ProxyChoice>(PROXY_KEY)? else { return Ok(ProxyChoice::default()) };
    if let (_, Some(_)) = saved.split_login() {
        save_proxy(store, secrets, &saved)?;
        store.read(|c| {
            c.execute_batch("VACUUM")?;
            c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        })?;
        tracing::info!("moved the proxy's login from the database to the keyring");
        return Ok(saved);
    }
    if store.setting::<bool>(PROXY_LOGIN_KEY)? != Some(true) {
        return Ok(saved);
    }
    match secrets.get(PROXY_LOGIN_SECRET) {
        Ok(Some(login)) => Ok(saved.with_login(&SecretValue::new(login))),
        Ok(None) => {
            tracing::warn!(
                "the proxy's login is not in the keyring ({PROXY_LOGIN_SECRET}); the proxy is used without it"
            );
            Ok(saved)
        }
        Err(e) => {
            tracing::warn!("the proxy's login cannot be read, so the proxy is used without it: {e}");
            Ok(saved)
        }
    }
}
