//! MCP servers: adding, editing and removing them, their status, log level
//! and doctor, entries from the MCP Registry, and OAuth sign-in.
//!
//! Every change is written to the [`ConfigStore`](crate::config::ConfigStore)
//! first and then applied to the running registry, so what the settings page
//! shows after a restart is what it showed before.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::views::{DoctorCheck, DoctorReport, RegistryFill, SecretValues, ServerStatusView, ServerView};
use super::{App, AppError};
use crate::config::import::{is_reserved_name, secret_name};
use crate::config::server_presets::{ServerPreset, server_presets};
use crate::config::{McpServerConfig, TransportConfig, ValueSource};
use crate::discover::{BundleSource, HttpRegistry, Registry, RegistryEntry, RegistryPage, download_bundle};
use crate::mcp::oauth::{self, AuthorizationUi, AuthorizeOptions};
use crate::mcp::{LaunchReport, LogLevel, McpError};

/// How long a server may take to stop before it is restarted or removed.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// Where a server's log level is kept.
fn log_level_key(server: &str) -> String {
    format!("mcp.log_level.{server}")
}

/// Where the resources watched on a server are kept.
pub(super) fn watched_key(server: &str) -> String {
    format!("mcp.watched.{server}")
}

impl App {
    /// A server's live status, or `None` when the registry does not know it.
    pub(crate) fn server_status(&self, name: &str) -> Option<ServerStatusView> {
        let status = self.inner.registry.status(name).ok()?;
        let tools = self.inner.registry.tools(name).map(|t| t.len()).unwrap_or(0);
        Some(ServerStatusView::new(name, &status, tools))
    }

    /// Every configured server with its status.
    pub fn list_servers(&self) -> Result<Vec<ServerView>, AppError> {
        Ok(self
            .inner
            .config
            .servers()?
            .into_iter()
            .map(|config| {
                let status = self
                    .server_status(&config.name)
                    .unwrap_or_else(|| ServerStatusView::new(&config.name, &crate::mcp::ServerStatus::Stopped, 0));
                let instructions = self.inner.registry.instructions(&config.name).ok().flatten();
                let log_level = self.inner.registry.log_level(&config.name);
                let offered = self.inner.registry.server_icons(&config.name).unwrap_or_default();
                let icons = self.icon_views(&Self::icon_place(&config), Some(&offered));
                let about = self.inner.registry.about(&config.name).ok().flatten();
                let bundle = crate::bundle::installed_in(&config, &self.bundle_dir(&config.name));
                let policy = self.inner.registry.policy_outline(&config);
                let blocked = self.blocked_hosts(&config.name);
                let health = self.inner.registry.health(&config.name);
                ServerView { config, status, about, bundle, instructions, log_level, icons, policy, blocked, health }
            })
            .collect())
    }

    /// The level a server sends log messages at (`logging/setLevel`): kept,
    /// sent now if the server is ready and at each start.
    pub async fn set_server_log_level(&self, server: &str, level: LogLevel) -> Result<(), AppError> {
        self.inner.config.server(server)?;
        self.inner.store.set_setting(&log_level_key(server), &level)?;
        match self.inner.registry.set_log_level(server, level, CancellationToken::new()).await {
            Ok(()) | Err(McpError::NotReady { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Gives each server, before servers start, the log level and the
    /// watched resources kept for it; they are sent when it starts.
    pub(crate) async fn restore_server_choices(&self) -> Result<(), AppError> {
        let (store, registry) = (&self.inner.store, &self.inner.registry);
        for config in self.inner.config.servers()? {
            if let Some(level) = store.setting::<Option<LogLevel>>(&log_level_key(&config.name))?.flatten() {
                // Not started yet: the level is kept and sent when it is.
                let _ = registry.set_log_level(&config.name, level, CancellationToken::new()).await;
            }
            if let Some(watched) = store.setting::<BTreeSet<String>>(&watched_key(&config.name))? {
                registry.resubscribe_on_start(&config.name, watched)?;
            }
        }
        Ok(())
    }

    /// The servers the settings page offers to add in one pick.
    pub fn server_presets(&self) -> Vec<ServerPreset> {
        server_presets()
    }

    /// One page of the MCP Registry's servers whose name contains `query`
    /// (`PATCHBAY_MCP_REGISTRY`, else the official registry), as entries the
    /// server editor starts from.
    pub async fn registry_search(
        &self,
        query: &str,
        cursor: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<RegistryPage, AppError> {
        Ok(HttpRegistry::configured().search(query, cursor, cancel).await?)
    }

    /// Downloads the bundle of a registry entry into `<data dir>/downloads`
    /// and checks its SHA-256; returns its path, for the bundle installer.
    pub async fn registry_bundle(
        &self,
        source: &BundleSource,
        cancel: &CancellationToken,
    ) -> Result<PathBuf, AppError> {
        Ok(download_bundle(source, &self.inner.dir.path().join("downloads"), cancel).await?)
    }

    /// A registry entry with its placeholders filled in from `values` (see
    /// [`crate::discover::fill`]), named as the entry suggests, for the editor;
    /// and the secrets to save with it.
    pub fn registry_fill(
        &self,
        entry: &RegistryEntry,
        values: &BTreeMap<String, String>,
    ) -> Result<RegistryFill, AppError> {
        let (config, secrets) = crate::discover::fill(entry, &entry.id, values)?;
        Ok(RegistryFill { config, secrets })
    }

    /// Saves a server: its secrets go to the secret store first, then the
    /// configuration (holding only their names); an enabled server restarts.
    pub async fn save_server(&self, config: McpServerConfig, secrets: &SecretValues) -> Result<(), AppError> {
        let (config, secrets) = under_own_name(config, secrets);
        if config.name.trim().is_empty() {
            return Err(AppError::Invalid("a server needs a name".into()));
        }
        if is_reserved_name(config.name.trim()) {
            return Err(AppError::Invalid(format!(
                "the name {:?} is taken by Patchbay's built-in tools; choose another",
                config.name.trim()
            )));
        }
        if let Some(problem) = crate::config::import::server_name_problem(&config.name) {
            return Err(AppError::Invalid(problem));
        }
        if let Some((field, _)) =
            config.secret_fields().into_iter().find(|(_, v)| **v == ValueSource::Secret(String::new()))
        {
            return Err(AppError::Invalid(format!("{}.{field}: type the secret's value; it is not set", config.name)));
        }
        if let Some((field, reason)) = config.client_credential_problems().into_iter().next() {
            return Err(AppError::Invalid(format!("{}.{field}: {reason}", config.name)));
        }
        if let Some((field, reason)) = config.policy.problems().into_iter().next() {
            return Err(AppError::Invalid(format!("{}.{field}: {reason}", config.name)));
        }
        if let Some((field, ValueSource::Plain(_))) = config.client_credentials.as_ref().map(|c| c.key.material()) {
            return Err(AppError::Invalid(format!(
                "{}.client_credentials.key.{field} must name a keyring entry, not hold the value",
                config.name
            )));
        }
        for (name, value) in &secrets {
            self.inner.secrets.set(name, value)?;
        }
        self.inner.config.save_server(&config)?;
        self.apply_server(config).await
    }

    pub(super) async fn apply_server(&self, config: McpServerConfig) -> Result<(), AppError> {
        let registry = &self.inner.registry;
        let (name, enabled) = (config.name.clone(), config.enabled);
        registry.configure([config]);
        if enabled {
            registry.restart(&name).await?;
        } else {
            tokio::time::timeout(STOP_WAIT, registry.stop(&name)).await.ok().transpose()?;
        }
        Ok(())
    }

    /// Deletes a server (stopping it first).
    /// A server installed from a bundle loses its folder too.
    pub async fn delete_server(&self, name: &str) -> Result<(), AppError> {
        // An entry that no longer reads is still deleted; only a readable one can name a bundle.
        let config = self.inner.config.server(name).ok();
        self.inner.config.delete_server(name)?;
        // A server added later under this name starts without them.
        self.inner.store.set_setting(&log_level_key(name), &None::<LogLevel>)?;
        self.inner.store.set_setting(&watched_key(name), &BTreeSet::<String>::new())?;
        self.clear_blocked(name);
        self.kb().forget_sources_of(name)?;
        self.forget_server(name).await?;
        if let Some(config) = &config {
            self.remove_bundle_files(config);
        }
        // Its secrets go with it: a server added later under this name (an
        // install link's, say) must not find its keys or its sign-in.
        let own = crate::config::import::secret_name(name, "");
        let named = config.iter().flat_map(|c| c.secret_fields()).filter_map(|(_, value)| match value {
            crate::config::ValueSource::Secret(secret) if secret.starts_with(&own) => Some(secret.clone()),
            _ => None,
        });
        // The server is gone already: a keyring that fails leaves a secret behind, said in the log.
        for secret in named.chain([crate::config::import::oauth_secret_name(name)]).collect::<Vec<_>>() {
            if let Err(e) = self.inner.secrets.delete(&secret) {
                tracing::warn!(server = name, secret, "could not delete the server's secret: {e}");
            }
        }
        Ok(())
    }

    /// Stops a server and takes it out of the registry; one that never started is fine.
    pub(super) async fn forget_server(&self, name: &str) -> Result<(), AppError> {
        match self.inner.registry.remove(name).await {
            Ok(()) | Err(crate::mcp::McpError::UnknownServer { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Enables (and starts) or disables (and stops) a server.
    pub async fn set_server_enabled(&self, name: &str, enabled: bool) -> Result<(), AppError> {
        let mut config = self.inner.config.server(name)?;
        config.enabled = enabled;
        self.inner.config.save_server(&config)?;
        self.apply_server(config).await
    }

    /// Restarts a server now.
    pub async fn restart_server(&self, name: &str) -> Result<(), AppError> {
        self.inner.config.server(name)?;
        Ok(self.inner.registry.restart(name).await?)
    }

    /// The last lines the server wrote to stderr, oldest first.
    pub fn server_logs(&self, name: &str) -> Result<Vec<String>, AppError> {
        self.inner.config.server(name)?;
        Ok(self.inner.registry.stderr_tail(name, 500).unwrap_or_default())
    }

    /// The launch doctor's findings for a server.
    /// Checks `name`'s health now (a ping, as the supervisor does every 30 s); kept as its last check.
    pub async fn check_server_health(&self, name: &str) -> Result<crate::mcp::HealthCheck, AppError> {
        self.inner.config.server(name)?;
        Ok(self.inner.registry.ping(name).await?)
    }

    pub async fn server_doctor(&self, name: &str) -> Result<DoctorReport, AppError> {
        self.inner.config.server(name)?;
        let report = self.inner.registry.doctor(name).await?;
        let status = self.server_status(name);
        Ok(doctor_view(name, report.as_ref(), status.as_ref()))
    }

    /// Signs in to a remote server with OAuth (the page opens through `ui`),
    /// keeps the tokens in the secret store and restarts the server with them.
    pub async fn authorize_server(
        &self,
        name: &str,
        ui: &dyn AuthorizationUi,
        cancel: CancellationToken,
    ) -> Result<(), AppError> {
        let config = self.inner.config.server(name)?;
        let url = match &config.transport {
            TransportConfig::StreamableHttp { url, .. }
            | TransportConfig::Sse { url, .. }
            | TransportConfig::Auto { url, .. } => url,
            TransportConfig::Stdio { .. } | TransportConfig::InProcess => {
                return Err(AppError::Invalid(format!("{name} runs on this computer; only remote servers sign in")));
            }
        };
        let secrets = self.inner.secrets.clone();
        let options =
            AuthorizeOptions { client_metadata_url: self.client_metadata_url()?, ..AuthorizeOptions::default() };
        oauth::authorize(name, url, secrets, ui, options, &cancel).await?;
        if config.enabled {
            self.inner.registry.restart(name).await?;
        }
        Ok(())
    }
}

/// `config` with the secrets saved along with it filed under its own name
/// (`mcp/<server>/KEY`): a registry entry names them after its suggested name,
/// which the user may change before saving, and an import takes only a
/// server's own secrets, so its export would not import again.
fn under_own_name(mut config: McpServerConfig, secrets: &SecretValues) -> (McpServerConfig, SecretValues) {
    let own = secret_name(&config.name, "");
    let server = config.name.clone();
    let mut filed = secrets.clone();
    for (_, value) in config.secret_fields_mut() {
        if let ValueSource::Secret(name) = value
            && !name.starts_with(&own)
            && let Some(text) = filed.remove(name.as_str())
        {
            let moved = secret_name(&server, name.rsplit('/').next().unwrap_or(name));
            filed.insert(moved.clone(), text);
            *name = moved;
        }
    }
    (config, filed)
}

/// The doctor's checks, each reason said once: the status names the failure only
/// when no check of the launch below explains it, and a command that was not
/// found is not reported again as the start's error.
fn doctor_view(name: &str, report: Option<&LaunchReport>, status: Option<&ServerStatusView>) -> DoctorReport {
    let mut checks = Vec::new();
    if let Some(status) = status {
        let explained_below = report.is_some_and(|r| r.error.is_some());
        checks.push(DoctorCheck {
            name: "status".into(),
            ok: status.state == "ready",
            detail: match &status.error {
                Some(e) if !explained_below => format!("{}: {e}", status.state),
                _ => status.state.to_owned(),
            },
            hint: (status.state == "failed").then(|| "fix the cause below, then restart the server".to_owned()),
        });
    }
    let Some(r) = report else {
        return DoctorReport { server: name.to_owned(), checks, policy: None };
    };
    checks.push(match &r.resolved {
        Some(path) => DoctorCheck {
            name: "command".into(),
            ok: true,
            detail: format!("{} → {}", r.command, path.display()),
            hint: None,
        },
        None => DoctorCheck {
            name: "command".into(),
            ok: false,
            detail: format!(
                "{} not found on PATH; looked in {}",
                r.command,
                r.searched.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(":")
            ),
            hint: Some("install it, or give its absolute path as the command".into()),
        },
    });
    if !r.env_added.is_empty() {
        checks.push(DoctorCheck {
            name: "environment".into(),
            ok: true,
            detail: format!("added to the login environment: {}", r.env_added.join(", ")),
            hint: None,
        });
    }
    let exit = match (r.exit_code, r.signal) {
        (Some(code), _) => Some(format!("exited with code {code}")),
        (None, Some(signal)) => Some(format!("killed by signal {signal}")),
        (None, None) => None,
    };
    if let Some(detail) = exit {
        checks.push(DoctorCheck { name: "exit".into(), ok: false, detail, hint: None });
    }
    if let Some(error) = r.error.as_ref().filter(|_| r.resolved.is_some()) {
        checks.push(DoctorCheck { name: "start".into(), ok: false, detail: error.clone(), hint: None });
    }
    if !r.stderr_tail.is_empty() {
        checks.push(DoctorCheck {
            name: "stderr".into(),
            ok: r.error.is_none(),
            detail: r.stderr_tail.join("\n"),
            hint: Some("the server's own words: read the last lines first".into()),
        });
    }
    DoctorReport { server: name.to_owned(), checks, policy: r.policy.clone() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The window shows the doctor's hints from its inventories (translated);
    /// the English inventory must say what the core says.
    #[test]
    fn the_windows_english_doctor_hints_are_the_cores() {
        let inventory: serde_json::Value =
            serde_json::from_str(include_str!("../../../../ui/src/locales/en.json")).expect("en.json");
        let report = LaunchReport {
            server: "s".into(),
            command: "nowhere".into(),
            stderr_tail: vec!["boom".into()],
            error: Some("exited".into()),
            ..LaunchReport::default()
        };
        let status =
            ServerStatusView { server: "s".into(), state: "failed", tool_count: 0, error: Some("exited".into()) };
        let checks = doctor_view("s", Some(&report), Some(&status)).checks;
        let hinted: Vec<_> = checks.iter().filter(|c| c.hint.is_some()).collect();
        assert_eq!(hinted.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["status", "command", "stderr"]);
        for check in hinted {
            let key = format!("doctor.hint.{}", check.name);
            assert_eq!(inventory[&key].as_str(), check.hint.as_deref(), "{key}");
        }
    }
}
