//! Updates: the app looks for a newer release at start and daily (unless
//! switched off in Settings), and says what is new; the user installs it.
//! The package is verified against the public key built in (tauri.conf.json,
//! `plugins.updater.pubkey`) before anything runs it, and a .deb must be the
//! version announced (a signed older one is a downgrade). An install that cannot
//! replace itself says so and links the release, instead of failing.
//!
//! The database is copied before a new version first opens it (the core's
//! `store::backup`), so an update never costs data.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter, Manager, Runtime};
use tauri_plugin_updater::{Update, UpdaterExt};

use crate::error::{IpcError, IpcErrorKind};
use crate::state::AppState;

/// Where to look instead of the release feed (a test server); also turns the
/// automatic check on in a debug build.
pub const URL_ENV: &str = "PATCHBAY_UPDATE_URL";

/// A debug build's public key instead of the one built in (tests sign with their own).
#[cfg(debug_assertions)]
const KEY_ENV: &str = "PATCHBAY_UPDATE_PUBKEY";

/// Where a user who cannot update in place gets the new version.
const RELEASES: &str = "https://github.com/patchbay-app/patchbay/releases/latest";

/// How often the running app looks again.
const DAILY: Duration = Duration::from_secs(24 * 60 * 60);

/// The event the main window hears when a newer version is found.
const EVENT: &str = "update_available";

/// The newer version the automatic look found, for a window that loads after
/// it; whether an install runs.
#[derive(Debug, Default)]
pub struct Found {
    update: std::sync::Mutex<Option<UpdateView>>,
    installing: std::sync::atomic::AtomicBool,
}

/// The newer version the look at start (or the daily one) found, if any: a
/// window that loaded after it asks here, as the event came before it listened.
#[tauri::command]
pub fn found_update(found: tauri::State<'_, Found>) -> Option<UpdateView> {
    found.update.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
}

/// A newer version, as the window shows it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct UpdateView {
    pub version: String,
    pub current_version: String,
    /// What is new (the release's notes).
    pub notes: Option<String>,
    /// When it was released (RFC 3339).
    pub date: Option<String>,
    /// Whether this install can replace itself, or where to get it instead.
    pub install: Installable,
}

/// Whether Patchbay can install an update here.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Installable {
    Here,
    /// It cannot: why, and the release page to get it from.
    Elsewhere {
        why: String,
        release_url: String,
    },
}

/// A step of an install, for its progress bar.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UpdateProgress {
    /// Bytes downloaded so far, of `total` when the server said.
    Downloading { done: u64, total: Option<u64> },
    /// Downloaded and verified: installing.
    Installing,
}

fn internal(e: impl std::fmt::Display) -> IpcError {
    IpcError::new(IpcErrorKind::Internal, e)
}

/// The updater, at the test server when one is named.
fn updater<R: Runtime>(app: &AppHandle<R>) -> Result<tauri_plugin_updater::Updater, IpcError> {
    let mut builder = app.updater_builder();
    if let Ok(url) = std::env::var(URL_ENV) {
        let url =
            url.parse().map_err(|e| IpcError::new(IpcErrorKind::InvalidInput, format!("{URL_ENV} {url:?}: {e}")))?;
        builder = builder.endpoints(vec![url]).map_err(internal)?;
    }
    #[cfg(debug_assertions)]
    if let Ok(key) = std::env::var(KEY_ENV) {
        builder = builder.pubkey(key);
    }
    builder.build().map_err(internal)
}

/// Whether this install can replace itself: a package the updater installs,
/// with the rights to do it.
fn installable() -> Installable {
    use tauri::utils::{config::BundleType, platform::bundle_type};
    let elsewhere = |why: &str| Installable::Elsewhere { why: why.to_owned(), release_url: RELEASES.to_owned() };
    match bundle_type() {
        Some(BundleType::Deb) if is_root() || on_path("pkexec") => Installable::Here,
        Some(BundleType::Deb) => elsewhere(
            "Patchbay was installed system-wide from a .deb, and this system has no pkexec to ask for the rights to replace it",
        ),
        Some(BundleType::AppImage | BundleType::Msi | BundleType::Nsis | BundleType::App) => Installable::Here,
        _ => elsewhere(
            "this copy of Patchbay was not installed from a package Patchbay can update (a build from source?)",
        ),
    }
}

fn is_root() -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    }
    #[cfg(not(unix))]
    false
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

fn view(update: &Update) -> UpdateView {
    UpdateView {
        version: update.version.clone(),
        current_version: update.current_version.clone(),
        notes: update.body.clone().filter(|n| !n.trim().is_empty()),
        date: update.raw_json.get("pub_date").and_then(|d| d.as_str()).map(str::to_owned),
        install: installable(),
    }
}

/// Looks for a newer version now.
#[tauri::command]
pub async fn check_update(app: AppHandle) -> Result<Option<UpdateView>, IpcError> {
    Ok(look(&app).await?.as_ref().map(view))
}

/// Reads the release feed: the newer version, if there is one.
async fn look<R: Runtime>(app: &AppHandle<R>) -> Result<Option<Update>, IpcError> {
    updater(app)?.check().await.map_err(|e| internal(format!("could not look for updates: {e}")))
}

/// Downloads `version` (the one the user was shown), verifies it and
/// installs it; the window then offers to restart. Nothing is installed from
/// a package whose signature does not match, and one install runs at a time.
#[tauri::command(rename_all = "snake_case")]
pub async fn install_update(
    app: AppHandle,
    found: tauri::State<'_, Found>,
    version: String,
    on_event: Channel<UpdateProgress>,
) -> Result<(), IpcError> {
    if found.installing.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return Err(IpcError::new(IpcErrorKind::InvalidInput, "an update is being installed already"));
    }
    let installed = install_version(&app, &version, on_event).await;
    found.installing.store(false, std::sync::atomic::Ordering::SeqCst);
    if installed.is_ok() {
        *found.update.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }
    installed
}

async fn install_version(app: &AppHandle, version: &str, on_event: Channel<UpdateProgress>) -> Result<(), IpcError> {
    let update = look(app)
        .await?
        .ok_or_else(|| IpcError::new(IpcErrorKind::NotFound, "there is no newer version to install"))?;
    if update.version != version {
        return Err(IpcError::new(
            IpcErrorKind::InvalidInput,
            format!(
                "the release feed now offers {} instead of {version}: look again before installing",
                update.version
            ),
        ));
    }
    if let Installable::Elsewhere { why, release_url } = installable() {
        return Err(IpcError::new(IpcErrorKind::InvalidInput, format!("{why}: get it from {release_url}")));
    }
    let mut done = 0u64;
    let bytes = update
        .download(
            |chunk, total| {
                done += chunk as u64;
                let _ = on_event.send(UpdateProgress::Downloading { done, total });
            },
            || {},
        )
        .await
        .map_err(|e| {
            // A package that does not match its signature is the feed's fault; a lost download is not.
            let kind = match e {
                tauri_plugin_updater::Error::Minisign(_)
                | tauri_plugin_updater::Error::SignedVersionMismatch { .. }
                | tauri_plugin_updater::Error::MissingSignedVersion
                | tauri_plugin_updater::Error::Base64(_)
                | tauri_plugin_updater::Error::SignatureUtf8(_) => IpcErrorKind::InvalidInput,
                _ => IpcErrorKind::Internal,
            };
            IpcError::new(kind, format!("Patchbay {} was not installed: {e} (nothing was changed)", update.version))
        })?;
    let _ = on_event.send(UpdateProgress::Installing);
    tracing::info!(version = update.version, "installing the update");
    crate::commands::blocking(move || install(&update, &bytes)).await
}

/// Installs a verified package: a .deb with dpkg (as root, or through pkexec),
/// anything else the updater's way.
fn install(update: &Update, bytes: &[u8]) -> Result<(), IpcError> {
    use tauri::utils::{config::BundleType, platform::bundle_type};
    if bundle_type() != Some(BundleType::Deb) {
        return update.install(bytes).map_err(internal);
    }
    let dir = tempfile::tempdir().map_err(internal)?;
    let package = dir.path().join(format!("patchbay_{}.deb", update.version));
    std::fs::write(&package, bytes).map_err(internal)?;
    is_version(&package, &update.version)?;
    dpkg_install(&package)
}

/// Refuses a package that is not the version announced. Its own version is inside the signed
/// bytes, so a feed that announces a newer version but serves an older signed package (a
/// downgrade to one with known holes) is caught before dpkg runs.
fn is_version(package: &Path, announced: &str) -> Result<(), IpcError> {
    let out =
        std::process::Command::new("dpkg-deb").arg("-f").arg(package).arg("Version").output().map_err(internal)?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if out.status.success() && version == announced {
        return Ok(());
    }
    Err(IpcError::new(
        IpcErrorKind::InvalidInput,
        format!(
            "Patchbay {announced} was not installed: the package the release feed served is version {version:?}, \
             not the one it announced (nothing was changed)"
        ),
    ))
}

fn dpkg_install(package: &Path) -> Result<(), IpcError> {
    let mut command = if is_root() {
        std::process::Command::new("dpkg")
    } else {
        let mut pkexec = std::process::Command::new("pkexec");
        pkexec.arg("dpkg");
        pkexec
    };
    let out = command.arg("-i").arg(package).output().map_err(internal)?;
    if out.status.success() {
        return Ok(());
    }
    // pkexec's 126: the user dismissed the password prompt; nothing ran.
    if !is_root() && out.status.code() == Some(126) {
        return Err(IpcError::new(
            IpcErrorKind::Cancelled,
            "the update was not installed: the password prompt was closed",
        ));
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let last = said.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no reason given");
    Err(IpcError::new(
        IpcErrorKind::Internal,
        format!(
            "dpkg did not finish installing the update ({}): {last}. Patchbay keeps running; `sudo dpkg --configure -a` or the package from {RELEASES} finishes it",
            out.status
        ),
    ))
}

/// Restarts Patchbay (after an update), through the exit path: servers stopped, lock released.
#[tauri::command]
pub fn restart_app(app: AppHandle) {
    crate::ending::restart(&app);
}

/// Whether the automatic check runs: asked for in the settings, and in a
/// release build (a debug build only when pointed at a test server).
fn wanted<R: Runtime>(app: &AppHandle<R>) -> bool {
    let on = app.state::<AppState>().app().ok().and_then(|a| a.get_settings().ok()).is_some_and(|s| s.check_updates);
    on && (cfg!(not(debug_assertions)) || std::env::var_os(URL_ENV).is_some())
}

/// Looks for an update now and then daily, telling the window what it finds.
pub fn check_daily<R: Runtime>(app: AppHandle<R>) {
    tauri::async_runtime::spawn(async move {
        loop {
            if wanted(&app) {
                match look(&app).await {
                    Ok(Some(update)) => {
                        let found = view(&update);
                        *app.state::<Found>().update.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                            Some(found.clone());
                        if let Err(e) = app.emit_to(crate::MAIN_WINDOW, EVENT, found) {
                            tracing::warn!("could not tell the window about the update: {e}");
                        }
                    }
                    Ok(None) => tracing::info!("Patchbay is up to date"),
                    Err(e) => tracing::warn!("{e}"),
                }
            }
            tokio::time::sleep(DAILY).await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A package with only a control file, of `version`, built by the real dpkg-deb.
    fn package(dir: &Path, version: &str) -> std::path::PathBuf {
        let root = dir.join(version);
        std::fs::create_dir_all(root.join("DEBIAN")).unwrap();
        let control = format!(
            "Package: patchbay\nVersion: {version}\nArchitecture: all\nMaintainer: Patchbay <dev@patchbay.invalid>\n\
             Description: test\n"
        );
        std::fs::write(root.join("DEBIAN/control"), control).unwrap();
        let deb = dir.join(format!("{version}.deb"));
        let built = std::process::Command::new("dpkg-deb").arg("--build").arg(&root).arg(&deb).output().unwrap();
        assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
        deb
    }

    #[test]
    fn an_older_signed_package_served_as_a_newer_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let older = package(dir.path(), "0.1.0");
        assert!(is_version(&older, "0.1.0").is_ok());
        let refused = is_version(&older, "0.1.1").unwrap_err();
        assert_eq!(refused.kind, IpcErrorKind::InvalidInput);
        assert!(refused.message.contains("is version \"0.1.0\", not the one it announced"), "{}", refused.message);
        let broken = dir.path().join("broken.deb");
        std::fs::write(&broken, b"not a package").unwrap();
        assert!(is_version(&broken, "0.1.1").is_err());
    }
}
