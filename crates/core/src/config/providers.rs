//! Provider profiles with their API keys and secret status.
//!
//! [`ConfigStore::add_provider`] validates a profile and puts its API key in
//! the [`SecretStore`] under `provider/<name>/api_key`; SQLite keeps only that
//! name. `provider test` is `crate::llm::probe`, which speaks to the provider.

use serde::Serialize;

use super::model::{McpServerConfig, ProviderProfile, ValueSource};
use super::{ConfigError, ConfigStore, SecretValue};
use crate::secrets::SecretStore;

/// The secret-store name of a provider's API key.
pub fn api_key_name(provider: &str) -> String {
    format!("provider/{provider}/api_key")
}

/// A secret the configuration refers to, and whether it is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecretRef {
    /// The secret's name in the store.
    pub secret: String,
    /// Who uses it: `provider openai` or `server github`.
    pub used_by: String,
    /// The field, e.g. `api_key` or `env.GITHUB_TOKEN`.
    pub field: String,
    pub set: bool,
}

/// Checks a profile's name, URL and model.
pub fn validate_provider(profile: &ProviderProfile) -> Result<(), ConfigError> {
    let invalid = |path: &str, reason: String| Err(ConfigError::Invalid { path: path.to_owned(), reason });
    let name = super::import::normalize_name(&profile.name);
    if name.is_empty() || name != profile.name {
        return invalid("name", format!("{:?} is not a valid name: use letters, digits, '-' and '_'", profile.name));
    }
    match reqwest::Url::parse(&profile.base_url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => {}
        Ok(_) => return invalid("base_url", format!("{:?} is not an http(s) URL", profile.base_url)),
        Err(e) => return invalid("base_url", format!("{:?} is not a valid URL ({e})", profile.base_url)),
    }
    if profile.default_model.trim().is_empty() {
        return invalid("default_model", "a provider needs a default model".to_owned());
    }
    if profile.context_window == Some(0) {
        // A window of no tokens would leave out every message and find every tool by search.
        return invalid(
            "context_window",
            "a context window of 0 tokens holds nothing: leave it empty or give its size".to_owned(),
        );
    }
    Ok(())
}

impl ConfigStore {
    /// Saves a provider after validating it; `api_key`, when given, goes to the secret store
    /// and the profile keeps only its name.
    pub fn add_provider(
        &self,
        mut profile: ProviderProfile,
        api_key: Option<&SecretValue>,
        secrets: &dyn SecretStore,
    ) -> Result<ProviderProfile, ConfigError> {
        validate_provider(&profile)?;
        if let Some(key) = api_key {
            let name = api_key_name(&profile.name);
            secrets.set(&name, key.expose())?;
            profile.api_key = Some(name);
        }
        self.save_provider(&profile)?;
        Ok(profile)
    }

    /// Deletes a provider and the API key stored under its conventional name.
    pub fn remove_provider(&self, name: &str, secrets: &dyn SecretStore) -> Result<(), ConfigError> {
        let profile = self.provider(name)?;
        self.delete_provider(name)?;
        if profile.api_key.as_deref() == Some(api_key_name(name).as_str()) {
            secrets.delete(&api_key_name(name))?;
        }
        Ok(())
    }

    /// Every secret the providers and servers refer to, and whether each is set.
    pub fn secret_status(&self, secrets: &dyn SecretStore) -> Result<Vec<SecretRef>, ConfigError> {
        let mut refs = Vec::new();
        for p in self.providers()? {
            if let Some(key) = &p.api_key {
                refs.push((key.clone(), format!("provider {}", p.name), "api_key".to_owned()));
            }
            for (h, v) in &p.headers {
                if let ValueSource::Secret(n) = v {
                    refs.push((n.clone(), format!("provider {}", p.name), format!("headers.{h}")));
                }
            }
        }
        for s in self.servers()? {
            refs.extend(server_secrets(&s).map(|(field, n)| (n.to_owned(), format!("server {}", s.name), field)));
        }
        refs.into_iter()
            .map(|(secret, used_by, field)| {
                Ok(SecretRef { set: secrets.get(&secret)?.is_some(), secret, used_by, field })
            })
            .collect()
    }
}

/// `(field, secret name)` for every secret a server refers to.
fn server_secrets(server: &McpServerConfig) -> impl Iterator<Item = (String, &str)> {
    server.secret_fields().into_iter().filter_map(|(field, v)| match v {
        ValueSource::Secret(n) => Some((field, n.as_str())),
        ValueSource::Plain(_) | ValueSource::Env(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_window_of_no_tokens_is_refused_with_its_field() {
        let mut profile = ProviderProfile::openai_compatible("local", "http://127.0.0.1:8080/v1".into(), "qwen3");
        assert!(validate_provider(&profile).is_ok());
        profile.context_window = Some(0);
        let error = validate_provider(&profile).unwrap_err().to_string();
        assert!(error.contains("context_window") && error.contains("0 tokens"), "{error}");
    }
}
