//! Installing MCP bundles (`.mcpb`) as servers, the way Claude Desktop
//! installs its extensions: each bundle is unpacked into
//! `<data dir>/extensions/<server name>/` and runs from there as a stdio
//! server; its sensitive settings go to the keyring like any server secret.
//!
//! Installing a bundle whose server is already installed from a bundle is an
//! update: the server keeps its approval policies, switched-off tools and
//! secrets left empty. A server of the same name that was not installed from
//! a bundle is never replaced. Deleting a bundle's server deletes its folder.
//!
//! An installed bundle's settings can be changed later, as Claude Desktop's
//! extension settings can: [`App::bundle_settings`] reads its unpacked
//! manifest with the values it was given, and [`App::configure_bundle`] makes
//! its server entry again from new ones.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{App, AppError};
use crate::bundle::{Bundle, BundleInfo, BundleValues, installed_in, installed_signature, installed_version};
use crate::config::{ConfigError, McpServerConfig};

/// Where bundles are unpacked, under the data directory.
const EXTENSIONS: &str = "extensions";
/// How long an updated server may take to stop before its files are replaced.
const STOP_WAIT: Duration = Duration::from_secs(10);

impl App {
    /// The folder the bundle of server `name` is unpacked in.
    pub(super) fn bundle_dir(&self, name: &str) -> PathBuf {
        self.inner.dir.path().join(EXTENSIONS).join(name)
    }

    /// The server entry a bundle would update, if it is installed; an error
    /// when a server of that name exists that a bundle did not install.
    fn installed_bundle(&self, bundle: &Bundle, dir: &Path) -> Result<Option<McpServerConfig>, AppError> {
        let name = bundle.server_name();
        match self.inner.config.server(&name) {
            Ok(config) if installed_in(&config, dir) => Ok(Some(config)),
            Ok(_) => Err(AppError::Invalid(format!(
                "a server named {name:?} already exists and was not installed from a bundle; rename or delete it first"
            ))),
            Err(ConfigError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// What the install form shows for the bundle `file`, in `locale`'s
    /// words where the bundle has them, with the version it would replace and
    /// whether that one was signed by someone else.
    pub fn bundle_preview(&self, file: &Path, locale: &str) -> Result<BundleInfo, AppError> {
        let bundle = Bundle::open(file)?.localized(locale);
        let dir = self.bundle_dir(&bundle.server_name());
        let previous = self.installed_bundle(&bundle, &dir)?;
        let mut info = bundle.info(&dir, previous.as_ref());
        if previous.is_some() {
            info.installed_version = installed_version(&dir);
            info.installed_signature = installed_signature(&dir);
            info.signer_changed = info.installed_signature.as_ref().is_some_and(|old| old.changed_to(&info.signature));
        }
        Ok(info)
    }

    /// Installs (or updates) the bundle `file` with the user's settings and
    /// starts its server; returns the server's name. Nothing is unpacked when
    /// a setting is wrong.
    pub async fn install_bundle(&self, file: &Path, values: &BundleValues) -> Result<String, AppError> {
        let bundle = Bundle::open(file)?;
        let name = bundle.server_name();
        let dir = self.bundle_dir(&name);
        let previous = self.installed_bundle(&bundle, &dir)?;
        let env = self.inner.registry.login_env().await;
        let (config, secrets) =
            bundle.server_config(&dir, values, previous.as_ref(), |command| env.resolve(command, None).is_ok())?;
        if previous.is_some() {
            // Its files are about to be replaced under it.
            tokio::time::timeout(STOP_WAIT, self.inner.registry.stop(&name)).await.ok().transpose()?;
        }
        let target = dir.clone();
        let unpacked = tokio::task::spawn_blocking(move || bundle.unpack(&target))
            .await
            .map_err(|e| AppError::Invalid(format!("unpacking stopped: {e}")))
            .and_then(|r| r.map_err(AppError::from));
        if let Err(e) = unpacked {
            // The installed version's files are untouched: it runs on.
            if let Some(previous) = previous.filter(|p| p.enabled) {
                let _ = self.inner.registry.restart(&previous.name).await;
            }
            return Err(e);
        }
        if let Err(e) = self.save_server(config, &secrets).await {
            if previous.is_none() {
                let _ = std::fs::remove_dir_all(&dir);
            }
            return Err(e);
        }
        Self::record_values(&name, &dir, values);
        Ok(name)
    }

    /// Keeps the settings a bundle was given, for its form next time; a
    /// failure only means the form starts from the defaults.
    fn record_values(name: &str, dir: &Path, values: &BundleValues) {
        let recorded = Bundle::installed(dir).and_then(|b| b.record_values(dir, values));
        if let Err(e) = recorded {
            tracing::warn!(server = name, "the bundle's settings were not kept for its form: {e}");
        }
    }

    /// The installed bundle of server `name` and its entry; an error when the
    /// server was not installed from a bundle.
    fn installed_bundle_of(&self, name: &str) -> Result<(Bundle, McpServerConfig, PathBuf), AppError> {
        let config = self.inner.config.server(name)?;
        let dir = self.bundle_dir(name);
        if !installed_in(&config, &dir) {
            return Err(AppError::Invalid(format!("the server {name:?} was not installed from a bundle")));
        }
        Ok((Bundle::installed(&dir)?, config, dir))
    }

    /// The settings form of the bundle server `name` was installed from, in
    /// `locale`'s words where the bundle has them: each setting with the value
    /// it has now (a sensitive one only says it is kept).
    pub fn bundle_settings(&self, name: &str, locale: &str) -> Result<BundleInfo, AppError> {
        let (bundle, config, dir) = self.installed_bundle_of(name)?;
        Ok(bundle.localized(locale).info(&dir, Some(&config)))
    }

    /// Changes the settings of the bundle server `name` was installed from:
    /// its entry is made again from `values` (sensitive ones left empty are
    /// kept; its policies stay) and the server restarts.
    pub async fn configure_bundle(&self, name: &str, values: &BundleValues) -> Result<(), AppError> {
        let (bundle, previous, dir) = self.installed_bundle_of(name)?;
        let env = self.inner.registry.login_env().await;
        let (config, secrets) =
            bundle.server_config(&dir, values, Some(&previous), |command| env.resolve(command, None).is_ok())?;
        self.save_server(config, &secrets).await?;
        Self::record_values(name, &dir, values);
        Ok(())
    }

    /// Deletes the folder of a bundle's server, after the server is deleted.
    pub(super) fn remove_bundle_files(&self, config: &McpServerConfig) {
        let dir = self.bundle_dir(&config.name);
        if installed_in(config, &dir)
            && let Err(e) = std::fs::remove_dir_all(&dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("could not delete {}: {e}", dir.display());
        }
    }
}
