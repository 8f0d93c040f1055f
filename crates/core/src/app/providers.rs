//! LLM provider profiles: listing, saving (the API key goes to the secret
//! store), deleting and testing them.

use tokio_util::sync::CancellationToken;

use super::views::ProviderView;
use super::{App, AppError};
use crate::config::ProviderProfile;
use crate::config::presets::{self, ProviderPreset};
use crate::config::providers::{api_key_name, validate_provider};
use crate::llm::probe::{PROBE_TIMEOUT, probe};

impl App {
    /// Provider profiles, each with whether its API key is set.
    pub fn list_providers(&self) -> Result<Vec<ProviderView>, AppError> {
        self.inner
            .config
            .providers()?
            .into_iter()
            .map(|profile| {
                let api_key_set = match &profile.api_key {
                    Some(name) => self.inner.secrets.get(name)?.is_some(),
                    None => false,
                };
                let models = std::iter::once(&profile.default_model).chain(&profile.models);
                let windows =
                    models.filter_map(|m| Some((m.clone(), crate::llm::context_window(&profile, m)?))).collect();
                let max_tools = crate::llm::tool_limit(&profile).and_then(|n| u32::try_from(n).ok());
                Ok(ProviderView { profile, api_key_set, windows, max_tools })
            })
            .collect()
    }

    /// Saves a provider; a given key goes to the secret store, `None` keeps the stored one.
    pub fn save_provider(&self, mut profile: ProviderProfile, api_key: Option<&str>) -> Result<(), AppError> {
        validate_provider(&profile)?;
        if let Some(key) = api_key.filter(|k| !k.is_empty()) {
            let name = profile.api_key.clone().unwrap_or_else(|| api_key_name(&profile.name));
            self.inner.secrets.set(&name, key)?;
            profile.api_key = Some(name);
        } else if profile.api_key.is_none() {
            // Keep a key stored earlier under the conventional name.
            let name = api_key_name(&profile.name);
            if self.inner.secrets.get(&name)?.is_some() {
                profile.api_key = Some(name);
            }
        }
        Ok(self.inner.config.save_provider(&profile)?)
    }

    /// Deletes a provider and its stored key.
    pub fn delete_provider(&self, name: &str) -> Result<(), AppError> {
        Ok(self.inner.config.remove_provider(name, self.inner.secrets.as_ref())?)
    }

    /// The providers the settings page offers to set up in one pick.
    pub fn provider_presets(&self) -> &'static [ProviderPreset] {
        presets::presets()
    }

    /// Lists the provider's models with one real request; fails with its error. The context
    /// windows the list states are kept with the profile.
    pub async fn test_provider(&self, name: &str, cancel: CancellationToken) -> Result<Vec<String>, AppError> {
        let profile = self.inner.config.provider(name)?;
        let report = probe(&profile, self.inner.secrets.as_ref(), PROBE_TIMEOUT, &cancel).await?;
        self.inner.config.keep_listed_windows(name, report.windows)?;
        Ok(report.models)
    }
}
