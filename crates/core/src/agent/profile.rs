//! Choosing the provider profile for a turn, with the environment as a fallback.
//!
//! An explicitly named profile wins, then the assistant's, then the first
//! configured one. With none configured, `OPENAI_API_KEY` (+ `OPENAI_BASE_URL`)
//! or `ARK_API_KEY` (+ `ARK_BASE_URL`, Volcengine Ark) from the environment, the
//! model from `OPENAI_MODEL` or `ARK_MODEL` when set,
//! make an unsaved profile, and [`ProviderSource::Environment`] says so, so the
//! front end can tell the user. The environment is passed in as a function.

use super::AgentError;
use crate::config::{ConfigError, ConfigStore, ProviderProfile};
use crate::llm::{self, LlmError, Provider};
use crate::secrets::{SecretStore, SecretValue};

/// Where the profile came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderSource {
    /// The user's configuration.
    Configured,
    /// The environment; `variable` holds the key, `model_variable` may name the model.
    Environment { variable: &'static str, model_variable: &'static str },
}

/// A profile with its API key, ready to build a provider from.
#[derive(Debug, Clone)]
pub struct ResolvedProvider {
    pub profile: ProviderProfile,
    /// The key's value (never stored, never logged).
    pub api_key: Option<SecretValue>,
    pub source: ProviderSource,
}

impl ResolvedProvider {
    /// The window of `model` with this profile: the profile's own setting,
    /// else the model's when it is a well-known hosted one.
    pub fn context_window(&self, model: &str) -> Option<u32> {
        llm::context_window(&self.profile, model)
    }

    /// Builds the provider: the API key was already resolved (from the
    /// keyring or the environment); header secrets are read from `secrets`.
    pub fn build(&self, secrets: &dyn SecretStore) -> Result<std::sync::Arc<dyn Provider>, LlmError> {
        let mut keyless = self.profile.clone();
        keyless.api_key = None;
        let mut settings = llm::settings_from_profile(&keyless, secrets)?;
        settings.api_key = self.api_key.clone();
        Ok(std::sync::Arc::from(llm::build(&self.profile, settings)?))
    }
}

struct EnvProvider {
    key: &'static str,
    base: &'static str,
    model: &'static str,
    default_base: &'static str,
    name: &'static str,
    default_model: &'static str,
}

const ENV_PROVIDERS: [EnvProvider; 2] = [
    EnvProvider {
        key: "OPENAI_API_KEY",
        base: "OPENAI_BASE_URL",
        model: "OPENAI_MODEL",
        default_base: "https://api.openai.com/v1",
        name: "env-openai",
        default_model: "gpt-4o-mini",
    },
    EnvProvider {
        key: "ARK_API_KEY",
        base: "ARK_BASE_URL",
        model: "ARK_MODEL",
        default_base: "https://ark.cn-beijing.volces.com/api/v3",
        name: "env-ark",
        default_model: "",
    },
];

/// Picks the profile: `requested`, else the first configured, else the environment.
pub fn resolve_provider(
    config: &ConfigStore,
    secrets: &dyn SecretStore,
    requested: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ResolvedProvider, AgentError> {
    let profile = match requested {
        Some(name) => Some(config.provider(name)?),
        None => config.providers()?.into_iter().next(),
    };
    if let Some(profile) = profile {
        let api_key = match &profile.api_key {
            Some(secret) => {
                Some(SecretValue::new(secrets.get(secret).map_err(ConfigError::from)?.ok_or_else(|| {
                    AgentError::MissingApiKey { provider: profile.name.clone(), secret: secret.clone() }
                })?))
            }
            None => None,
        };
        return Ok(ResolvedProvider { profile, api_key, source: ProviderSource::Configured });
    }
    for e in &ENV_PROVIDERS {
        let Some(key) = env(e.key).filter(|k| !k.trim().is_empty()) else { continue };
        let base_url = env(e.base).filter(|b| !b.trim().is_empty()).unwrap_or_else(|| e.default_base.to_owned());
        let model = env(e.model).filter(|m| !m.trim().is_empty());
        let profile =
            ProviderProfile::openai_compatible(e.name, base_url, model.as_deref().unwrap_or(e.default_model).trim());
        return Ok(ResolvedProvider {
            profile,
            api_key: Some(SecretValue::new(key)),
            source: ProviderSource::Environment { variable: e.key, model_variable: e.model },
        });
    }
    Err(AgentError::NoProvider)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ProviderKind;
    use crate::secrets::MemoryStore;
    use crate::store::Store;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
    }

    fn profile(name: &str, secret: Option<&str>) -> ProviderProfile {
        ProviderProfile {
            name: name.into(),
            kind: ProviderKind::OpenAi,
            base_url: "http://127.0.0.1:1/v1".into(),
            default_model: "m".into(),
            models: Vec::new(),
            headers: Default::default(),
            api_key: secret.map(Into::into),
            native_tools: true,
            context_window: None,
            listed_windows: Default::default(),
            thinking: Default::default(),
            prompt_tool_format: Default::default(),
        }
    }

    #[test]
    fn configured_profiles_win_over_the_environment() {
        let config = ConfigStore::new(Store::open_in_memory().unwrap());
        let secrets = MemoryStore::default();
        let vars = env(&[("OPENAI_API_KEY", "sk-env")]);
        config.save_provider(&profile("first", None)).unwrap();
        config.save_provider(&profile("second", Some("provider/second/api_key"))).unwrap();
        let r = resolve_provider(&config, &secrets, None, &vars).unwrap();
        assert_eq!((r.profile.name.as_str(), r.source), ("first", ProviderSource::Configured));
        let err = resolve_provider(&config, &secrets, Some("second"), &vars).unwrap_err();
        assert!(matches!(err, AgentError::MissingApiKey { .. }), "{err}");
        secrets.set("provider/second/api_key", "sk-stored").unwrap();
        let r = resolve_provider(&config, &secrets, Some("second"), &vars).unwrap();
        assert_eq!(r.api_key.as_ref().map(SecretValue::expose), Some("sk-stored"));
        assert!(!format!("{r:?}").contains("sk-stored"), "{r:?}");
        assert!(matches!(resolve_provider(&config, &secrets, Some("nope"), &vars), Err(AgentError::Config(_))));
    }

    #[test]
    fn the_environment_is_the_fallback() {
        let config = ConfigStore::new(Store::open_in_memory().unwrap());
        let secrets = MemoryStore::default();
        let r = resolve_provider(&config, &secrets, None, &env(&[("OPENAI_API_KEY", "sk-1")])).unwrap();
        assert_eq!(
            r.source,
            ProviderSource::Environment { variable: "OPENAI_API_KEY", model_variable: "OPENAI_MODEL" }
        );
        let key = r.api_key.as_ref().map(SecretValue::expose);
        assert_eq!((r.profile.base_url.as_str(), key), ("https://api.openai.com/v1", Some("sk-1")));
        let vars = env(&[("ARK_API_KEY", "ark-1"), ("ARK_BASE_URL", "http://127.0.0.1:9/api/v3")]);
        let r = resolve_provider(&config, &secrets, None, &vars).unwrap();
        assert_eq!(r.source, ProviderSource::Environment { variable: "ARK_API_KEY", model_variable: "ARK_MODEL" });
        assert_eq!(r.profile.base_url, "http://127.0.0.1:9/api/v3");
        assert_eq!(r.profile.default_model, "", "Ark has no default model");
        let vars = env(&[("ARK_API_KEY", "ark-1"), ("ARK_MODEL", "doubao-seed-1-6-250615")]);
        let r = resolve_provider(&config, &secrets, None, &vars).unwrap();
        assert_eq!(r.profile.default_model, "doubao-seed-1-6-250615");
        assert!(matches!(resolve_provider(&config, &secrets, None, &env(&[])), Err(AgentError::NoProvider)));
    }
}
