//! The security policy as the window edits and shows it: the global defaults
//! (kept in the `policy.defaults` setting and handed to the running registry),
//! the one-line summary and the problems of a server being edited, and
//! "allow this domain" for a host a server's filtering proxy refused.
//!
//! The refused hosts are kept here, per server, until allowed or Patchbay
//! stops, so a page opened after the refusal still offers the button.

use super::views::{FieldProblem, PolicyPreview, PolicySettings};
use super::{App, AppError, lock};
use crate::config::policy::DEFAULTS_SETTING;
use crate::config::{McpServerConfig, Network, Policy, PolicyDefaults, SecurityLevel, TransportConfig};

/// Refused hosts kept per server: a server trying many more is shown the first ones.
const BLOCKED_KEPT: usize = 50;

impl App {
    /// The global defaults and the levels this system can enforce.
    pub fn policy_settings(&self) -> PolicySettings {
        PolicySettings { defaults: self.inner.registry.policy_defaults(), offered: SecurityLevel::offered().to_vec() }
    }

    /// Saves the global defaults and gives them to the registry. When the
    /// level changed, the running local servers that follow it restart under it.
    pub async fn set_policy_defaults(&self, defaults: PolicyDefaults) -> Result<(), AppError> {
        if !SecurityLevel::offered().contains(&defaults.level) {
            return Err(AppError::Invalid(format!(
                "policy.level: the {} level cannot be enforced on this system",
                defaults.level
            )));
        }
        if defaults.turn_tool_calls == 0 {
            return Err(AppError::Invalid("policy.turn_tool_calls: must be at least 1 tool call per turn".into()));
        }
        let registry = &self.inner.registry;
        let before = registry.policy_defaults();
        self.inner.store.set_setting(DEFAULTS_SETTING, &defaults)?;
        registry.set_policy_defaults(defaults);
        if before.level == defaults.level {
            return Ok(());
        }
        for config in self.inner.config.servers()? {
            let follows = config.enabled
                && config.policy.level.is_none()
                && matches!(config.transport, TransportConfig::Stdio { .. });
            if follows && let Err(e) = registry.restart(&config.name).await {
                tracing::warn!(server = %config.name, error = %e, "could not restart a server under the new level");
            }
        }
        Ok(())
    }

    /// What the server's page will show for `config` as edited, and what saving it would refuse.
    pub fn policy_preview(&self, config: &McpServerConfig) -> PolicyPreview {
        let problems =
            config.policy.problems().into_iter().map(|(field, reason)| FieldProblem { field, reason }).collect();
        PolicyPreview { summary: self.inner.registry.policy_outline(config), problems }
    }

    /// Lets `server` reach `host` from now on: a network that is off becomes a
    /// list with that host, a list gets it added; under `any` nothing changes.
    /// The server is saved and, when enabled, restarted.
    pub async fn allow_domain(&self, server: &str, host: &str) -> Result<(), AppError> {
        let mut config = self.inner.config.server(server)?;
        let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
        let defaults = self.inner.registry.policy_defaults();
        let network = match Policy::resolve(&config, &defaults, &[]).network {
            Network::Any => None,
            Network::Off => Some(Network::Domains(vec![host.clone()])),
            Network::Domains(domains) if Network::Domains(domains.clone()).allows(&host) => None,
            Network::Domains(mut domains) => {
                domains.push(host.clone());
                Some(Network::Domains(domains))
            }
        };
        if let Some(network) = network {
            config.policy.network = Some(network);
            if let Some((field, reason)) = config.policy.problems().into_iter().next() {
                return Err(AppError::Invalid(format!("{server}.{field}: {reason}")));
            }
            self.inner.config.save_server(&config)?;
            self.forget_blocked(server, &host);
            return self.apply_server(config).await;
        }
        self.forget_blocked(server, &host);
        Ok(())
    }

    /// Keeps a host `server`'s proxy refused, unless its saved policy allows
    /// the host by now (a refusal made before "Allow this domain" and read
    /// after it); whether the refusal still stands.
    pub(super) fn note_blocked(&self, server: &str, host: &str) -> bool {
        let allowed_now = self.inner.config.server(server).is_ok_and(|config| {
            Policy::resolve(&config, &self.inner.registry.policy_defaults(), &[]).network.allows(host)
        });
        if allowed_now {
            return false;
        }
        let mut blocked = lock(&self.inner.blocked);
        let hosts = blocked.entry(server.to_owned()).or_default();
        if hosts.len() < BLOCKED_KEPT {
            hosts.insert(host.to_ascii_lowercase());
        }
        true
    }

    /// The hosts `server`'s proxy refused and nobody allowed yet.
    pub(super) fn blocked_hosts(&self, server: &str) -> Vec<String> {
        lock(&self.inner.blocked).get(server).map(|hosts| hosts.iter().cloned().collect()).unwrap_or_default()
    }

    /// Forgets what a deleted server's proxy refused.
    pub(super) fn clear_blocked(&self, server: &str) {
        lock(&self.inner.blocked).remove(server);
    }

    fn forget_blocked(&self, server: &str, host: &str) {
        if let Some(hosts) = lock(&self.inner.blocked).get_mut(server) {
            hosts.remove(host);
        }
    }
}
