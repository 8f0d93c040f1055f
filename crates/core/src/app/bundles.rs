//! Installing MCP bundles (`.mcpb`) as servers, as Claude Desktop installs its extensions: unpacked
//! into `<data dir>/extensions/<server name>/`, run from there as a stdio server, sensitive settings
//! in the keyring.
//!
//! A preview opens the bundle once ([`Bundle::open`]: a private copy under
//! `<data dir>/opened-bundles/`) under the id it returns; the install is given that id and the signer
//! the user saw, and unpacks that same copy. Installing over a server installed from a bundle is an
//! update (approval policies, switched-off tools and secrets left empty are kept); a server of that
//! name not installed from a bundle is never replaced; deleting the server deletes its folder.
//! [`App::bundle_settings`] and [`App::configure_bundle`] change an installed bundle's settings.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{App, AppError, lock};
use crate::bundle::{Bundle, BundleInfo, BundleValues, installed_in, installed_signature, installed_version};
use crate::config::{ConfigError, McpServerConfig};

/// Where bundles are unpacked, under the data directory.
const EXTENSIONS: &str = "extensions";
/// How long an updated server may take to stop before its files are replaced.
const STOP_WAIT: Duration = Duration::from_secs(10);
/// Where opened bundles' private copies are, under the data directory.
const OPENED: &str = "opened-bundles";
/// How many previewed bundles are kept to install; an older one is opened again.
const KEPT_PREVIEWS: usize = 4;
/// How old a private copy left by a Patchbay that stopped must be to be deleted
/// (one in use by another Patchbay on the same data directory is younger).
const STALE_COPY: Duration = Duration::from_secs(24 * 60 * 60);

/// Bundles previewed and not yet installed, oldest first, by preview id.
pub(super) type Previews = VecDeque<(String, Bundle)>;

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
    /// whether that one was signed by someone else. Its `preview_id` names
    /// the opened bundle [`App::install_bundle`] installs.
    pub fn bundle_preview(&self, file: &Path, locale: &str) -> Result<BundleInfo, AppError> {
        let copies = self.inner.dir.path().join(OPENED);
        remove_stale_copies(&copies);
        let opened = Bundle::open(file, &copies)?;
        let bundle = opened.clone().localized(locale);
        let dir = self.bundle_dir(&bundle.server_name());
        let previous = self.installed_bundle(&bundle, &dir)?;
        let mut info = bundle.info(&dir, previous.as_ref());
        if previous.is_some() {
            info.installed_version = installed_version(&dir);
            info.installed_signature = installed_signature(&dir);
            info.signer_changed = info.installed_signature.as_ref().is_some_and(|old| old.changed_to(&info.signature));
        }
        let id = uuid::Uuid::new_v4().to_string();
        info.preview_id = Some(id.clone());
        let mut previews = lock(&self.inner.previews);
        previews.push_back((id, opened));
        while previews.len() > KEPT_PREVIEWS {
            previews.pop_front();
        }
        Ok(info)
    }

    /// The bundle previewed as `preview_id`, when `signer` (a certificate's
    /// fingerprint, none for an unsigned bundle) is who its preview showed.
    fn previewed(&self, preview_id: &str, signer: Option<&str>) -> Result<Bundle, AppError> {
        let previews = lock(&self.inner.previews);
        let Some((_, bundle)) = previews.iter().find(|(id, _)| id == preview_id) else {
            return Err(AppError::NotFound(format!(
                "the bundle previewed as {preview_id:?} is no longer open; open the bundle again"
            )));
        };
        let signed_by = bundle.signature().signer().map(|s| s.fingerprint.as_str());
        if signed_by != signer {
            let named = |by: Option<&str>| by.map_or("unsigned".into(), |f| format!("signed with certificate {f}"));
            return Err(AppError::Invalid(format!(
                "{} is not installed: its preview showed it {}, but it is {}",
                bundle.server_name(),
                named(signer),
                named(signed_by)
            )));
        }
        Ok(bundle.clone())
    }

    /// Installs (or updates) the bundle previewed as `preview_id` with the
    /// user's settings and starts its server; returns the server's name.
    /// `signer` is the fingerprint of the certificate the preview showed (none
    /// when it showed the bundle unsigned): a bundle signed otherwise is
    /// refused. Nothing is unpacked when a setting is wrong.
    pub async fn install_bundle(
        &self,
        preview_id: &str,
        signer: Option<&str>,
        values: &BundleValues,
    ) -> Result<String, AppError> {
        let bundle = self.previewed(preview_id, signer)?;
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
        lock(&self.inner.previews).retain(|(id, _)| id != preview_id);
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

/// Deletes the private copies in `dir` older than [`STALE_COPY`]: those of
/// bundles a Patchbay that stopped had open.
fn remove_stale_copies(dir: &Path) {
    let stale = |entry: &std::fs::DirEntry| {
        let modified = entry.metadata().and_then(|m| m.modified()).ok();
        modified.and_then(|m| m.elapsed().ok()).is_some_and(|age| age > STALE_COPY)
    };
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten().filter(stale) {
        if let Err(e) = std::fs::remove_file(entry.path()) {
            tracing::warn!("could not delete {}: {e}", entry.path().display());
        }
    }
}
